# Cosmos 3 forward benchmark (label bench, never gates; CUDA builds only): the prefill and one CFG
# step of the generation tower with random bf16 weights at real shapes. The measurement is
# scripts/bench/gpu_suite.sh cosmos3 on the GPU machine; the ctest entry is a two-layer smoke run.
if(VGEN_HAVE_CUDA)
  add_executable(vgen_cosmos3_bench ${CMAKE_CURRENT_LIST_DIR}/cosmos3_bench.cpp)
  target_link_libraries(vgen_cosmos3_bench PRIVATE vgen_lib)
  target_compile_definitions(vgen_cosmos3_bench PRIVATE VGEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME bench_cosmos3_smoke
           COMMAND $<TARGET_FILE:vgen_cosmos3_bench> --layers 2 --shapes 480x832x21 --reps 1 --warmup 0)
  set_tests_properties(bench_cosmos3_smoke PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endif()
