// Schedulers: the schedules of wan_spec.md §3 (derived examples), UniP order 1 ≡ Euler, the final
// step returning the x0 prediction, the factory's overrides and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/random.h"
#include "sched/euler.h"
#include "sched/scheduler.h"
#include "sched/unipc.h"

namespace vgen {
namespace {

Json unipc_json(double shift) {
  return Json{{"_class_name", "UniPCMultistepScheduler"}, {"prediction_type", "flow_prediction"},
              {"use_flow_sigmas", true}, {"flow_shift", shift}, {"num_train_timesteps", 1000},
              {"solver_order", 2}, {"solver_type", "bh2"}, {"lower_order_final", true},
              {"final_sigmas_type", "zero"}, {"disable_corrector", Json::array()}};
}

std::vector<double> ints(std::initializer_list<int> v) { return std::vector<double>(v.begin(), v.end()); }

TEST(Sched, UniPCTimestepsShift3N50) {
  auto s = make_scheduler(unipc_json(3.0));
  s->set_timesteps(50);
  EXPECT_TRUE(s->integer_timesteps());
  EXPECT_EQ(s->timesteps(),
            ints({999, 993, 986, 979, 971, 964, 956, 948, 940, 931, 923, 914, 904, 895, 885, 875, 864,
                  853, 842, 830, 818, 805, 792, 779, 765, 750, 735, 719, 702, 685, 667, 648, 628, 607,
                  586, 563, 539, 514, 487, 459, 429, 398, 365, 329, 292, 251, 208, 162, 113, 60}));
  const double sig[] = {0.999999, 0.993250, 0.986315, 0.979188, 0.971861, 0.964324};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(s->sigmas()[size_t(i)], sig[i], 1e-6);
  ASSERT_EQ(s->sigmas().size(), 51u);
  EXPECT_EQ(s->sigmas().back(), 0.0f);
}

TEST(Sched, UniPCTimestepsOtherShifts) {
  auto s5 = make_scheduler(unipc_json(5.0));
  s5->set_timesteps(50);
  EXPECT_EQ(s5->timesteps(),
            ints({999, 995, 991, 987, 982, 978, 973, 968, 963, 957, 952, 946, 940, 934, 927, 921, 914,
                  906, 899, 890, 882, 873, 864, 854, 844, 833, 822, 810, 797, 783, 769, 754, 738, 720,
                  702, 682, 661, 638, 613, 586, 556, 524, 489, 450, 407, 359, 305, 244, 175, 96}));
  auto s12 = make_scheduler(unipc_json(12.0));
  s12->set_timesteps(40);
  EXPECT_EQ(s12->timesteps(),
            ints({999, 997, 995, 993, 990, 988, 985, 982, 979, 976, 973, 969, 965, 961, 957, 952, 947,
                  942, 936, 930, 923, 915, 907, 898, 889, 878, 866, 852, 837, 820, 800, 777, 750, 719,
                  680, 633, 573, 496, 391, 242}));
  int high = 0;
  for (double t : s12->timesteps()) high += t >= 875.0;
  EXPECT_EQ(high, 26);
  auto s3 = make_scheduler(unipc_json(3.0));
  s3->set_timesteps(2);
  EXPECT_EQ(s3->timesteps(), ints({999, 750}));
  ASSERT_EQ(s3->sigmas().size(), 3u);
  EXPECT_NEAR(s3->sigmas()[0], 0.999999, 1e-7);
  EXPECT_NEAR(s3->sigmas()[1], 0.750375, 1e-6);
  EXPECT_EQ(s3->sigmas()[2], 0.0f);
}

TEST(Sched, EulerDoubleShift) {
  auto s = make_scheduler("FlowMatchEulerDiscreteScheduler", Json{{"shift", 7.0}, {"num_train_timesteps", 1000}});
  s->set_timesteps(2);
  EXPECT_FALSE(s->integer_timesteps());
  ASSERT_EQ(s->sigmas().size(), 3u);
  EXPECT_EQ(s->sigmas()[0], 1.0f);
  EXPECT_NEAR(s->sigmas()[1], 0.046756, 1e-6);
  EXPECT_EQ(s->sigmas()[2], 0.0f);
  EXPECT_EQ(s->timesteps()[0], 1000.0);
  EXPECT_NEAR(s->timesteps()[1], 46.7557, 1e-4);
}

// x + (σ_{i+1} − σ_i)·v with the scheduler's own sigmas.
Tensor euler_ref(const Tensor& x, const Tensor& v, float s0, float s1) {
  Tensor y = Tensor::empty(x.shape(), DType::kF32);
  for (int64_t i = 0; i < x.numel(); ++i) y.f32()[i] = x.f32()[i] + (s1 - s0) * v.f32()[i];
  return y;
}

double rel_err(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    num += std::pow(double(a.f32()[i]) - b.f32()[i], 2);
    den += std::pow(double(b.f32()[i]), 2);
  }
  return std::sqrt(num / den);
}

TEST(Sched, UniPOrder1IsEuler) {
  const int N = 9;
  UniPCConfig cfg;
  cfg.flow_shift = 3.0;
  cfg.solver_order = 1;
  for (int i = 0; i < N; ++i) cfg.disable_corrector.push_back(i);  // the predictor alone
  UniPCScheduler unipc(cfg);
  unipc.set_timesteps(N);
  Tensor x = randn({2, 4, 3, 5}, 1);
  for (int i = 0; i < N; ++i) {
    Tensor v = randn({2, 4, 3, 5}, 100 + uint64_t(i));
    Tensor want = euler_ref(x, v, unipc.sigmas()[size_t(i)], unipc.sigmas()[size_t(i) + 1]);
    x = unipc.step(v, x);
    EXPECT_LT(rel_err(x, want), 2e-6) << "step " << i;
    x = want;  // keep both paths on the same trajectory
  }
}

TEST(Sched, LastStepReturnsX0Prediction) {
  for (int n : {1, 2, 5}) {
    auto s = make_scheduler(unipc_json(3.0));
    s->set_timesteps(n);
    Tensor x = randn({3, 7}, 5), v;
    for (int i = 0; i < n; ++i) {
      v = randn({3, 7}, 50 + uint64_t(i));
      Tensor before = x;
      x = s->step(v, x);
      if (i == n - 1) {
        const float sigma = s->sigmas()[size_t(i)];
        for (int64_t e = 0; e < x.numel(); ++e) EXPECT_EQ(x.f32()[e], before.f32()[e] - sigma * v.f32()[e]);
      }
    }
    EXPECT_EQ(s->step_index(), n);
  }
}

TEST(Sched, FactoryOverridesAndErrors) {
  SchedulerOverrides ov;
  ov.kind = SchedulerKind::kEuler;
  auto e = make_scheduler(unipc_json(3.0), ov);
  EXPECT_STREQ(e->name(), "euler");
  EXPECT_EQ(e->shift(), 3.0);  // UniPC flow_shift carries over
  ov.flow_shift = 5.0;
  e = make_scheduler(unipc_json(3.0), ov);
  EXPECT_EQ(e->shift(), 5.0);
  SchedulerOverrides shift_only;
  shift_only.flow_shift = 12.0;
  auto u = make_scheduler(unipc_json(3.0), shift_only);
  EXPECT_STREQ(u->name(), "unipc");
  u->set_timesteps(40);
  EXPECT_EQ(u->timesteps().back(), 242.0);
  SchedulerOverrides to_unipc;
  to_unipc.kind = SchedulerKind::kUniPC;
  auto u2 = make_scheduler("FlowMatchEulerDiscreteScheduler", Json{{"shift", 5.0}}, to_unipc);
  EXPECT_EQ(u2->shift(), 5.0);

  Json bad = unipc_json(3.0);
  bad["prediction_type"] = "epsilon";
  try {
    make_scheduler(bad);
    FAIL() << "no error";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), ExitCode::kModel);
    EXPECT_NE(err.message().find("prediction_type"), std::string::npos);
  }
  Json dyn = unipc_json(3.0);
  dyn["use_dynamic_shifting"] = true;
  EXPECT_THROW(make_scheduler(dyn), Error);
  // An unknown generation.scheduler is the recipe parser's error (test_recipe).
  EXPECT_THROW(make_scheduler(Json{{"_class_name", "DDIMScheduler"}}), Error);
}

TEST(Sched, NpLinspace) {
  auto v = np_linspace(1.0, 0.001, 4);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[3], 0.001);
  EXPECT_DOUBLE_EQ(v[1], 1.0 + (0.001 - 1.0) / 3.0);
  EXPECT_EQ(np_linspace(2.0, 3.0, 1), std::vector<double>{2.0});
}

}  // namespace
}  // namespace vgen
