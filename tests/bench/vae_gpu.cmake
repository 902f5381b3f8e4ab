# Wan 2.1 VAE decode on the GPU at 480p and 720p, 81 frames (label bench, never gates; CUDA builds
# only): random weights of the real config, CUDA-event median and peak device memory, JSON lines.
# Run on the GPU machine: scripts/bench/run_vae_bench.sh (or ctest -L bench -R bench_vae_gpu).
if(VGEN_HAVE_CUDA)
  add_executable(vgen_vae_bench ${CMAKE_CURRENT_LIST_DIR}/vae_bench.cpp)
  target_link_libraries(vgen_vae_bench PRIVATE vgen_lib)
  add_test(NAME bench_vae_gpu COMMAND ${VGEN_SKIP_STATUS} $<TARGET_FILE:vgen_vae_bench>)
  set_tests_properties(bench_vae_gpu PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 900
                       SKIP_RETURN_CODE 77)
  # The Wan 2.2 VAE (recipes/models/wan2.2-ti2v-5b/vae) at a small size: one decode and its peak.
  add_test(NAME bench_vae22_gpu
           COMMAND ${VGEN_SKIP_STATUS} $<TARGET_FILE:vgen_vae_bench> --config
                   ${PROJECT_SOURCE_DIR}/recipes/models/wan2.2-ti2v-5b/vae --shapes 352x640x21 --reps 1)
  set_tests_properties(bench_vae22_gpu PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 900
                       SKIP_RETURN_CODE 77)
endif()
