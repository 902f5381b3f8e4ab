# VGEN_CUDA_ARCHS resolution (cmake/vgen_cuda_archs.cmake) against a fake nvcc that knows no
# Blackwell: auto keeps what it supports, a list is kept as given, an unsupported entry fails.
#   cmake -DVGEN_ROOT=<source> -DSPEC=<VGEN_CUDA_ARCHS> [-DEXPECT=<resolved list>] -P cuda_archs_test.cmake
# (lists with ',' for ';', which survives ctest's command line)
cmake_minimum_required(VERSION 3.24)
include(${VGEN_ROOT}/cmake/vgen_cuda_archs.cmake)
set(CMAKE_CUDA_COMPILER ${CMAKE_CURRENT_LIST_DIR}/fake_nvcc.sh)
string(REPLACE "," ";" SPEC "${SPEC}")
string(REPLACE "," ";" EXPECT "${EXPECT}")
vgen_resolve_cuda_archs(resolved "${SPEC}")
if(NOT resolved STREQUAL EXPECT)
  message(FATAL_ERROR "VGEN_CUDA_ARCHS=${SPEC}: resolved '${resolved}', expected '${EXPECT}'")
endif()
message(STATUS "VGEN_CUDA_ARCHS=${SPEC} -> ${resolved}")
