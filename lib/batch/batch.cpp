#include "batch/batch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/device_fault.h"
#include "core/device_memory.h"
#include "core/log.h"
#include "core/timer.h"
#include "core/version.h"
#include "dist/bootstrap.h"
#include "dist/watchdog.h"
#include "dist/work_queue.h"
#include "io/mp4_writer.h"
#include "io/prompts.h"
#include "io/report.h"
#include "io/safetensors.h"
#include "batch/batch_reports.h"
#include "batch/fingerprint.h"
#include "batch/preflight.h"
#include "batch/progress.h"
#include "batch/resume.h"
#include "pipeline/precision.h"
#include "pipeline/video_pipeline.h"
#include "batch/video_sink.h"

namespace vgen {
namespace fs = std::filesystem;

namespace {

constexpr int64_t kTodo = 0, kSkipExisting = 1, kSkipNotFailed = 2;

// A memory line of /proc/self/status ("VmHWM:" peak resident set, "VmRSS:" current), in bytes.
int64_t rss_bytes(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line, k(key);
  while (std::getline(f, line))
    if (line.rfind(k, 0) == 0) return std::stoll(line.substr(k.size())) * 1024;
  return 0;
}
int64_t peak_rss_bytes() {
#ifdef VGEN_WITH_CUDA
  if (size_t d = device_peak_bytes()) return int64_t(d);
#endif
  return rss_bytes("VmHWM:");
}

std::string video_path(const std::string& out_dir, const PromptItem& item) {
  return (fs::path(out_dir) / (item.stem() + ".mp4")).string();
}

std::string tensors_path_in(const std::string& out_dir, const PromptItem& item) {
  return (fs::path(out_dir) / (item.stem() + ".safetensors")).string();
}

bool output_exists(const std::string& mp4) { return fs::exists(video_file(mp4)); }

// The same text on every rank of `comm` (root's).
void broadcast_text(Communicator& comm, std::string& text, int root) {
  Tensor len = Tensor::zeros({1}, DType::kI64);
  len.data<int64_t>()[0] = int64_t(text.size());
  comm.broadcast(len, root);
  Tensor bytes = Tensor::zeros({len.data<int64_t>()[0]}, DType::kU8);
  if (comm.rank() == root && !text.empty()) std::memcpy(bytes.raw(), text.data(), text.size());
  comm.broadcast(bytes, root);
  text.assign(static_cast<const char*>(bytes.raw()), size_t(bytes.numel()));
}

// What the replica leader hands to its writer after a render: the frames (and the tensors of
// output.save_tensors, on the CPU) of a video that rendered, nothing but the report otherwise.
FinishedVideo finished_video(VideoReport vr, const Timer& started, VideoOutput& out, const std::string& out_dir,
                             const PromptItem& item, bool save_tensors, Json sidecar) {
  FinishedVideo v;
  v.started = started;
  v.mp4_path = video_path(out_dir, item);
  if (vr.status == "ok") {
    vr.fingerprint = sidecar.value("fingerprint", "");
    v.sidecar = std::move(sidecar);
    v.frames = std::move(out.frames);
    if (save_tensors) {
      v.tensors_path = tensors_path_in(out_dir, item);
      v.latents = out.latents.to(Device::kCPU);  // device copies stay on this (the main) thread
      v.video = out.video.to(Device::kCPU);
    }
  }
  v.report = std::move(vr);
  return v;
}

// The hosts of the world's ranks, each once, in rank order (collective over `world`).
Json world_hosts(Communicator& world) {
  constexpr int64_t kName = 256;
  Tensor mine = Tensor::zeros({kName}, DType::kU8);
  const std::string& host = process_host();
  std::memcpy(mine.raw(), host.data(), std::min<size_t>(host.size(), kName - 1));
  Tensor all = Tensor::empty({kName * int64_t(world.size())}, DType::kU8);
  world.all_gather(mine, all);
  Json hosts = Json::array();
  for (int r = 0; r < world.size(); ++r) {
    const std::string h(static_cast<const char*>(all.raw()) + r * kName);
    if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
  }
  return hosts;
}

// World rank 0's rewrite of the partial timing.json after each recorded video (on the writer
// thread), so a crash still leaves one: `base` is the run's report without its videos.
RecordsHook partial_report_writer(RunReport base, std::vector<VideoReport> skipped, std::string timing_path) {
  return [base = std::move(base), skipped = std::move(skipped),
          timing_path = std::move(timing_path)](const std::vector<VideoReport>& mine) {
    RunReport partial = base;
    partial.videos = skipped;
    partial.videos.insert(partial.videos.end(), mine.begin(), mine.end());
    partial.extra["complete"] = false;
    write_run_report(timing_path, partial);
  };
}

// timing.json's "load": this rank's seconds, bytes read and per component, and every rank's
// seconds and bytes (collective over `world`).
Json load_report(const LoadStats& st, double seconds, Communicator& world) {
  Json comps = Json::object();
  for (auto& [name, c] : st.components) comps[name] = {{"seconds", c.seconds}, {"bytes", c.bytes}};
  constexpr int kFields = 4;
  Tensor mine = Tensor::empty({kFields}, DType::kI64);
  mine.data<int64_t>()[0] = int64_t(std::llround(seconds * 1e6));
  mine.data<int64_t>()[1] = int64_t(st.bytes_read);
  mine.data<int64_t>()[2] = int64_t(st.bytes_received);
  mine.data<int64_t>()[3] = rss_bytes("VmHWM:");
  Tensor all = Tensor::empty({kFields * int64_t(world.size())}, DType::kI64);
  world.all_gather(mine, all);
  Json ranks = Json::array();
  for (int r = 0; r < world.size(); ++r) {
    const int64_t* p = all.data<int64_t>() + kFields * r;
    ranks.push_back({{"rank", r},
                     {"seconds", double(p[0]) / 1e6},
                     {"bytes_read", p[1]},
                     {"bytes_received", p[2]},
                     {"peak_host_bytes", p[3]}});
  }
  return {{"seconds", seconds},
          {"peak_host_bytes", rss_bytes("VmHWM:")},  // the process's peak resident set so far
#ifdef VGEN_WITH_CUDA
          {"peak_device_bytes", int64_t(device_peak_bytes())},
#endif
          {"bytes_read", st.bytes_read},
          {"bytes_received", st.bytes_received},
          {"components", comps},
          {"ranks", ranks}};
}

// What the render queue leaves behind: the reports the leader's writer recorded and whether a
// render was interrupted.
struct QueueResult {
  std::vector<VideoReport> mine;  // reports of the videos this replica rendered (leader only)
  bool interrupted = false;
};

// One run_batch: the recipe as it runs, the mesh, the prompts and what world rank 0 decided to do
// with each. The phases run in this order on every rank: decide_work, load, run_report,
// render_queue, finish (each collective where it says so).
struct BatchRun {
  BatchRun(const Recipe& recipe_in, Mesh& mesh_in, const RunOptions& opts_in, const PreflightResult& pf_in)
      : recipe(recipe_in), mesh(mesh_in), opts(opts_in), pf(pf_in), prompts(pf_in.prompts), n(int(prompts.size())) {
    recipe.output.dir = pf.out_dir;
  }

  Recipe recipe;  // VideoPipeline keeps a reference: a BatchRun stays where it is built
  Mesh& mesh;
  const RunOptions& opts;
  const PreflightResult& pf;
  const bool world_root = mesh.world_rank == 0;
  const bool leader = mesh.is_replica_leader();
  const std::vector<PromptItem>& prompts;
  const int n;
  // Per prompt kTodo, kSkipExisting or kSkipNotFailed; then 1 when --no-overwrite refuses the job.
  Tensor plan = Tensor::zeros({n + 1}, DType::kI64);
  std::vector<int> todo;  // the prompts to render (indices into `prompts`)
  bool refused = false;   // --no-overwrite: nothing is loaded or rendered
  std::optional<VideoFingerprints> prints;  // every rank, after decide_work
  std::vector<std::string> disk_fingerprint;  // world rank 0: per prompt, its existing sidecar's
  const std::string timing_path = (fs::path(pf.out_dir) / "timing.json").string();
  const std::string started_at = utc_timestamp();  // the batch's start, and its wall clock
  const Timer wall;

  // The seed and frame count a prompt renders with.
  auto seed_of(const PromptItem& it) const {
    // seed + index wraps in two's complement (no signed overflow) for seeds near INT64_MAX.
    return it.seed.value_or(int64_t(uint64_t(recipe.generation.seed) + uint64_t(it.index)));
  }
  auto frames_of(const PromptItem& it) const { return it.num_frames.value_or(recipe.generation.num_frames); }
  std::string tensors_path(const PromptItem& it) const { return tensors_path_in(pf.out_dir, it); }
  // What the video of a valid prompt is made from (batch/fingerprint.h).
  Json sidecar_of(const PromptItem& it) const {
    return prints->sidecar(prints->video_inputs(
        it.prompt, it.negative_prompt.value_or(recipe.generation.negative_prompt), seed_of(it), frames_of(it),
        image_fingerprint_inputs(it)));
  }

  void decide_work();
  void decide_on_root();
  VideoPipeline load();
  RunReport run_report(const VideoPipeline& pipe, double load_seconds);
  std::vector<VideoReport> skipped_reports() const;
  QueueResult render_queue(VideoPipeline& pipe, const RunReport& report, const VideoOptions& vopt, Progress& progress);
  VideoReport video_report(const PromptItem& item) const;
  bool render_video(VideoPipeline& pipe, const PromptItem& item, VideoReport& vr, VideoOutput& out,
                    Progress& progress);
  int finish(RunReport& report, const QueueResult& queue);
};

// What to render is decided once, on world rank 0, and broadcast (one view of the file system),
// with the job's fingerprint inputs (its files are read once). Collective over the world.
void BatchRun::decide_work() {
  std::string job_inputs;
  if (world_root) {
    job_inputs = job_fingerprint_inputs(recipe).dump();
    prints.emplace(recipe, Json::parse(job_inputs));
    decide_on_root();
  }
  mesh.world->broadcast(plan, 0);
  refused = plan.data<int64_t>()[n] != 0;
  if (refused) return;
  broadcast_text(*mesh.world, job_inputs, 0);
  if (!world_root) prints.emplace(recipe, Json::parse(job_inputs));
  for (int i = 0; i < n; ++i)
    if (plan.data<int64_t>()[i] == kTodo) todo.push_back(i);
  log_info("{} prompts: {} to render, {} skipped; mesh {} replica(s) of {} rank(s)", n, todo.size(),
           n - int(todo.size()), mesh.shape.dp, mesh.shape.replica_size());
}

// World rank 0: what the output directory and the previous run (--retry-failed) leave to do, into
// `plan`. A video is reused only when its sidecar holds this run's fingerprint and its file is whole.
void BatchRun::decide_on_root() {
  remove_stale_temporaries(pf.out_dir);
  PreviousRun prev;
  if (opts.retry_failed) {
    VGEN_CHECK(fs::exists(timing_path), ExitCode::kInput, "--retry-failed: no previous {}", timing_path);
    prev = read_previous_run(timing_path);
  }
  disk_fingerprint.assign(size_t(n), "");
  const bool resume = recipe.output.skip_existing && !opts.retry_failed;
  ResumeTally tally;
  int64_t* p = plan.data<int64_t>();
  for (int i = 0; i < n; ++i) {
    const PromptItem& it = prompts[size_t(i)];
    if (opts.retry_failed && !prev.is_failed(it.stem(), it.prompt)) p[i] = kSkipNotFailed;
    if (!it.ok()) continue;  // rendered as failed: writes nothing
    ExistingVideo ex = check_existing_video(video_path(pf.out_dir, it), sidecar_of(it));
    if (ex.verdict == Verdict::kReuse && recipe.output.save_tensors && !fs::exists(tensors_path(it)))
      ex = {Verdict::kDamaged, "no " + fs::path(tensors_path(it)).filename().string() + " (output.save_tensors)",
            ex.fingerprint};
    disk_fingerprint[size_t(i)] = ex.fingerprint;
    if (p[i] == kSkipNotFailed) continue;
    if (ex.verdict == Verdict::kNew || (resume && ex.verdict == Verdict::kReuse)) {
      if (ex.verdict == Verdict::kReuse) p[i] = kSkipExisting;
      tally.count(ex.verdict);
    } else {
      tally.replace(it.stem(), ex.verdict,
                    resume ? ex.why : opts.retry_failed ? "failed in the previous run" : "output.skip_existing is off");
    }
  }
  if (opts.no_overwrite && tally.replaces_any()) {
    tally.log_refusal();
    p[n] = 1;
  } else if (resume) {
    tally.log();  // --retry-failed and a run without skip_existing render over old files as they always did
  }
}

// The model through its family (collective over the world).
VideoPipeline BatchRun::load() {
  const DeviceAllocPhase load_phase("loading the model");  // named in OOM messages; ends with the load
  device_fault_inject("load");  // test hook VGEN_INJECT_OOM=load (core/device_fault.h)
  return VideoPipeline(recipe, mesh);
}

// timing.json without its videos: recipe, mesh, device, precision and load (collective over the world).
RunReport BatchRun::run_report(const VideoPipeline& pipe, double load_seconds) {
  RunReport report;
  report.recipe = recipe.resolved;
  report.mesh = mesh_to_json(mesh.shape);
  report.device = Json{{"kind", device_name(recipe.device)}, {"ranks", mesh.shape.world()}, {"host", process_host()}};
  report.load_seconds = load_seconds;
  report.extra["precision"] = precision_report(recipe);  // what ran in fp8 / bf16 / fp32 (pipeline/precision.h)
  if (!pipe.execution_paths().is_null()) report.extra["execution_paths"] = pipe.execution_paths();  // world rank 0's
  report.extra["load"] = load_report(pipe.load_stats(), load_seconds, *mesh.world);  // collective
  report.extra["fingerprint_inputs"] = prints->job_inputs();  // what every video's fingerprint hashed
  report.extra["vgen"] = {{"version", vgen_version()}, {"commit", vgen_commit()}, {"build", vgen_build_options()}};
  report.extra["started_at"] = started_at;
  report.extra["hosts"] = world_hosts(*mesh.world);  // collective
  return report;
}

// The reports of the prompts not rendered this run (skip_existing, --retry-failed).
std::vector<VideoReport> BatchRun::skipped_reports() const {
  std::vector<VideoReport> v;
  for (int i = 0; i < n; ++i) {
    int64_t s = plan.data<int64_t>()[i];
    if (s == kTodo) continue;
    const PromptItem& it = prompts[size_t(i)];
    VideoReport r;
    r.index = it.index;
    r.name = it.stem();
    r.prompt = it.prompt;
    r.status = "skipped";
    r.error = s == kSkipExisting ? "output exists (output.skip_existing)" : "not failed in the previous run";
    // What the existing video was made with (skip_existing checked it against the previous report).
    r.seed = seed_of(it);
    r.frames = frames_of(it);
    r.height = it.height.value_or(recipe.generation.height);
    r.width = it.width.value_or(recipe.generation.width);
    if (output_exists(video_path(pf.out_dir, it))) r.output = video_file(video_path(pf.out_dir, it));
    // The existing file is kept; its fingerprint is its sidecar's (equal to this run's when reused).
    r.reused = !r.output.empty();
    if (world_root && r.reused) r.fingerprint = disk_fingerprint[size_t(i)];
    v.push_back(r);
  }
  return v;
}

// The replicas take prompts from the dynamic queue until it runs dry or a stop (collective over the
// world: the queue's window; over the replica: each prompt).
QueueResult BatchRun::render_queue(VideoPipeline& pipe, const RunReport& report, const VideoOptions& vopt,
                                   Progress& progress) {
  QueueResult res;
  // The leader writes each video's files on a background thread while the next one renders
  // (batch/video_sink.h). Declared before the queue: while an error unwinds, the videos already
  // handed over are still written after the queue is gone.
  std::unique_ptr<VideoSink> sink;
  if (leader)
    sink = std::make_unique<VideoSink>(
        VideoSinkOptions::from_env(vopt),
        world_root ? partial_report_writer(report, skipped_reports(), timing_path) : RecordsHook{});
  // On a watchdog timeout (dist/watchdog.h) the writer first finishes the videos handed over
  // (and world rank 0's partial timing.json), with the main thread parked.
  const WatchdogHook drain_on_timeout([&sink](const std::string&) {
    if (sink) sink->finish();
  });
  WorkQueue queue(int64_t(todo.size()));  // collective over the world
  Tensor pos_t = Tensor::zeros({1}, DType::kI64);
  while (true) {
    if (leader) pos_t.data<int64_t>()[0] = stop_requested() ? -1 : queue.next();
    mesh.replica->broadcast(pos_t, 0);
    int64_t pos = pos_t.data<int64_t>()[0];
    if (pos < 0) break;
    const PromptItem& item = prompts[size_t(todo[size_t(pos)])];
    VideoReport vr = video_report(item);
    Timer video_timer;
    progress.video_started(int(pos), vr.name);
    VideoOutput out;
    if (!item.ok()) {
      vr.status = "failed";
      vr.error = item.error;
    } else if (render_video(pipe, item, vr, out, progress)) {
      res.interrupted = true;
    }
    vr.seconds.total = video_timer.seconds();  // the render's; the writer extends it to the files
    vr.peak_memory_bytes = peak_rss_bytes();
    vr.rss_bytes = rss_bytes("VmRSS:");
    const std::string name = vr.name, status = vr.status;
    // Blocks while one finished video already waits for the writer.
    if (leader) sink->submit(finished_video(std::move(vr), video_timer, out, pf.out_dir, item,
                                            recipe.output.save_tensors, item.ok() ? sidecar_of(item) : Json()));
    progress.video_finished(int(pos), name, status, video_timer.seconds());
    if (res.interrupted) break;
  }
  if (sink) res.mine = sink->finish();  // every video handed over is written and recorded first
  return res;  // the queue's window is freed collectively here
}

// A prompt's report before it renders: what it is and what it renders with.
VideoReport BatchRun::video_report(const PromptItem& item) const {
  VideoReport vr;
  vr.index = item.index;
  vr.name = item.stem();
  vr.prompt = item.prompt;
  vr.seed = seed_of(item);
  vr.height = item.height.value_or(recipe.generation.height);
  vr.width = item.width.value_or(recipe.generation.width);
  return vr;
}

// Renders a valid prompt into `out` (collective over the replica). A per-prompt failure or a stop
// marks `vr` failed; returns whether the render was interrupted.
bool BatchRun::render_video(VideoPipeline& pipe, const PromptItem& item, VideoReport& vr, VideoOutput& out,
                            Progress& progress) {
  VideoJob job;
  job.index = item.index;
  job.prompt = item.prompt;
  job.negative_prompt = item.negative_prompt.value_or(recipe.generation.negative_prompt);
  job.seed = vr.seed;
  job.num_frames = frames_of(item);
  job.height = item.height.value_or(recipe.generation.height);
  job.width = item.width.value_or(recipe.generation.width);
  if (item.image) job.image = item.image->path;
  if (item.last_image) job.last_image = item.last_image->path;
  auto hook = [&](const VideoJob&, const DenoiseStepInfo& info, const Tensor&) {
    progress.step(info);
    if (any_rank_failed(*mesh.replica, stop_requested()))
      VGEN_THROW(ExitCode::kInterrupted, "interrupted by a signal during step {}", info.index + 1);
  };
  bool interrupted = false;
  try {
    out = pipe.render(job, hook);
    vr.seconds = out.seconds;
    vr.cache_forwards = out.cache_forwards, vr.cache_hits = out.cache_hits;
    vr.cache_step_hits = out.cache_step_hits;
    vr.frames = out.frames.defined() ? int(out.frames.dim(0)) : 0;
  } catch (const Error& e) {
    if (e.code() == ExitCode::kInterrupted) {
      interrupted = true;
    } else if (e.code() != ExitCode::kInput) {
      throw;  // not a per-prompt failure: end the job
    }
    vr.status = "failed";
    vr.error = e.message();
  }
  return interrupted;
}

// Every rank's reports into timing.json (world rank 0) and the exit code (collective over the world).
int BatchRun::finish(RunReport& report, const QueueResult& queue) {
  // A stop between videos ends the queue quietly; the run is still incomplete.
  Tensor stop_flag = Tensor::zeros({1}, DType::kI64);
  stop_flag.data<int64_t>()[0] = queue.interrupted || stop_requested();
  mesh.world->all_reduce_max(stop_flag);
  const bool interrupted = stop_flag.data<int64_t>()[0] != 0;

  std::vector<VideoReport> all =
      gather_video_reports(*mesh.world, leader ? queue.mine : std::vector<VideoReport>{});
  std::vector<VideoReport> videos = skipped_reports();
  videos.insert(videos.end(), all.begin(), all.end());
  std::sort(videos.begin(), videos.end(), [](auto& a, auto& b) { return a.index < b.index; });
  int failed = 0;
  for (auto& v : videos) failed += v.status == "failed";
  if (world_root) {
    report.videos = videos;
    report.extra["complete"] = !interrupted && int(all.size()) == int(todo.size());
    report.extra["finished_at"] = utc_timestamp();
    report.extra["wall_seconds"] = wall.seconds();  // the whole batch (per-video totals overlap)
    write_run_report(timing_path, report);
    log_info("wrote {} ({} videos, {} failed{})", timing_path, videos.size(), failed,
             interrupted ? ", interrupted" : "");
  }
  if (interrupted) return int(ExitCode::kInterrupted);
  return failed ? int(ExitCode::kPromptsFailed) : 0;
}

}  // namespace

int run_batch(const Recipe& recipe_in, Mesh& mesh, const RunOptions& opts, const PreflightResult& pf) {
  install_stop_handlers();
  Timer load_timer;
  BatchRun run(recipe_in, mesh, opts, pf);
  run.decide_work();  // collective
  if (run.refused) return int(ExitCode::kInput);  // --no-overwrite: rank 0 said why

  VideoPipeline pipe = run.load();  // collective
  const double load_seconds = load_timer.seconds();
  VideoOptions vopt;
  vopt.fps = run.recipe.output.fps.value_or(pipe.native_fps());
  vopt.crf = run.recipe.output.crf;
  RunReport report = run.run_report(pipe, load_seconds);  // collective
  if (opts.load_only) {
    if (run.world_root) write_run_report((fs::path(pf.out_dir) / "load.json").string(), report);
    log_info("loaded in {:.2f} s, {:.1f} MiB read by this rank (--load-only: nothing rendered)", load_seconds,
             double(pipe.load_stats().bytes_read) / 1048576.0);
    return 0;
  }

  Progress progress(int(run.todo.size()), mesh.shape.dp, run.leader, mesh.shape.world());
  const QueueResult queue = run.render_queue(pipe, report, vopt, progress);
  return run.finish(report, queue);
}

}  // namespace vgen
