# The collective watchdog and device faults on the CPU with the tiny model under mpirun: a SIGSTOPped
# rank ends the job (exit 8) within 60 s under runtime.collective_timeout_s 20 with the rank and host
# named and the finished videos kept (stop: ranks of one node read each other's shared memory;
# stop_split: every rank its own node, state read with MPI_Rget; stop_funneled: MPI at
# MPI_THREAD_FUNNELED, the watchdog ends its process with _exit(8)); with the default (derived)
# allowance within 90 s, every rank saying it waited on the stopped one (stop_default); the
# out-of-memory hooks at load and in a step (exit 11, the message's contents) and the sticky CUDA
# fault hook (exit 8).
foreach(case stop stop_split stop_funneled stop_default oom_load oom_step cuda_fault)
  add_test(NAME e2e_watchdog_${case}
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/watchdog_test.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} ${case})
  set_tests_properties(e2e_watchdog_${case} PROPERTIES LABELS e2e TIMEOUT 180
    ENVIRONMENT "${VGEN_TEST_ENV};MPIRUN=${MPIEXEC_EXECUTABLE}")
endforeach()
