# Image-to-video jobs end to end (docs/batch.md "Image inputs"; the PNG inputs need VGEN_IMAGES).
if(VGEN_IMAGES)
  foreach(case batch last fbcache area)
    add_test(NAME e2e_i2v_${case}
      COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/i2v_test.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} ${case})
    set_tests_properties(e2e_i2v_${case} PROPERTIES LABELS e2e TIMEOUT 400
      ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
  endforeach()
endif()
