# DWDP on 2 ranks with one GPU each (label gpu): the split model equals the whole one bit for bit.
# Only with the CUDA backend; with fewer GPUs it prints a skip line and counts as skipped.
if(VGEN_HAVE_CUDA)
  add_executable(dwdp_test ${CMAKE_CURRENT_LIST_DIR}/dwdp_test.cpp)
  target_link_libraries(dwdp_test PRIVATE vgen_lib)
  add_test(NAME dwdp_np2 COMMAND ${VGEN_SKIP_STATUS} ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:dwdp_test>)
  set_tests_properties(dwdp_np2 PROPERTIES
    LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0" TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
