// The checkpoint loader: reads the safetensors bytes each rank needs and delivers them in place,
// reading every byte once per node.
//
// The ranks of a node register the same components (headers only) and each requests what it needs:
// a tensor into a preallocated device tensor (converted on the device from its stored dtype), or a
// whole component into host memory (the CPU path, which computes on host weights). run() then cuts
// the bytes anyone on the node needs into segments of at most buffer_bytes (at element boundaries),
// deals them to the node's ranks by bytes, and each rank reads its segments with `threads` reader
// threads (pread into `buffers` bounded staging buffers, pinned for the device) while the main thread
// hands finished segments on: to the device over the copy stream, and to the other ranks that need
// them over the node communicator (NCCL for device requests, MPI for host ones). No host copy of a
// device-bound model exists; host memory stays at buffers × buffer_bytes.
//
// A file that is truncated, unreadable or changes while it is read throws kModel naming the file and
// the tensor; the caller ends the job (apps/ call MPI_Abort), so no rank waits for bytes that will
// not come.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "dist/communicator.h"
#include "io/safetensors.h"

namespace vgen {

struct WeightStreamOptions {
  int threads = 4;                    // reader threads per rank
  size_t buffer_bytes = size_t(64) << 20;  // largest segment
  int buffers = 4;                    // staging buffers per rank
  bool share = true;                  // split the reading among the node's ranks
  // Defaults overridden by VGEN_LOAD_THREADS, VGEN_LOAD_BUFFER_MIB, VGEN_LOAD_BUFFERS and
  // VGEN_LOAD_SHARE=0 (every rank reads all it needs itself).
  static WeightStreamOptions from_env();
};

struct LoadComponentStats {
  double seconds = 0;  // from the start of the first run() until the component was in place
  size_t bytes = 0;    // bytes of it delivered to this rank (as stored in the files)
};

struct LoadStats {
  double seconds = 0;         // wall time inside run()
  size_t bytes_read = 0;      // bytes this rank read from checkpoint files
  size_t bytes_received = 0;  // bytes received from the node's other ranks
  std::map<std::string, LoadComponentStats> components;
};

class WeightStream {
 public:
  // node_host: MPI communicator of the ranks of this node that load together (null: this rank
  // alone); node_device: an NCCL communicator over the same ranks, needed when device requests are
  // shared (null: device requests are read by the requesting rank itself).
  WeightStream(std::shared_ptr<Communicator> node_host, std::shared_ptr<Communicator> node_device,
               const WeightStreamOptions& options = WeightStreamOptions::from_env());
  ~WeightStream();
  WeightStream(const WeightStream&) = delete;
  WeightStream& operator=(const WeightStream&) = delete;

  // Every rank of the node adds the same components in the same order. Returns the component id.
  int add_component(const std::string& name, const WeightStore& store);
  // Tensor `name` of component `c` converted into `dst` (a device tensor, f32/bf16/f16, as many
  // elements as stored). `file_shape` (if given) must equal the stored shape; otherwise only the
  // element count is checked. Filled when run() returns.
  void request(int c, const std::string& name, const Tensor& dst, const Shape& file_shape = {});
  // The whole component `c` in host memory: after run() its files' tensors are views of it.
  void request_host(int c);
  // Runs at the end of the next run(), after its bytes are in place (e.g. device layout permutes).
  void on_done(std::function<void()> f);
  // Collective over the node: every rank calls run() equally often, with or without requests.
  void run();

  const LoadStats& stats() const { return stats_; }
  const WeightStreamOptions& options() const { return opt_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  WeightStreamOptions opt_;
  LoadStats stats_;
};

}  // namespace vgen
