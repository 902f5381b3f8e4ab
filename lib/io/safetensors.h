// safetensors reader: memory-mapped single files and sharded `*.safetensors.index.json` sets.
// Headers and offsets are validated against the file size; tensors are zero-copy views of the
// mapping, or of host memory the file's data section was read into (adopt_data, dist/weight_stream.h).
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
  Tensor get(const std::string& name) const;  // view in the file's dtype

  size_t file_size() const { return file_size_; }
  size_t data_offset() const { return data_offset_; }  // bytes before the data section (8 + header)
  size_t data_size() const { return file_size_ - data_offset_; }
  // Identity of the file as opened (device, inode, size, modification time): a reader compares it
  // to detect a file that changed after its header was validated.
  struct Identity {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const Identity&) const = default;
  };
  const Identity& identity() const { return identity_; }
  // From now on tensors are views of `data` (data_size() bytes: the data section, read elsewhere);
  // the mapping is released.
  void adopt_data(std::shared_ptr<void> data);

 private:
  std::string path_;
  std::shared_ptr<void> keep_;  // the mapping (munmaps on release) or the adopted data
  const char* data_ = nullptr;  // start of the data section in keep_
  size_t file_size_ = 0;
  size_t data_offset_ = 0;
  Identity identity_;
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
  // The checks of get_f32(name, expect) on the header alone (present, shape, a float dtype): no
  // data is read (a preflight's check of a checkpoint).
  void check_float(const std::string& name, const Shape& expect) const;
  // Converted to f32 (a copy unless already f32), shape checked when `expect` is non-empty.
  Tensor get_f32(const std::string& name, const Shape& expect = {}) const;
  // Converted to `dt` (a copy unless already dt), shape checked when `expect` is non-empty.
  Tensor get_as(const std::string& name, DType dt, const Shape& expect = {}) const;
  const std::string& source() const { return source_; }
  size_t total_bytes() const;
  int64_t total_numel() const;  // elements of every tensor (headers only)
  // The files in a fixed order (the index's sorted shard names, or the one file) and the file of a
  // tensor (throws kModel naming a missing tensor).
  const std::vector<std::shared_ptr<SafeTensorsFile>>& files() const { return files_; }
  const SafeTensorsFile& file_of(const std::string& name) const;

 private:
  std::string source_;
  std::vector<std::shared_ptr<SafeTensorsFile>> files_;
  std::map<std::string, size_t> where_;
};

// Whether `dir` holds safetensors weights (a file, or a sharded index).
bool has_safetensors(const std::string& dir);

// Writes tensors (f32, bf16, f16, i64) as one safetensors file, atomically.
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);

}  // namespace vgen
