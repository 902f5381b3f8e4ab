# Cosmos 3 against tests/golden-cosmos3 (a gtest executable of tests/unit/, host fp32): also label golden.
if(TARGET test_cosmos3_golden)
  set_tests_properties(test_cosmos3_golden PROPERTIES LABELS "unit;golden")
endif()
if(TARGET test_cosmos3_denoise)
  set_tests_properties(test_cosmos3_denoise PROPERTIES LABELS "unit;golden")
endif()

# Every case through `vgen golden --case` on one rank (label golden): the component cases (mRoPE,
# the understanding K/V, one forward; the family's runners, also for the transformer-only Edge folder)
# and the pipeline cases through the real pipeline (prompt side, prefill per prompt and branch, CFG,
# UniPC, the Wan 2.2 VAE; for I2V the image preprocessing and the encoder; pipeline_t2v_native with the
# pipeline's use_native_flow_schedule sigmas). The pipeline cases also
# on CPU meshes (label parallel): CFG 2, Ulysses, Ring, Attention2D and products on four ranks, the
# video tokens sharded with the prompt K/V as the attention's prefix; DWDP (the generation layers
# shared over MPI one-sided: whole layers on two ranks, slices on four). The pipelines' prompt side needs the byte-level BPE tokenizer (ICU: VGEN_ICU),
# pipeline_i2v reads a PNG (VGEN_IMAGES).
set(VGEN_GOLDEN_COSMOS3_DIR ${PROJECT_SOURCE_DIR}/tests/golden-cosmos3)
set(VGEN_GOLDEN_COSMOS3_PIPELINES)
if(NOT DEFINED VGEN_ICU OR VGEN_ICU)
  list(APPEND VGEN_GOLDEN_COSMOS3_PIPELINES pipeline_t2v pipeline_t2v_native)
  if(VGEN_IMAGES)
    list(APPEND VGEN_GOLDEN_COSMOS3_PIPELINES pipeline_i2v)
  endif()
endif()
foreach(case mrope_video mrope_image mrope_video_edge mrope_image_edge und_kv und_kv_edge transformer_forward
             transformer_forward_edge ${VGEN_GOLDEN_COSMOS3_PIPELINES})
  add_test(NAME golden_cosmos3_${case} COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case})
  set_tests_properties(golden_cosmos3_${case} PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endforeach()
foreach(case ${VGEN_GOLDEN_COSMOS3_PIPELINES})
  # The cases' 6 video tokens pad to 8 under ulysses4, ring4 (the last block all padding) and attn2d 2x2.
  foreach(mesh "cfg2;2;cfg_size=2" "ulysses2;2;ulysses_size=2" "ring2;2;ring_size=2" "attn2d_1x2;2;attn2d_size=[1,2]"
               "cfg2_ulysses2;4;cfg_size=2;ulysses_size=2" "ulysses2_ring2;4;ulysses_size=2;ring_size=2"
               "ulysses2_attn2d_1x2;4;ulysses_size=2;attn2d_size=[1,2]" "ulysses4;4;ulysses_size=4"
               "ring4;4;ring_size=4" "attn2d_2x2;4;attn2d_size=[2,2]"
               "cfg2_dwdp2;2;cfg_size=2;dwdp_size=2" "ulysses2_dwdp2;2;ulysses_size=2;dwdp_size=2"
               "cfg2_ulysses2_dwdp4;4;cfg_size=2;ulysses_size=2;dwdp_size=4")
    list(POP_FRONT mesh name np)
    set(sets)
    foreach(kv ${mesh})
      list(APPEND sets --set parallel_config.${kv})
    endforeach()
    add_test(NAME parallel_golden_cosmos3_${case}_${name}
             COMMAND ${VGEN_MPIRUN} -np ${np} ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case}
                     ${sets})
    set_tests_properties(parallel_golden_cosmos3_${case}_${name} PROPERTIES LABELS parallel
                         ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
  endforeach()
endforeach()

# precision fp8 (the CPU emulation of the generation tower's INT8 linears and fp8 attention) on the
# forwards and pipelines, under golden_fp8_tolerance (label golden).
foreach(case transformer_forward transformer_forward_edge ${VGEN_GOLDEN_COSMOS3_PIPELINES})
  add_test(NAME golden_cosmos3_fp8_${case}
           COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case} --set precision=fp8)
  set_tests_properties(golden_cosmos3_fp8_${case} PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endforeach()
# e4m3 GEMMs with the relu² MLP's input projection kept in bf16 (fp8_config.bf16_linears): the Edge
# style forward, whose all-e4m3 error squares through relu² past the tolerance, within it.
set(VGEN_COSMOS3_E4M3_EDGE --set precision=fp8 --set fp8_config.gemm_format=e4m3
    --set fp8_config.bf16_linears=[mlp_moe_gen.up_proj])
add_test(NAME golden_cosmos3_fp8_e4m3_up_bf16_transformer_forward_edge
         COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case transformer_forward_edge
                 ${VGEN_COSMOS3_E4M3_EDGE})
set_tests_properties(golden_cosmos3_fp8_e4m3_up_bf16_transformer_forward_edge PROPERTIES LABELS golden
                     ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
# The same emulation with the generation layers shared by DWDP (each staged layer quantised at its
# use: the same values as the copies one rank keeps; label parallel).
foreach(case ${VGEN_GOLDEN_COSMOS3_PIPELINES})
  add_test(NAME parallel_golden_cosmos3_fp8_${case}_cfg2_dwdp2
           COMMAND ${VGEN_MPIRUN} -np 2 ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case}
                   --set precision=fp8 --set parallel_config.cfg_size=2 --set parallel_config.dwdp_size=2)
  set_tests_properties(parallel_golden_cosmos3_fp8_${case}_cfg2_dwdp2 PROPERTIES LABELS parallel
                       ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endforeach()

# text.device stream: on the host a no-op (every weight is in host memory), the same case results.
foreach(case ${VGEN_GOLDEN_COSMOS3_PIPELINES})
  add_test(NAME golden_cosmos3_stream_${case}
           COMMAND ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case} --set text.device=stream)
  set_tests_properties(golden_cosmos3_stream_${case} PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}"
                       TIMEOUT 600)
endforeach()

# Every case on one GPU in fp32, bf16 and fp8 (label gpu; skipped without one): the device
# transformer, the pipeline with `device: cuda`; the pipelines also with the understanding tower
# streamed from pinned host memory for each prefill (text.device stream), and DWDP on two GPUs. Not yet run.
if(VGEN_HAVE_CUDA)
  foreach(case mrope_video und_kv und_kv_edge transformer_forward transformer_forward_edge
               ${VGEN_GOLDEN_COSMOS3_PIPELINES})
    foreach(prec fp32 bf16 fp8)
      add_test(NAME golden_cosmos3_${case}_cuda_${prec}
               COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_BIN} golden
                       --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case} --set device=cuda --set precision=${prec})
      set_tests_properties(golden_cosmos3_${case}_cuda_${prec} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}"
                           TIMEOUT 300 SKIP_RETURN_CODE 77)
    endforeach()
  endforeach()
  add_test(NAME golden_cosmos3_transformer_forward_edge_cuda_fp8_e4m3_up_bf16
           COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_BIN} golden
                   --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case transformer_forward_edge --set device=cuda
                   ${VGEN_COSMOS3_E4M3_EDGE})
  set_tests_properties(golden_cosmos3_transformer_forward_edge_cuda_fp8_e4m3_up_bf16 PROPERTIES LABELS gpu
                       ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300 SKIP_RETURN_CODE 77)
  foreach(case ${VGEN_GOLDEN_COSMOS3_PIPELINES})
    foreach(prec fp32 bf16)
      add_test(NAME golden_cosmos3_${case}_cuda_stream_${prec}
               COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 1 ${VGEN_BIN} golden
                       --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case} --set device=cuda --set precision=${prec}
                       --set text.device=stream)
      set_tests_properties(golden_cosmos3_${case}_cuda_stream_${prec} PROPERTIES LABELS gpu
                           ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300 SKIP_RETURN_CODE 77)
    endforeach()
  endforeach()
  # DWDP on two GPUs (the generation layers assembled over the copy engine from the peer's arena,
  # placed from the weight stream; skipped without two devices), under the single-rank tolerances.
  foreach(case ${VGEN_GOLDEN_COSMOS3_PIPELINES})
    foreach(prec fp32 bf16)
      foreach(mesh "cfg2_dwdp2;cfg_size=2" "ulysses2_dwdp2;ulysses_size=2")
        list(POP_FRONT mesh name)
        set(test parallel_golden_cosmos3_${case}_cuda_${prec}_${name})
        add_test(NAME ${test}
                 COMMAND ${VGEN_SKIP_STATUS} ${PROJECT_SOURCE_DIR}/tests/parallel/gpu_guard.sh 2 ${VGEN_MPIRUN} -np 2
                         ${VGEN_BIN} golden --fixtures ${VGEN_GOLDEN_COSMOS3_DIR} --case ${case} --set device=cuda
                         --set precision=${prec} --set parallel_config.${mesh} --set parallel_config.dwdp_size=2)
        set_tests_properties(${test} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0"
                             TIMEOUT 300 SKIP_RETURN_CODE 77)
      endforeach()
    endforeach()
  endforeach()
endif()
