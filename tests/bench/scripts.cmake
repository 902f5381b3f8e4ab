# The benchmark scripts' own logic (label unit: they gate, unlike the benchmarks): the random
# checkpoint's tensor names and shapes against the tiny fixture's files, and the scaling table/plot.
add_test(NAME bench_checkpoint_layout
         COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/bench/make_random_checkpoint.py --selftest
                 --from ${PROJECT_SOURCE_DIR}/tests/golden/wan21-tiny)
add_test(NAME bench_plot_scaling COMMAND ${CMAKE_CURRENT_LIST_DIR}/plot_scaling_check.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(bench_checkpoint_layout bench_plot_scaling PROPERTIES LABELS unit TIMEOUT 60)
