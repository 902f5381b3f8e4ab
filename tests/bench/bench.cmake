# DiT forward benchmark (label bench, never gates; CUDA builds only): Wan2.1-14B shapes with random
# weights. The full measurement is scripts/bench/run_dit_bench.sh on the GPU machine; the ctest
# entry is a two-layer 480p smoke run.
if(VGEN_HAVE_CUDA)
  add_executable(vgen_dit_bench ${CMAKE_CURRENT_LIST_DIR}/dit_bench.cpp)
  target_link_libraries(vgen_dit_bench PRIVATE vgen_lib)
  find_package(Git QUIET)
  set(VGEN_GIT_DESCRIBE "")
  if(GIT_FOUND)
    execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE VGEN_GIT_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  target_compile_definitions(vgen_dit_bench PRIVATE VGEN_GIT_DESCRIBE="${VGEN_GIT_DESCRIBE}")
  add_test(NAME bench_dit_smoke COMMAND $<TARGET_FILE:vgen_dit_bench> --layers 2 --shapes 480p --reps 1 --no-profile)
  set_tests_properties(bench_dit_smoke PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
  # The image path: two layers of the I2V-14B config (in_channels 36, CLIP tokens through prepare_text).
  add_test(NAME bench_dit_i2v_smoke
           COMMAND $<TARGET_FILE:vgen_dit_bench> --config ${PROJECT_SOURCE_DIR}/recipes/models/wan2.1-i2v-14b-720p/transformer
                   --layers 2 --shapes 480p --reps 1 --no-profile)
  set_tests_properties(bench_dit_i2v_smoke PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endif()
