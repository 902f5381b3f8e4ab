// vgen CLI: parse arguments, call lib/, map errors to exit codes.
#include <cstdio>

#include "core/error.h"

int main(int argc, char** argv) {
  std::fprintf(stderr, "vgen: CLI not built yet\n");
  return int(vgen::ExitCode::kUsage);
}
