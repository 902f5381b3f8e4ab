#!/bin/sh
# nvcc's --list-gpu-code of a CUDA 12.4 toolkit (no Blackwell), for cuda_archs_test.cmake.
if [ "$1" = "--list-gpu-code" ]; then
  printf 'sm_50\nsm_52\nsm_53\nsm_60\nsm_61\nsm_62\nsm_70\nsm_72\nsm_75\nsm_80\nsm_86\nsm_87\nsm_89\nsm_90\n'
  exit 0
fi
exit 1
