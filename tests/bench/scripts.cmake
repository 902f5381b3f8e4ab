# The benchmark scripts' own logic (label unit: they gate, unlike the benchmarks): the random
# checkpoint's tensor names and shapes against the tiny fixtures' files (every --variant, with dry
# runs at real size; the Cosmos 3 variants against their fixtures and diffusers' parameter counts), a
# small written checkpoint of the image-to-video variants, the scaling table/plot,
# scripts/bench/gpu_suite.sh's CPU side (its image-to-video and Cosmos 3 suites too) and scripts/bench/fp8_accuracy.py's
# comparison logic.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME bench_checkpoint_layout
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/bench/make_random_checkpoint.py --selftest
                   --from ${PROJECT_SOURCE_DIR}/tests/golden/wan21-tiny)
  # ~0.3 GB each (the full-size Wan 2.1 VAE), written under the build tree and removed.
  foreach(variant i2v-14b i2v-a14b)
    add_test(NAME bench_checkpoint_variant_${variant}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/checkpoint_variant_check.py ${variant}
                     ${CMAKE_BINARY_DIR})
    set_tests_properties(bench_checkpoint_variant_${variant} PROPERTIES LABELS unit TIMEOUT 120 SKIP_RETURN_CODE 77)
  endforeach()
  add_test(NAME bench_plot_scaling COMMAND ${CMAKE_CURRENT_LIST_DIR}/plot_scaling_check.sh ${PROJECT_SOURCE_DIR})
  # The GPU harness on the CPU: its records, parsers and table on made-up input, and a dry run of
  # every suite on a pretended two-GPU machine (prints the commands, runs none).
  add_test(NAME bench_gpu_suite_records
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/bench/gpu_suite_records.py selftest)
  add_test(NAME bench_gpu_suite_dry_run
           COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/bench/gpu_suite.sh --dry-run --build ${CMAKE_BINARY_DIR}/gpu_suite_dry
                   build all load e2e scaling attn)
  set_tests_properties(bench_gpu_suite_dry_run PROPERTIES ENVIRONMENT "DRY_GPUS=2;OUT=")
  # DIT_MODEL: vgen_dit_bench and the peer both get --model, the one-GPU dit no --layers.
  add_test(NAME bench_gpu_suite_dry_run_dit_model
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/gpu_suite_dit_model_check.sh ${PROJECT_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR}/gpu_suite_dry_model)
  # The image-to-video suites (dit_i2v vae22 peer_i2v ti2v i2v_batch): their commands and records in
  # dry runs on one pretended GPU, and the PNG / JSONL inputs they make.
  add_test(NAME bench_gpu_suite_dry_run_i2v
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/gpu_suite_i2v_check.sh ${PROJECT_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR}/gpu_suite_dry_i2v)
  # The Cosmos 3 suites (cosmos3 cosmos3_e2e): their commands, orders and records in dry runs.
  add_test(NAME bench_gpu_suite_dry_run_cosmos3
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/gpu_suite_cosmos3_check.sh ${PROJECT_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR}/gpu_suite_dry_cosmos3)
  add_test(NAME bench_make_bench_images
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/bench/make_bench_images.py --selftest)
  # The accuracy script's comparison, target and JSON on made-up renders (no torch, no GPU).
  add_test(NAME bench_fp8_accuracy_selftest
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/bench/fp8_accuracy.py --selftest)
  set_tests_properties(bench_checkpoint_layout bench_plot_scaling bench_gpu_suite_records bench_gpu_suite_dry_run
                       bench_gpu_suite_dry_run_dit_model bench_gpu_suite_dry_run_i2v bench_gpu_suite_dry_run_cosmos3
                       bench_make_bench_images
                       bench_fp8_accuracy_selftest PROPERTIES LABELS unit TIMEOUT 60)
  set_tests_properties(bench_plot_scaling PROPERTIES ENVIRONMENT "PYTHON=${Python3_EXECUTABLE}")
else()
  message(WARNING "python3 not found: the tests of scripts/bench (bench_checkpoint_layout, bench_plot_scaling) "
                  "are not registered")
endif()
