// The DiT's CUDA kernels (norm, rope, elementwise, activation, embed, seq_shuffle copies, random
// fills) against their CPU references on odd and real widths, f32 and bf16. Outputs start as NaN
// so an unwritten element fails. bf16 bounds follow from the rounding points of each kernel
// (one rounding = half an ulp = 2⁻⁹ relative; the tests allow 2⁻⁸ per rounding).
#include "gpu_test_util.h"

#ifdef VGEN_WITH_CUDA
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "kernels/activation/activation.cuh"
#include "kernels/activation/activation_ref.h"
#include "kernels/elementwise/elementwise.cuh"
#include "kernels/elementwise/elementwise_ref.h"
#include "kernels/embed/gather_rows.cuh"
#include "kernels/embed/gather_rows_ref.h"
#include "kernels/embed/patch.cuh"
#include "kernels/embed/patch_ref.h"
#include "kernels/embed/timestep_embed.cuh"
#include "kernels/embed/timestep_embed_ref.h"
#include "kernels/norm/norm.cuh"
#include "kernels/norm/norm_ref.h"
#include "kernels/rope/rope.cuh"
#include "kernels/rope/rope_ref.h"
#include "ops/dit_device_ops.h"
#include "ops/elementwise.h"
#include "ops/embed.h"
#include "ops/norm.h"
#include "ops/rope.h"
#include "parallel/seq_shuffle.h"

using namespace vgen;
using namespace vgen::testing;

namespace {

// Tolerance of a result rounded `roundings` times into dt (fp32: summation-order level).
std::function<double(size_t)> rel_tol(const std::vector<float>& ref, DType dt, double roundings = 1.0,
                                      double abs = 1e-5) {
  const double rel = dt == DType::kBF16 ? roundings * kUlp : 2e-6;
  return [&ref, rel, abs](size_t i) { return rel * std::fabs(ref[i]) + abs; };
}

struct RowCase {
  int64_t rows, width;
};
const RowCase kRowCases[] = {{1, 12}, {7, 24}, {37, 40}, {5, 1003}, {3, 1536}, {4, 5120}, {2, 5128}};
const DType kTypes[] = {DType::kF32, DType::kBF16};

}  // namespace

TEST(DitKernelsGpu, LayerNormAffineAndPlain) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 10;
  for (const auto& c : kRowCases)
    for (DType dt : kTypes)
      for (bool affine : {false, true}) {
        SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.width << " " << dtype_name(dt) << " affine " << affine);
        // An offset mean checks the two-pass variance.
        auto x = maybe_round(random_vec(size_t(c.rows * c.width), ++seed, 2.0f, 5.0f), dt);
        auto w = random_vec(size_t(c.width), ++seed, 0.5f, 1.5f), b = random_vec(size_t(c.width), ++seed);
        std::vector<float> ref(x.size());
        kern::layer_norm_ref(x.data(), affine ? w.data() : nullptr, affine ? b.data() : nullptr, ref.data(), c.rows,
                             c.width, 1e-6f);
        Tensor dx = device_tensor(x, {c.rows, c.width}, dt), dy = poisoned({c.rows, c.width}, dt);
        Tensor dw = device_tensor(w, {c.width}, DType::kF32), db = device_tensor(b, {c.width}, DType::kF32);
        VGEN_CUDA_CHECK(kern::layer_norm(dx.raw(), ft(dt), affine ? dw.f32() : nullptr, affine ? db.f32() : nullptr,
                                         dy.raw(), ft(dt), c.rows, c.width, 1e-6f, compute_stream()));
        expect_close(host_f32(dy), ref, rel_tol(ref, dt, 1.0, 2e-5), "layer_norm");
        // Through the Tensor wrapper (device dispatch), in place of nothing: same values.
        Tensor ty = layer_norm(dx, affine ? dw : Tensor(), affine ? db : Tensor(), 1e-6f);
        EXPECT_EQ(ty.dtype(), dt);
        expect_close(host_f32(ty), ref, rel_tol(ref, dt, 1.0, 2e-5), "layer_norm (ops)");
      }
}

TEST(DitKernelsGpu, LayerNormModulatePerSampleAndPerToken) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 100;
  for (DType dt : kTypes)
    for (int64_t D : {12, 40, 1003, 5120})
      for (bool per_token : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "D=" << D << " " << dtype_name(dt) << " per_token " << per_token);
        const int64_t B = 2, S = 9, M = 6;
        auto x = maybe_round(random_vec(size_t(B * S * D), ++seed, -3.0f, 3.0f), dt);
        const Shape ms = per_token ? Shape{B, S, M, D} : Shape{B, M, D};
        auto mod = random_vec(size_t(shape_numel(ms)), ++seed, -0.5f, 0.5f);
        Tensor dx = device_tensor(x, {B, S, D}, dt), dmod = device_tensor(mod, ms, DType::kF32);
        for (int shift = 0; shift < M; shift += 3) {
          const int scale = shift + 1;
          Tensor hx = Tensor::from_vector(x, {B, S, D}), hmod = Tensor::from_vector(mod, ms);
          std::vector<float> ref = host_f32(layer_norm_modulate(hx, hmod, shift, scale, 1e-6f));  // CPU reference
          Tensor y = layer_norm_modulate(dx, dmod, shift, scale, 1e-6f);
          EXPECT_EQ(y.dtype(), dt);
          expect_close(host_f32(y), ref, rel_tol(ref, dt, 1.0, 3e-5), "layer_norm_modulate");
        }
      }
}

TEST(DitKernelsGpu, RmsNormWithWeightTypes) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 200;
  for (const auto& c : kRowCases)
    for (DType dt : kTypes)
      for (int wmode : {0, 1}) {  // 0: no weight, 1: weight in the activation dtype
        SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.width << " " << dtype_name(dt) << " w " << wmode);
        auto x = maybe_round(random_vec(size_t(c.rows * c.width), ++seed, -4.0f, 4.0f), dt);
        auto w = maybe_round(random_vec(size_t(c.width), ++seed, 0.5f, 1.5f), dt);
        std::vector<float> ref(x.size());
        kern::rms_norm_ref(x.data(), wmode ? w.data() : nullptr, ref.data(), c.rows, c.width, 1e-6f);
        Tensor dx = device_tensor(x, {c.rows, c.width}, dt), dy = poisoned({c.rows, c.width}, dt);
        Tensor dw = device_tensor(w, {c.width}, dt);
        VGEN_CUDA_CHECK(kern::rms_norm(dx.raw(), wmode ? dw.raw() : nullptr, ft(dt), dy.raw(), ft(dt), c.rows,
                                       c.width, 1e-6f, compute_stream()));
        expect_close(host_f32(dy), ref, rel_tol(ref, dt, 2.0), "rms_norm");
      }
  // f32 activations with a bf16 weight (mixed types are allowed by the launcher).
  auto x = random_vec(7 * 40, 7), w = rounded_bf16(random_vec(40, 8, 0.5f, 1.5f));
  std::vector<float> ref(x.size());
  kern::rms_norm_ref(x.data(), w.data(), ref.data(), 7, 40, 1e-6f);
  Tensor dx = device_tensor(x, {7, 40}, DType::kF32), dy = poisoned({7, 40}, DType::kF32);
  Tensor dw = device_tensor(w, {40}, DType::kBF16);
  VGEN_CUDA_CHECK(kern::rms_norm(dx.raw(), dw.raw(), kern::FloatType::kBF16, dy.raw(), kern::FloatType::kF32, 7, 40,
                                 1e-6f, compute_stream()));
  expect_close(host_f32(dy), ref, rel_tol(ref, DType::kF32), "rms_norm f32 x bf16 w");
}

TEST(DitKernelsGpu, RopeAndFusedRmsNormRope) {
  VGEN_REQUIRE_GPU();
  struct C {
    int64_t B, S, H, Dh;
  };
  uint32_t seed = 300;
  // Rows of 5120 and 1536 take the register kernel with the tables read once per row (threads·8 a
  // multiple of head_dim), 768 with head_dim 24 the register kernel with a table read per vector
  // (32 threads · 8 = 256 columns, not a multiple of 24), 1280 with head_dim 20 and the rest the
  // shared-memory one.
  for (const C c : {C{1, 1, 1, 2}, C{2, 13, 2, 12}, C{1, 37, 5, 128}, C{2, 3, 40, 128}, C{1, 9, 3, 18},
                    C{1, 11, 12, 128}, C{1, 7, 32, 24}, C{1, 5, 64, 20}})
    for (DType dt : kTypes) {
      SCOPED_TRACE(::testing::Message() << c.B << "x" << c.S << "x" << c.H << "x" << c.Dh << " " << dtype_name(dt));
      const int64_t W = c.H * c.Dh, n = c.B * c.S * W;
      auto x = maybe_round(random_vec(size_t(n), ++seed, -3.0f, 3.0f), dt);
      auto w = maybe_round(random_vec(size_t(W), ++seed, 0.5f, 1.5f), dt);
      auto ang = random_vec(size_t(c.S * c.Dh), ++seed, -3.2f, 3.2f);
      std::vector<float> cs(ang.size()), sn(ang.size());
      for (size_t i = 0; i < ang.size(); ++i) cs[i] = std::cos(ang[i]), sn[i] = std::sin(ang[i]);
      Tensor dcos = device_tensor(cs, {c.S, c.Dh}, DType::kF32), dsin = device_tensor(sn, {c.S, c.Dh}, DType::kF32);

      // Plain RoPE.
      std::vector<float> ref(x.size());
      kern::rope_ref(x.data(), cs.data(), sn.data(), ref.data(), c.B, c.S, c.H, c.Dh);
      Tensor dx = device_tensor(x, {c.B, c.S, c.H, c.Dh}, dt), dy = poisoned({c.B, c.S, c.H, c.Dh}, dt);
      VGEN_CUDA_CHECK(kern::rope(dx.raw(), dcos.f32(), dsin.f32(), dy.raw(), ft(dt), c.B, c.S, c.H, c.Dh,
                                 compute_stream()));
      expect_close(host_f32(dy), ref,
                   [&](size_t i) {
                     const size_t p = i & ~size_t(1);
                     return (dt == DType::kBF16 ? kUlp * std::fabs(ref[i]) : 0.0) +
                            2e-6 * (std::fabs(x[p]) + std::fabs(x[p + 1])) + 1e-7;
                   },
                   "rope");

      // Fused RMSNorm + RoPE = rms_norm_ref then rope_ref.
      std::vector<float> nrm(x.size()), fref(x.size());
      kern::rms_norm_ref(x.data(), w.data(), nrm.data(), c.B * c.S, W, 1e-6f);
      kern::rope_ref(nrm.data(), cs.data(), sn.data(), fref.data(), c.B, c.S, c.H, c.Dh);
      Tensor fy = poisoned({c.B, c.S, c.H, c.Dh}, dt);
      Tensor dw = device_tensor(w, {W}, dt);
      VGEN_CUDA_CHECK(kern::rms_norm_rope(dx.raw(), dw.raw(), ft(dt), dcos.f32(), dsin.f32(), fy.raw(), ft(dt), c.B,
                                          c.S, c.H, c.Dh, 1e-6f, compute_stream()));
      auto ftol = [&](size_t i) {
        const size_t p = i & ~size_t(1);
        const double pair = std::fabs(nrm[p]) + std::fabs(nrm[p + 1]);
        // bf16: two roundings of each normalised value (≤ 2⁻⁷ relative), one of the rotation.
        return dt == DType::kBF16 ? 2.5 * kUlp * pair + kUlp * std::fabs(fref[i]) + 1e-6 : 4e-6 * pair + 1e-6;
      };
      expect_close(host_f32(fy), fref, ftol, "rms_norm_rope");
      // The Tensor op (device dispatch) and in place over its input.
      expect_close(host_f32(rms_norm_rope(dx, dw, dcos, dsin, 1e-6f)), fref, ftol, "rms_norm_rope (ops)");
      VGEN_CUDA_CHECK(kern::rms_norm_rope(dx.raw(), dw.raw(), ft(dt), dcos.f32(), dsin.f32(), dx.raw(), ft(dt), c.B,
                                          c.S, c.H, c.Dh, 1e-6f, compute_stream()));
      expect_close(host_f32(dx), fref, ftol, "rms_norm_rope in place");
    }
}

TEST(DitKernelsGpu, ElementwiseOps) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 400;
  for (DType dt : kTypes)
    for (int64_t n : {1, 7, 8, 1003, 40960}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " " << dtype_name(dt));
      auto a = maybe_round(random_vec(size_t(n), ++seed), dt), b = maybe_round(random_vec(size_t(n), ++seed), dt);
      Tensor da = device_tensor(a, {n}, dt), db = device_tensor(b, {n}, dt), out = poisoned({n}, dt);
      std::vector<float> ref(static_cast<size_t>(n));
      kern::add_ref(a.data(), b.data(), ref.data(), n);
      VGEN_CUDA_CHECK(kern::add(da.raw(), db.raw(), out.raw(), ft(dt), n, compute_stream()));
      expect_close(host_f32(out), ref, rel_tol(ref, dt, 1.0, 1e-7), "add");
      kern::cfg_combine_ref(a.data(), b.data(), ref.data(), n, 5.0f);
      VGEN_CUDA_CHECK(kern::cfg_combine(da.raw(), db.raw(), out.raw(), ft(dt), n, 5.0f, compute_stream()));
      expect_close(host_f32(out), ref, rel_tol(ref, dt, 1.0, 1e-6), "cfg_combine");
    }
  // Rows: add_row (fp32 row) and the gated residual with per-sample and per-token gates.
  for (DType dt : kTypes)
    for (int64_t D : {12, 1003, 5120}) {
      SCOPED_TRACE(::testing::Message() << "D=" << D << " " << dtype_name(dt));
      const int64_t B = 2, S = 5, M = 6, rows = B * S;
      auto x = maybe_round(random_vec(size_t(rows * D), ++seed), dt);
      auto y = maybe_round(random_vec(size_t(rows * D), ++seed), dt);
      auto row = random_vec(size_t(D), ++seed);
      std::vector<float> ref(x.size());
      kern::add_row_ref(x.data(), row.data(), ref.data(), rows, D);
      Tensor dx = device_tensor(x, {B, S, D}, dt), out = poisoned({B, S, D}, dt);
      VGEN_CUDA_CHECK(kern::add_row(dx.raw(), ft(dt), device_tensor(row, {D}, DType::kF32).f32(), out.raw(), ft(dt),
                                    rows, D, compute_stream()));
      expect_close(host_f32(out), ref, rel_tol(ref, dt, 1.0, 1e-7), "add_row");
      for (bool per_token : {false, true}) {
        const Shape ms = per_token ? Shape{B, S, M, D} : Shape{B, M, D};
        auto mod = random_vec(size_t(shape_numel(ms)), ++seed);
        Tensor hx = Tensor::from_vector(x, {B, S, D});
        gated_residual_(hx, Tensor::from_vector(y, {B, S, D}), Tensor::from_vector(mod, ms), 2);
        std::vector<float> gref = host_f32(hx);
        Tensor gx = device_tensor(x, {B, S, D}, dt);
        gated_residual_(gx, device_tensor(y, {B, S, D}, dt), device_tensor(mod, ms, DType::kF32), 2);
        expect_close(host_f32(gx), gref, rel_tol(gref, dt, 1.0, 1e-6), "gated_residual_");
      }
      // scale_rows over [rows, D] (a Linear weight) and [rows] (its bias), the fast path (D % 8 == 0)
      // and a view one element past an aligned start (the scalar path), against scale_rows_ref.
      auto scale = random_vec(size_t(rows), ++seed);
      Tensor dscale = device_tensor(scale, {rows}, DType::kF32);
      std::vector<float> sref(x.size());
      kern::scale_rows_ref(x.data(), scale.data(), sref.data(), rows, D);
      expect_close(host_f32(cuda_scale_rows(device_tensor(x, {rows, D}, dt), dscale)), sref,
                   rel_tol(sref, dt, 1.0, 1e-7), "scale_rows");
      std::vector<float> padded(1, 0.5f);
      padded.insert(padded.end(), x.begin(), x.end());
      Tensor view = device_tensor(padded, {rows * D + 1}, dt).narrow(1, rows * D).reshape({rows, D});
      expect_close(host_f32(cuda_scale_rows(view, dscale)), sref, rel_tol(sref, dt, 1.0, 1e-7), "scale_rows view");
      std::vector<float> bref(static_cast<size_t>(rows));
      kern::scale_rows_ref(x.data(), scale.data(), bref.data(), rows, 1);
      expect_close(host_f32(cuda_scale_rows(device_tensor(std::vector<float>(x.begin(), x.begin() + rows), {rows}, dt),
                                            dscale)),
                   bref, rel_tol(bref, dt, 1.0, 1e-7), "scale_rows bias");
    }
}

// The fused residual + norm ops equal the two ops they replace, bit for bit (x and the norm):
// register widths (1536, 5120) take the fused kernel, 1003 and a gate table with another row
// stride than the norm's take the two-op fallback.
TEST(DitKernelsGpu, ResidualLayerNormEqualsTwoOps) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 500;
  const float eps = 1e-6f;
  for (DType dt : kTypes)
    for (int64_t D : {1003, 1536, 5120})
      for (bool per_token : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "D=" << D << " " << dtype_name(dt) << " per_token " << per_token);
        const int64_t B = 2, S = 7;
        const Shape xs{B, S, D}, ms = per_token ? Shape{B, S, 6, D} : Shape{B, 6, D};
        auto x = maybe_round(random_vec(size_t(B * S * D), ++seed, -2.0f, 3.0f), dt);
        auto y = maybe_round(random_vec(size_t(B * S * D), ++seed), dt);
        Tensor mod = device_tensor(random_vec(size_t(shape_numel(ms)), ++seed, -0.5f, 0.5f), ms, DType::kF32);
        Tensor gmod = device_tensor(random_vec(size_t(shape_numel(ms)), ++seed), ms, DType::kF32);
        Tensor head_mod = device_tensor(random_vec(size_t(B * 2 * D), ++seed), {B, 2, D}, DType::kF32);
        Tensor w = device_tensor(random_vec(size_t(D), ++seed, 0.5f, 1.5f), {D}, DType::kF32);
        Tensor b = device_tensor(random_vec(size_t(D), ++seed), {D}, DType::kF32);
        Tensor dy = device_tensor(y, xs, dt);
        auto check = [&](const char* what, const std::function<Tensor(Tensor&)>& fused,
                         const std::function<Tensor(Tensor&)>& two_ops) {
          Tensor fx = device_tensor(x, xs, dt), ux = device_tensor(x, xs, dt);
          const std::vector<float> fn = host_f32(fused(fx)), un = host_f32(two_ops(ux));
          EXPECT_EQ(host_f32(fx), host_f32(ux)) << what << ": updated x";
          EXPECT_EQ(fn, un) << what << ": norm";
          for (float v : fn) ASSERT_TRUE(std::isfinite(v)) << what;
        };
        check("gated + affine layer_norm",
              [&](Tensor& t) { return cuda_residual_layer_norm(t, dy, gmod, 2, w, b, eps); },
              [&](Tensor& t) {
                cuda_gated_residual_(t, dy, gmod, 2);
                return cuda_layer_norm(t, w, b, eps);
              });
        check("add + layer_norm_modulate",
              [&](Tensor& t) { return cuda_residual_layer_norm_modulate(t, dy, Tensor(), -1, mod, 3, 4, eps); },
              [&](Tensor& t) {
                cuda_add_inplace(t, dy);
                return cuda_layer_norm_modulate(t, mod, 3, 4, eps);
              });
        check("gate of another table + layer_norm_modulate",
              [&](Tensor& t) { return cuda_residual_layer_norm_modulate(t, dy, gmod, 5, mod, 0, 1, eps); },
              [&](Tensor& t) {
                cuda_gated_residual_(t, dy, gmod, 5);
                return cuda_layer_norm_modulate(t, mod, 0, 1, eps);
              });
        if (!per_token)  // head table [B, 2, D]: another row stride than the gate's [B, 6, D]
          check("gate with another stride (two ops)",
                [&](Tensor& t) { return cuda_residual_layer_norm_modulate(t, dy, gmod, 5, head_mod, 0, 1, eps); },
                [&](Tensor& t) {
                  cuda_gated_residual_(t, dy, gmod, 5);
                  return cuda_layer_norm_modulate(t, head_mod, 0, 1, eps);
                });
      }
}

TEST(DitKernelsGpu, Activations) {
  VGEN_REQUIRE_GPU();
  uint32_t seed = 500;
  for (DType dt : kTypes)
    for (int64_t n : {1, 13, 4096, 10007}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " " << dtype_name(dt));
      auto x = maybe_round(random_vec(size_t(n), ++seed, -8.0f, 8.0f), dt);
      std::vector<float> gref(x.size()), sref(x.size()), eref(x.size());
      kern::gelu_tanh_ref(x.data(), gref.data(), n);
      kern::silu_ref(x.data(), sref.data(), n);
      kern::gelu_erf_ref(x.data(), eref.data(), n);
      Tensor dx = device_tensor(x, {n}, dt), out = poisoned({n}, dt);
      VGEN_CUDA_CHECK(kern::gelu_tanh(dx.raw(), ft(dt), out.raw(), ft(dt), n, compute_stream()));
      expect_close(host_f32(out), gref, rel_tol(gref, dt, 1.0, 1e-6), "gelu_tanh");
      VGEN_CUDA_CHECK(kern::silu(dx.raw(), ft(dt), out.raw(), ft(dt), n, compute_stream()));
      expect_close(host_f32(out), sref, rel_tol(sref, dt, 1.0, 1e-6), "silu");
      VGEN_CUDA_CHECK(kern::gelu_erf(dx.raw(), ft(dt), out.raw(), ft(dt), n, compute_stream()));
      expect_close(host_f32(out), eref, rel_tol(eref, dt, 1.0, 1e-6), "gelu_erf");
    }
  // fp32 in, bf16 out: one rounding of the fp32 value.
  auto x = random_vec(999, 77, -5.0f, 5.0f);
  std::vector<float> ref(x.size());
  kern::gelu_tanh_ref(x.data(), ref.data(), 999);
  Tensor out = poisoned({999}, DType::kBF16);
  VGEN_CUDA_CHECK(kern::gelu_tanh(device_tensor(x, {999}, DType::kF32).raw(), kern::FloatType::kF32, out.raw(),
                                  kern::FloatType::kBF16, 999, compute_stream()));
  expect_close(host_f32(out), ref, rel_tol(ref, DType::kBF16, 1.0, 1e-6), "gelu_tanh f32->bf16");
}

TEST(DitKernelsGpu, TimestepEmbedding) {
  VGEN_REQUIRE_GPU();
  std::vector<float> t = {0.0f, 1.0f, 999.0f, 500.5f, 37.0f};
  for (int64_t dim : {256, 7, 2}) {
    std::vector<float> ref(t.size() * size_t(dim));
    kern::timestep_embedding_ref(t.data(), ref.data(), int64_t(t.size()), dim, true, 0.0f, 10000.0f);
    Tensor out = poisoned({int64_t(t.size()), dim}, DType::kF32);
    VGEN_CUDA_CHECK(kern::timestep_embedding(device_tensor(t, {int64_t(t.size())}, DType::kF32).f32(), out.f32(),
                                             int64_t(t.size()), dim, true, 0.0f, 10000.0f, compute_stream()));
    // |a| ≤ 1000: expf within 2 ulp (2.4e-7 relative) moves a by ≤ 2.4e-4, and sin/cos with it.
    expect_close(host_f32(out), ref, [](size_t) { return 5e-4; }, "timestep_embedding dim " + std::to_string(dim));
  }
}

// The row gather of per-token modulations: a copy, so bit for bit the reference; rows of a width of
// float4 units (6·24, 256) and of an odd one (7, the scalar path); the op on device tensors as on
// host ones.
TEST(DitKernelsGpu, GatherRows) {
  VGEN_REQUIRE_GPU();
  const std::vector<int64_t> idx = {1, 1, 0, 2, 2, 2, 0, 1, 2, 0, 0};  // 11 rows of a 3-row table
  const int64_t R = int64_t(idx.size());
  Tensor index = Tensor::empty({R}, DType::kI64);
  std::copy(idx.begin(), idx.end(), index.data<int64_t>());
  const Tensor dindex = index.to(Device::kCUDA);
  for (int64_t cols : {int64_t(7), int64_t(6 * 24), int64_t(256)}) {
    const auto table = random_vec(size_t(3 * cols), 91);
    std::vector<float> ref(size_t(R * cols));
    kern::gather_rows_ref(table.data(), idx.data(), ref.data(), R, cols);
    const Tensor dtable = device_tensor(table, {3, cols}, DType::kF32);
    Tensor out = poisoned({R, cols}, DType::kF32);
    VGEN_CUDA_CHECK(kern::gather_rows(dtable.f32(), dindex.data<int64_t>(), out.f32(), R, cols, compute_stream()));
    EXPECT_EQ(host_f32(out), ref) << "cols " << cols;
    const Tensor host = gather_rows(Tensor::from_vector(table, {3, cols}), index);  // [R, cols]
    EXPECT_EQ(host_f32(gather_rows(dtable, dindex)), host_f32(host)) << "cols " << cols;
  }
}

TEST(DitKernelsGpu, PatchifyUnpatchify) {
  VGEN_REQUIRE_GPU();
  const int64_t B = 2, C = 3, T = 4, H = 6, W = 10;
  const std::array<int, 3> patch = {1, 2, 2};
  const int64_t S = (T / 1) * (H / 2) * (W / 2), P = C * 4;
  auto x = rounded_bf16(random_vec(size_t(B * C * T * H * W), 600));
  for (DType dt : kTypes) {
    // A shard reaching past the end: the padding rows must be zero.
    const int64_t begin = S - 17, count = 24;
    std::vector<float> ref(size_t(B * count * P));
    kern::patchify_ref(x.data(), ref.data(), B, C, T, H, W, 1, 2, 2, begin, count);
    Tensor out = poisoned({B, count, P}, dt);
    VGEN_CUDA_CHECK(kern::patchify(device_tensor(x, {B, C, T, H, W}, DType::kF32).raw(), kern::FloatType::kF32,
                                   out.raw(), ft(dt), B, C, T, H, W, 1, 2, 2, begin, count, compute_stream()));
    expect_close(host_f32(out), ref, [](size_t) { return 0.0; }, "patchify");
    auto tok = rounded_bf16(random_vec(size_t(B * S * P), 601));
    std::vector<float> uref(x.size());
    kern::unpatchify_ref(tok.data(), uref.data(), B, C, T, H, W, 1, 2, 2);
    Tensor u = cuda_unpatchify(device_tensor(tok, {B, S, P}, dt), patch, C, T, H, W, DType::kF32);
    expect_close(host_f32(u), uref, [](size_t) { return 0.0; }, "unpatchify");
  }
}

// Ulysses pack/unpack and the Attention2D out/LSE pack on device tensors (bf16 and f32) equal the
// host permutations (copies: exact).
TEST(DitKernelsGpu, SeqShuffleOnDevice) {
  VGEN_REQUIRE_GPU();
  const int U = 2;
  const int64_t B = 2, L = 5, H = 4, D = 12;
  auto q = rounded_bf16(random_vec(size_t(B * L * H * D), 700)), k = rounded_bf16(random_vec(q.size(), 701)),
       v = rounded_bf16(random_vec(q.size(), 702));
  Tensor hq = Tensor::from_vector(q, {B, L, H, D}), hk = Tensor::from_vector(k, {B, L, H, D}),
         hv = Tensor::from_vector(v, {B, L, H, D});
  Tensor hsend = Tensor::empty({U, 3, B, L, H / U, D}, DType::kF32);
  ulysses_pack_qkv(hq, hk, hv, U, hsend);
  Tensor hq2 = Tensor::empty({B, U * L, H / U, D}, DType::kF32), hk2 = hq2.clone(), hv2 = hq2.clone();
  ulysses_unpack_qkv(hsend, U, hq2, hk2, hv2);
  Tensor hout = Tensor::empty({U, B, L, H / U, D}, DType::kF32);
  ulysses_pack_out(hq2, U, hout);
  Tensor hback = Tensor::empty({B, L, H, D}, DType::kF32);
  ulysses_unpack_out(hout, U, hback);
  auto exact = [](size_t) { return 0.0; };
  for (DType dt : kTypes) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor dq = device_tensor(q, {B, L, H, D}, dt), dk = device_tensor(k, {B, L, H, D}, dt),
           dv = device_tensor(v, {B, L, H, D}, dt);
    Tensor send = poisoned({U, 3, B, L, H / U, D}, dt);
    ulysses_pack_qkv(dq, dk, dv, U, send);
    expect_close(host_f32(send), host_f32(hsend), exact, "ulysses_pack_qkv");
    Tensor q2 = poisoned({B, U * L, H / U, D}, dt), k2 = poisoned({B, U * L, H / U, D}, dt),
           v2 = poisoned({B, U * L, H / U, D}, dt);
    ulysses_unpack_qkv(send, U, q2, k2, v2);
    expect_close(host_f32(k2), host_f32(hk2), exact, "ulysses_unpack_qkv");
    Tensor out = poisoned({U, B, L, H / U, D}, dt);
    ulysses_pack_out(q2, U, out);
    expect_close(host_f32(out), host_f32(hout), exact, "ulysses_pack_out");
    Tensor back = poisoned({B, L, H, D}, dt);
    ulysses_unpack_out(out, U, back);
    expect_close(host_f32(back), q, exact, "ulysses round trip");
    Tensor st = poisoned({2, B, L, H, D}, dt);
    stack_pair(dq, dk, st);
    expect_close(host_f32(st[1]), k, exact, "stack_pair");
  }
  // Attention2D: o [B, N·L, H, D] f32 and lse [B, H, N·L] → per-destination chunks.
  const int N = 3;
  auto o = random_vec(size_t(B * N * L * H * D), 703), l = random_vec(size_t(B * H * N * L), 704);
  const int64_t chunk = out_lse_chunk(B, L, H, D);
  Tensor hs = Tensor::empty({N, chunk}, DType::kF32);
  pack_out_lse(Tensor::from_vector(o, {B, N * L, H, D}), Tensor::from_vector(l, {B, H, N * L}), N, hs);
  Tensor ds = poisoned({N, chunk}, DType::kF32);
  pack_out_lse(device_tensor(o, {B, N * L, H, D}, DType::kF32), device_tensor(l, {B, H, N * L}, DType::kF32), N, ds);
  expect_close(host_f32(ds), host_f32(hs), exact, "pack_out_lse");
  Tensor g = poisoned({B, N * L, H, D}, DType::kBF16);
  Tensor recv = device_tensor(rounded_bf16(o), {N, 1, B, L, H, D}, DType::kBF16);
  gathered_to_seq(recv, N, 1, 0, g);
  Tensor hg = Tensor::empty({B, N * L, H, D}, DType::kF32);
  gathered_to_seq(Tensor::from_vector(rounded_bf16(o), {N, 1, B, L, H, D}), N, 1, 0, hg);
  expect_close(host_f32(g), host_f32(hg), exact, "gathered_to_seq");
}

TEST(DitKernelsGpu, RandomFills) {
  VGEN_REQUIRE_GPU();
  for (DType dt : kTypes) {
    Tensor t = poisoned({1 << 20}, dt);
    cuda_fill_normal(t, 42, 0.0f, 0.02f);
    auto v = host_f32(t);
    double s = 0, s2 = 0;
    for (float x : v) {
      ASSERT_TRUE(std::isfinite(x));
      s += x, s2 += double(x) * x;
    }
    const double mean = s / double(v.size()), sd = std::sqrt(s2 / double(v.size()) - mean * mean);
    EXPECT_NEAR(mean, 0.0, 2e-4);
    EXPECT_NEAR(sd, 0.02, 5e-4);
    Tensor u = poisoned({1 << 20}, dt);
    cuda_fill_normal(u, 42, 0.0f, 0.02f);
    expect_close(host_f32(u), v, [](size_t) { return 0.0; }, "same seed, same values");
    cuda_fill_constant(u, 1.0f);
    EXPECT_EQ(host_f32(u)[12345], 1.0f);
  }
  sync_stream();
}

#else
VGEN_GPU_TESTS_NEED_CUDA(DitKernelsGpu)
#endif
