# Batch runs (issue 8): dp queue, resume, JSONL failures + --retry-failed, killed rank, memory; and
# a dp 2 x cfg 2 batch with DWDP over the 4 ranks against the same batch without; the first-block
# cache on two meshes against one rank; the VGEN_PROFILE_STEPS step lines.
foreach(case dp resume jsonl kill signal memory dwdp fbcache profile)
  add_test(NAME e2e_batch_${case}
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/batch_test.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} ${case})
  set_tests_properties(e2e_batch_${case} PROPERTIES LABELS e2e TIMEOUT 400
    ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
endforeach()

# The replica leader's background writer (issue 21): an injected encode failure, SIGTERM while
# finished videos wait for the writer (one process, and both ranks of a dp 2 job).
foreach(case encode_fail sigterm sigterm_ranks)
  add_test(NAME e2e_batch_writer_${case}
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/batch_writer_test.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} ${case})
  set_tests_properties(e2e_batch_writer_${case} PROPERTIES LABELS e2e TIMEOUT 400
    ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
endforeach()
