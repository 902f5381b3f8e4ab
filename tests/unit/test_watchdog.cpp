// The wait markers (core/wait_marker.h) and the watchdog of one process (dist/watchdog.h): what a
// slot publishes, nesting, the timeout with its diagnosis and hooks, NCCL-style asynchronous errors.
// The multi-rank behaviour (a stopped rank named by its peers) is e2e_watchdog_*.
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
