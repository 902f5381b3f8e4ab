// The check the CPU unit tests share for a refused call: it throws vgen's Error with the expected
// exit code and a message naming the problem.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace vgen::testing {

template <typename F>
void expect_error(F&& f, ExitCode code, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error (expected '" << text << "')";
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(code)) << e.message();
    EXPECT_NE(e.message().find(text), std::string::npos) << "'" << text << "' not in: " << e.message();
  }
}

}  // namespace vgen::testing
