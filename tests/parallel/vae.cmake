# Parallel VAE decode (label parallel): split decode on P ranks equals the single-rank decode, for
# both split dims and uneven splits; P < world leaves the other ranks out of the VAE group.
add_executable(vae_parallel_test ${CMAKE_CURRENT_LIST_DIR}/vae_parallel_test.cpp)
target_link_libraries(vae_parallel_test PRIVATE vgen_lib)
target_compile_definitions(vae_parallel_test PRIVATE VGEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

function(vgen_vae_parity np pvs)
  set(test parallel_vae_np${np}_pvs${pvs})
  add_test(NAME ${test} COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:vae_parallel_test> --pvs ${pvs})
  set_tests_properties(${test} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
endfunction()
vgen_vae_parity(2 2)
vgen_vae_parity(3 3)
vgen_vae_parity(4 4)
vgen_vae_parity(3 2)

# `vgen golden --case vae_decode` with the parallel VAE: world = the mesh product, VAE group inside
# the cfg-0 group (ulysses 2 for 2 ranks — the tiny DiT has 2 heads — ring for 3 and 4).
set(VGEN_VAE_FIXTURES ${PROJECT_SOURCE_DIR}/tests/golden)
function(vgen_vae_golden np mesh_key split)
  set(test parallel_golden_vae_decode_pvs${np}_${split})
  add_test(NAME ${test}
           COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:vgen> golden --fixtures ${VGEN_VAE_FIXTURES}
                   --case vae_decode --set parallel_config.${mesh_key}=${np}
                   --set parallel_config.parallel_vae_size=${np}
                   --set parallel_config.parallel_vae_split_dim=${split})
  set_tests_properties(${test} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
endfunction()
foreach(split width height)
  vgen_vae_golden(2 ulysses_size ${split})
  vgen_vae_golden(3 ring_size ${split})
  vgen_vae_golden(4 ring_size ${split})
endforeach()
# The Wan 2.2 VAE (tests/golden-i2v --case vae22_decode, latents 4 × 6): ulysses 2 for 2 ranks (the
# tiny TI2V DiT has 2 heads), ring for 3 and 4; height over 3 ranks (2, 1, 1) and width over 4
# ranks (2, 2, 1, 1) are uneven.
set(VGEN_VAE22_FIXTURES ${PROJECT_SOURCE_DIR}/tests/golden-i2v)
function(vgen_vae22_golden np mesh_key split)
  set(test parallel_golden_vae22_decode_pvs${np}_${split})
  add_test(NAME ${test}
           COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:vgen> golden --fixtures ${VGEN_VAE22_FIXTURES}
                   --case vae22_decode --set parallel_config.${mesh_key}=${np}
                   --set parallel_config.parallel_vae_size=${np}
                   --set parallel_config.parallel_vae_split_dim=${split})
  set_tests_properties(${test} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
endfunction()
foreach(split width height)
  vgen_vae22_golden(2 ulysses_size ${split})
  vgen_vae22_golden(3 ring_size ${split})
endforeach()
vgen_vae22_golden(4 ring_size width)
# VAE group smaller than the replica (cfg 2 × ulysses 2, VAE on the 2 ranks of cfg group 0): the
# cfg-1 ranks receive the video by broadcast.
add_test(NAME parallel_golden_vae_decode_cfg2_pvs2
         COMMAND ${VGEN_MPIRUN} -np 4 $<TARGET_FILE:vgen> golden --fixtures ${VGEN_VAE_FIXTURES}
                 --case vae_decode --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=2
                 --set parallel_config.parallel_vae_size=2)
set_tests_properties(parallel_golden_vae_decode_cfg2_pvs2 PROPERTIES LABELS parallel
                     ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
