// Progress lines of a batch (per step and per prompt, with ETA) and the stop flag set by
// SIGINT/SIGTERM. Lines are plain when stdout is not a terminal; on a terminal the step line is
// rewritten in place.
#pragma once
#include <string>

#include "pipeline/denoise.h"

namespace vgen {

// Installs SIGINT/SIGTERM handlers that only set a flag (checked between steps and prompts).
void install_stop_handlers();
bool stop_requested();
void request_stop_for_testing();

class Progress {
 public:
  // `world_size`: ranks of the job; the step line is rewritten in place only for one process on a
  // terminal (a launcher's environment variables are set even for a single-process mpirun).
  Progress(int total_videos, int replicas, bool enabled, int world_size);
  void video_started(int index, const std::string& name);
  void step(const DenoiseStepInfo& info);
  void video_finished(int index, const std::string& name, const std::string& status, double seconds);

 private:
  double eta_videos_seconds() const;
  int total_, replicas_, done_ = 0;
  bool enabled_, tty_;
  double video_seconds_sum_ = 0;
  double step_seconds_sum_ = 0;
  int steps_seen_ = 0;
  std::string current_;
};

std::string format_duration(double seconds);

}  // namespace vgen
