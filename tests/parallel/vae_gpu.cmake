# `vgen golden --case vae_decode` on the GPU (label gpu; CUDA builds only): one rank in fp32 and
# bf16, and the parallel VAE over NCCL on 2 GPUs (ulysses 2 — the tiny DiT has 2 heads — with
# parallel_vae_size 2) for both split dims, the Wan 2.1 and the Wan 2.2 VAE (vae22_decode). Skipped
# (not passed) with fewer GPUs than ranks.
if(VGEN_HAVE_CUDA)
  set(VGEN_GPU_GUARD ${CMAKE_CURRENT_LIST_DIR}/gpu_guard.sh)
  foreach(prec fp32 bf16)
    add_test(NAME golden_vae_decode_cuda_${prec}
             COMMAND ${VGEN_SKIP_STATUS} ${VGEN_GPU_GUARD} 1 $<TARGET_FILE:vgen> golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden
                     --case vae_decode --set device=cuda --set precision=${prec})
    set_tests_properties(golden_vae_decode_cuda_${prec} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}"
                         TIMEOUT 300 SKIP_RETURN_CODE 77)
    foreach(split width height)
      set(test parallel_golden_vae22_decode_cuda_pvs2_${split}_${prec})
      add_test(NAME ${test}
               COMMAND ${VGEN_SKIP_STATUS} ${VGEN_GPU_GUARD} 2 ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:vgen> golden
                       --fixtures ${PROJECT_SOURCE_DIR}/tests/golden-i2v --case vae22_decode --set device=cuda
                       --set precision=${prec} --set parallel_config.ulysses_size=2
                       --set parallel_config.parallel_vae_size=2 --set parallel_config.parallel_vae_split_dim=${split})
      set_tests_properties(${test} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0"
                           TIMEOUT 300 SKIP_RETURN_CODE 77)
    endforeach()
    foreach(split width height)
      set(test parallel_golden_vae_decode_cuda_pvs2_${split}_${prec})
      add_test(NAME ${test}
               COMMAND ${VGEN_SKIP_STATUS} ${VGEN_GPU_GUARD} 2 ${VGEN_MPIRUN} -np 2 $<TARGET_FILE:vgen> golden
                       --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case vae_decode --set device=cuda
                       --set precision=${prec} --set parallel_config.ulysses_size=2
                       --set parallel_config.parallel_vae_size=2 --set parallel_config.parallel_vae_split_dim=${split})
      set_tests_properties(${test} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0"
                           TIMEOUT 300 SKIP_RETURN_CODE 77)
    endforeach()
  endforeach()
endif()
