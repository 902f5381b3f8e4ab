// safetensors files (io/safetensors.cpp): the input is a whole file (8-byte header length, JSON
// header, data section). Rejected inputs end in kModel; an accepted file's every tensor lies inside
// the data section and holds exactly shape × dtype bytes, and reads back through WeightStore.
#include "fuzz_common.h"
#include "io/safetensors.h"

using namespace vgen;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::scratch_dir() / "input.safetensors";
  fuzz::write_file(path, data, size);
  fuzz::expect_documented({ExitCode::kModel}, [&] {
    SafeTensorsFile f(path.string());
    fuzz::check(f.data_offset() <= size && f.file_size() == size, "data section outside the file");
    for (auto& [name, ti] : f.infos()) {
      fuzz::check(ti.begin <= ti.end && ti.end <= f.data_size(), "tensor outside the data section", name);
      Tensor t = f.get(name);
      fuzz::check(t.shape() == ti.shape && t.dtype() == ti.dtype, "tensor view differs from its header", name);
      fuzz::check(size_t(t.numel()) * dtype_size(t.dtype()) == ti.end - ti.begin, "tensor size differs from its offsets",
                  name);
      const auto* p = static_cast<const unsigned char*>(t.raw());
      volatile unsigned char sink = 0;
      if (t.nbytes() > 0) sink = sink + p[0] + p[t.nbytes() - 1];  // first and last byte are readable
    }
    WeightStore ws = WeightStore::open(path.string());
    fuzz::check(ws.names().size() == f.infos().size(), "WeightStore lists other tensors than the file");
    size_t total = 0;
    for (auto& [name, ti] : f.infos()) total += ti.end - ti.begin;
    fuzz::check(ws.total_bytes() == total, "WeightStore total bytes");
  });
  return 0;
}
