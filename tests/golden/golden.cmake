# Golden fixtures (label golden): one ctest per case file in tests/golden/cases, each running
#   vgen golden --fixtures tests/golden --case NAME
# on one rank, CPU, fp32 (the defaults of `vgen golden` without --recipe).
file(GLOB VGEN_GOLDEN_CASES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cases/*.json)
foreach(case_file ${VGEN_GOLDEN_CASES})
  get_filename_component(case ${case_file} NAME_WE)
  add_test(NAME golden_${case}
           COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case ${case})
  set_tests_properties(golden_${case} PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endforeach()
