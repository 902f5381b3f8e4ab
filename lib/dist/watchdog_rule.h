// What the collective watchdog (dist/watchdog.h) allows a wait and what it decides when a wait runs
// past that: pure functions of the ranks' published states (core/wait_marker.h), so the rule and its
// messages are tested without processes.
//
// The allowance. runtime.collective_timeout_s, when the recipe or --set gives it, is a hard limit:
// a longer wait ends the job. Otherwise it is derived from the work:
//   - until this rank has finished its first denoising step (the load, weight streaming, warm-up,
//     the first step's plan and compile caches): max(600 s, 3 × the predicted load + first step);
//   - after it: max(60 s, 20 × the step), the step being the longer of the time model's prediction
//     for this recipe on this GPU and the longest step this rank measured (a loop's first excluded).
// A derived allowance says when a waiting rank looks at the others, not when it gives up: the job
// ends when a rank stopped (no heartbeat: stopped by a signal, frozen or dead), when every rank
// waits and none has moved for the allowance (a deadlock), or when a rank worked (or waited for its
// GPU or disk) without reaching a marker for longer than the start allowance. While the others are
// alive and moving (another replica still rendering, a long VAE decode on the rank waited on) it
// waits on.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/wait_marker.h"

namespace vgen {

struct WatchdogOptions {
  double timeout_s = 0;          // runtime.collective_timeout_s; 0: derived from the work
  double predicted_step_s = 0;   // the time model's denoising step here (0: unknown, measured instead)
  double predicted_start_s = 0;  // its load and first step (0: unknown)
};

constexpr double kWatchdogFloorS = 60, kWatchdogStartFloorS = 600;
constexpr double kWatchdogStepFactor = 20, kWatchdogStartFactor = 3;

// The allowance in force for this rank's current wait.
struct WatchdogLimits {
  double wait_s = 0;     // explicit: end the job after this; derived: look at the others after this
  double work_s = 0;     // derived: the longest a rank may work without reaching a marker
  bool derived = false;
  std::string text;      // how the message names it ("runtime.collective_timeout_s = 20 s", ...)
};
// `self` is this rank's own state (its finished steps and measured step time).
WatchdogLimits watchdog_limits(const WatchdogOptions& opts, const WaitState& self);

struct RankIdentity {
  std::string host;
  int pid = 0;
};

// What one rank sees when its wait ran past its allowance.
struct WatchdogView {
  int self = 0;
  WaitState me;                       // this rank's state, in the wait that ran long
  double waited_s = 0;
  std::vector<int> members;           // world ranks of the wait's group (every rank when unknown)
  std::map<int, WaitState> states;    // every rank that could be read, this one included
  std::vector<RankIdentity> ranks;    // by world rank
  int64_t now_ms = 0;                 // wait_clock_ms() at the read
  double stale_s = 30;                // a heartbeat older than this: the process does not run
  std::string unreadable_why;         // why a rank missing from `states` could not be read
};

struct WatchdogVerdict {
  bool end = false;     // end the job now
  std::string message;  // the diagnosis: which rank this one waits on, and why it ends the job
};
WatchdogVerdict watchdog_verdict(const WatchdogView& view, const WatchdogLimits& limits);

}  // namespace vgen
