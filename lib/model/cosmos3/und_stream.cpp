// A build without CUDA: the host holds every weight, so no understanding tower is streamed.
#include "model/cosmos3/und_stream.h"

#include "core/no_cuda_error.h"

namespace vgen {

#ifndef VGEN_WITH_CUDA
Cosmos3UndStream::Cosmos3UndStream() { throw_no_cuda("the streamed understanding tower"); }
void Cosmos3UndStream::run(const Cosmos3UndHost&, const std::function<bool(size_t, const Cosmos3Tower&)>&) const {
  throw_no_cuda("the streamed understanding tower");
}
#endif

}  // namespace vgen
