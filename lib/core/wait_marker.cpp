#include "core/wait_marker.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>

namespace vgen {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

WaitSlot g_private_slot;
std::atomic<WaitSlot*> g_slot{&g_private_slot};
// The publishing thread: set by the first attach (or the first marker when none attached yet).
std::atomic<bool> g_thread_claimed{false};
thread_local bool t_is_marker_thread = false;

// Freeze protocol (wait_freeze): Dekker-style on two sequentially consistent flags.
std::atomic<int> g_depth{0};
std::atomic<bool> g_freeze{false};
std::atomic<bool> g_parked{false};

std::mutex g_groups_mu;
std::deque<WaitGroup>& groups() {
  static std::deque<WaitGroup>* g = new std::deque<WaitGroup>();  // never destroyed (used at exit)
  return *g;
}

void pack_name(const char* name, uint64_t out[2]) {
  char buf[16] = {0};
  if (name) std::memcpy(buf, name, strnlen(name, sizeof(buf)));  // 16 bytes kept, NUL padded
  std::memcpy(out, buf, sizeof(buf));
}
std::string unpack_name(const uint64_t in[2]) {
  char buf[17] = {0};
  std::memcpy(buf, in, 16);
  return std::string(buf);
}

bool claim_thread() {
  if (t_is_marker_thread) return true;
  bool expected = false;
  if (!g_thread_claimed.load(kRelaxed) && g_thread_claimed.compare_exchange_strong(expected, true)) {
    t_is_marker_thread = true;
    return true;
  }
  return false;
}

class SlotWrite {
 public:
  explicit SlotWrite(WaitSlot& s) : s_(s), q_(s.seq.load(kRelaxed)) {
    s_.seq.store(q_ + 1, kRelaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  ~SlotWrite() { s_.seq.store(q_ + 2, std::memory_order_release); }

 private:
  WaitSlot& s_;
  uint32_t q_;
};

[[noreturn]] void park() {
  g_parked.store(true);
  for (;;) pause();  // the watchdog ends the process
}

}  // namespace

const char* wait_op_name(WaitOp op) {
  switch (op) {
    case WaitOp::kNone: return "none";
    case WaitOp::kAllToAll: return "all_to_all";
    case WaitOp::kAllGather: return "all_gather";
    case WaitOp::kAllGatherV: return "all_gather_v";
    case WaitOp::kReduceScatter: return "reduce_scatter";
    case WaitOp::kAllReduce: return "all_reduce";
    case WaitOp::kBroadcast: return "broadcast";
    case WaitOp::kBarrier: return "barrier";
    case WaitOp::kSend: return "send";
    case WaitOp::kRecv: return "recv";
    case WaitOp::kSendRecv: return "sendrecv";
    case WaitOp::kPendingWait: return "wait for a started exchange";
    case WaitOp::kQueueNext: return "dp queue fetch";
    case WaitOp::kCommCreate: return "communicator creation";
    case WaitOp::kWindow: return "one-sided window setup";
    case WaitOp::kRemoteGet: return "one-sided get";
    case WaitOp::kGpuSync: return "wait for the GPU";
    case WaitOp::kFileRead: return "checkpoint read";
    case WaitOp::kCount: break;
  }
  return "unknown operation";
}

const char* wait_backend_name(WaitBackend b) {
  switch (b) {
    case WaitBackend::kMpi: return "MPI";
    case WaitBackend::kNccl: return "NCCL";
    case WaitBackend::kCuda: return "CUDA";
    case WaitBackend::kNone: break;
  }
  return "";
}

int64_t wait_clock_ms() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

WaitState wait_slot_read(const WaitSlot& s) {
  WaitState st;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint32_t q1 = s.seq.load(std::memory_order_acquire);
    const uint32_t op = s.op.load(kRelaxed), last = s.last_op.load(kRelaxed);
    const uint64_t g[2] = {s.group[0].load(kRelaxed), s.group[1].load(kRelaxed)};
    const uint64_t lg[2] = {s.last_group[0].load(kRelaxed), s.last_group[1].load(kRelaxed)};
    st.since_ms = s.since_ms.load(kRelaxed);
    st.group_id = s.group_id.load(kRelaxed);
    st.waits = s.waits.load(kRelaxed);
    st.step = s.step.load(kRelaxed);
    st.steps = s.steps.load(kRelaxed);
    st.steps_done = s.steps_done.load(kRelaxed);
    st.step_ms = s.step_ms.load(kRelaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    const uint32_t q2 = s.seq.load(kRelaxed);
    st.op = WaitOp(op & 0xff);
    st.backend = WaitBackend((op >> 8) & 0xff);
    st.last_op = WaitOp(last & 0xff);
    st.last_backend = WaitBackend((last >> 8) & 0xff);
    st.group = unpack_name(g);
    st.last_group = unpack_name(lg);
    if (q1 == q2 && (q1 & 1) == 0) break;  // else a write was in progress: read again
  }
  st.heartbeat_ms = s.heartbeat_ms.load(kRelaxed);
  st.flags = s.flags.load(kRelaxed);
  st.world_rank = s.world_rank;
  st.pid = s.pid;
  st.host.assign(s.host, strnlen(s.host, sizeof(s.host)));
  return st;
}

int wait_group_register(const std::string& name, std::vector<int> world_ranks) {
  std::lock_guard<std::mutex> lk(g_groups_mu);
  groups().push_back({name, std::move(world_ranks)});
  return int(groups().size()) - 1;
}

WaitGroup wait_group(int id) {
  std::lock_guard<std::mutex> lk(g_groups_mu);
  if (id < 0 || size_t(id) >= groups().size()) return {};
  return groups()[size_t(id)];
}

void wait_slot_attach(WaitSlot* slot) {
  claim_thread();
  if (!t_is_marker_thread) return;
  WaitSlot* to = slot ? slot : &g_private_slot;
  WaitSlot* from = g_slot.load(kRelaxed);
  if (to == from) return;
  {
    SlotWrite w(*to);
    to->op.store(from->op.load(kRelaxed), kRelaxed);
    to->last_op.store(from->last_op.load(kRelaxed), kRelaxed);
    for (int i = 0; i < 2; ++i) {
      to->group[i].store(from->group[i].load(kRelaxed), kRelaxed);
      to->last_group[i].store(from->last_group[i].load(kRelaxed), kRelaxed);
    }
    to->since_ms.store(from->since_ms.load(kRelaxed), kRelaxed);
    to->group_id.store(from->group_id.load(kRelaxed), kRelaxed);
    to->waits.store(from->waits.load(kRelaxed), kRelaxed);
    to->step.store(from->step.load(kRelaxed), kRelaxed);
    to->steps.store(from->steps.load(kRelaxed), kRelaxed);
    to->steps_done.store(from->steps_done.load(kRelaxed), kRelaxed);
    to->step_ms.store(from->step_ms.load(kRelaxed), kRelaxed);
  }
  g_slot.store(to, std::memory_order_release);
}

WaitSlot& wait_slot() { return *g_slot.load(std::memory_order_acquire); }

bool wait_marker_thread() { return t_is_marker_thread; }

WaitScope::WaitScope(WaitOp op, WaitBackend backend, const char* group_name, int group_id) noexcept {
  if (!t_is_marker_thread && !claim_thread()) return;
  active_ = true;
  WaitSlot& s = *g_slot.load(kRelaxed);
  const uint32_t code = uint32_t(op) | uint32_t(backend) << 8;
  uint64_t name[2];
  pack_name(group_name, name);
  prev_op_ = s.op.load(kRelaxed);
  prev_group_[0] = s.group[0].load(kRelaxed);
  prev_group_[1] = s.group[1].load(kRelaxed);
  prev_since_ = s.since_ms.load(kRelaxed);
  prev_group_id_ = s.group_id.load(kRelaxed);
  {
    SlotWrite w(s);
    s.op.store(code, kRelaxed);
    s.group[0].store(name[0], kRelaxed);
    s.group[1].store(name[1], kRelaxed);
    if (backend != WaitBackend::kCuda) {  // a host wait for the GPU keeps the last collective queued
      s.last_op.store(code, kRelaxed);
      s.last_group[0].store(name[0], kRelaxed);
      s.last_group[1].store(name[1], kRelaxed);
    }
    s.group_id.store(group_id, kRelaxed);
    s.since_ms.store(wait_clock_ms(), kRelaxed);
    s.waits.store(s.waits.load(kRelaxed) + 1, kRelaxed);
  }
  g_depth.store(g_depth.load(kRelaxed) + 1);
  if (g_freeze.load()) park();
}

WaitScope::~WaitScope() {
  if (!active_) return;
  WaitSlot& s = *g_slot.load(kRelaxed);
  {
    SlotWrite w(s);
    s.op.store(prev_op_, kRelaxed);
    s.group[0].store(prev_group_[0], kRelaxed);
    s.group[1].store(prev_group_[1], kRelaxed);
    s.group_id.store(prev_group_id_, kRelaxed);
    // Back in the outer wait: its start; at the top level the work starts now.
    s.since_ms.store(prev_op_ ? prev_since_ : wait_clock_ms(), kRelaxed);
  }
  g_depth.store(g_depth.load(kRelaxed) - 1);
  if (g_freeze.load()) park();
}

void wait_marker_step(int step, int steps) {
  if (!t_is_marker_thread && !claim_thread()) return;
  static int64_t step_began_ms = 0;  // the main thread's only
  WaitSlot& s = *g_slot.load(kRelaxed);
  const int prev = s.step.load(kRelaxed);
  const int64_t now = wait_clock_ms();
  SlotWrite w(s);
  if (prev > 0 && step != prev) {  // step `prev` finished
    s.steps_done.store(s.steps_done.load(kRelaxed) + 1, kRelaxed);
    if (prev > 1) s.step_ms.store(std::max(s.step_ms.load(kRelaxed), now - step_began_ms), kRelaxed);
  }
  step_began_ms = now;
  s.step.store(step, kRelaxed);
  s.steps.store(steps, kRelaxed);
}

void wait_freeze() { g_freeze.store(true); }

bool wait_main_quiescent() { return g_parked.load() || g_depth.load() > 0; }

}  // namespace vgen
