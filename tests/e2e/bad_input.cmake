# Bad inputs end every rank of an mpirun job quickly, non-zero, with a message naming the problem
# (label e2e). One ctest per case; the driver is tests/e2e/bad_input.sh.
set(VGEN_BAD_INPUT_CASES malformed_yaml unknown_key wrong_type world_mismatch ulysses_heads fp8_bf16_blocks
    fp8_bf16_gemm_blocks fp8_bf16_linears missing_model missing_component truncated_safetensors corrupt_header_length
    offsets_out_of_range missing_tensor missing_vae_tensor unknown_dtype unreadable_prompts unwritable_output timing_unwritable reader_fails
    frames_too_large height_too_large width_too_large sequence_too_long negative_seed prompt_nul_byte
    prompt_too_long image_missing image_corrupt last_image_alone image_on_t2v line_fails_on_one_rank
    cfg_without_guidance cuda_without_gpu)
foreach(case ${VGEN_BAD_INPUT_CASES})
  add_test(NAME e2e_bad_input_${case}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bad_input.sh ${case} $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR}
                   ${VGEN_MPIRUN})
  set_tests_properties(e2e_bad_input_${case} PROPERTIES LABELS e2e ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 120)
endforeach()
