// dist/weight_stream.h under mpirun on the host path: the ranks of a node split the reading of a
// checkpoint and receive the rest from each other; what each rank gets is bit-identical to the file;
// each byte is read once per node; a file that changes under the loader is an error naming it.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "dist/node_comm.h"
#include "dist/weight_stream.h"
#include "mpi_test_util.h"

namespace fs = std::filesystem;
using namespace vgen;

namespace {

const char* kModel = VGEN_TEST_GOLDEN_DIR "/wan21-tiny";
const char* kComponents[] = {"text_encoder", "transformer", "vae"};

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

size_t data_bytes(const WeightStore& ws) {
  size_t n = 0;
  for (auto& f : ws.files()) n += f->data_size();
  return n;
}

int64_t sum_over_world(int64_t v) {
  int64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

// Every tensor of `got` (read by the stream) equals the one a fresh mmap of the folder holds.
void expect_identical(const WeightStore& got, const std::string& dir) {
  WeightStore ref = WeightStore::open(dir);
  PCHECK(got.names() == ref.names(), "{}: tensor names differ", dir);
  for (auto& name : ref.names()) {
    Tensor a = got.get(name), b = ref.get(name);
    PCHECK(a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0,
           "{}: tensor '{}' differs from the file", dir, name);
  }
}

// The pipeline's pattern: rank 0 needs every component, the others the transformer only. Run twice
// on one stream (a stream serves several collective runs).
void test_split_reading() {
  const int rank = world_rank();
  auto node = node_host_communicator();
  WeightStream stream(node, nullptr);
  std::vector<WeightStore> stores;
  for (const char* c : kComponents) stores.push_back(WeightStore::open(fmt::format("{}/{}", kModel, c)));
  std::vector<int> ids;
  for (size_t i = 0; i < stores.size(); ++i) ids.push_back(stream.add_component(kComponents[i], stores[i]));
  size_t total = 0, mine = 0, needed = 0;
  for (auto& s : stores) total += data_bytes(s);
  // First run: the transformer everywhere; second: the rest on rank 0.
  stream.request_host(ids[1]);
  mine += data_bytes(stores[1]);
  stream.run();
  if (rank == 0)
    for (int i : {0, 2}) stream.request_host(ids[size_t(i)]), mine += data_bytes(stores[size_t(i)]);
  stream.run();
  needed = total;  // rank 0 needs all of it

  expect_identical(stores[1], fmt::format("{}/transformer", kModel));
  if (rank == 0) {
    expect_identical(stores[0], fmt::format("{}/text_encoder", kModel));
    expect_identical(stores[2], fmt::format("{}/vae", kModel));
  }
  const LoadStats& st = stream.stats();
  size_t delivered = 0;
  for (auto& [name, c] : st.components) delivered += c.bytes;
  PCHECK(delivered == mine, "components report {} bytes, {} were requested", delivered, mine);
  // Each byte is read once on the node.
  const int64_t read_all = sum_over_world(int64_t(st.bytes_read));
  PCHECK(size_t(read_all) == needed, "the ranks read {} bytes in all, the checkpoint has {}", read_all, needed);
  const int size = node ? node->size() : 1;
  if (size == 1) {
    PCHECK(st.bytes_read == total && st.bytes_received == 0, "alone: read {} of {} bytes, received {}",
           st.bytes_read, total, st.bytes_received);
  } else if (rank == 0) {
    PCHECK(st.bytes_read * 2 <= total, "rank 0 read {} of the checkpoint's {} bytes with {} ranks (at most half)",
           st.bytes_read, total, size);
    PCHECK(st.bytes_read + st.bytes_received == total, "rank 0 got {} + {} bytes of {}", st.bytes_read,
           st.bytes_received, total);
  }
}

// VGEN_LOAD_SHARE=0 semantics (share = false): every rank reads all it needs itself.
void test_unshared() {
  WeightStreamOptions o;
  o.share = false;
  WeightStream stream(node_host_communicator(), nullptr, o);
  WeightStore ws = WeightStore::open(fmt::format("{}/transformer", kModel));
  stream.request_host(stream.add_component("transformer", ws));
  stream.run();
  expect_identical(ws, fmt::format("{}/transformer", kModel));
  PCHECK(stream.stats().bytes_read == data_bytes(ws) && stream.stats().bytes_received == 0, "read {} of {}",
         stream.stats().bytes_read, data_bytes(ws));
}

// Small buffers and one reader thread: many segments through few buffers, same bytes.
void test_small_buffers() {
  WeightStreamOptions o;
  o.threads = 3;
  o.buffers = 2;
  o.buffer_bytes = 4096;
  WeightStream stream(node_host_communicator(), nullptr, o);
  WeightStore ws = WeightStore::open(fmt::format("{}/vae", kModel));
  stream.request_host(stream.add_component("vae", ws));
  stream.run();
  expect_identical(ws, fmt::format("{}/vae", kModel));
}

// A file truncated after its header was read: kModel naming the file, on the rank that reads it
// (each rank alone here, so no peer waits for it).
void test_truncated_file() {
  const std::string dir = fmt::format("/tmp/vgen_weight_stream_test_{}_{}", getpid(), world_rank());
  fs::create_directories(dir);
  const std::string src = fmt::format("{}/transformer/diffusion_pytorch_model.safetensors", kModel);
  const std::string dst = dir + "/model.safetensors";
  fs::copy_file(src, dst, fs::copy_options::overwrite_existing);
  WeightStore ws = WeightStore::open(dst);
  PCHECK(truncate(dst.c_str(), off_t(fs::file_size(dst) - 1000)) == 0, "truncate {}", dst);
  WeightStream stream(nullptr, nullptr);
  stream.request_host(stream.add_component("transformer", ws));
  bool thrown = false;
  try {
    stream.run();
  } catch (const Error& e) {
    thrown = true;
    PCHECK(e.code() == ExitCode::kModel && std::string(e.what()).find(dst) != std::string::npos,
           "wrong error: {}", e.what());
  }
  PCHECK(thrown, "a truncated file loaded without an error");
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ptest::run_test("split_reading", test_split_reading);
  ptest::run_test("unshared", test_unshared);
  ptest::run_test("small_buffers", test_small_buffers);
  ptest::run_test("truncated_file", test_truncated_file);
  MPI_Finalize();
  return 0;
}
