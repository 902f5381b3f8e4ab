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
