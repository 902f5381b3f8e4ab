# Cosmos 3 text and image to video end to end on the CPU (the tiny checkpoint of tests/golden-cosmos3;
# the image line needs VGEN_IMAGES, the prompt side the byte-level BPE tokenizer: ICU, VGEN_ICU).
if(VGEN_IMAGES AND (NOT DEFINED VGEN_ICU OR VGEN_ICU))
  add_test(NAME e2e_cosmos3
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cosmos3_test.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR})
  set_tests_properties(e2e_cosmos3 PROPERTIES LABELS e2e TIMEOUT 400
                       ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
endif()
# A distilled (few-step) copy of the tiny checkpoint: the fixed sigmas, the stochastic Euler, guidance 1.
if(VGEN_IMAGES AND (NOT DEFINED VGEN_ICU OR VGEN_ICU))
  add_test(NAME e2e_cosmos3_distilled
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cosmos3_distilled_test.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR})
  set_tests_properties(e2e_cosmos3_distilled PROPERTIES LABELS e2e TIMEOUT 300
                       ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
endif()
