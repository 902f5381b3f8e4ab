// NCCL communicators for the sequence-parallel groups of a mesh (GPU path). The host Mesh
// (dist/bootstrap.h make_mesh) holds MPI communicators, which only move host tensors; the DiT's
// device activations need NCCL. device_mesh() returns a copy of the host mesh whose groups seq,
// ulysses, cp, row and col are NcclCommunicators built over the same ranks (self communicators
// where a group has one rank), so make_seq_attention(device_mesh, ...) runs Ulysses / Ring /
// Attention2D on device tensors unchanged. The other groups (world, replica, dp, cfg, vae) stay
// the host ones: the denoising loop exchanges host latents on them.
#pragma once
#include <memory>

#include "dist/mesh.h"

namespace vgen {

// Makes this process's GPU current: node-local rank (MPI shared-memory split of MPI_COMM_WORLD
// when MPI runs with several ranks, else 0) modulo the visible device count. Idempotent; returns
// the device index. Throws kNoDevice without a CUDA device, kUsage in a CPU-only build.
int select_mesh_device();

// The device mesh of `host` (built once per host mesh and cached; collective over the ranks of
// the groups being built the first time, so every rank must call it at the same point). Selects
// the device first (select_mesh_device). Throws kUsage in a CPU-only build.
std::shared_ptr<Mesh> device_mesh(const Mesh& host);

}  // namespace vgen
