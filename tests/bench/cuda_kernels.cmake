# GPU kernel timings at Wan shapes (label bench, never gates; CUDA builds only): flash attention
# and the cuBLASLt GEMMs of a DiT block. Run on the GPU machine: ctest -L bench -R cuda_kernels.
if(VGEN_HAVE_CUDA)
  add_executable(cuda_kernels_bench ${CMAKE_CURRENT_LIST_DIR}/cuda_kernels_bench.cpp)
  target_link_libraries(cuda_kernels_bench PRIVATE vgen_lib)
  add_test(NAME bench_cuda_kernels COMMAND $<TARGET_FILE:cuda_kernels_bench>)
  set_tests_properties(bench_cuda_kernels PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endif()
