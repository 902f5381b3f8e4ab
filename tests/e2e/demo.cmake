# The CPU demo recipe end to end (label e2e): 4 ranks render recipes/prompts/demo.txt into MP4s that
# decode with the right frame count and size, timing.json reports them, and a rerun skips them.
add_test(NAME e2e_demo_cpu
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/demo_check.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} ${VGEN_MPIRUN})
set_tests_properties(e2e_demo_cpu PROPERTIES LABELS e2e ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 900)

# `vgen --version` answers without MPI or a recipe: version, commit, build options, runtime libraries.
add_test(NAME e2e_version COMMAND $<TARGET_FILE:vgen> --version)
set_tests_properties(e2e_version PROPERTIES LABELS e2e ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^vgen [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit [^)]+\\)\nbuild: [^\n]+\nruntime: ")
