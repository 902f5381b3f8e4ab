# Parser fuzzing (ctest label fuzz): tests/fuzz/CMakeLists.txt builds one libFuzzer target per
# parser with clang, ASan and UBSan from only the parser sources, as an external project of this
# build (in <build>/fuzz); each test runs one target from its seed corpus (tests/fuzz/corpus) with a
# fixed seed and number of runs, capped at 8 s, so the nine stay under 80 s together. Without
# clang++ or libFuzzer (or with -DVGEN_FUZZ=OFF) the targets are not built and the tests not
# registered.
option(VGEN_FUZZ "Build and run the parser fuzz tests (needs clang++ with libFuzzer)" ON)
if(NOT VGEN_FUZZ)
  return()
endif()
find_program(VGEN_FUZZ_CXX NAMES clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14)
# Probed once per compiler (cached): can it build and link a sanitized libFuzzer target?
if(VGEN_FUZZ_CXX AND NOT VGEN_FUZZ_PROBED STREQUAL VGEN_FUZZ_CXX)
  set(_probe ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe)
  file(WRITE ${_probe}/probe.cpp
    "#include <cstddef>\n#include <cstdint>\n"
    "extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n")
  execute_process(COMMAND ${VGEN_FUZZ_CXX} -fsanitize=fuzzer,address,undefined ${_probe}/probe.cpp -o ${_probe}/probe
    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
  set(VGEN_FUZZ_PROBED ${VGEN_FUZZ_CXX} CACHE INTERNAL "")
  if(_rc EQUAL 0)
    set(VGEN_FUZZ_WORKS TRUE CACHE INTERNAL "")
  else()
    set(VGEN_FUZZ_WORKS FALSE CACHE INTERNAL "")
  endif()
endif()
set(_vgen_fuzz_ok FALSE)
if(VGEN_FUZZ_CXX AND VGEN_FUZZ_WORKS)
  set(_vgen_fuzz_ok TRUE)
endif()
if(NOT _vgen_fuzz_ok)
  message(STATUS "vgen: fuzz tests off (no clang++ with -fsanitize=fuzzer,address,undefined: '${VGEN_FUZZ_CXX}')")
  return()
endif()
message(STATUS "vgen: fuzz tests on (${VGEN_FUZZ_CXX})")

include(ExternalProject)
set(VGEN_FUZZ_DIR ${CMAKE_BINARY_DIR}/fuzz)
ExternalProject_Add(vgen_fuzz
  SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}
  BINARY_DIR ${VGEN_FUZZ_DIR}
  CMAKE_ARGS -DCMAKE_CXX_COMPILER=${VGEN_FUZZ_CXX} -DVGEN_SOURCE_DIR=${PROJECT_SOURCE_DIR}
  INSTALL_COMMAND ""
  BUILD_ALWAYS ON)

# target, runs (about 4 s of this machine kind each; the 8 s cap ends a slower run early).
set(VGEN_FUZZ_RUNS safetensors 40000 safetensors_index 30000 config 20000 recipe 12000 prompts 12000
    tokenizer 4000 tokenizer_config 800 bpe_tokenizer 800)
if(VGEN_IMAGES)
  list(APPEND VGEN_FUZZ_RUNS image 15000)
endif()
# Seed folders besides tests/fuzz/corpus/<target>: the image target starts from the test images.
set(VGEN_FUZZ_SEEDS_image ${PROJECT_SOURCE_DIR}/tests/golden-i2v/images ${PROJECT_SOURCE_DIR}/tests/images/files)
while(VGEN_FUZZ_RUNS)
  list(POP_FRONT VGEN_FUZZ_RUNS target runs)
  add_test(NAME fuzz_${target}
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_fuzz.sh ${VGEN_FUZZ_DIR}/fuzz_${target} ${target} ${runs} 8
            ${VGEN_FUZZ_DIR}/work/${target} ${VGEN_FUZZ_SEEDS_${target}})
  set_tests_properties(fuzz_${target} PROPERTIES LABELS fuzz TIMEOUT 60)
endwhile()
