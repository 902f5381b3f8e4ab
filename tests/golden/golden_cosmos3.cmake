# Cosmos 3 against tests/golden-cosmos3 (a gtest executable of tests/unit/, host fp32): also label golden.
if(TARGET test_cosmos3_golden)
  set_tests_properties(test_cosmos3_golden PROPERTIES LABELS "unit;golden")
endif()
if(TARGET test_cosmos3_denoise)
  set_tests_properties(test_cosmos3_denoise PROPERTIES LABELS "unit;golden")
endif()
