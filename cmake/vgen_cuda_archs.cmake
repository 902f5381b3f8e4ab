# The CUDA architectures vgen compiles device code for (VGEN_CUDA_ARCHS, docs/support.md):
#   auto    the architectures of kVgenCudaArchCandidates the installed nvcc supports (the default)
#   native  the GPUs of the build host, as nvidia-smi reports them (9.0 → 90a, 10.0 → 100a, so
#           Hopper and Blackwell get their arch-specific code)
#   a list  e.g. "80;89;90a", used as given (CMake's CUDA_ARCHITECTURES syntax, -real/-virtual allowed)
# The Hopper kernels (kernels/common/wgmma_sm90.cuh) have bodies only in sm_90a code; the runtime
# path table (lib/ops/path_table.h) reads the resolved list to know what this build can run.

set(VGEN_CUDA_ARCH_CANDIDATES "80;86;89;90a;100a;120")

# The architectures of `wanted` that `nvcc --list-gpu-code` lists (an arch-specific "90a" or family
# "100f" counts as supported when its base sm_90 / sm_100 is listed).
function(vgen_cuda_supported_archs out wanted)
  execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-code OUTPUT_VARIABLE _codes
    RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${CMAKE_CUDA_COMPILER} --list-gpu-code failed; set VGEN_CUDA_ARCHS to a list")
  endif()
  string(REGEX REPLACE "[\r\n]+" ";" _codes "${_codes}")
  set(_kept "")
  foreach(_a IN LISTS wanted)
    string(REGEX REPLACE "-(real|virtual)$" "" _base "${_a}")
    string(REGEX REPLACE "[af]$" "" _base "${_base}")
    if("sm_${_base}" IN_LIST _codes)
      list(APPEND _kept "${_a}")
    endif()
  endforeach()
  set(${out} "${_kept}" PARENT_SCOPE)
endfunction()

# The build host's GPUs as architectures (one per distinct compute capability).
function(vgen_cuda_native_archs out)
  find_program(_smi nvidia-smi)
  set(_caps "")
  if(_smi)
    execute_process(COMMAND ${_smi} --query-gpu=compute_cap --format=csv,noheader OUTPUT_VARIABLE _caps
      RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _rc EQUAL 0)
      set(_caps "")
    endif()
  endif()
  string(REGEX REPLACE "[\r\n ]+" ";" _caps "${_caps}")
  set(_archs "")
  foreach(_c IN LISTS _caps)
    string(REPLACE "." "" _a "${_c}")
    if(_a STREQUAL "90" OR _a STREQUAL "100")
      set(_a "${_a}a")
    endif()
    if(_a MATCHES "^[0-9]+a?$")
      list(APPEND _archs "${_a}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _archs)
  if(NOT _archs)
    message(FATAL_ERROR "VGEN_CUDA_ARCHS=native: nvidia-smi reports no GPU on this host; name the "
      "architectures instead (e.g. -DVGEN_CUDA_ARCHS=90a)")
  endif()
  set(${out} "${_archs}" PARENT_SCOPE)
endfunction()

# VGEN_CUDA_ARCHS resolved into a list in `out` (CMAKE_CUDA_COMPILER must be known).
function(vgen_resolve_cuda_archs out spec)
  if(spec STREQUAL "auto" OR spec STREQUAL "")
    vgen_cuda_supported_archs(_archs "${VGEN_CUDA_ARCH_CANDIDATES}")
    if(NOT _archs)
      message(FATAL_ERROR "nvcc supports none of ${VGEN_CUDA_ARCH_CANDIDATES}; set VGEN_CUDA_ARCHS")
    endif()
  elseif(spec STREQUAL "native")
    vgen_cuda_native_archs(_archs)
  else()
    set(_archs "${spec}")
    vgen_cuda_supported_archs(_ok "${_archs}")
    foreach(_a IN LISTS _archs)
      if(NOT _a IN_LIST _ok)
        message(FATAL_ERROR "VGEN_CUDA_ARCHS: ${_a} is not supported by ${CMAKE_CUDA_COMPILER} "
          "(nvcc --list-gpu-code)")
      endif()
    endforeach()
  endif()
  set(${out} "${_archs}" PARENT_SCOPE)
endfunction()
