// Device memory hooks used by Tensor. Without the CUDA backend every call throws.
#pragma once
#include <cstddef>

namespace vgen {

bool cuda_available();  // built with CUDA and a device is present
void* device_malloc(size_t bytes);
void device_free(void* p);
void memcpy_h2d(void* dst, const void* src, size_t bytes);
void memcpy_d2h(void* dst, const void* src, size_t bytes);
void memcpy_d2d(void* dst, const void* src, size_t bytes);
void device_memset_zero(void* p, size_t bytes);
size_t device_peak_bytes();  // peak bytes allocated through device_malloc in this process

}  // namespace vgen
