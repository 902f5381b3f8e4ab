#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "core/json.h"

namespace vgen {
namespace fs = std::filesystem;

static DType parse_dtype(const std::string& s, const std::string& path, const std::string& name) {
  if (s == "F32") return DType::kF32;
  if (s == "BF16") return DType::kBF16;
  if (s == "F16") return DType::kF16;
  if (s == "I64") return DType::kI64;
  if (s == "U8") return DType::kU8;
  if (s == "I8") return DType::kI8;
  VGEN_THROW(ExitCode::kModel, "{}: tensor '{}' has unsupported dtype '{}' (supported: F32, BF16, F16, I64, U8, I8)",
             path, name, s);
}

SafeTensorsFile::SafeTensorsFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  VGEN_CHECK(fd >= 0, ExitCode::kModel, "cannot open safetensors file {}: {}", path, std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    VGEN_THROW(ExitCode::kModel, "cannot stat {}", path);
  }
  file_size_ = size_t(st.st_size);
  identity_ = {uint64_t(st.st_dev), uint64_t(st.st_ino), uint64_t(st.st_size),
               int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
  if (file_size_ < 8) {
    ::close(fd);
    VGEN_THROW(ExitCode::kModel, "{}: truncated safetensors file ({} bytes, no header length)", path, file_size_);
  }
  void* p = mmap(nullptr, file_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  VGEN_CHECK(p != MAP_FAILED, ExitCode::kModel, "cannot mmap {}", path);
  size_t sz = file_size_;
  keep_ = std::shared_ptr<void>(p, [sz](void* q) { munmap(q, sz); });

  uint64_t hlen = 0;
  std::memcpy(&hlen, p, 8);
  VGEN_CHECK(hlen <= file_size_ - 8, ExitCode::kModel,
             "{}: corrupt safetensors: header length {} runs past the end of the {}-byte file", path, hlen,
             file_size_);
  data_offset_ = 8 + size_t(hlen);
  data_ = static_cast<const char*>(p) + data_offset_;
  Json header;
  try {
    header = Json::parse(std::string(static_cast<const char*>(p) + 8, size_t(hlen)));
  } catch (const std::exception& e) {
    VGEN_THROW(ExitCode::kModel, "{}: corrupt safetensors header: {}", path, e.what());
  }
  VGEN_CHECK(header.is_object(), ExitCode::kModel, "{}: safetensors header is not a JSON object", path);
  size_t data_size = file_size_ - data_offset_;
  for (auto& [name, v] : header.items()) {
    if (name == "__metadata__") continue;
    VGEN_CHECK(v.is_object() && v.contains("dtype") && v["dtype"].is_string() && v.contains("shape") &&
                   v["shape"].is_array() && v.contains("data_offsets"),
               ExitCode::kModel, "{}: tensor '{}' lacks dtype (a string), shape (a list) or data_offsets", path, name);
    TensorInfo ti;
    ti.dtype = parse_dtype(v["dtype"].get<std::string>(), path, name);
    for (auto& d : v["shape"]) {
      VGEN_CHECK(d.is_number_integer() && d.get<int64_t>() >= 0, ExitCode::kModel,
                 "{}: tensor '{}' has a bad shape", path, name);
      ti.shape.push_back(d.get<int64_t>());
    }
    auto& off = v["data_offsets"];
    VGEN_CHECK(off.is_array() && off.size() == 2 && off[0].is_number_unsigned() && off[1].is_number_unsigned(),
               ExitCode::kModel, "{}: tensor '{}' bad data_offsets", path, name);
    ti.begin = off[0].get<size_t>();
    ti.end = off[1].get<size_t>();
    VGEN_CHECK(ti.begin <= ti.end && ti.end <= data_size, ExitCode::kModel,
               "{}: tensor '{}' offsets [{}, {}) out of range of the {}-byte data section (truncated file?)",
               path, name, ti.begin, ti.end, data_size);
    size_t need = dtype_size(ti.dtype);  // shape × dtype bytes; a product past size_t is refused, not wrapped
    for (int64_t d : ti.shape)
      VGEN_CHECK(!__builtin_mul_overflow(need, size_t(d), &need), ExitCode::kModel,
                 "{}: tensor '{}' shape {} is too large", path, name, shape_str(ti.shape));
    VGEN_CHECK(ti.end - ti.begin == need, ExitCode::kModel,
               "{}: tensor '{}' occupies {} bytes but shape {} {} needs {}", path, name, ti.end - ti.begin,
               shape_str(ti.shape), dtype_name(ti.dtype), need);
    infos_[name] = ti;
  }
}

Tensor SafeTensorsFile::get(const std::string& name) const {
  auto it = infos_.find(name);
  VGEN_CHECK(it != infos_.end(), ExitCode::kModel, "{}: no tensor '{}'", path_, name);
  auto st = std::make_shared<Storage>();
  st->ptr = const_cast<char*>(data_);
  st->bytes = file_size_ - data_offset_;
  st->keep_alive = keep_;
  return Tensor::from_storage(st, it->second.begin, it->second.shape, it->second.dtype);
}

void SafeTensorsFile::adopt_data(std::shared_ptr<void> data) {
  VGEN_ASSERT(data != nullptr || data_size() == 0, "{}: adopt_data without data", path_);
  data_ = static_cast<const char*>(data.get());
  keep_ = std::move(data);  // views taken before keep the mapping alive themselves
}

const SafeTensorsFile& WeightStore::file_of(const std::string& name) const {
  auto it = where_.find(name);
  VGEN_CHECK(it != where_.end(), ExitCode::kModel, "{}: missing tensor '{}'", source_, name);
  return *files_[it->second];
}

WeightStore WeightStore::open(const std::string& p) {
  WeightStore ws;
  ws.source_ = p;
  std::vector<std::string> files;
  if (fs::is_regular_file(p)) {
    files.push_back(p);
  } else {
    VGEN_CHECK(fs::is_directory(p), ExitCode::kModel, "model component folder {} does not exist", p);
    std::string index, single;
    for (auto& e : fs::directory_iterator(p)) {
      std::string n = e.path().filename().string();
      if (n.size() > 23 && n.ends_with(".safetensors.index.json")) index = e.path().string();
      else if (n.ends_with(".safetensors")) single = single.empty() ? e.path().string() : single;
    }
    if (!index.empty()) {
      Json j = read_json_file(index, ExitCode::kModel);
      VGEN_CHECK(j.contains("weight_map") && j["weight_map"].is_object(), ExitCode::kModel,
                 "{}: no weight_map", index);
      std::map<std::string, size_t> file_idx;
      for (auto& [key, shard] : j["weight_map"].items()) {
        VGEN_CHECK(shard.is_string(), ExitCode::kModel, "{}: weight_map entry '{}' is not a file name", index, key);
        std::string f = (fs::path(p) / shard.get<std::string>()).string();
        if (!file_idx.count(f)) {
          file_idx[f] = ws.files_.size();
          ws.files_.push_back(std::make_shared<SafeTensorsFile>(f));
        }
        VGEN_CHECK(ws.files_[file_idx[f]]->has(key), ExitCode::kModel, "{}: index maps '{}' to {} which lacks it",
                   index, key, f);
        ws.where_[key] = file_idx[f];
      }
      return ws;
    }
    VGEN_CHECK(!single.empty(), ExitCode::kModel, "no *.safetensors file in {}", p);
    files.push_back(single);
  }
  for (auto& f : files) {
    ws.files_.push_back(std::make_shared<SafeTensorsFile>(f));
    for (auto& [k, _] : ws.files_.back()->infos()) ws.where_[k] = ws.files_.size() - 1;
  }
  return ws;
}

std::vector<std::string> WeightStore::names() const {
  std::vector<std::string> out;
  for (auto& [k, _] : where_) out.push_back(k);
  return out;
}

Tensor WeightStore::get(const std::string& name) const {
  auto it = where_.find(name);
  VGEN_CHECK(it != where_.end(), ExitCode::kModel, "{}: missing tensor '{}'", source_, name);
  return files_[it->second]->get(name);
}

Tensor WeightStore::get_as(const std::string& name, DType dt, const Shape& expect) const {
  Tensor t = get(name);
  if (!expect.empty())
    VGEN_CHECK(t.shape() == expect, ExitCode::kModel, "{}: tensor '{}' has shape {}, expected {}", source_, name,
               shape_str(t.shape()), shape_str(expect));
  return t.dtype() == dt ? t.clone() : t.to(dt);
}

void WeightStore::check_float(const std::string& name, const Shape& expect) const {
  auto it = where_.find(name);
  VGEN_CHECK(it != where_.end(), ExitCode::kModel, "{}: missing tensor '{}'", source_, name);
  const TensorInfo& ti = files_[it->second]->infos().at(name);
  VGEN_CHECK(ti.shape == expect, ExitCode::kModel, "{}: tensor '{}' has shape {}, expected {}", source_, name,
             shape_str(ti.shape), shape_str(expect));
  VGEN_CHECK(ti.dtype == DType::kF32 || ti.dtype == DType::kBF16 || ti.dtype == DType::kF16, ExitCode::kModel,
             "{}: tensor '{}' has dtype {}, expected F32, BF16 or F16", source_, name, dtype_name(ti.dtype));
}

Tensor WeightStore::get_f32(const std::string& name, const Shape& expect) const {
  return get_as(name, DType::kF32, expect);
}

int64_t WeightStore::total_numel() const {
  int64_t n = 0;
  for (auto& [name, i] : where_) n += shape_numel(files_[i]->infos().at(name).shape);
  return n;
}

bool has_safetensors(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) return false;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.ends_with(".safetensors") || n.ends_with(".safetensors.index.json")) return true;
  }
  return false;
}

size_t WeightStore::total_bytes() const {
  size_t n = 0;
  for (auto& f : files_)
    for (auto& [k, ti] : f->infos()) n += ti.end - ti.begin;
  return n;
}

void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  OrderedJson header = OrderedJson::object();
  size_t off = 0;
  std::vector<Tensor> host;
  for (auto& [name, t0] : tensors) {
    Tensor t = t0.to(Device::kCPU);
    const char* dt = t.dtype() == DType::kF32 ? "F32" : t.dtype() == DType::kBF16 ? "BF16"
                   : t.dtype() == DType::kF16 ? "F16" : t.dtype() == DType::kI64 ? "I64" : t.dtype() == DType::kI8 ? "I8" : "U8";
    header[name] = {{"dtype", dt}, {"shape", t.shape()}, {"data_offsets", {off, off + t.nbytes()}}};
    off += t.nbytes();
    host.push_back(t);
  }
  std::string h = header.dump();
  while ((h.size() + 8) % 8) h += ' ';
  std::string buf(8, '\0');
  uint64_t hl = h.size();
  std::memcpy(buf.data(), &hl, 8);
  buf += h;
  for (auto& t : host) buf.append(static_cast<const char*>(t.raw()), t.nbytes());
  write_text_file_atomic(path, buf);
}

}  // namespace vgen
