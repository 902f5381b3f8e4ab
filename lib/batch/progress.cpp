#include "batch/progress.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace vgen {
namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}
bool stop_requested() { return g_stop.load(); }
void request_stop_for_testing() { g_stop.store(true); }

std::string format_duration(double s) {
  if (!(s >= 0)) return "?";
  long t = long(s + 0.5);
  if (t < 60) return fmt::format("{}s", t);
  if (t < 3600) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
}

Progress::Progress(int total, int replicas, bool enabled, int world_size)
    : total_(total), replicas_(replicas), enabled_(enabled), tty_(world_size == 1 && isatty(STDOUT_FILENO)) {}

double Progress::eta_videos_seconds() const {
  if (done_ == 0) return -1;
  double per = video_seconds_sum_ / done_;
  int left = total_ - done_;
  return per * left / std::max(1, replicas_);
}

void Progress::video_started(int index, const std::string& name) {
  current_ = name;
  if (!enabled_) return;
  std::printf("[r%d] video %s (%d of %d) started\n", process_rank(), name.c_str(), index + 1, total_);
  std::fflush(stdout);
}

void Progress::step(const DenoiseStepInfo& info) {
  step_seconds_sum_ += info.seconds;
  ++steps_seen_;
  if (!enabled_) return;
  double per = step_seconds_sum_ / steps_seen_;
  double eta = per * (info.total - info.index - 1);
  std::string line = fmt::format("[r{}] {} step {}/{} t={} expert {} {:.2f}s/step, video ETA {}", process_rank(),
                                 current_, info.index + 1, info.total, info.timestep, info.expert, per,
                                 format_duration(eta));
  if (tty_)
    std::printf("\r%s\033[K%s", line.c_str(), info.index + 1 == info.total ? "\n" : "");
  else
    std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void Progress::video_finished(int index, const std::string& name, const std::string& status, double seconds) {
  ++done_;
  if (status != "skipped") video_seconds_sum_ += seconds;
  if (!enabled_) return;
  std::printf("[r%d] video %s %s in %.2fs (%d of %d done here), batch ETA %s\n", process_rank(), name.c_str(),
              status.c_str(), seconds, done_, total_, format_duration(eta_videos_seconds()).c_str());
  std::fflush(stdout);
}

}  // namespace vgen
