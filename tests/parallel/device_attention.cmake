# Sequence-parallel attention and the proj_out token gather on device tensors over NCCL (label gpu:
# two ranks with one GPU each; prints a skip line and passes as skipped with fewer GPUs). CUDA
# builds only.
if(VGEN_HAVE_CUDA)
  add_executable(device_attention_test ${CMAKE_CURRENT_LIST_DIR}/device_attention_test.cpp)
  target_link_libraries(device_attention_test PRIVATE vgen_lib)
  foreach(mesh "ulysses;2" "ring;2" "attn2d;1x2" "attn2d;2x1")
    list(GET mesh 0 kind)
    list(GET mesh 1 size)
    add_test(NAME device_attention_${kind}${size}
             COMMAND ${VGEN_SKIP_STATUS} ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:device_attention_test> --${kind} ${size})
    set_tests_properties(device_attention_${kind}${size} PROPERTIES
      LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0" TIMEOUT 300
      SKIP_RETURN_CODE 77)
  endforeach()
  # Async Ulysses: head groups pipelined over the NCCL side stream, same parity bounds.
  add_test(NAME device_attention_ulysses2_async
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:device_attention_test> --ulysses 2
                   --async-ulysses 1)
  set_tests_properties(device_attention_ulysses2_async PROPERTIES
    LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0" TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
