// What this process's main thread is waiting in, published for the collective watchdog
// (dist/watchdog.h) at every blocking point: MPI and NCCL calls, the dp queue, barriers, host waits
// for the GPU; and the denoising step it is in.
//
// The state lives in a WaitSlot. Until the watchdog starts, the slot is private to the process;
// the watchdog then moves it into memory that the other ranks of the node read directly (an MPI
// shared-memory window) and that ranks on other nodes fetch with one-sided MPI, so the last state
// of a rank stays readable when that rank can no longer run (stopped, hung, dead).
//
// Cost: a WaitScope is a few relaxed stores into one cache line of the slot, one coarse clock read
// and a sequentially consistent store of the wait depth (tens of nanoseconds); markers on threads
// other than the main thread do nothing.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace vgen {

enum class WaitOp : uint8_t {
  kNone = 0,
  kAllToAll,
  kAllGather,
  kAllGatherV,
  kReduceScatter,
  kAllReduce,
  kBroadcast,
  kBarrier,
  kSend,
  kRecv,
  kSendRecv,
  kPendingWait,   // completion of a started exchange (start_sendrecv / start_all_to_all)
  kQueueNext,     // dp work queue: fetch-and-add on world rank 0
  kCommCreate,    // MPI_Comm_split / dup, NCCL communicator init
  kWindow,        // one-sided window creation, fence or release
  kRemoteGet,     // one-sided get from peers (DWDP on the host)
  kGpuSync,       // the host waits for the GPU (stream or event synchronisation)
  kFileRead,      // the host waits for checkpoint reads (dist/weight_stream.h reader threads)
  kCount
};
const char* wait_op_name(WaitOp op);

enum class WaitBackend : uint8_t { kNone = 0, kMpi = 1, kNccl = 2, kCuda = 3 };
const char* wait_backend_name(WaitBackend b);

// One rank's published state (one per rank in the node's shared segment). Only atomics and plain
// data written once, so the layout is the same in every process that maps it.
struct alignas(64) WaitSlot {
  // Written by the main thread under a sequence lock (`seq` odd while a write is in progress).
  std::atomic<uint32_t> seq{0};
  std::atomic<uint32_t> op{0};        // WaitOp | WaitBackend << 8 of the current wait (0: none)
  std::atomic<uint64_t> group[2]{};   // the current wait's group name (16 bytes, NUL padded)
  std::atomic<int64_t> since_ms{0};   // realtime: start of the current wait, or of the work since the last one
  std::atomic<uint32_t> last_op{0};   // the last collective entered (host waits for the GPU excluded)
  std::atomic<int32_t> group_id{-1};  // the current wait's group in this process's registry (local meaning)
  std::atomic<uint64_t> last_group[2]{};
  std::atomic<uint64_t> waits{0};     // waits entered so far
  std::atomic<int32_t> step{0};       // denoising step being computed (1-based; 0 outside a loop)
  std::atomic<int32_t> steps{0};      // steps of that loop
  std::atomic<uint64_t> steps_done{0};  // denoising steps finished so far (every loop)
  std::atomic<int64_t> step_ms{0};      // the longest step after a loop's first (0: none measured yet)
  // Written by the rank's watchdog thread.
  std::atomic<int64_t> heartbeat_ms{0};  // realtime of its last round
  std::atomic<uint32_t> flags{0};        // kSlotTimedOut | kSlotReportWritten
  // Written once when the slot is published.
  int32_t world_rank = -1;
  int32_t pid = 0;
  char host[64] = {0};
};
constexpr uint32_t kSlotTimedOut = 1, kSlotReportWritten = 2, kSlotLive = 4;

// A consistent copy of a slot (plain values), as the watchdog reads it.
struct WaitState {
  WaitOp op = WaitOp::kNone;
  WaitBackend backend = WaitBackend::kNone;
  std::string group;
  int64_t since_ms = 0;
  WaitOp last_op = WaitOp::kNone;
  WaitBackend last_backend = WaitBackend::kNone;
  std::string last_group;
  int group_id = -1;
  uint64_t waits = 0;
  int step = 0, steps = 0;
  uint64_t steps_done = 0;
  int64_t step_ms = 0;
  int64_t heartbeat_ms = 0;
  uint32_t flags = 0;
  int world_rank = -1;
  int pid = 0;
  std::string host;
};
// Reads `s` written concurrently by its rank's main thread; retries a torn read a few times.
WaitState wait_slot_read(const WaitSlot& s);

// Milliseconds of CLOCK_REALTIME_COARSE (comparable across nodes as far as their clocks agree).
int64_t wait_clock_ms();

// Groups of ranks a wait names: id → name and world ranks (append-only, ids stay valid).
int wait_group_register(const std::string& name, std::vector<int> world_ranks);
struct WaitGroup {
  std::string name;
  std::vector<int> world_ranks;
};
WaitGroup wait_group(int id);  // empty name for an unknown id

// The slot this process publishes into; `slot` replaces the current one (its state is copied over).
// Called by the watchdog on the main thread; nullptr returns to the private slot.
void wait_slot_attach(WaitSlot* slot);
WaitSlot& wait_slot();
// The thread that publishes (the one that first attached; the main thread).
bool wait_marker_thread();

// Marks a blocking call for its duration. Nested scopes restore the outer wait on exit.
class WaitScope {
 public:
  WaitScope(WaitOp op, WaitBackend backend, const char* group_name, int group_id = -1) noexcept;
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  bool active_ = false;
  uint32_t prev_op_ = 0;
  uint64_t prev_group_[2] = {0, 0};
  int64_t prev_since_ = 0;
  int32_t prev_group_id_ = -1;
};

// The denoising step the main thread computes (1-based; 0 when the loop ends). Also counts the
// finished steps and times them: a loop's first step (warm-up, the prompt's conditioning) is not
// timed, so step_ms is the pace of the steady steps.
void wait_marker_step(int step, int steps);

// Freezing (used by the watchdog before the job ends): after wait_freeze(), the main thread parks
// for good at its next wait entry or exit, so a callback on the watchdog thread can read the
// batch's state while the main thread does not change it. wait_main_quiescent() is true once the
// main thread is inside a wait or parked.
void wait_freeze();
bool wait_main_quiescent();

}  // namespace vgen
