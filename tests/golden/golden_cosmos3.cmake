# Cosmos 3 against tests/golden-cosmos3 (a gtest executable of tests/unit/, host fp32): also label golden.
if(TARGET test_cosmos3_golden)
  set_tests_properties(test_cosmos3_golden PROPERTIES LABELS "unit;golden")
endif()
if(TARGET test_cosmos3_denoise)
  set_tests_properties(test_cosmos3_denoise PROPERTIES LABELS "unit;golden")
endif()

# The pipeline cases through `vgen golden` (the real pipeline: prompt side, prefill per prompt and
# branch, CFG, UniPC, the Wan 2.2 VAE decode): one rank (label golden) and CFG 2 over two ranks
# (label parallel). Sequence-parallel meshes are refused for the family at recipe check time. The
# prompt side needs the byte-level BPE tokenizer: not registered in a build without ICU (VGEN_ICU OFF).
set(VGEN_GOLDEN_COSMOS3_DIR ${PROJECT_SOURCE_DIR}/tests/golden-cosmos3)
set(VGEN_GOLDEN_COSMOS3_CASES pipeline_t2v)
if(DEFINED VGEN_ICU AND NOT VGEN_ICU)
  set(VGEN_GOLDEN_COSMOS3_CASES)
endif()
if(VGEN_IMAGES AND VGEN_GOLDEN_COSMOS3_CASES)  # image to video reads images/i2v_first.png
  list(APPEND VGEN_GOLDEN_COSMOS3_CASES pipeline_i2v)
endif()
foreach(case ${VGEN_GOLDEN_COSMOS3_CASES})
  add_test(NAME golden_cosmos3_${case} COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case})
  set_tests_properties(golden_cosmos3_${case} PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
  add_test(NAME parallel_golden_cosmos3_${case}_cfg2
           COMMAND ${VGEN_MPIRUN} -np 2 ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case}
                   --set parallel_config.cfg_size=2)
  set_tests_properties(parallel_golden_cosmos3_${case}_cfg2 PROPERTIES LABELS parallel
                       ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endforeach()
