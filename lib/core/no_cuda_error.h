// What a CPU-only build (VGEN_CUDA=OFF) answers when a device op is called: a kUsage error naming
// the op and saying to use device: cpu, one message for every such entry point. (The file is not
// named *_cuda.cpp: lib/CMakeLists.txt leaves those out of a CPU-only build.)
#pragma once

namespace vgen {

[[noreturn]] void throw_no_cuda(const char* what);

}  // namespace vgen
