# `vgen plan` on the shipped recipes (label e2e): the config-only hint, the hardware profile's
# choice, its error without one, the --rank rows, every config-only model directory and Cosmos 3's
# text.device. The driver is tests/e2e/plan_cli.sh.
foreach(case models_hint recipe_hardware no_hardware rank_rows config_only_models i2v_recipes cosmos3_recipes
    cosmos3_stream)
  add_test(NAME e2e_plan_${case}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/plan_cli.sh ${case} $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR})
  set_tests_properties(e2e_plan_${case} PROPERTIES LABELS e2e ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 120)
endforeach()
