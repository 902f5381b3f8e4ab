// safetensors reader: memory-mapped single files and sharded `*.safetensors.index.json` sets.
// Headers and offsets are validated against the file size; tensors are zero-copy views.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace vgen {

struct TensorInfo {
  DType dtype;
  Shape shape;
  size_t begin = 0, end = 0;  // byte offsets in the data section
};

class SafeTensorsFile {
 public:
  explicit SafeTensorsFile(const std::string& path);
  const std::string& path() const { return path_; }
  bool has(const std::string& name) const { return infos_.count(name) != 0; }
  const std::map<std::string, TensorInfo>& infos() const { return infos_; }
  Tensor get(const std::string& name) const;  // mmap view in the file's dtype

 private:
  std::string path_;
  std::shared_ptr<void> map_;  // munmaps on release
  size_t file_size_ = 0;
  size_t data_offset_ = 0;
  std::map<std::string, TensorInfo> infos_;
};

// All tensors of one component folder (single file or sharded index).
class WeightStore {
 public:
  // `dir` holds either `<stem>.safetensors` or `<stem>.safetensors.index.json` (any stem); pass a
  // file path to open exactly that file.
  static WeightStore open(const std::string& path_or_dir);
  bool has(const std::string& name) const { return where_.count(name) != 0; }
  std::vector<std::string> names() const;
  Tensor get(const std::string& name) const;  // file dtype, mmap view
  // Converted to f32 (a copy unless already f32), shape checked when `expect` is non-empty.
  Tensor get_f32(const std::string& name, const Shape& expect = {}) const;
  // Converted to `dt` (a copy unless already dt), shape checked when `expect` is non-empty.
  Tensor get_as(const std::string& name, DType dt, const Shape& expect = {}) const;
  const std::string& source() const { return source_; }
  size_t total_bytes() const;

 private:
  std::string source_;
  std::vector<std::shared_ptr<SafeTensorsFile>> files_;
  std::map<std::string, size_t> where_;
};

// Writes tensors (f32, bf16, f16, i64) as one safetensors file, atomically.
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);

}  // namespace vgen
