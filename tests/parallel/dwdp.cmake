# DWDP on the host over MPI one-sided (label parallel, every build): the split model equals the
# whole one bit for bit on 2, 3 and 4 ranks, with the default layout and with 4 KiB slices (several
# slices per source: the strided gets).
add_executable(dwdp_host_test ${CMAKE_CURRENT_LIST_DIR}/dwdp_host_test.cpp)
target_link_libraries(dwdp_host_test PRIVATE vgen_lib)
target_compile_definitions(dwdp_host_test PRIVATE VGEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
foreach(np 2 3 4)
  add_test(NAME dwdp_host_np${np} COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:dwdp_host_test>)
  set_tests_properties(dwdp_host_np${np} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
  add_test(NAME dwdp_host_np${np}_slices COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:dwdp_host_test>)
  set_tests_properties(dwdp_host_np${np}_slices PROPERTIES LABELS parallel
    ENVIRONMENT "${VGEN_TEST_ENV};VGEN_DWDP_SLICE_BYTES=4096" TIMEOUT 300)
endforeach()

# DWDP on 2 ranks with one GPU each (label gpu): the split model equals the whole one bit for bit.
# Only with the CUDA backend; with fewer GPUs it prints a skip line and counts as skipped.
if(VGEN_HAVE_CUDA)
  add_executable(dwdp_test ${CMAKE_CURRENT_LIST_DIR}/dwdp_test.cpp)
  target_link_libraries(dwdp_test PRIVATE vgen_lib)
  add_test(NAME dwdp_np2 COMMAND ${VGEN_SKIP_STATUS} ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:dwdp_test>)
  set_tests_properties(dwdp_np2 PROPERTIES
    LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0" TIMEOUT 300 SKIP_RETURN_CODE 77)
  # The same with 64 KiB slices: strided copies from both GPUs into every block.
  add_test(NAME dwdp_np2_slices COMMAND ${VGEN_SKIP_STATUS} ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:dwdp_test>)
  set_tests_properties(dwdp_np2_slices PROPERTIES LABELS gpu
    ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0;VGEN_DWDP_SLICE_BYTES=65536" TIMEOUT 300 SKIP_RETURN_CODE 77)
  # The same two with the transport forced: vmm (CUDA VMM, POSIX file descriptors; the two ranks may
  # share one GPU; skipped only on a GPU that cannot export them) and ipc (legacy CUDA IPC).
  foreach(transport vmm ipc)
    add_test(NAME dwdp_np2_${transport} COMMAND ${VGEN_SKIP_STATUS} ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:dwdp_test>)
    set_tests_properties(dwdp_np2_${transport} PROPERTIES LABELS gpu
      ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0;VGEN_DWDP_TRANSPORT=${transport}" TIMEOUT 300
      SKIP_RETURN_CODE 77)
    add_test(NAME dwdp_np2_${transport}_slices COMMAND ${VGEN_SKIP_STATUS} ${VGEN_MPIRUN} -np 2
      $<TARGET_FILE:dwdp_test>)
    set_tests_properties(dwdp_np2_${transport}_slices PROPERTIES LABELS gpu
      ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0;VGEN_DWDP_TRANSPORT=${transport};VGEN_DWDP_SLICE_BYTES=65536"
      TIMEOUT 300 SKIP_RETURN_CODE 77)
  endforeach()
endif()
