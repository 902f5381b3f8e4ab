# The benchmark scripts' own logic (label unit: they gate, unlike the benchmarks): the random
# checkpoint's tensor names and shapes against the tiny fixture's files, and the scaling table/plot.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME bench_checkpoint_layout
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/bench/make_random_checkpoint.py --selftest
                   --from ${PROJECT_SOURCE_DIR}/tests/golden/wan21-tiny)
  add_test(NAME bench_plot_scaling COMMAND ${CMAKE_CURRENT_LIST_DIR}/plot_scaling_check.sh ${PROJECT_SOURCE_DIR})
  set_tests_properties(bench_checkpoint_layout bench_plot_scaling PROPERTIES LABELS unit TIMEOUT 60)
  set_tests_properties(bench_plot_scaling PROPERTIES ENVIRONMENT "PYTHON=${Python3_EXECUTABLE}")
else()
  message(WARNING "python3 not found: the tests of scripts/bench (bench_checkpoint_layout, bench_plot_scaling) "
                  "are not registered")
endif()
