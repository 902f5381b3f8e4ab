# precision fp8 on every CPU mesh (label parallel; docs/fp8.md "Meshes"): the emulated FP8
# self-attention of each sequence-parallel algorithm against the single-rank fp8 attention, and
# whole renders of each mesh against one rank (tests/parallel/fp8_meshes.sh).
add_executable(fp8_attention_parallel_test ${CMAKE_CURRENT_LIST_DIR}/fp8_attention_parallel_test.cpp)
target_link_libraries(fp8_attention_parallel_test PRIVATE vgen_lib)

function(vgen_fp8_attention_parity name np)
  add_test(NAME parallel_fp8_attention_${name}
           COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:fp8_attention_parallel_test> ${ARGN})
  set_tests_properties(parallel_fp8_attention_${name} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}"
                       TIMEOUT 120)
endfunction()

vgen_fp8_attention_parity(local 1)
vgen_fp8_attention_parity(ulysses2 2 --ulysses 2)
vgen_fp8_attention_parity(ulysses4 4 --ulysses 4)
vgen_fp8_attention_parity(ring2 2 --ring 2)
vgen_fp8_attention_parity(ring3 3 --ring 3)
vgen_fp8_attention_parity(ring4 4 --ring 4)
vgen_fp8_attention_parity(attn2d_2x1 2 --attn2d 2x1)
vgen_fp8_attention_parity(attn2d_1x2 2 --attn2d 1x2)
vgen_fp8_attention_parity(attn2d_2x2 4 --attn2d 2x2)
vgen_fp8_attention_parity(ulysses2_ring2 4 --ulysses 2 --ring 2)
vgen_fp8_attention_parity(ulysses2_attn2d_2x1 4 --ulysses 2 --attn2d 2x1)
vgen_fp8_attention_parity(ulysses2_async 2 --ulysses 2 --async-ulysses 1)

# The start-up refusal, collective: every rank of 3 throws the same recipe error (exit 3).
add_executable(fp8_refusal_test ${CMAKE_CURRENT_LIST_DIR}/fp8_refusal_test.cpp)
target_link_libraries(fp8_refusal_test PRIVATE vgen_lib)
add_test(NAME parallel_fp8_refusal COMMAND ${VGEN_MPIRUN} -np 3 $<TARGET_FILE:fp8_refusal_test>)
set_tests_properties(parallel_fp8_refusal PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 60)

# The start-up path table's refusal of a GPU without code for it, collective the same way (exit 12).
add_executable(execution_paths_refusal_test ${CMAKE_CURRENT_LIST_DIR}/execution_paths_refusal_test.cpp)
target_link_libraries(execution_paths_refusal_test PRIVATE vgen_lib)
add_test(NAME parallel_execution_paths_refusal COMMAND ${VGEN_MPIRUN} -np 3 $<TARGET_FILE:execution_paths_refusal_test>)
set_tests_properties(parallel_execution_paths_refusal PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 60)

# Whole renders: vgen_fp8_mesh(<name> <exact|approx> <ranks> <parallel_config overrides...>); an item
# fp8_config.k=v sets k for the fp8 renders of both one rank and the mesh.
function(vgen_fp8_mesh name class np)
  set(sets)
  foreach(kv ${ARGN})
    if(kv MATCHES "^fp8_config\\.")
      list(APPEND sets --set ${kv})  # the fp8 renders of one rank and of the mesh
    else()
      list(APPEND sets --set parallel_config.${kv})
    endif()
  endforeach()
  add_test(NAME parallel_fp8_mesh_${name}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/fp8_meshes.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} ${class} ${np}
                   ${sets})
  set_tests_properties(parallel_fp8_mesh_${name} PROPERTIES LABELS parallel TIMEOUT 300
                       ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
endfunction()

vgen_fp8_mesh(cfg2 exact 2 cfg_size=2)
vgen_fp8_mesh(ulysses2 exact 2 ulysses_size=2)
vgen_fp8_mesh(cfg2_ulysses2 exact 4 cfg_size=2 ulysses_size=2)
vgen_fp8_mesh(dp2 exact 2 dp_size=2)
vgen_fp8_mesh(ulysses2_vae2 exact 2 ulysses_size=2 parallel_vae_size=2)
vgen_fp8_mesh(cfg2_dwdp2 exact 2 cfg_size=2 dwdp_size=2)
vgen_fp8_mesh(ring2 approx 2 ring_size=2)
vgen_fp8_mesh(ring4 approx 4 ring_size=4)
vgen_fp8_mesh(attn2d_2x1 approx 2 attn2d_size=[2,1])
vgen_fp8_mesh(attn2d_1x2 approx 2 attn2d_size=[1,2])
vgen_fp8_mesh(attn2d_2x2 approx 4 attn2d_size=[2,2])
vgen_fp8_mesh(ulysses2_ring2 approx 4 ulysses_size=2 ring_size=2)
vgen_fp8_mesh(ring2_int8 approx 2 ring_size=2 fp8_config.attention_qk=int8)
vgen_fp8_mesh(cfg2_ulysses2_int8 exact 4 cfg_size=2 ulysses_size=2 fp8_config.attention_qk=int8)
# Ulysses 2 on OpenBLAS's Haswell kernels wherever the CPU runs them (fp8_meshes.sh), so that every
# host checks the row-wise fp32 linears, not only those whose own kernels round a row by its place;
# also with the first step in bf16, whose linears go row by row too (else the next fp8 step rounds
# its mesh-split last bits: 2.2e-3 from one rank without).
vgen_fp8_mesh(ulysses2_haswell_blas exact 2 ulysses_size=2)
vgen_fp8_mesh(ulysses2_haswell_blas_bf16_first exact 2 ulysses_size=2 fp8_config.bf16_first_steps=1)
foreach(t ulysses2_haswell_blas ulysses2_haswell_blas_bf16_first)
  set_property(TEST parallel_fp8_mesh_${t} APPEND PROPERTY ENVIRONMENT "VGEN_TEST_BLAS_CORETYPE=Haswell")
endforeach()
# The last block wholly in bf16, on host DWDP (whose staged blocks are quantised at their use).
vgen_fp8_mesh(cfg2_dwdp2_bf16_blocks exact 2 cfg_size=2 dwdp_size=2 fp8_config.bf16_blocks=[-1])
# The first block's linears in bf16 (its attention fp8), on Ulysses 2 with host DWDP.
vgen_fp8_mesh(ulysses2_dwdp2_bf16_gemm_blocks exact 2 ulysses_size=2 dwdp_size=2 fp8_config.bf16_gemm_blocks=[0])
# One of q/k/v and the cross-attention's out-projection in bf16 in every block (fp8_config.bf16_linears),
# on Ulysses 2 with host DWDP (the staged blocks quantise the others at their use).
vgen_fp8_mesh(ulysses2_dwdp2_bf16_linears exact 2 ulysses_size=2 dwdp_size=2
              fp8_config.bf16_linears=[attn1.to_k,attn2.to_out.0])
# The e4m3 GEMMs (fp8_config.gemm_format e4m3; the meshes above run the default, INT8) on Ulysses 2
# with host DWDP (the staged blocks quantise at their use, the others at load).
vgen_fp8_mesh(ulysses2_dwdp2_e4m3_gemm exact 2 ulysses_size=2 dwdp_size=2 fp8_config.gemm_format=e4m3)

# On the GPU (label gpu; CUDA builds; skipped, not passed, without enough devices): the golden
# fixtures with precision fp8 through the device kernels (every case: the DiT cases under the GPU fp8
# tolerances, the others in bf16), the switches, sequence parallel over NCCL on 2 GPUs, and the
# start-up refusal on every rank (the test hook VGEN_INJECT_NO_FP8 makes rank 1's GPU count as one
# without FP8 tensor cores: exit 3 on both ranks, fast).
if(VGEN_HAVE_CUDA)
  set(VGEN_FP8_GPU_GUARD ${CMAKE_CURRENT_LIST_DIR}/gpu_guard.sh)
  set(VGEN_FP8_GOLDEN $<TARGET_FILE:vgen> golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --set device=cuda
      --set precision=fp8)
  add_test(NAME golden_fp8_cuda COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 ${VGEN_FP8_GOLDEN})
  add_test(NAME golden_fp8_cuda_switches
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 ${VGEN_FP8_GOLDEN} --case pipeline_wan22
                   --set fp8_config.gemm=false --set fp8_config.bf16_first_steps=1 --set fp8_config.bf16_last_steps=1)
  add_test(NAME golden_fp8_cuda_gemm_only
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 ${VGEN_FP8_GOLDEN} --case pipeline_wan21
                   --set fp8_config.attention=false)
  add_test(NAME golden_fp8_cuda_bf16_blocks
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 ${VGEN_FP8_GOLDEN} --case pipeline_wan21
                   --set fp8_config.bf16_blocks=[0])
  add_test(NAME golden_fp8_cuda_bf16_gemm_blocks
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 ${VGEN_FP8_GOLDEN} --case pipeline_wan21
                   --set fp8_config.bf16_gemm_blocks=[0])
  # One of q/k/v in bf16 (the norm's output written in bf16, quantised once for the other two) and
  # the cross-attention's projections (the fused norm-to-e4m3 path not taken).
  add_test(NAME golden_fp8_cuda_bf16_linears
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 ${VGEN_FP8_GOLDEN} --case pipeline_wan21
                   --set fp8_config.bf16_linears=[attn1.to_k,attn2.to_q,attn2.to_out.0])
  # The e4m3 GEMMs (cuBLASLt; the tests above run the default, INT8: kern::linear_int8) on every
  # case, and with one of q/k/v in bf16 (the norm's output quantised once for the other two) and a
  # bf16 cross-attention query (no fused norm to e4m3).
  add_test(NAME golden_fp8_cuda_e4m3_gemm
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 ${VGEN_FP8_GOLDEN} --set fp8_config.gemm_format=e4m3)
  add_test(NAME golden_fp8_cuda_e4m3_gemm_bf16_linears
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 ${VGEN_FP8_GOLDEN} --case pipeline_wan21
                   --set fp8_config.gemm_format=e4m3 --set fp8_config.bf16_linears=[attn1.to_k,attn2.to_q])
  # The portable paths forced (cuBLASLt e4m3 GEMMs, cuDNN's FP8 SDPA; docs/support.md) on every
  # case: the run must say cuDNN's FP8 SDPA served its self-attention.
  add_test(NAME golden_fp8_cuda_portable
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 bash ${CMAKE_CURRENT_LIST_DIR}/expect_log.sh
                   "cuDNN's FP8 SDPA serves the self-attention" ${VGEN_FP8_GOLDEN} --log-level info
                   --set attention_config.backend=cudnn --set fp8_config.gemm_format=e4m3)
  set_tests_properties(golden_fp8_cuda golden_fp8_cuda_switches golden_fp8_cuda_gemm_only golden_fp8_cuda_bf16_blocks
                       golden_fp8_cuda_bf16_gemm_blocks golden_fp8_cuda_bf16_linears golden_fp8_cuda_e4m3_gemm
                       golden_fp8_cuda_e4m3_gemm_bf16_linears golden_fp8_cuda_portable PROPERTIES
                       LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600 SKIP_RETURN_CODE 77)
  foreach(mesh "ulysses2;ulysses_size=2" "ring2;ring_size=2" "attn2d_1x2;attn2d_size=[1,2]" "cfg2;cfg_size=2")
    list(GET mesh 0 name)
    list(GET mesh 1 kv)
    foreach(c dit_forward pipeline_wan21)
      add_test(NAME parallel_golden_fp8_cuda_${c}_${name}
               COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 2 ${VGEN_MPIRUN} -np 2 ${VGEN_FP8_GOLDEN} --case ${c}
                       --set parallel_config.${kv})
      set_tests_properties(parallel_golden_fp8_cuda_${c}_${name} PROPERTIES LABELS gpu
                           ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0" TIMEOUT 300 SKIP_RETURN_CODE 77)
    endforeach()
  endforeach()
  add_test(NAME fp8_refusal_cuda
           COMMAND ${VGEN_SKIP_STATUS} ${VGEN_FP8_GPU_GUARD} 1 sh ${CMAKE_CURRENT_LIST_DIR}/expect_exit.sh 3 120
                   ${VGEN_MPIRUN} -np 2 ${VGEN_FP8_GOLDEN} --case dit_forward --set parallel_config.cfg_size=2)
  set_tests_properties(fp8_refusal_cuda PROPERTIES LABELS gpu TIMEOUT 180 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${VGEN_TEST_ENV};VGEN_INJECT_NO_FP8=@1")
endif()
