#include "kernels/embed/gather_rows_ref.h"

#include <cstring>

namespace vgen::kern {

void gather_rows_ref(const float* table, const int64_t* index, float* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out + r * cols, table + index[r] * cols, size_t(cols) * sizeof(float));
}

}  // namespace vgen::kern
