#include "kernels/conv3d/conv_weight_ref.h"

namespace vgen::kern {

void conv_weight_taps_last_ref(const float* src, float* dst, int64_t cout, int64_t cout_store, int64_t cin,
                               int64_t taps) {
  for (int64_t co = 0; co < cout_store; ++co)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t ci = 0; ci < cin; ++ci)
        dst[(co * taps + t) * cin + ci] = co < cout ? src[(co * cin + ci) * taps + t] : 0.0f;
}

}  // namespace vgen::kern
