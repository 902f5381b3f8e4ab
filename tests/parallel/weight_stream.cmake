# dist/weight_stream.h on the host path: one rank alone, and four ranks of one node splitting the
# reading of the tiny model (bytes read per rank, bit-identical weights, a truncated file).
add_executable(weight_stream_test ${CMAKE_CURRENT_LIST_DIR}/weight_stream_test.cpp)
target_link_libraries(weight_stream_test PRIVATE vgen_lib)
target_compile_definitions(weight_stream_test PRIVATE VGEN_TEST_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/golden")
foreach(np 1 4)
  add_test(NAME weight_stream_np${np} COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:weight_stream_test>)
  set_tests_properties(weight_stream_np${np} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 120)
endforeach()
