#include "dist/broadcast_tensor.h"

#include <algorithm>

namespace vgen {

void broadcast_tensor(Communicator& comm, Tensor& t, int root) {
  constexpr int64_t kMaxDims = 6;
  Tensor head = Tensor::empty({2 + kMaxDims}, DType::kI64);  // [defined, dtype, ndim, dims...]: -1 = none
  int64_t* h = head.data<int64_t>();
  std::fill(h, h + 2 + kMaxDims, int64_t(-1));
  if (comm.rank() == root && t.defined()) {
    VGEN_ASSERT(t.ndim() <= kMaxDims && t.device() == Device::kCPU, "broadcast_tensor: {} is not a host tensor of "
                "at most {} dimensions", t.str(), kMaxDims);
    h[0] = int64_t(t.dtype());
    h[1] = t.ndim();
    for (int64_t i = 0; i < t.ndim(); ++i) h[2 + i] = t.dim(i);
  }
  comm.broadcast(head, root);
  if (h[0] < 0) {
    t = Tensor();
    return;
  }
  if (comm.rank() != root) t = Tensor::empty(Shape(h + 2, h + 2 + h[1]), DType(h[0]));
  comm.broadcast(t, root);
}

}  // namespace vgen
