// Tensor: dtype, shape, device and reference-counted storage (owned, or a view of a mapped file).
// Tensors are always contiguous (row-major); views share storage.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"

namespace vgen {

// kI8: the INT8 form of precision fp8 (quantised weights and activations, ops/fp8.h).
enum class DType : uint8_t { kF32, kBF16, kF16, kI64, kU8, kI8 };
enum class Device : uint8_t { kCPU, kCUDA };

size_t dtype_size(DType dt);
const char* dtype_name(DType dt);
const char* device_name(Device d);

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& s);
int64_t shape_numel(const Shape& s);

// A block of memory; `release` frees it (nullptr for memory owned elsewhere, e.g. an mmap kept
// alive by `keep_alive`).
struct Storage {
  void* ptr = nullptr;
  size_t bytes = 0;
  Device device = Device::kCPU;
  std::function<void(void*)> release;
  std::shared_ptr<void> keep_alive;
  ~Storage();
};

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::kF32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kI64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::kU8; }
template <> constexpr DType dtype_of<int8_t>() { return DType::kI8; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::kBF16; }  // raw 16-bit: bf16 or f16

class Tensor {
 public:
  Tensor() = default;
  static Tensor empty(const Shape& shape, DType dt, Device dev = Device::kCPU);
  static Tensor zeros(const Shape& shape, DType dt, Device dev = Device::kCPU);
  static Tensor from_storage(std::shared_ptr<Storage> st, size_t offset, const Shape& shape, DType dt);
  static Tensor from_vector(const std::vector<float>& v, const Shape& shape);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return int(shape_.size()); }
  int64_t dim(int i) const;  // negative counts from the end
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device : Device::kCPU; }
  bool is_cpu() const { return device() == Device::kCPU; }
  std::string str() const;  // "[1,16,3,4,4] f32 cpu"

  void* raw() { return static_cast<char*>(storage_->ptr) + offset_; }
  const void* raw() const { return static_cast<const char*>(storage_->ptr) + offset_; }
  template <typename T> T* data() { check_type<T>(); return static_cast<T*>(raw()); }
  template <typename T> const T* data() const { check_type<T>(); return static_cast<const T*>(raw()); }
  float* f32() { return data<float>(); }
  const float* f32() const { return data<float>(); }

  // Views (share storage).
  Tensor reshape(const Shape& shape) const;  // one -1 allowed
  Tensor narrow(int64_t start, int64_t len) const;  // along dim 0
  Tensor operator[](int64_t i) const;  // index dim 0, drops it

  // Copies.
  Tensor clone() const;
  Tensor to(DType dt) const;       // conversion on the host; same tensor if already dt
  Tensor to(Device dev) const;     // host <-> device copy; same tensor if already there
  void copy_from(const Tensor& src);  // same numel and dtype, any devices
  void fill_zero();

 private:
  template <typename T> void check_type() const {
    VGEN_ASSERT(dtype_size(dtype_) == sizeof(T) &&
                    (dtype_ == dtype_of<T>() || sizeof(T) == 2),
                "tensor {} accessed as another element type", str());
  }
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;
  Shape shape_;
  DType dtype_ = DType::kF32;
};

// Elementwise conversion between host buffers.
void convert_dtype(const void* src, DType src_dt, void* dst, DType dst_dt, size_t n);

}  // namespace vgen
