// The wait markers (core/wait_marker.h) and the watchdog of one process (dist/watchdog.h): what a
// slot publishes, nesting, the timeout with its diagnosis and hooks, NCCL-style asynchronous errors;
// the rule of dist/watchdog_rule.h (the allowance, the verdict and whom the message names).
// The multi-rank behaviour (a stopped rank named by its peers) is e2e_watchdog_*.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "core/wait_marker.h"
#include "dist/watchdog.h"

using namespace vgen;

namespace {

DistEnv one_rank() {
  DistEnv env;
  env.host = "testhost";
  return env;
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

}  // namespace

TEST(WaitMarker, PublishesNestedWaitsAndSteps) {
  wait_slot_attach(nullptr);  // this thread publishes
  ASSERT_TRUE(wait_marker_thread());
  const int g = wait_group_register("ulysses", {4, 5, 6, 7});
  EXPECT_EQ(wait_group(g).name, "ulysses");
  EXPECT_EQ(wait_group(g).world_ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(wait_group(123456).name, "");
  const uint64_t before = wait_slot_read(wait_slot()).waits;
  wait_marker_step(3, 30);
  {
    WaitScope outer(WaitOp::kAllReduce, WaitBackend::kMpi, "replica");
    WaitState s = wait_slot_read(wait_slot());
    EXPECT_EQ(s.op, WaitOp::kAllReduce);
    EXPECT_EQ(s.backend, WaitBackend::kMpi);
    EXPECT_EQ(s.group, "replica");
    EXPECT_EQ(s.step, 3);
    EXPECT_EQ(s.steps, 30);
    EXPECT_TRUE(wait_main_quiescent());
    {
      WaitScope inner(WaitOp::kAllToAll, WaitBackend::kNccl, "a-group-name-longer-than-16", g);
      s = wait_slot_read(wait_slot());
      EXPECT_EQ(s.op, WaitOp::kAllToAll);
      EXPECT_EQ(s.backend, WaitBackend::kNccl);
      EXPECT_EQ(s.group, "a-group-name-lon");  // 16 bytes kept
      EXPECT_EQ(s.group_id, g);
    }
    s = wait_slot_read(wait_slot());
    EXPECT_EQ(s.op, WaitOp::kAllReduce);  // the outer wait again
    EXPECT_EQ(s.group, "replica");
    EXPECT_EQ(s.last_op, WaitOp::kAllToAll);
  }
  const WaitState s = wait_slot_read(wait_slot());
  EXPECT_EQ(s.op, WaitOp::kNone);
  EXPECT_EQ(s.waits, before + 2);
  EXPECT_FALSE(wait_main_quiescent());
  wait_marker_step(0, 0);
  EXPECT_STREQ(wait_op_name(WaitOp::kQueueNext), "dp queue fetch");
}

TEST(WaitMarker, OtherThreadsDoNotPublish) {
  wait_slot_attach(nullptr);
  const uint64_t before = wait_slot_read(wait_slot()).waits;
  std::thread t([] {
    EXPECT_FALSE(wait_marker_thread());
    WaitScope w(WaitOp::kBarrier, WaitBackend::kMpi, "world");
    wait_marker_step(7, 9);
  });
  t.join();
  const WaitState s = wait_slot_read(wait_slot());
  EXPECT_EQ(s.waits, before);
  EXPECT_NE(s.step, 7);
}

// Waits shorter than the timeout and long work outside waits never end the job.
TEST(Watchdog, QuietWhileProgressing) {
  wait_slot_attach(nullptr);
  Watchdog w({0.4}, one_rank());
  EXPECT_TRUE(watchdog_running());
  for (int i = 0; i < 8; ++i) {
    WaitScope s(WaitOp::kAllGather, WaitBackend::kMpi, "cfg");
    sleep_s(0.15);
  }
  sleep_s(1.2);  // computing, in no wait
  const WaitState st = wait_slot_read(wait_slot());
  EXPECT_GT(st.heartbeat_ms, 0);  // the watchdog thread stamps its round
  EXPECT_EQ(st.pid, int(getpid()));
  EXPECT_EQ(st.host, "testhost");
  EXPECT_NE(watchdog_diagnosis_for_testing().find("ending the job"), std::string::npos);
}

// One wait past the timeout: the diagnosis names the operation and group, the hook runs with the
// main thread parked, the registered communicator is aborted, and the process ends with exit 8.
TEST(WatchdogDeathTest, TimeoutEndsWithExit8) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        wait_slot_attach(nullptr);
        Watchdog w({0.5}, one_rank());
        WatchdogHook hook([](const std::string& why) {
          std::fprintf(stderr, "hook ran (main parked: %d): %.40s\n", int(wait_main_quiescent()), why.c_str());
        });
        const int id = watchdog_add_communicator([] { return std::string(); },
                                                 [] { std::fprintf(stderr, "communicator aborted\n"); });
        (void)id;
        wait_marker_step(5, 30);
        WaitScope s(WaitOp::kAllToAll, WaitBackend::kMpi, "ulysses", wait_group_register("ulysses", {0}));
        sleep_s(30);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(8),
      "watchdog: waited [0-9.]+ s in all_to_all on MPI group 'ulysses' \\(world ranks 0\\) at step 5/30, longer "
      "than runtime.collective_timeout_s = 0.5 s(.|\n)*hook ran \\(main parked: 1\\): watchdog: waited(.|\n)*"
      "communicator aborted");
}

// A device communicator's asynchronous error ends the job on the next round, naming the error.
TEST(WatchdogDeathTest, AsyncErrorEndsWithExit8) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        wait_slot_attach(nullptr);
        Watchdog w({60}, one_rank());
        watchdog_add_communicator([] { return std::string("NCCL asynchronous error in communicator 'seq': boom"); },
                                  [] { std::fprintf(stderr, "communicator aborted\n"); });
        sleep_s(30);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(8), "watchdog: NCCL asynchronous error in communicator 'seq': boom(.|\n)*aborted");
}

// The allowance (dist/watchdog_rule.h): an explicit timeout as given; derived, the load and the
// first step get the start allowance, later waits 20 × the step (predicted or measured), at least 60 s.
TEST(WatchdogRule, Limits) {
  WaitState self;
  WatchdogLimits l = watchdog_limits({20}, self);
  EXPECT_FALSE(l.derived);
  EXPECT_DOUBLE_EQ(l.wait_s, 20);
  EXPECT_EQ(l.text, "runtime.collective_timeout_s = 20 s");
  l = watchdog_limits({}, self);
  EXPECT_TRUE(l.derived);
  EXPECT_DOUBLE_EQ(l.wait_s, kWatchdogStartFloorS);
  EXPECT_DOUBLE_EQ(watchdog_limits({0, 0, 400}, self).wait_s, 1200);  // 3 × the predicted load + first step
  self.steps_done = 1;  // the first step finished, none timed yet
  EXPECT_DOUBLE_EQ(watchdog_limits({}, self).wait_s, kWatchdogFloorS);
  self.step_ms = 100;
  l = watchdog_limits({}, self);
  EXPECT_DOUBLE_EQ(l.wait_s, 60);
  EXPECT_DOUBLE_EQ(l.work_s, kWatchdogStartFloorS);
  EXPECT_NE(l.text.find("allowance of 60 s"), std::string::npos) << l.text;
  self.step_ms = 5000;
  EXPECT_DOUBLE_EQ(watchdog_limits({}, self).wait_s, 100);
  EXPECT_DOUBLE_EQ(watchdog_limits({0, 10}, self).wait_s, 200);  // the prediction, when longer
}

namespace {

constexpr int64_t kNow = 1'000'000;

WaitState waiting(WaitOp op, const char* group, double since_s, int step = 3) {
  WaitState s;
  s.op = op;
  s.backend = WaitBackend::kMpi;
  s.group = group;
  s.since_ms = kNow - int64_t(since_s * 1000);
  s.heartbeat_ms = kNow - 200;
  s.step = step;
  s.steps = 30;
  return s;
}
WaitState working(double since_s) { return waiting(WaitOp::kNone, "", since_s); }

// 4 ranks (cfg 2 × ulysses 2): rank 0 waits in the cfg all-gather with rank 2, which waits in the
// ulysses all-to-all with rank 3.
WatchdogView view_of(std::map<int, WaitState> others, double waited_s = 61) {
  WatchdogView v;
  v.self = 0;
  v.me = waiting(WaitOp::kAllGather, "cfg", waited_s);
  v.waited_s = waited_s;
  v.members = {0, 2};
  v.states = std::move(others);
  v.states[0] = v.me;
  for (int r = 0; r < 4; ++r) v.ranks.push_back({fmt::format("host{}", r), 100 + r});
  v.now_ms = kNow;
  v.stale_s = 15;
  return v;
}

WatchdogLimits steady() {
  WaitState self;
  self.steps_done = 5;
  self.step_ms = 100;
  return watchdog_limits({}, self);
}

}  // namespace

// A stopped rank outside this rank's group: named as the rank waited on (with host and pid); the
// member that waits on it in turn is a bystander, not the cause.
TEST(WatchdogRule, NamesTheStoppedRankNotTheBystander) {
  WaitState stopped = waiting(WaitOp::kAllToAll, "ulysses", 61);
  stopped.heartbeat_ms = kNow - 46'000;
  const WatchdogView v = view_of({{1, waiting(WaitOp::kAllGather, "cfg", 61)},
                                  {2, waiting(WaitOp::kAllToAll, "ulysses", 61)},
                                  {3, stopped}});
  for (const WatchdogLimits& l : {steady(), watchdog_limits({20}, WaitState{})}) {
    const WatchdogVerdict d = watchdog_verdict(v, l);
    EXPECT_TRUE(d.end);
    EXPECT_NE(d.message.find("waiting on rank 3 on host3 (pid 103): no heartbeat for 46.0 s"), std::string::npos)
        << d.message;
    EXPECT_NE(d.message.find("also waiting, in another operation: rank 2 (waiting in all_to_all"), std::string::npos)
        << d.message;
    EXPECT_EQ(d.message.find("waiting on rank 2"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("ending the job (exit 8)"), std::string::npos);
  }
}

// A rank that timed out (its watchdog ends the job, its heartbeat paused) is not taken for stopped.
TEST(WatchdogRule, ATimedOutRankIsNotTheCause) {
  WaitState ending = waiting(WaitOp::kAllGather, "cfg", 70);
  ending.flags = kSlotTimedOut;
  ending.heartbeat_ms = kNow - 20'000;
  WaitState stopped = waiting(WaitOp::kAllToAll, "ulysses", 70);
  stopped.heartbeat_ms = kNow - 60'000;
  const WatchdogVerdict d =
      watchdog_verdict(view_of({{1, ending}, {2, waiting(WaitOp::kAllToAll, "ulysses", 70)}, {3, stopped}}), steady());
  EXPECT_TRUE(d.end);
  EXPECT_NE(d.message.find("waiting on rank 3 on host3"), std::string::npos) << d.message;
  EXPECT_EQ(d.message.find("waiting on rank 1"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("timed out before this rank: ranks 1"), std::string::npos) << d.message;
}

// Derived: the others alive and moving (rank 3 computes, another replica renders) — the wait goes on;
// an explicit timeout ends it and names the member waiting elsewhere and the rank that works.
TEST(WatchdogRule, AliveAndMovingWaitsOn) {
  const WatchdogView v = view_of({{1, waiting(WaitOp::kAllGather, "cfg", 61)},
                                  {2, waiting(WaitOp::kAllToAll, "ulysses", 61)},
                                  {3, working(90)}});
  EXPECT_FALSE(watchdog_verdict(v, steady()).end);
  const WatchdogVerdict d = watchdog_verdict(v, watchdog_limits({20}, WaitState{}));
  EXPECT_TRUE(d.end);
  EXPECT_NE(d.message.find("waiting in another operation: rank 2"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("working outside this operation: rank 3 on host3 (pid 103): working for 90.0 s"),
            std::string::npos)
      << d.message;
  // A member that works instead of joining is the rank waited on.
  const WatchdogVerdict m = watchdog_verdict(view_of({{1, working(1)}, {2, working(61)}, {3, working(1)}}),
                                             watchdog_limits({20}, WaitState{}));
  EXPECT_NE(m.message.find("waiting on rank 2 on host2 (pid 102), which has not joined this operation: working for"),
            std::string::npos)
      << m.message;
}

// Derived: every rank waits and none moved for the allowance (a deadlock), or a rank worked without
// a marker past the start allowance (hung): the job ends.
TEST(WatchdogRule, DeadlockAndHangEnd) {
  const WatchdogView all_wait = view_of({{1, waiting(WaitOp::kAllGather, "cfg", 61)},
                                         {2, waiting(WaitOp::kAllToAll, "ulysses", 61)},
                                         {3, waiting(WaitOp::kBarrier, "world", 61)}});
  const WatchdogVerdict d = watchdog_verdict(all_wait, steady());
  EXPECT_TRUE(d.end);
  EXPECT_NE(d.message.find("no rank has moved for 60.0 s"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("the ranks' operations do not match"), std::string::npos) << d.message;
  const WatchdogView moved = view_of({{1, waiting(WaitOp::kAllGather, "cfg", 61)},
                                      {2, waiting(WaitOp::kAllToAll, "ulysses", 61)},
                                      {3, waiting(WaitOp::kBarrier, "world", 10)}});
  EXPECT_FALSE(watchdog_verdict(moved, steady()).end);
  const WatchdogView hung = view_of({{1, waiting(WaitOp::kAllGather, "cfg", 61)},
                                     {2, waiting(WaitOp::kAllToAll, "ulysses", 61)},
                                     {3, working(700)}});
  const WatchdogVerdict h = watchdog_verdict(hung, steady());
  EXPECT_TRUE(h.end);
  EXPECT_NE(h.message.find("rank 3 worked without reaching a marker for longer than 600.0 s"), std::string::npos)
      << h.message;
}
