# fp8_config.bf16_blocks and bf16_gemm_blocks end to end on the CPU (label e2e; driver
# tests/e2e/fp8_bf16_blocks.sh): every block listed renders the fp32 bytes, one block listed differs
# from fp32 and from fp8; the same for bf16_gemm_blocks against the fp8-attention-only render, and
# fp8_config.bf16_linears.
add_test(NAME e2e_fp8_bf16_blocks
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/fp8_bf16_blocks.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR})
set_tests_properties(e2e_fp8_bf16_blocks PROPERTIES LABELS e2e TIMEOUT 300 ENVIRONMENT "${VGEN_TEST_ENV}")
# The same on the GPU against precision bf16 (label gpu; skipped, not passed, without a CUDA device).
if(VGEN_HAVE_CUDA)
  add_test(NAME e2e_fp8_bf16_blocks_cuda
    COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1
            bash ${CMAKE_CURRENT_LIST_DIR}/fp8_bf16_blocks.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} cuda)
  set_tests_properties(e2e_fp8_bf16_blocks_cuda PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${VGEN_TEST_ENV}")
endif()
