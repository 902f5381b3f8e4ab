# The block-scaled formats in the CPU emulation on the DiT and pipeline fixtures (label golden), one
# rank: precision fp4 (NVFP4 block linears; its default bf16 first and last steps, and fp4 at every
# step) under golden_quantised_tolerance's fp4 gates, and precision fp8 with fp8_config.scaling block
# (MXFP8 GEMMs) under the fp8 tolerances (docs/fp8.md "Block scaling"). The meshes against one rank
# are tests/parallel/blockscale.cmake.
set(VGEN_GOLDEN_FP4_NAMES dit_forward)
file(GLOB _vgen_fp4_cases CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cases/pipeline_*.json)
foreach(f ${_vgen_fp4_cases})
  get_filename_component(c ${f} NAME_WE)
  list(APPEND VGEN_GOLDEN_FP4_NAMES ${c})
endforeach()
set(_vgen_golden ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden)
set(_vgen_blockscale_tests)
foreach(case ${VGEN_GOLDEN_FP4_NAMES})
  add_test(NAME golden_fp4_${case} COMMAND ${_vgen_golden} --case ${case} --set precision=fp4)
  add_test(NAME golden_mxfp8_${case}
           COMMAND ${_vgen_golden} --case ${case} --set precision=fp8 --set fp8_config.scaling=block)
  list(APPEND _vgen_blockscale_tests golden_fp4_${case} golden_mxfp8_${case})
endforeach()
add_test(NAME golden_fp4_every_step_pipeline_wan21
         COMMAND ${_vgen_golden} --case pipeline_wan21 --set precision=fp4 --set fp4_config.bf16_first_steps=0
                 --set fp4_config.bf16_last_steps=0)
add_test(NAME golden_mxfp8_gemm_only_dit_forward
         COMMAND ${_vgen_golden} --case dit_forward --set precision=fp8 --set fp8_config.scaling=block
                 --set fp8_config.attention=false)
set_tests_properties(${_vgen_blockscale_tests} golden_fp4_every_step_pipeline_wan21 golden_mxfp8_gemm_only_dit_forward
                     PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
