# The block-scaled formats' CPU emulation on CPU meshes against one rank (label parallel; docs/fp8.md
# "Block scaling"), through fp8_meshes.sh: precision fp4 (NVFP4 linears, attention fp32 here) and
# precision fp8 with MXFP8 GEMMs (fp8_config.scaling block). Exact where each token's quantisation
# sees what it sees on one rank (a per-token tensor scale, per-block scales along K): CFG, Ulysses,
# dp, host DWDP; approx on Ring / Attention2D, whose merged attention rounds its last bits
# differently from one rank before the next linear quantises it.
function(vgen_blockscale_mesh name class np)
  add_test(NAME parallel_blockscale_mesh_${name}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/fp8_meshes.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} ${class} ${np}
                   ${ARGN})
  set_tests_properties(parallel_blockscale_mesh_${name} PROPERTIES LABELS parallel TIMEOUT 300
                       ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
endfunction()

vgen_blockscale_mesh(fp4_cfg2_ulysses2 exact 4 --set precision=fp4 --set parallel_config.cfg_size=2
                     --set parallel_config.ulysses_size=2)
vgen_blockscale_mesh(fp4_ulysses2_dwdp2 exact 2 --set precision=fp4 --set parallel_config.ulysses_size=2
                     --set parallel_config.dwdp_size=2)
vgen_blockscale_mesh(fp4_dp2_every_step exact 2 --set precision=fp4 --set fp4_config.bf16_first_steps=0
                     --set fp4_config.bf16_last_steps=0 --set parallel_config.dp_size=2)
vgen_blockscale_mesh(fp4_ring2 approx 2 --set precision=fp4 --set parallel_config.ring_size=2)
vgen_blockscale_mesh(mxfp8_cfg2_ulysses2 exact 4 --set fp8_config.scaling=block --set parallel_config.cfg_size=2
                     --set parallel_config.ulysses_size=2)
vgen_blockscale_mesh(mxfp8_ulysses2_dwdp2 exact 2 --set fp8_config.scaling=block --set parallel_config.ulysses_size=2
                     --set parallel_config.dwdp_size=2)

# On a GPU (label gpu; skipped without one): the start-up refusal by name, before the load — fp4
# and fp8 with scaling block on any GPU without block-scaled tensor cores, and on 10.x / 12.x
# because the DiT's device forward does not drive the block-scaled GEMMs yet (both messages start
# alike).
if(VGEN_HAVE_CUDA)
  set(_vgen_bs_cuda ${VGEN_SKIP_STATUS} ${CMAKE_CURRENT_LIST_DIR}/gpu_guard.sh 1 $<TARGET_FILE:vgen> golden
      --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case dit_forward --set device=cuda)
  add_test(NAME fp4_refusal_cuda COMMAND ${_vgen_bs_cuda} --set precision=fp4)
  set_tests_properties(fp4_refusal_cuda PROPERTIES PASS_REGULAR_EXPRESSION
                       "precision fp4 needs block-scaled FP4 tensor cores")
  add_test(NAME mxfp8_refusal_cuda COMMAND ${_vgen_bs_cuda} --set precision=fp8 --set fp8_config.scaling=block
                                           --set fp8_config.attention=false)
  set_tests_properties(mxfp8_refusal_cuda PROPERTIES PASS_REGULAR_EXPRESSION
                       "fp8_config.scaling block \\(MXFP8\\) needs block-scaled|does not drive yet")
  set_tests_properties(fp4_refusal_cuda mxfp8_refusal_cuda PROPERTIES LABELS gpu ENVIRONMENT "${VGEN_TEST_ENV}"
                       TIMEOUT 120 SKIP_RETURN_CODE 77)
endif()
