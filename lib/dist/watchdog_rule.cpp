#include "dist/watchdog_rule.h"

#include <fmt/format.h>

#include <algorithm>

namespace vgen {
namespace {

std::string secs(double s) { return fmt::format("{:.1f} s", s); }

std::string op_text(WaitOp op, WaitBackend b, const std::string& group) {
  std::string t = wait_op_name(op);
  if (b == WaitBackend::kCuda) return group.empty() ? t : fmt::format("{} ({})", t, group);
  if (!group.empty())
    t += fmt::format(" on {}{}group '{}'", wait_backend_name(b), b == WaitBackend::kNone ? "" : " ", group);
  return t;
}

std::string list(const std::vector<int>& v) {
  std::string t;
  for (int r : v) t += (t.empty() ? "" : ", ") + std::to_string(r);
  return t;
}

// A wait on other ranks (a collective, the queue, a window). A host wait for its own GPU or disk is
// work: the rank is busy, not blocked by a peer.
bool waits_on_peers(const WaitState& s) {
  return s.op != WaitOp::kNone && s.backend != WaitBackend::kCuda && s.op != WaitOp::kFileRead;
}

// Every rank but this one in one class, as this rank reads them now.
struct Census {
  std::vector<int> stopped;     // no heartbeat: the process does not run
  std::vector<int> working;     // computing, or waiting for its own GPU or disk
  std::vector<int> waiting;     // waiting on other ranks
  std::vector<int> timed_out;   // its watchdog already ends the job
  std::vector<int> unreadable;  // on another node that did not answer
};

class Reader {
 public:
  explicit Reader(const WatchdogView& v) : v_(v) {
    for (int r = 0; r < int(v.ranks.size()); ++r) {
      if (r == v.self) continue;
      auto it = v.states.find(r);
      if (it == v.states.end()) c_.unreadable.push_back(r);
      else if (it->second.flags & kSlotTimedOut) c_.timed_out.push_back(r);
      else if (age(it->second.heartbeat_ms) > v.stale_s) c_.stopped.push_back(r);
      else if (waits_on_peers(it->second)) c_.waiting.push_back(r);
      else c_.working.push_back(r);
    }
  }
  const Census& census() const { return c_; }
  const WaitState& at(int r) const { return v_.states.at(r); }
  bool member(int r) const { return std::find(v_.members.begin(), v_.members.end(), r) != v_.members.end(); }
  double age(int64_t ms) const { return double(v_.now_ms - ms) / 1000.0; }
  double since(int r) const { return age(at(r).since_ms); }

  std::string who(int r) const {
    const RankIdentity& id = v_.ranks[size_t(r)];
    return fmt::format("rank {} on {} (pid {})", r, id.host, id.pid);
  }
  static std::string step_text(const WaitState& s) {
    return s.step > 0 ? fmt::format("step {}/{}", s.step, s.steps) : std::string("outside the denoising loop");
  }
  std::string state_text(const WaitState& s) const {
    const double t = age(s.since_ms);
    if (s.op != WaitOp::kNone)
      return fmt::format("waiting in {} for {}, {}{}", op_text(s.op, s.backend, s.group), secs(t), step_text(s),
                         s.backend == WaitBackend::kCuda && s.last_op != WaitOp::kNone
                             ? "; last collective queued: " + op_text(s.last_op, s.last_backend, s.last_group)
                             : std::string());
    return fmt::format("working for {} since its last wait ({}), {}", secs(t),
                       s.last_op == WaitOp::kNone ? "none yet" : op_text(s.last_op, s.last_backend, s.last_group),
                       step_text(s));
  }
  std::string stopped_text(int r) const {
    return fmt::format("{}: no heartbeat for {} (process stopped, hung or dead); last state: {}", who(r),
                       secs(age(at(r).heartbeat_ms)), state_text(at(r)));
  }
  bool same_op(int r) const {
    const WaitState& s = at(r);
    return s.op == v_.me.op && s.backend == v_.me.backend && s.group == v_.me.group;
  }

 private:
  const WatchdogView& v_;
  Census c_;
};

// The ranks this one waits on, most likely cause first: a stopped rank (anywhere: the members that
// wait elsewhere wait on it in turn), else a member that has not joined. Empty: no single cause.
std::vector<std::string> causes(const Reader& rd, std::vector<int>& named) {
  std::vector<std::string> out;
  const Census& c = rd.census();
  for (int pass = 0; pass < 2; ++pass)  // members first
    for (int r : c.stopped)
      if (rd.member(r) == (pass == 0)) {
        out.push_back("waiting on " + rd.stopped_text(r));
        named.push_back(r);
      }
  if (!out.empty()) return out;
  for (int r : c.working)
    if (rd.member(r)) {
      out.push_back(fmt::format("waiting on {}, which has not joined this operation: {}", rd.who(r),
                                rd.state_text(rd.at(r))));
      named.push_back(r);
    }
  return out;
}

// The other ranks, described as bystanders: they wait too, or work elsewhere.
std::vector<std::string> bystanders(const Reader& rd, const WatchdogView& v, const std::vector<int>& named) {
  std::vector<std::string> out;
  const Census& c = rd.census();
  auto is_named = [&](int r) { return std::find(named.begin(), named.end(), r) != named.end(); };
  std::vector<int> same;
  std::string elsewhere;
  for (int r : c.waiting) {
    if (!rd.member(r)) continue;
    if (rd.same_op(r)) same.push_back(r);
    else elsewhere += fmt::format("{}rank {} ({})", elsewhere.empty() ? "" : "; ", r, rd.state_text(rd.at(r)));
  }
  if (!same.empty()) out.push_back(fmt::format("waiting in the same operation: ranks {}", list(same)));
  if (!elsewhere.empty())
    out.push_back((named.empty() ? "waiting in another operation: " : "also waiting, in another operation: ") + elsewhere);
  std::vector<int> outside;
  for (int r : c.working)
    if (!rd.member(r) && !is_named(r)) outside.push_back(r);
  if (named.empty())
    for (int r : outside)
      out.push_back(fmt::format("working outside this operation: {}: {}", rd.who(r), rd.state_text(rd.at(r))));
  if (named.empty() && outside.empty() && c.unreadable.empty()) {
    const bool all_same = elsewhere.empty();
    out.push_back(all_same ? "every other member waits in the same operation: the operation itself does not "
                             "complete (network, NCCL or GPU fault)"
                           : "every rank waits and none works: the ranks' operations do not match (a deadlock)");
  }
  if (!c.timed_out.empty())
    out.push_back(fmt::format("timed out before this rank: ranks {} (the job is ending; a rank the launcher resumes "
                              "may show progress again)",
                              list(c.timed_out)));
  if (!c.unreadable.empty())
    out.push_back(fmt::format("state not readable from here ({}): ranks {}", v.unreadable_why, list(c.unreadable)));
  return out;
}

// Under a derived allowance: whether what this rank sees ends the job, and why.
bool derived_end(const Reader& rd, const WatchdogView& v, const WatchdogLimits& lim, std::string& why) {
  const Census& c = rd.census();
  if (!c.stopped.empty()) return true;
  if (!waits_on_peers(v.me) && v.waited_s > lim.work_s) {
    why = fmt::format("this rank waited for its own {} longer than {}",
                      v.me.op == WaitOp::kFileRead ? "disk" : "GPU", secs(lim.work_s));
    return true;
  }
  for (int r : c.working)
    if (rd.since(r) > lim.work_s) {
      why = fmt::format("rank {} worked without reaching a marker for longer than {}", r, secs(lim.work_s));
      return true;
    }
  if (!c.unreadable.empty()) {
    why = fmt::format("ranks {} could not be read for longer than {}", list(c.unreadable), secs(lim.work_s));
    return v.waited_s > lim.work_s;
  }
  if (!c.working.empty() || !waits_on_peers(v.me)) return false;
  for (int r : c.waiting)
    if (rd.since(r) <= lim.wait_s) return false;  // moved within the allowance
  why = fmt::format("no rank has moved for {}", secs(lim.wait_s));
  return true;
}

}  // namespace

WatchdogLimits watchdog_limits(const WatchdogOptions& opts, const WaitState& self) {
  WatchdogLimits l;
  if (opts.timeout_s > 0) {
    l.wait_s = l.work_s = opts.timeout_s;
    l.text = fmt::format("runtime.collective_timeout_s = {} s", opts.timeout_s);
    return l;
  }
  l.derived = true;
  const double start = std::max(kWatchdogStartFloorS, kWatchdogStartFactor * opts.predicted_start_s);
  const double step = std::max(opts.predicted_step_s, double(self.step_ms) / 1000.0);
  const double steady = std::max(kWatchdogFloorS, kWatchdogStepFactor * step);
  l.work_s = std::max(start, steady);
  if (self.steps_done == 0) {
    l.wait_s = start;
    l.text = fmt::format("the watchdog's allowance of {:.0f} s (runtime.collective_timeout_s unset: the load and the "
                         "first step get at least {:.0f} s)",
                         start, kWatchdogStartFloorS);
  } else {
    l.wait_s = steady;
    l.text = fmt::format("the watchdog's allowance of {:.0f} s (runtime.collective_timeout_s unset: {:.0f} × a step "
                         "of {:.2f} s, at least {:.0f} s)",
                         steady, kWatchdogStepFactor, step, kWatchdogFloorS);
  }
  return l;
}

WatchdogVerdict watchdog_verdict(const WatchdogView& v, const WatchdogLimits& lim) {
  const Reader rd(v);
  WatchdogVerdict out;
  std::string why;
  out.end = !lim.derived || derived_end(rd, v, lim, why);
  std::vector<int> named;
  std::string msg = fmt::format("watchdog: waited {} in {} (world ranks {}) {}, longer than {}.", secs(v.waited_s),
                                op_text(v.me.op, v.me.backend, v.me.group), list(v.members),
                                v.me.step > 0 ? "at " + Reader::step_text(v.me) : Reader::step_text(v.me), lim.text);
  for (const std::string& l : causes(rd, named)) msg += "\n  " + l;
  for (const std::string& l : bystanders(rd, v, named)) msg += "\n  " + l;
  if (!why.empty()) msg += "\n  " + why;
  out.message = msg + (out.end ? "\n  ending the job (exit 8)" : "\n  waiting on: the others are alive and moving");
  return out;
}

}  // namespace vgen
