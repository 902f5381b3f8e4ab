# The image-to-video fixture sets: tests/golden-i2v (every case, made with diffusers) and
# tests/golden-i2v-extra (the pipelines at other shapes, make_cases.py there). Each case runs
#   vgen golden --fixtures SET --case NAME
# on one rank, CPU, fp32 (label golden); the pipelines also on the CPU meshes (label parallel) and
# in fp8 and fp4 emulation; every case on one GPU (label gpu; skipped without one).
set(VGEN_GOLDEN_I2V_DIR ${PROJECT_SOURCE_DIR}/tests/golden-i2v)
set(VGEN_GOLDEN_I2V_EXTRA ${PROJECT_SOURCE_DIR}/tests/golden-i2v-extra)

# vgen_golden_i2v_cpu(<test name> <fixtures> [args...]): one rank on the CPU, label golden.
function(vgen_golden_i2v_cpu name fixtures)
  add_test(NAME ${name} COMMAND ${VGEN_BIN} golden --fixtures ${fixtures} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endfunction()

# vgen_golden_i2v_gpu(<test name> <fixtures> <precisions> [args...]): <test name>_cuda_<precision> on
# one GPU for each precision of the list, label gpu.
function(vgen_golden_i2v_gpu name fixtures precisions)
  if(NOT VGEN_HAVE_CUDA)
    return()
  endif()
  foreach(prec ${precisions})
    add_test(NAME ${name}_cuda_${prec}
             COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_BIN} golden
                     --fixtures ${fixtures} ${ARGN} --set device=cuda --set precision=${prec})
    set_tests_properties(${name}_cuda_${prec} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300
                         SKIP_RETURN_CODE 77)
  endforeach()
endfunction()

# vgen_golden_i2v_mesh(<test name> <fixtures> <ranks> <parallel_config key=value...> -- [args...]):
# under mpirun, label parallel.
function(vgen_golden_i2v_mesh name fixtures np)
  set(sets)
  set(args)
  set(in_args OFF)
  foreach(a ${ARGN})
    if(a STREQUAL "--")
      set(in_args ON)
    elseif(in_args)
      list(APPEND args ${a})
    else()
      list(APPEND sets --set parallel_config.${a})
    endif()
  endforeach()
  add_test(NAME ${name} COMMAND ${VGEN_MPIRUN} -np ${np} ${VGEN_BIN} golden --fixtures ${fixtures} ${args} ${sets})
  set_tests_properties(${name} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endfunction()

# Components: the CLIP vision tower (model/clip), the VAE encoders (Wan 2.1; Wan 2.2: residual down
# blocks, 2×2 patchify) and the Wan 2.2 decoder (residual up blocks, unpatchify; model/wan/vae).
foreach(case clip_image_encode vae_encode vae22_encode vae22_decode)
  vgen_golden_i2v_cpu(golden_i2v_${case} ${VGEN_GOLDEN_I2V_DIR} --case ${case})
  vgen_golden_i2v_gpu(golden_i2v_${case} ${VGEN_GOLDEN_I2V_DIR} "fp32;bf16" --case ${case})
endforeach()

if(VGEN_IMAGES)  # the cases below read the sets' PNG files
  # Pillow's resampling (ops/image_resize).
  vgen_golden_i2v_cpu(golden_i2v_image_resize ${VGEN_GOLDEN_I2V_DIR} --case image_resize)

  # The pipelines: fp8 and fp4 in the CPU emulation (the image cross-attention under the
  # cross-attention's policy; docs/fp8.md's tolerances; fp4 also on CFG 2 × Ulysses 2 under its own
  # gates), the CPU meshes (CFG, the sequence meshes, DWDP, the parallel VAE beside Ulysses) under
  # the single-rank tolerances, and fp32 / bf16 / fp8 on one GPU.
  foreach(case pipeline_i2v_wan21 pipeline_flf2v_wan21 pipeline_i2v_wan22 pipeline_ti2v_i2v pipeline_ti2v_t2v)
    vgen_golden_i2v_cpu(golden_i2v_${case} ${VGEN_GOLDEN_I2V_DIR} --case ${case})
    vgen_golden_i2v_cpu(golden_i2v_fp8_${case} ${VGEN_GOLDEN_I2V_DIR} --case ${case} --set precision=fp8)
    vgen_golden_i2v_cpu(golden_i2v_fp4_${case} ${VGEN_GOLDEN_I2V_DIR} --case ${case} --set precision=fp4)
    vgen_golden_i2v_mesh(parallel_golden_i2v_fp4_${case}_cfg2_ulysses2 ${VGEN_GOLDEN_I2V_DIR} 4 cfg_size=2 ulysses_size=2
                         -- --case ${case} --set precision=fp4)
    foreach(mesh "cfg2;2;cfg_size=2" "ulysses2;2;ulysses_size=2" "ring2;2;ring_size=2" "attn2d_2x2;4;attn2d_size=[2,2]"
                 "cfg2_ulysses2;4;cfg_size=2;ulysses_size=2" "ulysses2_dwdp2;2;ulysses_size=2;dwdp_size=2"
                 "ulysses2_vae2;2;ulysses_size=2;parallel_vae_size=2")
      list(GET mesh 0 name)
      list(GET mesh 1 np)
      list(SUBLIST mesh 2 -1 kvs)
      vgen_golden_i2v_mesh(parallel_golden_i2v_${case}_${name} ${VGEN_GOLDEN_I2V_DIR} ${np} ${kvs} -- --case ${case})
    endforeach()
    vgen_golden_i2v_gpu(golden_i2v_${case} ${VGEN_GOLDEN_I2V_DIR} "fp32;bf16;fp8" --case ${case})
  endforeach()

  # The pipelines at other shapes (condition images of other sizes and aspect ratios than the
  # video, FLF2V's two images of different sizes, I2V-A14B with a last frame, TI2V square at 13
  # frames): the whole set on one rank, two meshes, and one GPU.
  vgen_golden_i2v_cpu(golden_i2v_extra ${VGEN_GOLDEN_I2V_EXTRA})
  vgen_golden_i2v_mesh(parallel_golden_i2v_extra_cfg2_ulysses2 ${VGEN_GOLDEN_I2V_EXTRA} 4 cfg_size=2 ulysses_size=2)
  vgen_golden_i2v_mesh(parallel_golden_i2v_extra_ring2_vae2 ${VGEN_GOLDEN_I2V_EXTRA} 2 ring_size=2 parallel_vae_size=2)
  vgen_golden_i2v_gpu(golden_i2v_extra ${VGEN_GOLDEN_I2V_EXTRA} "fp32;bf16")
endif()
