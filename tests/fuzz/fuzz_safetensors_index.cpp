// Sharded checkpoints (WeightStore::open of a folder with `*.safetensors.index.json`): the input is
// the index JSON; the folder also holds one valid shard with tensors "a" and "b". Rejected inputs
// end in kModel; an accepted index maps every name to a tensor that reads back.
#include <map>

#include "core/json.h"
#include "fuzz_common.h"
#include "io/safetensors.h"

using namespace vgen;

namespace {
std::filesystem::path g_dir;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  g_dir = fuzz::scratch_dir() / "sharded";
  std::filesystem::create_directories(g_dir);
  Tensor a = Tensor::from_vector({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {2, 3});
  Tensor b = Tensor::zeros({4}, DType::kI64);
  save_safetensors((g_dir / "model-00001-of-00001.safetensors").string(), {{"a", a}, {"b", b}});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::write_file(g_dir / "model.safetensors.index.json", data, size);
  fuzz::expect_documented({ExitCode::kModel}, [&] {
    WeightStore ws = WeightStore::open(g_dir.string());
    for (auto& name : ws.names()) {
      fuzz::check(name == "a" || name == "b", "index names a tensor the shard lacks", name);
      Tensor t = ws.get(name);
      fuzz::check(t.numel() == (name == "a" ? 6 : 4), "tensor read back with another size", name);
    }
  });
  return 0;
}
