# VAE decode memory/time (label bench, never gates): peak RSS for T = 3, 6, 12 latent frames of the
# tiny VAE, streaming the frames away, so the numbers show that activation memory does not grow
# with T. Kept at a 32×32 latent (256×256 video) for the suite's time budget; results/vae/cpu/vae_memory.md
# has the 64×64 numbers (same binary: vae_memory_bench VAE_DIR T 64 64 stream|full).
add_executable(vae_memory_bench ${CMAKE_CURRENT_LIST_DIR}/vae_memory_bench.cpp)
target_link_libraries(vae_memory_bench PRIVATE vgen_lib)
foreach(t 3 6 12)
  add_test(NAME bench_vae_memory_t${t}
           COMMAND $<TARGET_FILE:vae_memory_bench> ${PROJECT_SOURCE_DIR}/tests/golden/wan21-tiny/vae ${t} 32 32 stream)
  set_tests_properties(bench_vae_memory_t${t} PROPERTIES LABELS bench ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endforeach()
