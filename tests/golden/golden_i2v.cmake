# The image-to-video fixture set (tests/golden-i2v, label golden): one ctest per case that has a
# runner, each listed by name (the set's other cases join as their components land), each running
#   vgen golden --fixtures tests/golden-i2v --case NAME
# on one rank, CPU, fp32. One block per case, so cases land without touching each other's lines.
set(VGEN_GOLDEN_I2V_DIR ${PROJECT_SOURCE_DIR}/tests/golden-i2v)

# clip_image_encode: the CLIP vision tower (model/clip). GPU: the same command with
# --set device=cuda (fp32) or --set device=cuda --set precision=bf16.
add_test(NAME golden_i2v_clip_image_encode
         COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_DIR} --case clip_image_encode)
set_tests_properties(golden_i2v_clip_image_encode PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
# image_resize: Pillow's resampling (ops/image_resize) on the fixture's PNG files (decoded only
# with VGEN_IMAGES).
if(VGEN_IMAGES)
  add_test(NAME golden_i2v_image_resize
           COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_DIR} --case image_resize)
  set_tests_properties(golden_i2v_image_resize PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endif()
# vae_encode (Wan 2.1) and vae22_encode (Wan 2.2: residual down blocks, 2×2 patchify): the VAE
# encoder (model/wan/vae/vae_encoder.h). GPU: the same command with --set device=cuda (fp32) or
# --set device=cuda --set precision=bf16.
foreach(case vae_encode vae22_encode)
  add_test(NAME golden_i2v_${case} COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_DIR} --case ${case})
  set_tests_properties(golden_i2v_${case} PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endforeach()
if(VGEN_HAVE_CUDA)
  foreach(case vae_encode vae22_encode)
    foreach(prec fp32 bf16)
      add_test(NAME golden_i2v_${case}_cuda_${prec}
               COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_BIN} golden
                       --fixtures ${VGEN_GOLDEN_I2V_DIR} --case ${case} --set device=cuda --set precision=${prec})
      set_tests_properties(golden_i2v_${case}_cuda_${prec} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}"
                           TIMEOUT 300 SKIP_RETURN_CODE 77)
    endforeach()
  endforeach()
endif()

if(VGEN_HAVE_CUDA)
  foreach(prec fp32 bf16)
    add_test(NAME golden_i2v_clip_image_encode_cuda_${prec}
             COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_BIN} golden
                     --fixtures ${VGEN_GOLDEN_I2V_DIR} --case clip_image_encode --set device=cuda --set precision=${prec})
    set_tests_properties(golden_i2v_clip_image_encode_cuda_${prec} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}"
                         TIMEOUT 300 SKIP_RETURN_CODE 77)
  endforeach()
endif()
