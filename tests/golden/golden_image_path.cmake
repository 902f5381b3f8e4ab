# The Wan DiT's image path (tests/golden-i2v-dit: dit_forward cases made with diffusers on the tiny
# I2V/FLF2V transformers of tests/golden-i2v, at text lengths taking each branch of diffusers'
# image/text split) and the TI2V transformer's per-token timesteps (a 45-token case: the meshes pad).
# Label golden: every case on one rank in fp32 and in fp8 (the CPU emulation); label parallel: the
# sequence meshes, DWDP and CFG on two ranks; label gpu: fp32 and bf16 on one GPU.
set(VGEN_IMAGE_PATH_FIXTURES ${PROJECT_SOURCE_DIR}/tests/golden-i2v-dit)
set(VGEN_IMAGE_PATH_GOLDEN $<TARGET_FILE:vgen> golden --fixtures ${VGEN_IMAGE_PATH_FIXTURES})
add_test(NAME golden_image_path_fp32 COMMAND ${VGEN_IMAGE_PATH_GOLDEN})
add_test(NAME golden_image_path_fp8 COMMAND ${VGEN_IMAGE_PATH_GOLDEN} --set precision=fp8)
set_tests_properties(golden_image_path_fp32 golden_image_path_fp8 PROPERTIES LABELS golden
                     ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300)
foreach(mesh "ulysses2;2;ulysses_size=2" "ring2;2;ring_size=2" "attn2d_2x2;4;attn2d_size=[2,2]"
             "ulysses2_dwdp2;2;ulysses_size=2;dwdp_size=2" "cfg2;2;cfg_size=2")
  list(GET mesh 0 name)
  list(GET mesh 1 np)
  list(SUBLIST mesh 2 -1 kvs)
  set(sets)
  foreach(kv ${kvs})
    list(APPEND sets --set parallel_config.${kv})
  endforeach()
  add_test(NAME parallel_golden_image_path_${name} COMMAND ${VGEN_MPIRUN} -np ${np} ${VGEN_IMAGE_PATH_GOLDEN} ${sets})
  set_tests_properties(parallel_golden_image_path_${name} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}"
                       TIMEOUT 300)
endforeach()
if(VGEN_HAVE_CUDA)
  foreach(prec fp32 bf16)
    add_test(NAME golden_image_path_cuda_${prec}
             COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_IMAGE_PATH_GOLDEN}
                     --set device=cuda --set precision=${prec})
    set_tests_properties(golden_image_path_cuda_${prec} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}"
                         TIMEOUT 300 SKIP_RETURN_CODE 77)
  endforeach()
endif()
