# The golden fixtures on every mesh of issue 6 (label parallel): `vgen golden` under mpirun must pass
# the single-rank tolerances for the DiT forward and the end-to-end pipeline cases.
set(VGEN_GOLDEN_FIXTURES ${PROJECT_SOURCE_DIR}/tests/golden)

# The DiT forward and every end-to-end pipeline case of the fixture set (pipeline_wan21,
# pipeline_wan22, the LoRA cases pipeline_lora*, and any added later).
file(GLOB VGEN_GOLDEN_PIPELINE_FILES CONFIGURE_DEPENDS ${VGEN_GOLDEN_FIXTURES}/cases/pipeline_*.json)
set(VGEN_GOLDEN_MESH_CASES dit_forward)
foreach(f ${VGEN_GOLDEN_PIPELINE_FILES})
  get_filename_component(c ${f} NAME_WE)
  list(APPEND VGEN_GOLDEN_MESH_CASES ${c})
endforeach()

# vgen_golden_mesh(<name> <ranks> <parallel_config overrides...>)
function(vgen_golden_mesh name np)
  set(sets)
  foreach(kv ${ARGN})
    list(APPEND sets --set parallel_config.${kv})
  endforeach()
  foreach(golden_case ${VGEN_GOLDEN_MESH_CASES})
    set(test parallel_golden_${golden_case}_${name})
    add_test(NAME ${test}
             COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:vgen> golden --fixtures ${VGEN_GOLDEN_FIXTURES}
                     --case ${golden_case} ${sets})
    set_tests_properties(${test} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
  endforeach()
endfunction()

vgen_golden_mesh(cfg2 2 cfg_size=2)
vgen_golden_mesh(ulysses2 2 ulysses_size=2)
vgen_golden_mesh(ring2 2 ring_size=2)
vgen_golden_mesh(ring4 4 ring_size=4)
vgen_golden_mesh(attn2d_2x1 2 attn2d_size=[2,1])
vgen_golden_mesh(attn2d_1x2 2 attn2d_size=[1,2])
vgen_golden_mesh(attn2d_2x2 4 attn2d_size=[2,2])
vgen_golden_mesh(ulysses2_ring2 4 ulysses_size=2 ring_size=2)
vgen_golden_mesh(ulysses2_attn2d_2x1 4 ulysses_size=2 attn2d_size=[2,1])
vgen_golden_mesh(cfg2_ulysses2 4 cfg_size=2 ulysses_size=2)
vgen_golden_mesh(cfg2_attn2d_1x2 4 cfg_size=2 attn2d_size=[1,2])

# Async Ulysses accepted end to end (the tiny fixtures have one head per rank at ulysses 2, so one
# head group: the pipeline itself is checked by parallel_attention_*_async with 2-5 heads per rank).
vgen_golden_mesh(ulysses2_async 2 ulysses_size=2 async_ulysses=true)

# DWDP: the ranks share one copy of the DiT blocks (MPI one-sided on the CPU); same tolerances.
vgen_golden_mesh(cfg2_dwdp2 2 cfg_size=2 dwdp_size=2)
vgen_golden_mesh(ulysses2_dwdp2 2 ulysses_size=2 dwdp_size=2)

# On the GPU (label gpu; CUDA builds; skipped, not passed, without enough devices): the same cases
# (the DiT forward and every pipeline case, the LoRA ones included) in fp32 and bf16 on one GPU and
# on the two-GPU meshes over NCCL, under the single-rank tolerances.
if(VGEN_HAVE_CUDA)
  set(VGEN_GOLDEN_GPU_GUARD ${CMAKE_CURRENT_LIST_DIR}/gpu_guard.sh)
  foreach(prec fp32 bf16)
    set(golden_gpu $<TARGET_FILE:vgen> golden --fixtures ${VGEN_GOLDEN_FIXTURES} --set device=cuda
        --set precision=${prec})
    foreach(golden_case ${VGEN_GOLDEN_MESH_CASES})
      set(test golden_${golden_case}_cuda_${prec})
      add_test(NAME ${test} COMMAND ${VGEN_SKIP_STATUS} ${VGEN_GOLDEN_GPU_GUARD} 1 ${golden_gpu} --case ${golden_case})
      set_tests_properties(${test} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 300
                           SKIP_RETURN_CODE 77)
      foreach(mesh "cfg2;cfg_size=2" "ulysses2;ulysses_size=2" "ring2;ring_size=2" "attn2d_1x2;attn2d_size=[1,2]")
        list(GET mesh 0 name)
        list(GET mesh 1 kv)
        set(test parallel_golden_${golden_case}_cuda_${prec}_${name})
        add_test(NAME ${test}
                 COMMAND ${VGEN_SKIP_STATUS} ${VGEN_GOLDEN_GPU_GUARD} 2 ${VGEN_MPIRUN} -np 2 ${golden_gpu}
                         --case ${golden_case} --set parallel_config.${kv})
        set_tests_properties(${test} PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV};NCCL_NVLS_ENABLE=0"
                             TIMEOUT 300 SKIP_RETURN_CODE 77)
      endforeach()
    endforeach()
  endforeach()
endif()
