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

# vae22_decode: the Wan 2.2 VAE decoder (residual up blocks, unpatchify; model/wan/vae). GPU: the
# same command with --set device=cuda (fp32) or --set device=cuda --set precision=bf16.
add_test(NAME golden_i2v_vae22_decode
         COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_DIR} --case vae22_decode)
set_tests_properties(golden_i2v_vae22_decode PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)

if(VGEN_HAVE_CUDA)
  foreach(prec fp32 bf16)
    add_test(NAME golden_i2v_vae22_decode_cuda_${prec}
             COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_BIN} golden
                     --fixtures ${VGEN_GOLDEN_I2V_DIR} --case vae22_decode --set device=cuda --set precision=${prec})
    set_tests_properties(golden_i2v_vae22_decode_cuda_${prec} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}"
                         TIMEOUT 300 SKIP_RETURN_CODE 77)
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

# The image-to-video pipelines (the PNG inputs need VGEN_IMAGES): one rank in fp32 (label golden),
# the CPU meshes under the same tolerances (label parallel: CFG, the sequence meshes, DWDP, the
# parallel VAE beside Ulysses), fp8 in the CPU emulation, and fp32 / bf16 / fp8 on one GPU (label gpu).
if(VGEN_IMAGES)
  set(VGEN_I2V_PIPELINES pipeline_i2v_wan21 pipeline_flf2v_wan21 pipeline_i2v_wan22 pipeline_ti2v_i2v pipeline_ti2v_t2v)
  foreach(case ${VGEN_I2V_PIPELINES})
    add_test(NAME golden_i2v_${case} COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_DIR} --case ${case})
    # precision fp8 (the CPU emulation; the image cross-attention under the cross-attention's policy)
    # within the fp8 tolerances of docs/fp8.md.
    add_test(NAME golden_i2v_fp8_${case}
             COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_DIR} --case ${case} --set precision=fp8)
    set_tests_properties(golden_i2v_${case} golden_i2v_fp8_${case} PROPERTIES LABELS golden
                         ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
    foreach(mesh "cfg2;2;cfg_size=2" "ulysses2;2;ulysses_size=2" "ring2;2;ring_size=2" "attn2d_2x2;4;attn2d_size=[2,2]"
                 "cfg2_ulysses2;4;cfg_size=2;ulysses_size=2" "ulysses2_dwdp2;2;ulysses_size=2;dwdp_size=2"
                 "ulysses2_vae2;2;ulysses_size=2;parallel_vae_size=2")
      list(GET mesh 0 name)
      list(GET mesh 1 np)
      list(SUBLIST mesh 2 -1 kvs)
      set(sets)
      foreach(kv ${kvs})
        list(APPEND sets --set parallel_config.${kv})
      endforeach()
      add_test(NAME parallel_golden_i2v_${case}_${name}
               COMMAND ${VGEN_MPIRUN} -np ${np} ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_DIR} --case ${case} ${sets})
      set_tests_properties(parallel_golden_i2v_${case}_${name} PROPERTIES LABELS parallel
                           ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
    endforeach()
    if(VGEN_HAVE_CUDA)
      foreach(prec fp32 bf16 fp8)
        add_test(NAME golden_i2v_${case}_cuda_${prec}
                 COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_BIN} golden
                         --fixtures ${VGEN_GOLDEN_I2V_DIR} --case ${case} --set device=cuda --set precision=${prec})
        set_tests_properties(golden_i2v_${case}_cuda_${prec} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}"
                             TIMEOUT 300 SKIP_RETURN_CODE 77)
      endforeach()
    endif()
  endforeach()
endif()

# tests/golden-i2v-extra: the pipelines at other shapes (condition images of other sizes and aspect
# ratios than the video, FLF2V's two images of different sizes, I2V-A14B with a last frame, TI2V
# square at 13 frames; make_cases.py there): one rank, two meshes, and one GPU in fp32 / bf16.
if(VGEN_IMAGES)
  set(VGEN_GOLDEN_I2V_EXTRA ${PROJECT_SOURCE_DIR}/tests/golden-i2v-extra)
  add_test(NAME golden_i2v_extra COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_EXTRA})
  add_test(NAME parallel_golden_i2v_extra_cfg2_ulysses2
           COMMAND ${VGEN_MPIRUN} -np 4 ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_EXTRA}
                   --set parallel_config.cfg_size=2 --set parallel_config.ulysses_size=2)
  add_test(NAME parallel_golden_i2v_extra_ring2_vae2
           COMMAND ${VGEN_MPIRUN} -np 2 ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_I2V_EXTRA}
                   --set parallel_config.ring_size=2 --set parallel_config.parallel_vae_size=2)
  set_tests_properties(golden_i2v_extra PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
  set_tests_properties(parallel_golden_i2v_extra_cfg2_ulysses2 parallel_golden_i2v_extra_ring2_vae2 PROPERTIES
                       LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
  if(VGEN_HAVE_CUDA)
    foreach(prec fp32 bf16)
      add_test(NAME golden_i2v_extra_cuda_${prec}
               COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_BIN} golden
                       --fixtures ${VGEN_GOLDEN_I2V_EXTRA} --set device=cuda --set precision=${prec})
      set_tests_properties(golden_i2v_extra_cuda_${prec} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}"
                           TIMEOUT 300 SKIP_RETURN_CODE 77)
    endforeach()
  endif()
endif()
