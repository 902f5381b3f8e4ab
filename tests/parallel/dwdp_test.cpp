// DWDP on two GPUs (parallel/dwdp.h): a random-weight DiT whose blocks are split over a dwdp group
// of 2 (each GPU keeps every other block, or with VGEN_DWDP_SLICE_BYTES half of every block's
// slices, and assembles the others over CUDA IPC while the previous one computes) gives the same
// prediction, bit for bit, as the same model held whole on each GPU, over several forwards (the
// staging slots wrap around) and prompts, in fp32 and bf16; and holds fewer weight bytes.
// VGEN_DWDP_TRANSPORT=vmm|ipc forces the transport (parallel_config.dwdp_transport) and the test
// checks that it ran. Under vmm the ranks may share one GPU (two processes mapping each other's
// arenas through POSIX file descriptors); the only skip there is a GPU that cannot export them.
// Usage: mpirun -np 2 dwdp_test (one GPU per rank, or one GPU under vmm; else a gtest-style skip
// line, exit 0).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/cuda_stream.h"
#include "dist/communicator.h"
#include "dist/device_mesh.h"
#include "dist/device_share.h"
#include "dist/local_device.h"
#include "dwdp_test_util.h"
#include "mesh_test_main.h"
#include "model/wan/dit/transformer.h"
#include "parallel/local_attention.h"
#include "model/dit_step.h"

namespace vgen {
namespace {

using dwdp_test::predict;
using dwdp_test::expect_identical;
using dwdp_test::random_host;

std::vector<float> host_floats(const Tensor& t) {
  Tensor h = t.to(Device::kCPU).to(DType::kF32);
  return std::vector<float>(h.f32(), h.f32() + h.numel());
}

// The transport VGEN_DWDP_TRANSPORT forces ("" when it is unset).
std::string forced_transport() {
  const char* t = std::getenv("VGEN_DWDP_TRANSPORT");
  return t ? t : "";
}

int run(int, char**, const DistEnv& env) {
  const std::string forced = forced_transport();
  const bool share_gpu = cuda_device_count() < env.local_size;
  if (share_gpu && (forced != "vmm" || cuda_device_count() < 1)) {
    if (env.world_rank == 0)
      std::printf("[  SKIPPED ] dwdp_test: %d CUDA device(s) for %d ranks on this host\n", cuda_device_count(),
                  env.local_size);
    return 0;
  }
  ParallelConfig pc;
  pc.dp_size = env.world_size;
  pc.dwdp_size = env.world_size;
  validate_mesh(pc, env.world_size, 0);
  Mesh host = make_mesh(pc, env);
  if (share_gpu)
    select_local_device(env);  // GPU local_rank mod count: no NCCL mesh (it refuses a GPU twice)
  else
    device_mesh(host);  // selects this rank's GPU
  if (forced == "vmm" && !local_share_facts().posix_fd) {
    if (env.world_rank == 0)
      std::printf("[  SKIPPED ] dwdp_test: the GPU does not export POSIX file descriptors "
                  "(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED 0)\n");
    return 0;
  }
  WanTransformerConfig cfg;
  cfg.num_attention_heads = 2;
  cfg.attention_head_dim = 128;
  cfg.ffn_dim = 384;
  cfg.num_layers = 5;  // more blocks than slots: every pass refills them
  cfg.text_dim = 40;
  cfg.validate("dwdp test config");
  const int64_t B = 1, T = 2, H = 6, W = 8, L = 5;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    WanDeviceOptions whole{dt}, shared{dt};
    shared.dwdp_size = env.world_size;
    shared.world = host.world;
    auto ref = WanTransformer::random_on_device(cfg, whole, 17);
    auto dw = WanTransformer::random_on_device(cfg, shared, 17);
    const std::string ran = dw->device_model()->dwdp_transport();
    if (forced == "vmm" ? ran.rfind("vmm", 0) != 0 : !forced.empty() && ran != forced)
      fail(fmt::format("VGEN_DWDP_TRANSPORT={} but the arenas were shared over {}", forced, ran));
    const size_t bytes_dw = dw->device_model()->weight_bytes(), bytes_ref = ref->device_model()->weight_bytes();
    // Half of the block weights + 2 slots: never more than the whole model.
    if (!(bytes_dw <= bytes_ref))
      fail(fmt::format("DWDP holds {} weight bytes, the whole model {}", bytes_dw, bytes_ref));
    for (int prompt = 0; prompt < 3; ++prompt) {  // each rank its own inputs, as cfg/dp ranks have
      const uint64_t s = uint64_t(env.world_rank) * 100 + uint64_t(prompt) * 10;
      Tensor x = random_host({B, 16, T, H, W}, s + 1), ctx = random_host({B, L, cfg.text_dim}, s + 2);
      Tensor t = Tensor::from_vector({float(900 - 300 * prompt)}, {1});
      const std::vector<float> a = host_floats(predict(*ref, x, t, ctx));
      const std::vector<float> b = host_floats(predict(*dw, x, t, ctx));
      if (a.size() != b.size())
        fail(fmt::format("{} prompt {}: {} vs {} elements", dtype_name(dt), prompt, a.size(), b.size()));
      expect_identical(a.data(), b.data(), int64_t(a.size()), fmt::format("{} prompt {}", dtype_name(dt), prompt));
    }
  }  // each DWDP model ends with a barrier (~WanDeviceModel) before its arena is freed
  sync_compute_stream();
  host.world->barrier();
  if (env.world_rank == 0)
    std::printf("dwdp parity OK (%d ranks, fp32 and bf16, transport %s%s)\n", env.world_size,
                forced.empty() ? "auto" : forced.c_str(), share_gpu ? ", one GPU" : "");
  return 0;
}

}  // namespace
}  // namespace vgen

int main(int argc, char** argv) { return vgen::mesh_test_main(argc, argv, vgen::run); }
