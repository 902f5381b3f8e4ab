# Cost of the collective watchdog on the CPU (label bench, never gates): wait markers and small MPI
# collectives with and without it, JSON lines (issue 22: below 0.5% of a step).
add_executable(watchdog_bench ${CMAKE_CURRENT_LIST_DIR}/watchdog_bench.cpp)
target_link_libraries(watchdog_bench PRIVATE vgen_lib)
add_test(NAME bench_watchdog COMMAND ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:watchdog_bench> --reps 3)
set_tests_properties(bench_watchdog PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
