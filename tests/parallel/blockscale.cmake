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
