# precision fp8 (the CPU emulation) on the DiT and pipeline fixtures (label golden): one rank, the
# fp8 tolerances of docs/fp8.md (golden_fp8_tolerance). The meshes against one rank are
# tests/parallel/fp8.cmake. GPU: the same command with --set device=cuda (tests/golden/golden_fp8_gpu).
file(GLOB VGEN_GOLDEN_FP8_CASES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cases/pipeline_*.json)
set(VGEN_GOLDEN_FP8_NAMES dit_forward)
foreach(f ${VGEN_GOLDEN_FP8_CASES})
  get_filename_component(c ${f} NAME_WE)
  list(APPEND VGEN_GOLDEN_FP8_NAMES ${c})
endforeach()
foreach(case ${VGEN_GOLDEN_FP8_NAMES})
  add_test(NAME golden_fp8_${case}
           COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case ${case} --set precision=fp8)
  set_tests_properties(golden_fp8_${case} PROPERTIES LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
endforeach()
# fp8 attention only and fp8 GEMMs only, with a bf16 (here: fp32) first step: the switches end to end.
add_test(NAME golden_fp8_switches_pipeline_wan22
         COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case pipeline_wan22
                 --set precision=fp8 --set fp8_config.gemm=false --set fp8_config.bf16_first_steps=1)
add_test(NAME golden_fp8_gemm_only_dit_forward
         COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case dit_forward
                 --set precision=fp8 --set fp8_config.attention=false)
# The first block wholly in bf16 (fp8_config.bf16_blocks) within the fp8 tolerances; that the key
# acts is e2e_fp8_bf16_blocks (tests/e2e/fp8.cmake) and test_fp8's ForwardWiring.
add_test(NAME golden_fp8_bf16_blocks_pipeline_wan21
         COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case pipeline_wan21
                 --set precision=fp8 --set fp8_config.bf16_blocks=[0])
# The e4m3 GEMMs (fp8_config.gemm_format e4m3; the cases above run the default, INT8) under the same
# tolerances.
add_test(NAME golden_fp8_e4m3_gemm_dit_forward
         COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case dit_forward
                 --set precision=fp8 --set fp8_config.gemm_format=e4m3)
add_test(NAME golden_fp8_e4m3_gemm_pipeline_wan21
         COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case pipeline_wan21
                 --set precision=fp8 --set fp8_config.gemm_format=e4m3)
# The portable paths (cuBLASLt e4m3 GEMMs, cuDNN's FP8 SDPA) forced as on a Hopper: the CPU
# emulation follows the cuDNN FP8 numerics (attention_cudnn_fp8_ref.h) under the same tolerances.
# GPU: the same command with --set device=cuda takes them (docs/support.md).
add_test(NAME golden_fp8_portable_dit_forward
         COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case dit_forward
                 --set precision=fp8 --set attention_config.backend=cudnn --set fp8_config.gemm_format=e4m3)
add_test(NAME golden_fp8_portable_pipeline_wan21
         COMMAND ${VGEN_BIN} golden --fixtures ${PROJECT_SOURCE_DIR}/tests/golden --case pipeline_wan21
                 --set precision=fp8 --set attention_config.backend=cudnn --set fp8_config.gemm_format=e4m3)
set_tests_properties(golden_fp8_portable_dit_forward golden_fp8_portable_pipeline_wan21 PROPERTIES
                     LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
set_tests_properties(golden_fp8_switches_pipeline_wan22 golden_fp8_gemm_only_dit_forward golden_fp8_bf16_blocks_pipeline_wan21
                     golden_fp8_e4m3_gemm_dit_forward golden_fp8_e4m3_gemm_pipeline_wan21 PROPERTIES
                     LABELS golden ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 600)
