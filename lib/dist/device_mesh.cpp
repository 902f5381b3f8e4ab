// CPU-only build: no device mesh (device_mesh_cuda.cpp has the CUDA implementation).
#include "dist/device_mesh.h"

#include "core/error.h"

namespace vgen {

#ifndef VGEN_WITH_CUDA
int select_mesh_device() {
  VGEN_THROW(ExitCode::kUsage, "select_mesh_device: this vgen was built without the CUDA backend (VGEN_CUDA=OFF)");
}
std::shared_ptr<Mesh> device_mesh(const Mesh&) {
  VGEN_THROW(ExitCode::kUsage, "device_mesh: this vgen was built without the CUDA backend (VGEN_CUDA=OFF)");
}
#endif

}  // namespace vgen
