# A full disk (a full tmpfs in a private mount namespace): vgen names ENOSPC ("No space left on
# device") for the writes that fail and leaves no temporary file: full before the job (the
# preflight's write probe) and with one page left (the videos and timing.json fail in the batch).
# Label e2e; skipped (exit 77) where no private mount is allowed.
foreach(case "full_disk;0" "full_disk_in_batch;1")
  list(GET case 0 name)
  list(GET case 1 free)
  add_test(NAME e2e_${name} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/full_disk.sh $<TARGET_FILE:vgen> ${PROJECT_SOURCE_DIR} ${free})
  set_tests_properties(e2e_${name} PROPERTIES LABELS e2e ENVIRONMENT "${VGEN_TEST_ENV}" TIMEOUT 180 SKIP_RETURN_CODE 77)
endforeach()
