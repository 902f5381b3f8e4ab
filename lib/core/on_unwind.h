// Runs a cleanup only when an exception leaves the scope: the normal path calls the cleanup itself,
// so its errors are reported there; on the unwinding path they are swallowed (one error at a time).
#pragma once
#include <exception>
#include <utility>

namespace vgen {

template <typename F> class OnUnwind {
 public:
  explicit OnUnwind(F f) : f_(std::move(f)) {}
  ~OnUnwind() {
    if (std::uncaught_exceptions() > entered_) {
      try {
        f_();
      } catch (...) {
      }
    }
  }
  OnUnwind(const OnUnwind&) = delete;
  OnUnwind& operator=(const OnUnwind&) = delete;

 private:
  F f_;
  int entered_ = std::uncaught_exceptions();
};

}  // namespace vgen
