#include "dist/watchdog.h"

#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "core/wait_marker.h"
#include "dist/mpi_communicator.h"
#include "dist/watchdog_rule.h"

namespace vgen {
namespace {

using Clock = std::chrono::steady_clock;

// Hooks and device communicators, registered independently of a running watchdog.
struct Registry {
  std::mutex mu;
  int next_id = 0;
  std::map<int, std::function<void(const std::string&)>> hooks;
  std::map<int, std::pair<std::function<std::string()>, std::function<void()>>> comms;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: the thread may outlive static destruction
  return *r;
}

std::atomic<Watchdog::Impl*> g_running{nullptr};

// What one rank published at start (gathered once over the world).
struct RankInfo {
  int32_t leader = 0;    // world rank of its node leader (whose window exposes the node's slots)
  int32_t offset = 0;    // byte offset of its slot in the leader's exposure
  int32_t node_bytes = 0;  // bytes the leader exposes
  int32_t pid = 0;
  char host[64] = {0};
};

// Runs `fn` on a thread of its own and waits at most `seconds` for it: a hook or an abort that
// hangs (a stuck disk, a wedged driver) must not keep the job alive. Returns whether it finished.
bool run_bounded(std::function<void()> fn, double seconds) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([fn = std::move(fn), done] {
    try {
      fn();
    } catch (const std::exception& e) {
      log_error("watchdog: {}", e.what());
    }
    done->store(true);
  }).detach();
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (!done->load() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done->load();
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Bounds of the steps after a timeout, so the job ends within about timeout + 30 s.
constexpr double kRemoteReadSeconds = 3, kHookSeconds = 15, kAbortSeconds = 3, kWaitForWriterSeconds = 22;

}  // namespace

struct Watchdog::Impl {
  WatchdogOptions opts;
  DistEnv env;
  bool mpi_threads = false;  // MPI_THREAD_MULTIPLE: the thread may call MPI
  int uncaught = 0;
  double poll_s = 1.0, stale_s = 30.0;

  MPI_Comm node = MPI_COMM_NULL;
  MPI_Win shm_win = MPI_WIN_NULL, world_win = MPI_WIN_NULL;
  std::vector<WaitSlot*> local;  // node-local slots by node rank
  std::vector<int> local_world;  // their world ranks
  int node_rank = 0;
  WaitSlot* own = nullptr;
  std::unique_ptr<WaitSlot> single;  // one process without MPI windows
  std::vector<RankInfo> ranks;       // by world rank

  std::thread thread;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;

  void start_windows();
  void run();
  [[noreturn]] void fail(const std::string& diagnosis);
  void run_hooks(const std::string& diagnosis);
  void abort_communicators();
  [[noreturn]] void end_job();
  std::map<int, WaitState> read_all(double deadline_s);
  WatchdogVerdict judge(const WaitState& me, double waited_s, const WatchdogLimits& limits);
  struct WaitTrack {
    bool tracking = false;
    uint64_t seen_waits = 0;
    Clock::time_point began, last_round;
    bool said = false;  // the verdict to go on was logged for this wait
  };
  std::string check_wait(WaitTrack& t);
  bool is_local(int world_rank) const {
    return std::find(local_world.begin(), local_world.end(), world_rank) != local_world.end();
  }
};

void Watchdog::Impl::start_windows() {
  // Test hook: every rank its own "node", so the path for other nodes runs on one host.
  const bool split = std::getenv("VGEN_WATCHDOG_SPLIT_NODES") != nullptr;
  {
    WaitScope w(WaitOp::kWindow, WaitBackend::kMpi, "world");
    if (split)
      VGEN_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, env.world_rank, 0, &node));
    else
      VGEN_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, env.world_rank, MPI_INFO_NULL, &node));
  }
  int node_size = 1;
  VGEN_MPI_CHECK(MPI_Comm_rank(node, &node_rank));
  VGEN_MPI_CHECK(MPI_Comm_size(node, &node_size));
  void* base = nullptr;
  {
    WaitScope w(WaitOp::kWindow, WaitBackend::kMpi, "node");
    VGEN_MPI_CHECK(MPI_Win_allocate_shared(MPI_Aint(sizeof(WaitSlot)), 1, MPI_INFO_NULL, node, &base, &shm_win));
  }
  own = new (base) WaitSlot();
  own->world_rank = env.world_rank;
  own->pid = int32_t(getpid());
  std::snprintf(own->host, sizeof(own->host), "%s", env.host.c_str());
  own->heartbeat_ms.store(wait_clock_ms());
  own->flags.store(kSlotLive);

  local.resize(size_t(node_size));
  char *first = nullptr, *last = nullptr;
  for (int i = 0; i < node_size; ++i) {
    MPI_Aint sz = 0;
    int disp = 0;
    void* p = nullptr;
    VGEN_MPI_CHECK(MPI_Win_shared_query(shm_win, i, &sz, &disp, &p));
    local[size_t(i)] = static_cast<WaitSlot*>(p);
    char* c = static_cast<char*>(p);
    if (!first || c < first) first = c;
    if (!last || c + sizeof(WaitSlot) > last) last = c + sizeof(WaitSlot);
  }
  // Every slot is initialised before any is read or exposed.
  {
    WaitScope w(WaitOp::kBarrier, WaitBackend::kMpi, "node");
    VGEN_MPI_CHECK(MPI_Barrier(node));
  }
  // Other nodes read the node's slots in one piece: only when they lie in one block (the default,
  // contiguous allocation; a little padding between the ranks' parts is fine).
  const bool contiguous = size_t(last - first) <= size_t(node_size) * (sizeof(WaitSlot) + 4096);
  RankInfo mine;
  int leader = env.world_rank;
  {
    WaitScope w(WaitOp::kBroadcast, WaitBackend::kMpi, "node");
    VGEN_MPI_CHECK(MPI_Bcast(&leader, 1, MPI_INT, 0, node));
  }
  mine.leader = leader;
  mine.offset = int32_t(reinterpret_cast<char*>(own) - first);
  mine.node_bytes = contiguous ? int32_t(last - first) : 0;
  mine.pid = own->pid;
  std::snprintf(mine.host, sizeof(mine.host), "%s", env.host.c_str());
  ranks.resize(size_t(env.world_size));
  {
    WaitScope w(WaitOp::kAllGather, WaitBackend::kMpi, "world");
    VGEN_MPI_CHECK(MPI_Allgather(&mine, int(sizeof(RankInfo)), MPI_BYTE, ranks.data(), int(sizeof(RankInfo)), MPI_BYTE,
                                 MPI_COMM_WORLD));
  }
  local_world.resize(size_t(node_size));
  for (int i = 0; i < node_size; ++i) local_world[size_t(i)] = local[size_t(i)]->world_rank;

  if (mpi_threads) {
    WaitScope w(WaitOp::kWindow, WaitBackend::kMpi, "world");
    const bool leads = node_rank == 0;
    VGEN_MPI_CHECK(MPI_Win_create(leads ? first : nullptr, leads ? MPI_Aint(mine.node_bytes) : 0, 1, MPI_INFO_NULL,
                                  MPI_COMM_WORLD, &world_win));
    VGEN_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, world_win));
  }
}

Watchdog::Watchdog(const WatchdogOptions& opts, const DistEnv& env) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  VGEN_CHECK(g_running.load() == nullptr, ExitCode::kInternal, "a watchdog already runs in this process");
  VGEN_CHECK(opts.timeout_s >= 0, ExitCode::kRecipe, "runtime.collective_timeout_s must be > 0, got {}",
             opts.timeout_s);
  m.opts = opts;
  m.env = env;
  m.uncaught = std::uncaught_exceptions();
  // A derived allowance is never below the floor: the rounds fit the shortest one.
  const double shortest = opts.timeout_s > 0 ? opts.timeout_s : kWatchdogFloorS;
  m.poll_s = std::clamp(shortest / 40.0, 0.05, 1.0);
  m.stale_s = std::max(3.0 * m.poll_s, std::min(30.0, shortest / 4.0));
  if (dist_initialized()) {
    int level = 0;
    VGEN_MPI_CHECK(MPI_Query_thread(&level));
    m.mpi_threads = level >= MPI_THREAD_MULTIPLE;
  }
  if (env.world_size > 1) {
    m.start_windows();
  } else {
    m.single = std::make_unique<WaitSlot>();
    m.own = m.single.get();
    m.own->world_rank = env.world_rank;
    m.own->pid = int32_t(getpid());
    std::snprintf(m.own->host, sizeof(m.own->host), "%s", env.host.c_str());
    m.own->flags.store(kSlotLive);
    m.local = {m.own};
    m.local_world = {env.world_rank};
    RankInfo ri;
    ri.pid = m.own->pid;
    std::snprintf(ri.host, sizeof(ri.host), "%s", env.host.c_str());
    m.ranks = {ri};
  }
  wait_slot_attach(m.own);
  // SIGINT/SIGTERM stay with the main thread (the stop flag of the batch).
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  m.thread = std::thread([&m] { m.run(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  g_running.store(impl_.get());
  log_debug("watchdog: {}, poll {} s, heartbeat stale after {} s, {} rank(s) on this node, MPI thread level {}",
            watchdog_limits(opts, wait_slot_read(*m.own)).text, m.poll_s, m.stale_s, m.local.size(),
            m.mpi_threads ? "multiple" : "funneled");
}

Watchdog::~Watchdog() {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    m.stop = true;
  }
  m.cv.notify_all();
  if (m.thread.joinable()) m.thread.join();
  g_running.store(nullptr);
  log_debug("watchdog: {} waits marked on this rank", wait_slot_read(*m.own).waits);
  wait_slot_attach(nullptr);
  // Unwinding an error only this rank saw: the peers may never free the windows with it, and the
  // error's handler ends the job.
  if (std::uncaught_exceptions() > m.uncaught || !dist_initialized()) return;
  if (m.world_win != MPI_WIN_NULL) {
    WaitScope w(WaitOp::kWindow, WaitBackend::kMpi, "world");
    MPI_Win_unlock_all(m.world_win);
    MPI_Win_free(&m.world_win);
  }
  if (m.shm_win != MPI_WIN_NULL) {
    WaitScope w(WaitOp::kWindow, WaitBackend::kMpi, "node");
    MPI_Win_free(&m.shm_win);
  }
  if (m.node != MPI_COMM_NULL) MPI_Comm_free(&m.node);
}

// Every rank's state that can be read now: the node's slots directly, other nodes' through one
// MPI_Rget per node leader (only at MPI_THREAD_MULTIPLE), each given up after `deadline_s`.
std::map<int, WaitState> Watchdog::Impl::read_all(double deadline_s) {
  std::map<int, WaitState> out;
  for (WaitSlot* s : local) out[s->world_rank] = wait_slot_read(*s);
  if (world_win == MPI_WIN_NULL) return out;
  struct Fetch {
    int leader;
    char* buf;
    MPI_Request req;
    bool done = false;
  };
  std::vector<Fetch> fetches;
  for (int r = 0; r < env.world_size; ++r) {
    const RankInfo& ri = ranks[size_t(r)];
    if (ri.leader != r || is_local(r) || ri.node_bytes <= 0) continue;
    // Aligned storage for slot copies; leaked if the node never answers (the job is ending).
    char* buf = static_cast<char*>(::operator new(size_t(ri.node_bytes), std::align_val_t(64)));
    MPI_Request req;
    if (MPI_Rget(buf, ri.node_bytes, MPI_BYTE, r, 0, ri.node_bytes, MPI_BYTE, world_win, &req) != MPI_SUCCESS) continue;
    fetches.push_back({r, buf, req});
  }
  const auto until = Clock::now() + std::chrono::duration<double>(deadline_s);
  size_t pending = fetches.size();
  while (pending > 0 && Clock::now() < until) {
    for (Fetch& f : fetches) {
      if (f.done) continue;
      int flag = 0;
      if (MPI_Test(&f.req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) flag = 0;
      if (flag) {
        f.done = true;
        --pending;
      }
    }
    if (pending) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (Fetch& f : fetches) {
    if (!f.done) continue;
    for (int r = 0; r < env.world_size; ++r) {
      const RankInfo& ri = ranks[size_t(r)];
      if (ri.leader != f.leader) continue;
      out[r] = wait_slot_read(*reinterpret_cast<const WaitSlot*>(f.buf + ri.offset));
    }
    ::operator delete(f.buf, std::align_val_t(64));
  }
  return out;
}

// What this rank sees now, judged by the rule of dist/watchdog_rule.h.
WatchdogVerdict Watchdog::Impl::judge(const WaitState& me, double waited_s, const WatchdogLimits& limits) {
  WatchdogView v;
  v.self = env.world_rank;
  v.me = me;
  v.waited_s = waited_s;
  v.states = read_all(std::min(kRemoteReadSeconds, limits.wait_s / 4));
  v.now_ms = wait_clock_ms();
  v.stale_s = stale_s;
  v.members = wait_group(me.group_id).world_ranks;
  if (v.members.empty())
    for (int r = 0; r < env.world_size; ++r) v.members.push_back(r);
  for (const RankInfo& ri : ranks) v.ranks.push_back({ri.host, ri.pid});
  v.unreadable_why = mpi_threads ? "other nodes that did not answer" : "other nodes; MPI lacks MPI_THREAD_MULTIPLE";
  return watchdog_verdict(v, limits);
}

void Watchdog::Impl::run_hooks(const std::string& diagnosis) {
  bool any = false;
  {
    std::unique_lock<std::mutex> lk(registry().mu, std::try_to_lock);
    any = !lk.owns_lock() || !registry().hooks.empty();
  }
  if (!any) {
    own->flags.fetch_or(kSlotReportWritten);
    return;
  }
  // Park the main thread first, so the hooks see its state settled.
  wait_freeze();
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (!wait_main_quiescent() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!wait_main_quiescent()) {
    log_warn("watchdog: the main thread did not reach a wait within 5 s; timeout hooks skipped");
  } else {
    // The registry's lock stays with the hooks' thread: a hook left running keeps it to the end.
    const bool done = run_bounded(
        [diagnosis] {
          Registry& reg = registry();
          std::lock_guard<std::mutex> lk(reg.mu);
          for (auto& [id, fn] : reg.hooks) {
            try {
              fn(diagnosis);
            } catch (const std::exception& e) {
              log_error("watchdog: a timeout hook failed: {}", e.what());
            }
          }
        },
        kHookSeconds);
    if (!done) log_warn("watchdog: the timeout hooks did not finish within {} s; ending the job anyway", kHookSeconds);
  }
  own->flags.fetch_or(kSlotReportWritten);
}

void Watchdog::Impl::abort_communicators() {
  std::vector<std::function<void()>> aborts;
  {
    Registry& reg = registry();
    std::unique_lock<std::mutex> lk(reg.mu, std::try_to_lock);  // a hook left running may hold it
    if (!lk.owns_lock()) return;
    for (auto& [id, c] : reg.comms) aborts.push_back(c.second);
  }
  if (aborts.empty()) return;
  if (!run_bounded([aborts] { for (auto& a : aborts) a(); }, kAbortSeconds))
    log_warn("watchdog: aborting the NCCL communicators did not finish within {} s", kAbortSeconds);
}

[[noreturn]] void Watchdog::Impl::end_job() {
  std::fflush(stdout);
  std::fflush(stderr);
  if (mpi_threads) dist_abort(int(ExitCode::kDistributed));
  // Below MPI_THREAD_MULTIPLE this thread may not call MPI: a rank that exits without MPI_Finalize
  // makes the launcher end the job.
  std::_Exit(int(ExitCode::kDistributed));
}

[[noreturn]] void Watchdog::Impl::fail(const std::string& diagnosis) {
  own->flags.fetch_or(kSlotTimedOut);
  log_error("[rank {} on {}] {}", env.world_rank, env.host, diagnosis);
  run_hooks(diagnosis);
  abort_communicators();
  // World rank 0 writes the report: when it runs on this node, give it time to do so.
  if (env.world_rank != 0 && is_local(0)) {
    WaitSlot* root = local[size_t(std::find(local_world.begin(), local_world.end(), 0) - local_world.begin())];
    const auto until = Clock::now() + std::chrono::duration<double>(kWaitForWriterSeconds);
    while (Clock::now() < until && !(root->flags.load() & kSlotReportWritten) &&
           double(wait_clock_ms() - root->heartbeat_ms.load()) / 1000.0 <= stale_s)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  end_job();
}

// This rank's own wait: how long it has lasted (a new wait restarts the clock, and so does a round
// that came much later than due: this process was stopped or the job suspended) and, past the
// allowance, the verdict. Returns the message that ends the job, or "" to go on.
std::string Watchdog::Impl::check_wait(WaitTrack& t) {
  const WaitState me = wait_slot_read(*own);
  const auto now = Clock::now();
  const bool resumed = t.last_round != Clock::time_point{} && seconds_between(t.last_round, now) > stale_s;
  t.last_round = now;
  if (me.op == WaitOp::kNone) {
    t.tracking = false;
    return "";
  }
  if (!t.tracking || me.waits != t.seen_waits || resumed) {
    t = {true, me.waits, now, now, false};
    return "";
  }
  const double waited = seconds_between(t.began, now);
  const WatchdogLimits limits = watchdog_limits(opts, me);
  if (waited <= limits.wait_s) return "";
  const WatchdogVerdict v = judge(me, waited, limits);
  if (v.end) return v.message;
  if (!t.said) log_debug("[rank {} on {}] {}", env.world_rank, env.host, v.message);  // once per wait
  t.said = true;
  return "";
}

void Watchdog::Impl::run() {
  WaitTrack track;
  bool peer_hooks_done = false;
  Clock::time_point peer_deadline;
  std::unique_lock<std::mutex> lk(mu);
  while (!cv.wait_for(lk, std::chrono::duration<double>(poll_s), [&] { return stop; })) {
    own->heartbeat_ms.store(wait_clock_ms());
    std::string async_error;
    {
      Registry& reg = registry();
      std::unique_lock<std::mutex> rl(reg.mu, std::try_to_lock);  // busy: a (un)registration, or hooks running
      if (rl.owns_lock())
        for (auto& [id, c] : reg.comms) {
          async_error = c.first();
          if (!async_error.empty()) break;
        }
    }
    if (!async_error.empty()) {
      lk.unlock();
      own->flags.fetch_or(kSlotTimedOut);
      const std::string msg = fmt::format("watchdog: {}; ending the job (exit 8)", async_error);
      log_error("[rank {} on {}] {}", env.world_rank, env.host, msg);
      run_hooks(msg);
      abort_communicators();
      end_job();
    }
    const std::string ending = check_wait(track);
    if (!ending.empty()) {
      lk.unlock();
      fail(ending);
    }
    // A rank of this node timed out: leave the report now (world rank 0), before its abort ends us.
    if (!peer_hooks_done) {
      for (WaitSlot* s : local) {
        if (s == own || !(s->flags.load() & kSlotTimedOut)) continue;
        lk.unlock();
        run_hooks(fmt::format("rank {} on {} timed out (see its log line)", s->world_rank, env.host));
        lk.lock();
        peer_hooks_done = true;
        peer_deadline = Clock::now() + std::chrono::seconds(30);
        break;
      }
    } else if (Clock::now() > peer_deadline) {
      // The rank that timed out did not end the job (it should have within seconds).
      lk.unlock();
      log_error("[rank {} on {}] watchdog: a rank of this node timed out 30 s ago and the job still runs; ending it "
                "(exit 8)",
                env.world_rank, env.host);
      abort_communicators();
      end_job();
    }
  }
}

WatchdogHook::WatchdogHook(std::function<void(const std::string&)> fn) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lk(reg.mu);
  id_ = reg.next_id++;
  reg.hooks[id_] = std::move(fn);
}

WatchdogHook::~WatchdogHook() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lk(reg.mu);
  reg.hooks.erase(id_);
}

int watchdog_add_communicator(std::function<std::string()> poll, std::function<void()> abort) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lk(reg.mu);
  const int id = reg.next_id++;
  reg.comms[id] = {std::move(poll), std::move(abort)};
  return id;
}

void watchdog_remove_communicator(int id) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lk(reg.mu);
  reg.comms.erase(id);
}

std::string watchdog_diagnosis_for_testing() {
  Watchdog::Impl* m = g_running.load();
  if (!m) return "";
  const WaitState me = wait_slot_read(*m->own);
  return m->judge(me, 0.0, watchdog_limits(m->opts, me)).message;
}

bool watchdog_running() { return g_running.load() != nullptr; }

}  // namespace vgen
