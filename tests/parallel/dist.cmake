# lib/dist under mpirun: communicator collectives and mesh groups on 1-4 ranks, and the
# failure path (one rank aborting, throwing or exiting ends the whole job quickly).
set(VGEN_DIST_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
add_executable(dist_comm_test ${VGEN_DIST_TEST_DIR}/comm_test.cpp)
target_link_libraries(dist_comm_test PRIVATE vgen_lib)
add_executable(dist_mesh_groups_test ${VGEN_DIST_TEST_DIR}/mesh_groups_test.cpp)
target_link_libraries(dist_mesh_groups_test PRIVATE vgen_lib)

foreach(np 1 2 3 4)
  add_test(NAME dist_comm_np${np} COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:dist_comm_test>)
  add_test(NAME dist_mesh_groups_np${np} COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:dist_mesh_groups_test>)
  set_tests_properties(dist_comm_np${np} dist_mesh_groups_np${np} PROPERTIES
    LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
endforeach()

# Failure path: the job must end with the right code well before the ctest timeout.
set(VGEN_EXPECT_EXIT ${VGEN_DIST_TEST_DIR}/expect_exit.sh)
add_test(NAME dist_abort_np3
  COMMAND ${VGEN_EXPECT_EXIT} 8 30 ${VGEN_MPIRUN} -np 3 $<TARGET_FILE:dist_comm_test> --abort-from 1 8)
add_test(NAME dist_uncaught_error_np3
  COMMAND ${VGEN_EXPECT_EXIT} 8 30 ${VGEN_MPIRUN} -np 3 $<TARGET_FILE:dist_comm_test> --throw-from 2)
add_test(NAME dist_rank_exit_np3
  COMMAND ${VGEN_EXPECT_EXIT} 5 30 ${VGEN_MPIRUN} -np 3 $<TARGET_FILE:dist_comm_test> --exit-from 0 5)
set_tests_properties(dist_abort_np3 dist_uncaught_error_np3 dist_rank_exit_np3 PROPERTIES
  LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 60)
