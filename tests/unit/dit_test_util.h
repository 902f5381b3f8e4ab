// Test helpers for the DiT: an in-process group of threads with all_gather (so sequence and CFG
// sharding run in one process), an all-gather-K/V SeqAttention on such a group, a hand-built
// single-rank Mesh, and the fixture paths.
#pragma once
#include <barrier>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dist/communicator.h"
#include "dist/mesh.h"
#include "model/wan/dit/transformer.h"
#include "parallel/block_attention.h"
#include "parallel/local_attention.h"
#include "parallel/seq_attention.h"
#include "model/dit_step.h"

namespace vgen::test {

inline std::string golden_dir() { return std::string(VGEN_SOURCE_DIR) + "/tests/golden"; }

// Per-token timesteps [B, S] host f32 from t [B]: every token at its sample's t except the first
// `at_zero` tokens at 0 (Wan 2.2 TI2V in image-to-video mode: the first latent frame's tokens).
inline Tensor per_token_timesteps(const Tensor& t, int64_t S, int64_t at_zero = 0) {
  const int64_t B = t.dim(0);
  const Tensor h = t.to(Device::kCPU).to(DType::kF32);
  Tensor out = Tensor::empty({B, S}, DType::kF32);  // [B, S]
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) out.f32()[b * S + s] = s < at_zero ? 0.0f : h.f32()[b];
  return out;
}

// One dit_predict on a single rank (self group, local attention).
inline Tensor predict_one_rank(const WanTransformer& m, const Tensor& x, const Tensor& t, const Tensor& ctx,
                               const StepPolicy& step = {}) {
  auto seq = make_self_communicator();
  auto attn = make_local_attention();
  TextContext text = m.prepare_text(ctx);
  return dit_predict(m, x, t, text, *seq, *attn, nullptr, step);
}

// Shared state of one group of `n` threads.
struct ThreadGroup {
  explicit ThreadGroup(int n) : size(n), bar(n), slots(size_t(n), nullptr) {}
  int size;
  std::barrier<> bar;
  std::vector<const Tensor*> slots;
};

// all_gather and an f32 all_reduce_sum (in group-rank order, the same on every rank) are
// implemented: what the DiT runners, the test attention and the first-block cache use.
class ThreadComm : public Communicator {
 public:
  ThreadComm(std::shared_ptr<ThreadGroup> g, int rank) : g_(std::move(g)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return g_->size; }
  void all_gather(const Tensor& send, Tensor& recv) override {
    VGEN_ASSERT(recv.nbytes() == send.nbytes() * size_t(g_->size), "all_gather sizes");
    g_->slots[size_t(rank_)] = &send;
    g_->bar.arrive_and_wait();
    for (int r = 0; r < g_->size; ++r)
      std::memcpy(static_cast<char*>(recv.raw()) + send.nbytes() * size_t(r), g_->slots[size_t(r)]->raw(),
                  send.nbytes());
    g_->bar.arrive_and_wait();
  }
  void all_to_all(const Tensor&, Tensor&) override { fail("all_to_all"); }
  void all_gather_v(const Tensor&, Tensor&, const std::vector<int64_t>&) override { fail("all_gather_v"); }
  void reduce_scatter(const Tensor&, Tensor&) override { fail("reduce_scatter"); }
  void all_reduce_sum(Tensor& t) override {
    VGEN_ASSERT(t.dtype() == DType::kF32 && t.is_cpu(), "ThreadComm::all_reduce_sum: host f32 only, got {}", t.str());
    g_->slots[size_t(rank_)] = &t;
    g_->bar.arrive_and_wait();
    std::vector<float> sum(size_t(t.numel()), 0.0f);
    for (int r = 0; r < g_->size; ++r)
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += g_->slots[size_t(r)]->f32()[i];
    g_->bar.arrive_and_wait();  // every rank has read every input before any is overwritten
    std::memcpy(t.f32(), sum.data(), sum.size() * sizeof(float));
  }
  void all_reduce_max(Tensor&) override { fail("all_reduce_max"); }
  void broadcast(Tensor&, int) override { fail("broadcast"); }
  void barrier() override { g_->bar.arrive_and_wait(); }
  void send(const Tensor&, int, int) override { fail("send"); }
  void recv(Tensor&, int, int) override { fail("recv"); }
  void sendrecv(const Tensor&, int, Tensor&, int, int) override { fail("sendrecv"); }
  std::unique_ptr<Pending> start_sendrecv(const Tensor&, int, Tensor&, int, int) override {
    fail("start_sendrecv");
    return nullptr;
  }

 private:
  [[noreturn]] static void fail(const char* op) { VGEN_THROW(ExitCode::kInternal, "ThreadComm: {} not implemented", op); }
  std::shared_ptr<ThreadGroup> g_;
  int rank_;
};

// Exact sequence-parallel attention by gathering all K/V shards (padding keys excluded).
class GatherKvAttention : public SeqAttention {
 public:
  explicit GatherKvAttention(std::shared_ptr<Communicator> comm) : comm_(std::move(comm)) {}
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v, const SeqLayout& layout,
                 const AttentionPolicy& policy) override {
    const int64_t B = q.dim(0), L = q.dim(1), H = q.dim(2), D = q.dim(3), N = layout.degree;
    auto full = [&](const Tensor& x) {
      Tensor g = Tensor::empty({N, B, L, H, D}, DType::kF32);
      comm_->all_gather(x, g);
      Tensor out = Tensor::empty({B, N * L, H, D}, DType::kF32);  // sequence order
      for (int64_t r = 0; r < N; ++r)
        for (int64_t b = 0; b < B; ++b)
          std::memcpy(out.f32() + (b * N * L + r * L) * H * D, g.f32() + ((r * B + b) * L) * H * D,
                      size_t(L * H * D) * 4);
      return out;
    };
    Tensor kf = full(k), vf = full(v);
    Tensor out = Tensor::empty(q.shape(), DType::kF32);
    block_attention(q, kf, vf, layout.tokens, out, nullptr, policy);
    return out;
  }

 private:
  std::shared_ptr<Communicator> comm_;
};

inline std::shared_ptr<Communicator> self_comm() { return std::shared_ptr<Communicator>(make_self_communicator()); }

// A single-rank mesh; the caller may replace groups (and set the shape) for threaded tests.
inline Mesh single_rank_mesh() {
  Mesh m;
  m.world = self_comm();
  m.replica = self_comm();
  m.dp = self_comm();
  m.cfg = self_comm();
  m.cp = self_comm();
  m.row = self_comm();
  m.col = self_comm();
  m.ulysses = self_comm();
  m.seq = self_comm();
  m.vae = self_comm();
  return m;
}

inline double rel_l2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = double(a.f32()[i]) - double(b.f32()[i]);
    num += d * d;
    den += double(b.f32()[i]) * double(b.f32()[i]);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace vgen::test
