#include "parallel/seq_shuffle.h"

#include <cstring>

#ifdef VGEN_WITH_CUDA
#include "core/cuda_stream.h"
#include "kernels/seq_shuffle/copy_runs.cuh"
#endif

namespace vgen {
namespace {

// Host tensors are f32 (the CPU path); device tensors may be any dtype (bf16 on the GPU path),
// moved as raw elements by a CUDA copy kernel.
void check_tensor(const Tensor& t, const char* what) {
  VGEN_CHECK(t.defined() && (!t.is_cpu() || t.dtype() == DType::kF32), ExitCode::kInternal,
             "{}: expected a host f32 tensor or a device tensor, got {}", what,
             t.defined() ? t.str() : std::string("undefined"));
}

void check_same(const Tensor& a, const Tensor& b, const char* what) {
  VGEN_CHECK(a.dtype() == b.dtype() && a.device() == b.device(), ExitCode::kInternal,
             "{}: {} and {} differ in dtype or device", what, a.str(), b.str());
}

// Copies a 3-D grid of contiguous runs of `run` elements: element (i,j,l) of the grid starts at
// src + i·ss[0] + j·ss[1] + l·ss[2] and goes to dst + i·ds[0] + j·ds[1] + l·ds[2] (in elements,
// from the given element offsets of the two tensors).
void copy_runs(const Tensor& src_t, int64_t src_off, Tensor& dst_t, int64_t dst_off, const int64_t (&dims)[3],
               const int64_t (&ss)[3], const int64_t (&ds)[3], int64_t run) {
  check_same(src_t, dst_t, "sequence shuffle");
  const int64_t es = int64_t(dtype_size(src_t.dtype()));
  const char* src = static_cast<const char*>(src_t.raw()) + src_off * es;
  char* dst = static_cast<char*>(dst_t.raw()) + dst_off * es;
  if (!src_t.is_cpu()) {
#ifdef VGEN_WITH_CUDA
    const int64_t sb[3] = {ss[0] * es, ss[1] * es, ss[2] * es}, db[3] = {ds[0] * es, ds[1] * es, ds[2] * es};
    VGEN_CUDA_CHECK(kern::copy_runs(src, dst, dims, sb, db, run * es, compute_stream()));
    return;
#else
    VGEN_THROW(ExitCode::kUsage, "sequence shuffle of device tensor {} in a build without CUDA", src_t.str());
#endif
  }
  const size_t bytes = size_t(run * es);
#pragma omp parallel for collapse(2) schedule(static) if (dims[0] * dims[1] * dims[2] * run > (1 << 16))
  for (int64_t i = 0; i < dims[0]; ++i)
    for (int64_t j = 0; j < dims[1]; ++j)
      for (int64_t l = 0; l < dims[2]; ++l)
        std::memcpy(dst + (i * ds[0] + j * ds[1] + l * ds[2]) * es, src + (i * ss[0] + j * ss[1] + l * ss[2]) * es,
                    bytes);
}

void check_shape(const Tensor& t, const Shape& s, const char* what) {
  VGEN_ASSERT(t.shape() == s, "{}: tensor {} should have shape {}", what, t.str(), shape_str(s));
}

}  // namespace

void ulysses_pack_qkv(const Tensor& q, const Tensor& k, const Tensor& v, int U, Tensor& send, int64_t h0) {
  check_tensor(q, "ulysses q");
  VGEN_ASSERT(q.ndim() == 4 && q.dim(2) % U == 0 && send.ndim() == 6, "ulysses q {} with degree {}, send {}",
              q.str(), U, send.str());
  const int64_t B = q.dim(0), L = q.dim(1), H = q.dim(2), D = q.dim(3), Hu = H / U, Hg = send.dim(4), R = Hg * D;
  VGEN_ASSERT(h0 >= 0 && Hg >= 1 && h0 + Hg <= Hu, "ulysses head group [{}, {}) of {} heads per rank", h0, h0 + Hg,
              Hu);
  check_shape(k, q.shape(), "ulysses k");
  check_shape(v, q.shape(), "ulysses v");
  check_shape(send, {U, 3, B, L, Hg, D}, "ulysses qkv send");
  const Tensor* src[3] = {&q, &k, &v};
  for (int t = 0; t < 3; ++t) {
    check_tensor(*src[t], "ulysses qkv");
    // grid [u, b, s]; src [B, L, U, Hu, D] from head h0 of each u, dst [U, 3, B, L, Hg·D]
    copy_runs(*src[t], h0 * D, send, t * B * L * R, {U, B, L}, {Hu * D, L * H * D, H * D}, {3 * B * L * R, L * R, R},
              R);
  }
}

void ulysses_unpack_qkv(const Tensor& recv, int U, Tensor& q, Tensor& k, Tensor& v) {
  check_tensor(recv, "ulysses qkv recv");
  VGEN_ASSERT(recv.ndim() == 6 && recv.dim(0) == U && recv.dim(1) == 3, "ulysses qkv recv {}", recv.str());
  const int64_t B = recv.dim(2), L = recv.dim(3), Hu = recv.dim(4), D = recv.dim(5), R = Hu * D;
  Tensor* dst[3] = {&q, &k, &v};
  for (int t = 0; t < 3; ++t) {
    check_shape(*dst[t], {B, U * L, Hu, D}, "ulysses qkv unpack");
    // grid [u, b, s]; src [U, 3, B, L, R], dst [B, U, L, R]
    copy_runs(recv, t * B * L * R, *dst[t], 0, {U, B, L}, {3 * B * L * R, L * R, R}, {L * R, U * L * R, R}, R);
  }
}

void ulysses_pack_out(const Tensor& out, int U, Tensor& send) {
  check_tensor(out, "ulysses out");
  VGEN_ASSERT(out.ndim() == 4 && out.dim(1) % U == 0, "ulysses out {} with degree {}", out.str(), U);
  const int64_t B = out.dim(0), L = out.dim(1) / U, Hu = out.dim(2), D = out.dim(3), R = Hu * D;
  check_shape(send, {U, B, L, Hu, D}, "ulysses out send");
  // grid [u, b, s]; src [B, U, L, R], dst [U, B, L, R]
  copy_runs(out, 0, send, 0, {U, B, L}, {L * R, U * L * R, R}, {B * L * R, L * R, R}, R);
}

void ulysses_unpack_out(const Tensor& recv, int U, Tensor& out, int64_t h0) {
  check_tensor(recv, "ulysses out recv");
  VGEN_ASSERT(recv.ndim() == 5 && recv.dim(0) == U && out.ndim() == 4 && out.dim(2) % U == 0,
              "ulysses out recv {} into {}", recv.str(), out.str());
  const int64_t B = recv.dim(1), L = recv.dim(2), Hg = recv.dim(3), D = recv.dim(4), R = Hg * D;
  const int64_t H = out.dim(2), Hu = H / U;
  VGEN_ASSERT(h0 >= 0 && h0 + Hg <= Hu, "ulysses head group [{}, {}) of {} heads per rank", h0, h0 + Hg, Hu);
  check_shape(out, {B, L, H, D}, "ulysses out unpack");
  // grid [u, b, s]; src [U, B, L, Hg·D], dst [B, L, U, Hu, D] at head h0 of each u
  copy_runs(recv, 0, out, h0 * D, {U, B, L}, {B * L * R, L * R, R}, {Hu * D, L * H * D, H * D}, R);
}

void ulysses_pack_heads(const Tensor& x, int U, int64_t h0, int64_t Hg, Tensor& send, int64_t offset) {
  check_tensor(x, "ulysses heads");
  check_tensor(send, "ulysses heads send");
  VGEN_ASSERT(x.ndim() == 4 && x.dim(2) % U == 0 && send.ndim() == 2 && send.dim(0) == U,
              "ulysses heads {} with degree {}, send {}", x.str(), U, send.str());
  const int64_t B = x.dim(0), L = x.dim(1), Hx = x.dim(2), D = x.dim(3), Hxu = Hx / U, R = Hg * D;
  const int64_t chunk = send.dim(1);
  VGEN_ASSERT(h0 >= 0 && Hg >= 1 && h0 + Hg <= Hxu && offset >= 0 && offset + B * L * R <= chunk,
              "ulysses heads [{}, {}) of {} per rank at {} of a chunk of {}", h0, h0 + Hg, Hxu, offset, chunk);
  // grid [u, b, s]; src [B, L, U, Hxu, D] from head h0 of each u, dst [U, chunk] at offset: [B, L, Hg·D]
  copy_runs(x, h0 * D, send, offset, {U, B, L}, {Hxu * D, L * Hx * D, Hx * D}, {chunk, L * R, R}, R);
}

void ulysses_unpack_heads(const Tensor& recv, int U, int64_t offset, Tensor& x) {
  check_tensor(recv, "ulysses heads recv");
  check_tensor(x, "ulysses heads unpack");
  VGEN_ASSERT(recv.ndim() == 2 && recv.dim(0) == U && x.ndim() == 4 && x.dim(1) % U == 0,
              "ulysses heads recv {} into {} with degree {}", recv.str(), x.str(), U);
  const int64_t B = x.dim(0), L = x.dim(1) / U, R = x.dim(2) * x.dim(3), chunk = recv.dim(1);
  VGEN_ASSERT(offset >= 0 && offset + B * L * R <= chunk, "ulysses heads unpack {} at {} of a chunk of {}", x.str(),
              offset, chunk);
  // grid [u, b, s]; src [U, chunk] at offset: [B, L, R], dst [B, U, L, R]
  copy_runs(recv, offset, x, 0, {U, B, L}, {chunk, L * R, R}, {L * R, U * L * R, R}, R);
}

void stack_pair(const Tensor& a, const Tensor& b, Tensor& out) {
  check_tensor(a, "stack a");
  check_tensor(b, "stack b");
  check_shape(b, a.shape(), "stack b");
  check_same(a, out, "stack");
  VGEN_ASSERT(out.numel() == 2 * a.numel(), "stack: out {} for inputs {}", out.str(), a.str());
  Tensor halves = out.reshape({2, a.numel()});
  halves[0].copy_from(a.reshape({a.numel()}));
  halves[1].copy_from(b.reshape({b.numel()}));
}

void gathered_to_seq(const Tensor& recv, int N, int parts, int part, Tensor& out) {
  check_tensor(recv, "gathered shards");
  check_tensor(out, "gathered sequence");
  VGEN_ASSERT(out.ndim() == 4 && out.dim(1) % N == 0 && recv.numel() == int64_t(parts) * out.numel() &&
                  part >= 0 && part < parts,
              "gather: recv {} -> out {} with {} peers, part {}/{}", recv.str(), out.str(), N, part, parts);
  const int64_t B = out.dim(0), L = out.dim(1) / N, X = out.dim(2) * out.dim(3);
  const int64_t piece = B * L * X;  // one part of one source
  // grid [n, b, 1]; src [N, parts, B, L, X], dst [B, N, L, X]
  copy_runs(recv, part * piece, out, 0, {N, B, 1}, {parts * piece, L * X, 0}, {L * X, N * L * X, 0}, L * X);
}

int64_t out_lse_chunk(int64_t B, int64_t L, int64_t H, int64_t D) { return B * L * H * D + B * H * L; }

void pack_out_lse(const Tensor& o, const Tensor& lse, int N, Tensor& send) {
  check_tensor(o, "attn2d out");
  check_tensor(lse, "attn2d lse");
  VGEN_ASSERT(o.dtype() == DType::kF32 && lse.dtype() == DType::kF32, "attn2d: partial out {} and lse {} must be f32",
              o.str(), lse.str());
  VGEN_ASSERT(o.ndim() == 4 && o.dim(1) % N == 0, "attn2d out {} with {} peers", o.str(), N);
  const int64_t B = o.dim(0), L = o.dim(1) / N, H = o.dim(2), D = o.dim(3), X = H * D;
  const int64_t chunk = out_lse_chunk(B, L, H, D);
  check_shape(lse, {B, H, N * L}, "attn2d lse");
  VGEN_ASSERT(send.numel() == N * chunk, "attn2d send {} should hold {} floats", send.str(), N * chunk);
  // o: grid [j, b, 1]; src [B, N, L, X], dst chunk j [B, L, X]
  copy_runs(o, 0, send, 0, {N, B, 1}, {L * X, N * L * X, 0}, {chunk, L * X, 0}, L * X);
  // lse: grid [j, b, h]; src [B, H, N, L], dst chunk j after the output: [B, H, L]
  copy_runs(lse, 0, send, B * L * X, {N, B, H}, {L, H * N * L, N * L}, {chunk, H * L, L}, L);
}

Tensor chunk_out(const Tensor& recv, int N, int j, int64_t B, int64_t L, int64_t H, int64_t D) {
  const int64_t chunk = out_lse_chunk(B, L, H, D);
  return recv.reshape({N, chunk})[j].narrow(0, B * L * H * D).reshape({B, L, H, D});
}

Tensor chunk_lse(const Tensor& recv, int N, int j, int64_t B, int64_t L, int64_t H, int64_t D) {
  const int64_t chunk = out_lse_chunk(B, L, H, D);
  return recv.reshape({N, chunk})[j].narrow(B * L * H * D, B * H * L).reshape({B, H, L});
}

}  // namespace vgen
