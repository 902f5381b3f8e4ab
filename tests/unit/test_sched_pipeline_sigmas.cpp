// Schedulers given a pipeline's sigmas (sched/pipeline_sigmas.h) against diffusers
// (test_sched_pipeline_sigmas_cases.h, from make_sched_pipeline_sigmas_cases.py): UniPC on
// Cosmos3OmniPipeline's native flow schedule, and the stochastic Euler of the distilled checkpoints
// on their fixed sigmas with the noise diffusers drew; UniPC's Karras flow sigmas; the factory's
// choice and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/random.h"
#include "sched/euler_sde.h"
#include "sched/pipeline_sigmas.h"
#include "sched/scheduler.h"
#include "test_sched_pipeline_sigmas_cases.h"

namespace vgen {
namespace {

namespace cases = pipeline_sigmas_cases;

const Shape kShape = {2, 3, 4};

Json unipc_native() {
  Json j{{"_class_name", "UniPCMultistepScheduler"}, {"prediction_type", "flow_prediction"},
         {"use_flow_sigmas", true}, {"flow_shift", 3.0}, {"num_train_timesteps", 1000},
         {"solver_order", 2}, {"solver_type", "bh2"}, {"lower_order_final", true},
         {"final_sigmas_type", "zero"}, {"disable_corrector", Json::array()}};
  PipelineSigmas s;
  s.rule = PipelineSigmas::Rule::kNativeFlow;
  return with_pipeline_sigmas(j, s);
}

Json euler_fixed(double shift, bool stochastic) {
  PipelineSigmas s;
  s.rule = PipelineSigmas::Rule::kFixed;
  s.fixed = cases::kFixed;
  return with_pipeline_sigmas(Json{{"_class_name", "FlowMatchEulerDiscreteScheduler"}, {"num_train_timesteps", 1000},
                                   {"shift", shift}, {"stochastic_sampling", stochastic}},
                              s);
}

Tensor slice(const std::vector<float>& v, int64_t k, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Tensor::from_vector(std::vector<float>(v.begin() + k * n, v.begin() + (k + 1) * n), shape);
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  float m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::fabs(a.f32()[i] - b.f32()[i]));
  return m;
}

// The stochastic Euler with diffusers' draws in place of its own seed streams.
class ReplayNoise : public StochasticEulerScheduler {
 public:
  ReplayNoise(const EulerConfig& c, const std::vector<float>& noise) : StochasticEulerScheduler(c), noise_(noise) {}

 protected:
  Tensor step_noise(int step, const Shape& shape) const override { return slice(noise_, step, shape); }

 private:
  std::vector<float> noise_;
};

TEST(SchedPipelineSigmas, UniPCNativeFlowSchedules) {
  for (const cases::Schedule& c : cases::kNativeFlow) {
    auto s = make_scheduler(unipc_native());
    s->set_timesteps(c.steps);
    EXPECT_EQ(s->timesteps(), c.timesteps) << c.steps << " steps";
    EXPECT_EQ(s->sigmas(), c.sigmas) << c.steps << " steps";
  }
}

TEST(SchedPipelineSigmas, UniPCNativeFlowSteps) {
  const cases::Steps& c = cases::kNativeFlowSteps;
  auto s = make_scheduler(unipc_native());
  s->set_timesteps(4);
  EXPECT_EQ(s->sigmas(), c.sigmas);
  Tensor x = Tensor::from_vector(c.sample0, kShape);
  for (int i = 0; i < 4; ++i) {
    x = s->step(slice(c.model_outputs, i, kShape), x);
    EXPECT_LE(max_abs_diff(x, slice(c.samples, i, kShape)), 2e-6f) << "step " << i;
  }
}

Json unipc_karras() {
  return Json{{"_class_name", "UniPCMultistepScheduler"}, {"prediction_type", "flow_prediction"},
              {"use_flow_sigmas", true}, {"use_karras_sigmas", true}, {"sigma_max", 200.0}, {"sigma_min", 0.147},
              {"flow_shift", 1.0}, {"num_train_timesteps", 1000}, {"solver_order", 2}, {"solver_type", "bh2"}};
}

// The released Cosmos 3 base checkpoints' UniPC (NVIDIA's converter): Karras flow sigmas.
TEST(SchedPipelineSigmas, UniPCKarrasFlowSigmas) {
  for (const cases::Schedule& c : cases::kKarras) {
    auto s = make_scheduler(unipc_karras());
    s->set_timesteps(c.steps);
    EXPECT_EQ(s->timesteps(), c.timesteps) << c.steps << " steps";
    EXPECT_EQ(s->sigmas(), c.sigmas) << c.steps << " steps";
  }
  const cases::Steps& c = cases::kKarrasSteps;
  auto s = make_scheduler(unipc_karras());
  s->set_timesteps(4);
  Tensor x = Tensor::from_vector(c.sample0, kShape);
  for (int i = 0; i < 4; ++i) {
    x = s->step(slice(c.model_outputs, i, kShape), x);
    EXPECT_LE(max_abs_diff(x, slice(c.samples, i, kShape)), 2e-6f) << "step " << i;
  }
  // generation.flow_shift: flow sigmas at that shift instead (diffusers' Cosmos 3 examples).
  SchedulerOverrides ov;
  ov.flow_shift = 3.0;
  auto shifted = make_scheduler(unipc_karras(), ov);
  shifted->set_timesteps(3);
  EXPECT_EQ(shifted->timesteps(), (std::vector<double>{999, 857, 600}));  // test_sched's shift-3 schedule
  Json no_bounds = unipc_karras();
  no_bounds.erase("sigma_min");
  EXPECT_THROW(make_scheduler(no_bounds), Error);
  SchedulerOverrides euler;
  euler.kind = SchedulerKind::kEuler;
  EXPECT_THROW(make_scheduler(unipc_karras(), euler), Error);
}

TEST(SchedPipelineSigmas, StochasticEulerAgainstDiffusers) {
  for (const cases::Steps& c : cases::kStochastic) {
    SCOPED_TRACE(::testing::Message() << "shift " << c.shift);
    const Json j = euler_fixed(c.shift, true);
    auto made = make_scheduler(j);
    EXPECT_STREQ(made->name(), "euler_sde");
    ReplayNoise s(EulerConfig::from_json(j, "test"), c.noise);
    s.set_timesteps(4);
    EXPECT_EQ(s.sigmas(), c.sigmas);
    EXPECT_EQ(s.timesteps(), std::vector<double>(c.timesteps.begin(), c.timesteps.end()));
    EXPECT_FALSE(s.integer_timesteps());
    Tensor x = Tensor::from_vector(c.sample0, kShape);
    for (int i = 0; i < 4; ++i) {
      x = s.step(slice(c.model_outputs, i, kShape), x);
      EXPECT_LE(max_abs_diff(x, slice(c.samples, i, kShape)), 1e-6f) << "step " << i;
    }
  }
}

TEST(SchedPipelineSigmas, StochasticEulerOwnNoise) {
  // Same seed → same samples; another seed changes every step but the last (x0 alone).
  auto run = [](uint64_t seed) {
    auto s = make_scheduler(euler_fixed(1.0, true));
    s->noise_seed = seed;
    s->set_timesteps(4);
    Tensor x = randn(kShape, 1), v = randn(kShape, 2);
    std::vector<Tensor> out;
    for (int i = 0; i < 4; ++i) out.push_back(x = s->step(v, x));
    return out;
  };
  const auto a = run(7), b = run(7), c = run(8);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(max_abs_diff(a[size_t(i)], b[size_t(i)]), 0.0f);
  EXPECT_GT(max_abs_diff(a[0], c[0]), 0.0f);
  // Step k's noise is the stream of seed + k + 1: x' = (1 − σ')·(x − σ·v) + σ'·ε.
  auto s = make_scheduler(euler_fixed(1.0, true));
  s->noise_seed = 7;
  s->set_timesteps(4);
  Tensor x = randn(kShape, 1), v = randn(kShape, 2), eps = randn(kShape, 8);
  Tensor y = s->step(v, x);
  const float sig = s->sigmas()[0], nxt = s->sigmas()[1];
  for (int64_t i = 0; i < y.numel(); ++i)
    EXPECT_FLOAT_EQ(y.f32()[i], (1.0f - nxt) * (x.f32()[i] - sig * v.f32()[i]) + nxt * eps.f32()[i]);
}

TEST(SchedPipelineSigmas, DeterministicEulerOnFixedSigmas) {
  auto s = make_scheduler(euler_fixed(1.0, false));
  EXPECT_STREQ(s->name(), "euler");
  s->set_timesteps(4);
  ASSERT_EQ(s->sigmas().size(), 5u);
  EXPECT_EQ(s->sigmas()[1], 0.9375f);
  EXPECT_EQ(s->timesteps()[0], 1000.0);
  // The rule carries to the other kind: UniPC on the fixed sigmas (shifted by its flow_shift 1).
  SchedulerOverrides ov;
  ov.kind = SchedulerKind::kUniPC;
  auto u = make_scheduler(euler_fixed(1.0, true), ov);
  EXPECT_STREQ(u->name(), "unipc");
  u->set_timesteps(4);
  EXPECT_EQ(u->timesteps()[1], 937.0);
}

TEST(SchedPipelineSigmas, Errors) {
  auto s = make_scheduler(euler_fixed(1.0, true));
  try {
    s->set_timesteps(8);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRecipe);
    EXPECT_NE(e.message().find("fixed schedule of 4 sigmas"), std::string::npos) << e.message();
  }
  Json bad = euler_fixed(1.0, true);
  bad[kPipelineSigmasKey] = Json::array({0.5, 0.75});
  EXPECT_THROW(make_scheduler(bad), Error);
  bad[kPipelineSigmasKey] = "karras";
  EXPECT_THROW(make_scheduler(bad), Error);
  PipelineSigmas none;
  EXPECT_FALSE(with_pipeline_sigmas(Json::object(), none).contains(kPipelineSigmasKey));
}

}  // namespace
}  // namespace vgen
