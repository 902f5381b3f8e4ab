# The real Qwen vocabulary for test_bpe_tokenizer_qwen: tests/tokenizer_bpe/qwen.tar.xz (~1.9 MB;
# the tokenizer.json inside is ~7 MB, so it is kept compressed) is unpacked into the build tree at
# configure time, again whenever the archive changes. make_fixtures.py makes it.
set(_vgen_qwen_archive ${CMAKE_CURRENT_LIST_DIR}/qwen.tar.xz)
set(_vgen_qwen_root ${CMAKE_CURRENT_BINARY_DIR}/tokenizer_bpe)
if(NOT EXISTS ${_vgen_qwen_root}/qwen/tokenizer.json OR
   ${_vgen_qwen_archive} IS_NEWER_THAN ${_vgen_qwen_root}/qwen/tokenizer.json)
  file(REMOVE_RECURSE ${_vgen_qwen_root}/qwen)
  file(ARCHIVE_EXTRACT INPUT ${_vgen_qwen_archive} DESTINATION ${_vgen_qwen_root} TOUCH)
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_vgen_qwen_archive})
target_compile_definitions(test_bpe_tokenizer_qwen PRIVATE VGEN_QWEN_TOKENIZER_DIR="${_vgen_qwen_root}/qwen")
