// BoundedWorker: jobs run in push order on one thread, push blocks while one job waits, finish and
// the destructor run what was queued, a job's error reaches the producer (and what waited behind it
// is dropped), finish from two threads at once, SIGINT/SIGTERM are blocked on the worker thread.
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <thread>
#include <vector>

#include "core/error.h"
#include "batch/bounded_worker.h"

using namespace vgen;
using namespace std::chrono_literals;

namespace {

// A job that holds the worker until released.
struct Gate {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::function<void()> job() {
    return [this] {
      entered.set_value();
      released.wait();
    };
  }
};

}  // namespace

TEST(BoundedWorker, RunsJobsInPushOrderOnOneThread) {
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  {
    BoundedWorker w(1);
    for (int i = 0; i < 20; ++i)
      w.push([&, i] {
        order.push_back(i);
        threads.push_back(std::this_thread::get_id());
      });
    w.finish();
  }
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[size_t(i)], i);
  for (auto& t : threads) {
    EXPECT_EQ(t, threads[0]);
    EXPECT_NE(t, std::this_thread::get_id());
  }
}

TEST(BoundedWorker, PushBlocksWhileOneJobWaits) {
  Gate gate;  // outlives the worker, whose job waits on it
  BoundedWorker w(1);
  w.push(gate.job());
  gate.entered.get_future().wait();  // the first job runs, the queue is empty
  EXPECT_EQ(w.waiting(), 0u);
  std::atomic<int> ran{0};
  w.push([&] { ++ran; });  // takes the one waiting place at once
  EXPECT_EQ(w.waiting(), 1u);
  std::atomic<bool> third_queued{false};
  std::thread producer([&] {
    w.push([&] { ++ran; });
    third_queued = true;
  });
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(third_queued.load()) << "a second job was queued while one was waiting";
  EXPECT_EQ(w.waiting(), 1u);
  gate.release.set_value();
  producer.join();
  EXPECT_TRUE(third_queued.load());
  w.finish();
  EXPECT_EQ(ran.load(), 2);
}

TEST(BoundedWorker, FinishRunsEveryQueuedJob) {
  std::atomic<int> ran{0};
  BoundedWorker w(1);
  for (int i = 0; i < 5; ++i)
    w.push([&] {
      std::this_thread::sleep_for(20ms);
      ++ran;
    });
  w.finish();
  EXPECT_EQ(ran.load(), 5);
  w.finish();  // idempotent
  EXPECT_EQ(ran.load(), 5);
}

TEST(BoundedWorker, DestructorDrainsAlsoWhileAnErrorUnwinds) {
  std::atomic<int> ran{0};
  try {
    Gate gate;
    BoundedWorker w(1);
    w.push(gate.job());
    w.push([&] { ++ran; });
    gate.entered.get_future().wait();
    gate.release.set_value();
    throw std::runtime_error("the producer fails");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(ran.load(), 1);
}

TEST(BoundedWorker, ErrorReachesTheProducerAndDropsWhatWaited) {
  Gate gate;  // outlives the worker, whose job waits on it
  BoundedWorker w(1);
  std::atomic<int> ran{0};
  w.push([&] {
    gate.entered.set_value();
    gate.released.wait();
    VGEN_THROW(ExitCode::kOutput, "disk full");
  });
  gate.entered.get_future().wait();
  w.push([&] { ++ran; });  // waits behind the failing job
  gate.release.set_value();
  try {
    // Blocks until the worker took or dropped the waiting job; then the error must come back.
    for (int i = 0; i < 1000; ++i) w.push([&] { ++ran; });
    FAIL() << "no error after a job threw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kOutput);
    EXPECT_NE(e.message().find("disk full"), std::string::npos) << e.message();
  }
  w.finish();  // the error was reported once; finish does not throw it again
  EXPECT_EQ(ran.load(), 0);
}

TEST(BoundedWorker, FinishRethrowsAJobError) {
  BoundedWorker w(1);
  w.push([] { throw std::runtime_error("bad_alloc-like"); });
  EXPECT_THROW(w.finish(), std::runtime_error);
  EXPECT_NO_THROW(w.finish());
}

TEST(BoundedWorker, StopSignalsAreBlockedOnTheWorkerThread) {
  BoundedWorker w(1);
  bool int_blocked = false, term_blocked = false;
  w.push([&] {
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, nullptr, &cur);
    int_blocked = sigismember(&cur, SIGINT) == 1;
    term_blocked = sigismember(&cur, SIGTERM) == 1;
  });
  w.finish();
  EXPECT_TRUE(int_blocked);
  EXPECT_TRUE(term_blocked);
  sigset_t mine;
  pthread_sigmask(SIG_BLOCK, nullptr, &mine);
  EXPECT_EQ(sigismember(&mine, SIGTERM), 0) << "the producer's mask must be left as it was";
}

TEST(BoundedWorker, FinishFromTwoThreadsAtOnce) {
  std::atomic<int> ran{0};
  BoundedWorker w(1);
  for (int i = 0; i < 3; ++i)
    w.push([&] {
      std::this_thread::sleep_for(30ms);
      ++ran;
    });
  std::thread other([&] { w.finish(); });  // e.g. a timeout hook, while the producer also stops
  w.finish();
  other.join();
  EXPECT_EQ(ran.load(), 3);
}
