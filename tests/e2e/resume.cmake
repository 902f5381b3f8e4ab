# Resume by fingerprint: reuse of unchanged videos, re-render after a setting, seed, damage or a
# missing sidecar, and --no-overwrite's refusal (2 ranks each).
foreach(case reuse setting seed damaged no_overwrite sidecar)
  add_test(NAME e2e_resume_${case}
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/resume_test.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} ${case})
  set_tests_properties(e2e_resume_${case} PROPERTIES LABELS e2e TIMEOUT 400
    ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
endforeach()
