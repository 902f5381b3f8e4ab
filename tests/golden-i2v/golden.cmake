# Golden fixtures for image-to-video (label golden): one ctest per case of tests/golden-i2v that has
# a runner, listed by name (the other cases join as their components land), each running
#   vgen golden --fixtures tests/golden-i2v --case NAME
# on one rank, CPU, fp32 (the defaults of `vgen golden` without --recipe).
set(VGEN_GOLDEN_I2V_CASES)
if(VGEN_IMAGES)  # decodes the fixture's PNG files
  list(APPEND VGEN_GOLDEN_I2V_CASES image_resize)
endif()
foreach(case ${VGEN_GOLDEN_I2V_CASES})
  add_test(NAME golden_i2v_${case}
           COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden-i2v --case ${case})
  set_tests_properties(golden_i2v_${case} PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endforeach()
