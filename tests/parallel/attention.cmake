# Sequence-parallel self-attention parity under mpirun (label parallel): every mesh of issue 6
# against single-rank attention_ref on unpadded odd-length sequences, K/V with the queries' heads and
# grouped (fewer K/V heads, repeated for the reference).
add_executable(attention_parallel_test ${CMAKE_CURRENT_LIST_DIR}/attention_parallel_test.cpp)
target_link_libraries(attention_parallel_test PRIVATE vgen_lib)

function(vgen_attention_parity name np)
  add_test(NAME parallel_attention_${name}
           COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:attention_parallel_test> ${ARGN})
  set_tests_properties(parallel_attention_${name} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}"
                       TIMEOUT 120)
endfunction()

vgen_attention_parity(local 1)
vgen_attention_parity(ulysses2 2 --ulysses 2)
vgen_attention_parity(ring2 2 --ring 2)
vgen_attention_parity(ring3 3 --ring 3)
vgen_attention_parity(ring4 4 --ring 4)
vgen_attention_parity(attn2d_2x1 2 --attn2d 2x1)
vgen_attention_parity(attn2d_1x2 2 --attn2d 1x2)
vgen_attention_parity(attn2d_2x2 4 --attn2d 2x2)
vgen_attention_parity(ulysses2_ring2 4 --ulysses 2 --ring 2)
vgen_attention_parity(ulysses2_attn2d_2x1 4 --ulysses 2 --attn2d 2x1)
vgen_attention_parity(cfg2_ulysses2 4 --cfg 2 --ulysses 2)
vgen_attention_parity(ulysses4 4 --ulysses 4)
vgen_attention_parity(ulysses2_attn2d_1x2 4 --ulysses 2 --attn2d 1x2)
vgen_attention_parity(ulysses2_ring3 6 --ulysses 2 --ring 3)

# Async Ulysses (head groups pipelined; same result): even and uneven head groups, with a CP axis.
vgen_attention_parity(ulysses2_async 2 --ulysses 2 --async-ulysses 1)
vgen_attention_parity(ulysses2_ring2_async 4 --ulysses 2 --ring 2 --async-ulysses 1)
vgen_attention_parity(ulysses2_attn2d_1x2_async 4 --ulysses 2 --attn2d 1x2 --async-ulysses 1)
# Grouped K/V heads whose count Ulysses 4 exceeds (repeated to lcm(KVH, 4)), in head groups.
vgen_attention_parity(ulysses4_async 4 --ulysses 4 --async-ulysses 1)

# The same attentions with a prefix K/V whole on every rank (parallel/prefix_attention.h: a prompt's
# K/V ahead of the video tokens) against attention_ref over the concatenation.
add_executable(prefix_attention_parallel_test ${CMAKE_CURRENT_LIST_DIR}/prefix_attention_parallel_test.cpp)
target_link_libraries(prefix_attention_parallel_test PRIVATE vgen_lib)
foreach(mesh "local;1" "ulysses2;2;--ulysses;2" "ring2;2;--ring;2" "ring3;3;--ring;3" "ulysses2_ring2;4;--ulysses;2;--ring;2"
             "cfg2_ulysses2;4;--cfg;2;--ulysses;2" "attn2d_1x2;2;--attn2d;1x2" "attn2d_2x1;2;--attn2d;2x1"
             "attn2d_2x2;4;--attn2d;2x2" "ulysses2_attn2d_1x2;4;--ulysses;2;--attn2d;1x2" "ulysses4;4;--ulysses;4")
  list(POP_FRONT mesh name np)
  add_test(NAME parallel_prefix_attention_${name}
           COMMAND ${VGEN_MPIRUN} -np ${np} $<TARGET_FILE:prefix_attention_parallel_test> ${mesh})
  set_tests_properties(parallel_prefix_attention_${name} PROPERTIES LABELS parallel ENVIRONMENT "${VGEN_TEST_ENV}"
                       TIMEOUT 120)
endforeach()
