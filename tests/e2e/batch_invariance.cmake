# A prompt's latents and frames are byte-identical alone, in a batch, with the text cache cold or
# warm, and on 2 data-parallel replicas (label e2e; driver tests/e2e/batch_invariance.sh).
add_test(NAME e2e_batch_invariance
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/batch_invariance.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR})
set_tests_properties(e2e_batch_invariance PROPERTIES LABELS e2e TIMEOUT 400
  ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
