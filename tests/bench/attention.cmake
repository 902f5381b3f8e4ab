# Attention backends side by side at Wan-14B shapes (label bench, never gates; CUDA builds only):
# cuDNN SDPA vs the native flash kernel, JSON lines. Run on the GPU machine:
#   ctest -L bench -R bench_attention --output-on-failure   (or: attention_bench [--quick] [S ...])
if(VGEN_HAVE_CUDA)
  add_executable(attention_bench ${CMAKE_CURRENT_LIST_DIR}/attention_bench.cpp)
  target_link_libraries(attention_bench PRIVATE vgen_lib)
  add_test(NAME bench_attention COMMAND $<TARGET_FILE:attention_bench>)
  set_tests_properties(bench_attention PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endif()
# FP8 attention against the bf16 Hopper kernel (JSON lines): attention_fp8_bench [S ...]
if(VGEN_HAVE_CUDA)
  add_executable(attention_fp8_bench ${CMAKE_CURRENT_LIST_DIR}/attention_fp8_bench.cpp)
  target_link_libraries(attention_fp8_bench PRIVATE vgen_lib)
  add_test(NAME bench_attention_fp8 COMMAND $<TARGET_FILE:attention_fp8_bench>)
  set_tests_properties(bench_attention_fp8 PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600
                       SKIP_RETURN_CODE 77)
endif()
# Where the FP8 attention's error comes from, on the CPU (JSON lines): attention_fp8_error_bench [S]
add_executable(attention_fp8_error_bench ${CMAKE_CURRENT_LIST_DIR}/attention_fp8_error_bench.cpp)
target_link_libraries(attention_fp8_error_bench PRIVATE vgen_kernels)
add_test(NAME bench_attention_fp8_error COMMAND $<TARGET_FILE:attention_fp8_error_bench> 1024)
set_tests_properties(bench_attention_fp8_error PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
