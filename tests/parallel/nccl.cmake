# NcclCommunicator on 2 ranks with one GPU each (label gpu: runs on the GPU machine only).
# Only with the CUDA backend; CPU-only builds do not see this test.
if(VGEN_HAVE_CUDA)
  add_executable(nccl_comm_test ${CMAKE_CURRENT_LIST_DIR}/nccl_comm_test.cpp)
  target_link_libraries(nccl_comm_test PRIVATE vgen_lib GTest::gtest)
  add_test(NAME nccl_comm_np2 COMMAND ${VGEN_SKIP_STATUS} ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:nccl_comm_test>)
  # A gtest skip (fewer GPUs than ranks) is reported as skipped, not passed.
  set_tests_properties(nccl_comm_np2 PROPERTIES
    LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0" TIMEOUT 300
    SKIP_RETURN_CODE 77)
endif()
