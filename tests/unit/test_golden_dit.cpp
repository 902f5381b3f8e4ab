// The dit_forward and sched_* golden cases through run_golden on a hand-built single-rank mesh.
#include <gtest/gtest.h>

#include <string>

#include "io/recipe.h"
#include "model/wan/family.h"
#include "tools/golden.h"
#include "dit_test_util.h"

namespace vgen {
namespace {

int run_case(const std::string& name) {
  Recipe recipe;  // cpu, fp32, single rank
  Mesh mesh = test::single_rank_mesh();
  return run_golden(test::golden_dir(), recipe, mesh, name);
}

TEST(GoldenDit, DitForward) { EXPECT_EQ(run_case("dit_forward"), 0); }
TEST(GoldenDit, SchedUniPC) { EXPECT_EQ(run_case("sched_unipc"), 0); }
TEST(GoldenDit, SchedUniPCShift) { EXPECT_EQ(run_case("sched_unipc_shift"), 0); }
TEST(GoldenDit, SchedEuler) { EXPECT_EQ(run_case("sched_euler"), 0); }

}  // namespace
}  // namespace vgen

// The same case on a sequence-parallel mesh of 3 (threads in one process): 48 tokens padded to 48,
// and of 5: padded to 50. Attention through the factory hook (all-gather of K/V).
#include <thread>

#include "parallel/local_attention.h"

namespace vgen {
namespace {

int run_sharded(int n) {
  set_seq_attention_factory([](Mesh& m) { return std::make_unique<test::GatherKvAttention>(m.seq); });
  auto group = std::make_shared<test::ThreadGroup>(n);
  std::vector<int> failed(size_t(n), -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      Recipe recipe;
      Mesh mesh = test::single_rank_mesh();
      mesh.shape.ulysses = n;
      mesh.coord.u = r;
      mesh.world_rank = r;
      mesh.seq = std::make_shared<test::ThreadComm>(group, r);
      mesh.ulysses = mesh.seq;
      failed[size_t(r)] = run_golden(test::golden_dir(), recipe, mesh, "dit_forward");
    });
  for (auto& t : threads) t.join();
  set_seq_attention_factory(nullptr);
  int total = 0;
  for (int f : failed) total += f;
  return total;
}

TEST(GoldenDit, DitForwardSequenceSharded) {
  EXPECT_EQ(run_sharded(3), 0);
  EXPECT_EQ(run_sharded(5), 0);
}

}  // namespace
}  // namespace vgen
