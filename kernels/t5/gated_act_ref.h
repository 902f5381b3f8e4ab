// T5 feed-forward activation, CPU reference: out = act(gate) ⊙ lin (gated, e.g. "gated-gelu" with
// gelu_new) or out = act(gate) (lin == nullptr, e.g. T5 v1.0 "relu").
#pragma once
#include <cstdint>

namespace vgen::kern {

enum class T5Act : int {
  kRelu = 0,
  kGeluTanh = 1,  // gelu_new / gelu_pytorch_tanh: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
  kGeluErf = 2,   // gelu: 0.5·x·(1 + erf(x/√2))
  kSilu = 3,
};

// gate, lin, out [n] (out may alias gate or lin).
void gated_act_ref(const float* gate, const float* lin, float* out, int64_t n, T5Act act);

}  // namespace vgen::kern
