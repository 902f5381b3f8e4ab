#include "core/tensor.h"

#include <cstdlib>
#include <cstring>

#include "core/device_memory.h"
#include "kernels/common/bf16.h"

namespace vgen {

size_t dtype_size(DType dt) {
  switch (dt) {
    case DType::kF32: return 4;
    case DType::kBF16: return 2;
    case DType::kF16: return 2;
    case DType::kI64: return 8;
    case DType::kU8: return 1;
    case DType::kI8: return 1;
  }
  return 0;
}

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::kF32: return "f32";
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
    case DType::kI64: return "i64";
    case DType::kU8: return "u8";
    case DType::kI8: return "i8";
  }
  return "?";
}

const char* device_name(Device d) { return d == Device::kCPU ? "cpu" : "cuda"; }

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

Storage::~Storage() {
  if (release && ptr) release(ptr);
}

static std::shared_ptr<Storage> alloc_storage(size_t bytes, Device dev) {
  auto st = std::make_shared<Storage>();
  st->bytes = bytes;
  st->device = dev;
  if (dev == Device::kCPU) {
    // 64-byte alignment for vector loads; at least one byte so ptr is never null.
    size_t rounded = (bytes + 63) / 64 * 64;
    st->ptr = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!st->ptr) VGEN_THROW(ExitCode::kInternal, "host allocation of {} bytes failed", bytes);
    st->release = [](void* p) { std::free(p); };
  } else {
    st->ptr = device_malloc(bytes);
    st->release = [](void* p) { device_free(p); };
  }
  return st;
}

Tensor Tensor::empty(const Shape& shape, DType dt, Device dev) {
  for (auto d : shape) VGEN_ASSERT(d >= 0, "negative dimension in {}", shape_str(shape));
  Tensor t;
  t.storage_ = alloc_storage(size_t(shape_numel(shape)) * dtype_size(dt), dev);
  t.shape_ = shape;
  t.dtype_ = dt;
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dt, Device dev) {
  Tensor t = empty(shape, dt, dev);
  t.fill_zero();
  return t;
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> st, size_t offset, const Shape& shape, DType dt) {
  Tensor t;
  VGEN_ASSERT(offset + size_t(shape_numel(shape)) * dtype_size(dt) <= st->bytes, "view past storage end");
  t.storage_ = std::move(st);
  t.offset_ = offset;
  t.shape_ = shape;
  t.dtype_ = dt;
  return t;
}

Tensor Tensor::from_vector(const std::vector<float>& v, const Shape& shape) {
  VGEN_ASSERT(int64_t(v.size()) == shape_numel(shape), "from_vector size mismatch");
  Tensor t = empty(shape, DType::kF32);
  std::memcpy(t.raw(), v.data(), v.size() * 4);
  return t;
}

int64_t Tensor::dim(int i) const {
  int n = ndim();
  if (i < 0) i += n;
  VGEN_ASSERT(i >= 0 && i < n, "dim {} out of range for {}", i, str());
  return shape_[size_t(i)];
}

std::string Tensor::str() const {
  return shape_str(shape_) + " " + dtype_name(dtype_) + " " + device_name(device());
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape s = shape;
  int64_t known = 1;
  int neg = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      VGEN_ASSERT(neg < 0, "reshape with two -1");
      neg = int(i);
    } else {
      known *= s[i];
    }
  }
  if (neg >= 0) s[size_t(neg)] = known ? numel() / known : 0;
  VGEN_ASSERT(shape_numel(s) == numel(), "reshape {} to {}", str(), shape_str(shape));
  Tensor t = *this;
  t.shape_ = s;
  return t;
}

Tensor Tensor::narrow(int64_t start, int64_t len) const {
  VGEN_ASSERT(ndim() >= 1 && start >= 0 && len >= 0 && start + len <= shape_[0],
              "narrow({}, {}) of {}", start, len, str());
  Tensor t = *this;
  int64_t inner = shape_[0] ? numel() / shape_[0] : 0;
  t.offset_ += size_t(start * inner) * dtype_size(dtype_);
  t.shape_[0] = len;
  return t;
}

Tensor Tensor::operator[](int64_t i) const {
  Tensor t = narrow(i, 1);
  t.shape_.erase(t.shape_.begin());
  return t;
}

void Tensor::fill_zero() {
  if (device() == Device::kCPU)
    std::memset(raw(), 0, nbytes());
  else
    device_memset_zero(raw(), nbytes());
}

void Tensor::copy_from(const Tensor& src) {
  VGEN_ASSERT(src.numel() == numel() && src.dtype() == dtype_, "copy_from {} into {}", src.str(), str());
  Device d = device(), s = src.device();
  if (d == Device::kCPU && s == Device::kCPU) std::memcpy(raw(), src.raw(), nbytes());
  else if (d == Device::kCUDA && s == Device::kCPU) memcpy_h2d(raw(), src.raw(), nbytes());
  else if (d == Device::kCPU && s == Device::kCUDA) memcpy_d2h(raw(), src.raw(), nbytes());
  else memcpy_d2d(raw(), src.raw(), nbytes());
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_, device());
  t.copy_from(*this);
  return t;
}

Tensor Tensor::to(Device dev) const {
  if (dev == device()) return *this;
  Tensor t = empty(shape_, dtype_, dev);
  t.copy_from(*this);
  return t;
}

Tensor Tensor::to(DType dt) const {
  if (dt == dtype_) return *this;
  VGEN_CHECK(is_cpu(), ExitCode::kInternal, "dtype conversion of a device tensor {} on the host path", str());
  Tensor t = empty(shape_, dt, Device::kCPU);
  convert_dtype(raw(), dtype_, t.raw(), dt, size_t(numel()));
  return t;
}

void convert_dtype(const void* src, DType sdt, void* dst, DType ddt, size_t n) {
  if (sdt == ddt) {
    std::memcpy(dst, src, n * dtype_size(sdt));
    return;
  }
  auto load = [&](size_t i) -> double {
    switch (sdt) {
      case DType::kF32: return static_cast<const float*>(src)[i];
      case DType::kBF16: return kern::bf16_to_f32(static_cast<const uint16_t*>(src)[i]);
      case DType::kF16: return kern::f16_to_f32(static_cast<const uint16_t*>(src)[i]);
      case DType::kI64: return double(static_cast<const int64_t*>(src)[i]);
      case DType::kU8: return static_cast<const uint8_t*>(src)[i];
      case DType::kI8: return static_cast<const int8_t*>(src)[i];
    }
    return 0;
  };
  for (size_t i = 0; i < n; ++i) {
    double v = load(i);
    switch (ddt) {
      case DType::kF32: static_cast<float*>(dst)[i] = float(v); break;
      case DType::kBF16: static_cast<uint16_t*>(dst)[i] = kern::f32_to_bf16(float(v)); break;
      case DType::kF16: static_cast<uint16_t*>(dst)[i] = kern::f32_to_f16(float(v)); break;
      case DType::kI64: static_cast<int64_t*>(dst)[i] = int64_t(v); break;
      case DType::kU8: static_cast<uint8_t*>(dst)[i] = uint8_t(v); break;
      case DType::kI8: static_cast<int8_t*>(dst)[i] = int8_t(v); break;
    }
  }
}

}  // namespace vgen
