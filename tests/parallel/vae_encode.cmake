# Parallel VAE encode (label parallel): split encode on P ranks equals the single-rank encode, for
# the Wan 2.1 and Wan 2.2 VAEs, both split dims and uneven splits; P < world leaves the other ranks
# out of the VAE group.
add_executable(vae_encode_parallel_test ${CMAKE_CURRENT_LIST_DIR}/vae_encode_parallel_test.cpp)
target_link_libraries(vae_encode_parallel_test PRIVATE vgen_lib)
target_compile_definitions(vae_encode_parallel_test PRIVATE VGEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

function(vgen_vae_encode_parity np pvs)
  set(test parallel_vae_encode_np${np}_pvs${pvs})
  add_test(NAME ${test} COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:vae_encode_parallel_test> --pvs ${pvs})
  set_tests_properties(${test} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
endfunction()
vgen_vae_encode_parity(2 2)
vgen_vae_encode_parity(3 3)
vgen_vae_encode_parity(3 2)

# `vgen golden --case vae_encode / vae22_encode` with the parallel VAE (ring of 2 or 3, the VAE group
# the whole ring), both split dims.
function(vgen_vae_encode_golden case np split)
  set(test parallel_golden_${case}_pvs${np}_${split})
  add_test(NAME ${test}
           COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:vgen> golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden-i2v
                   --case ${case} --set parallel_config.ring_size=${np} --set parallel_config.parallel_vae_size=${np}
                   --set parallel_config.parallel_vae_split_dim=${split})
  set_tests_properties(${test} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
endfunction()
foreach(case vae_encode vae22_encode)
  foreach(split width height)
    vgen_vae_encode_golden(${case} 2 ${split})
    vgen_vae_encode_golden(${case} 3 ${split})
  endforeach()
endforeach()

# The same on 2 GPUs over NCCL (label gpu; CUDA builds only), fp32 and bf16; skipped (not passed)
# with fewer GPUs than ranks.
if(VGEN_HAVE_CUDA)
  foreach(case vae_encode vae22_encode)
    foreach(prec fp32 bf16)
      foreach(split width height)
        set(test parallel_golden_${case}_cuda_pvs2_${split}_${prec})
        add_test(NAME ${test}
                 COMMAND ${VGEN_SKIP_STATUS} ${CMAKE_CURRENT_LIST_DIR}/gpu_guard.sh 2 ${VGEN_MPIRUN} -np 2
                         $<TARGET_FILE:vgen> golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden-i2v --case ${case}
                         --set device=cuda --set precision=${prec} --set parallel_config.ring_size=2
                         --set parallel_config.parallel_vae_size=2 --set parallel_config.parallel_vae_split_dim=${split})
        set_tests_properties(${test} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0"
                             TIMEOUT 300 SKIP_RETURN_CODE 77)
      endforeach()
    endforeach()
  endforeach()
endif()
