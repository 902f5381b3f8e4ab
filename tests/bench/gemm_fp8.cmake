# FP8 e4m3 GEMM vs bf16 GEMM and the activation quantisation at Wan-14B block shapes (label bench,
# never gates; CUDA builds only), JSON lines. Run on the GPU machine:
#   ctest -L bench -R bench_gemm_fp8 --output-on-failure   (or: bench_gemm_fp8 [--quick])
if(VGEN_HAVE_CUDA)
  add_executable(bench_gemm_fp8 ${CMAKE_CURRENT_LIST_DIR}/bench_gemm_fp8.cpp)
  target_link_libraries(bench_gemm_fp8 PRIVATE vgen_lib)
  add_test(NAME bench_gemm_fp8 COMMAND $<TARGET_FILE:bench_gemm_fp8>)  # exit 77: no device
  set_tests_properties(bench_gemm_fp8 PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600
                       SKIP_RETURN_CODE 77)
endif()
