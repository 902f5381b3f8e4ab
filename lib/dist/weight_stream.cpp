#include "dist/weight_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "core/log.h"
#include "core/timer.h"
#include "dist/weight_stream_io.h"

namespace vgen {
namespace {

constexpr size_t kGap = size_t(1) << 20;  // needed ranges closer than this share a read

int env_int(const char* name, int fallback, int lo) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  char* end = nullptr;
  const long v = std::strtol(e, &end, 10);
  VGEN_CHECK(end && *end == '\0' && v >= lo && v <= 1 << 20, ExitCode::kUsage, "{}={}: expected an integer >= {}",
             name, e, lo);
  return int(v);
}

// Host destinations: whole data sections copied into memory the files then adopt.
class HostSink final : public SegmentSink {
 public:
  HostSink(size_t cap, std::vector<std::shared_ptr<char[]>>& data) : data_(data), scratch_(cap) {}
  void* alloc_buffer(size_t bytes) override { return std::malloc(bytes); }
  void free_buffer(void* p) override { std::free(p); }
  Tensor own(const Segment& s, void* buf, std::function<void()>& reusable) override {
    reusable = nullptr;  // host sends and copies are done when deliver() returns
    return view(buf, s.end - s.begin);
  }
  Tensor recv_buffer(const Segment& s) override { return view(scratch_.data(), s.end - s.begin); }
  void deliver(const Segment& s, const Tensor& bytes) override {
    if (char* dst = data_[size_t(s.file)].get()) std::memcpy(dst + s.begin, bytes.raw(), bytes.nbytes());
  }
  int mark() override {
    marks_.push_back(timer_.seconds());
    return int(marks_.size()) - 1;
  }
  void finish() override {}
  double seconds_at(int m) override { return marks_[size_t(m)]; }

 private:
  static Tensor view(void* p, size_t n) {
    auto st = std::make_shared<Storage>();
    st->ptr = p;
    st->bytes = n;
    return Tensor::from_storage(st, 0, {int64_t(n)}, DType::kU8);
  }
  std::vector<std::shared_ptr<char[]>>& data_;
  std::vector<char> scratch_;
  Timer timer_;
  std::vector<double> marks_;
};

struct StreamFile {
  int comp = 0;
  std::shared_ptr<SafeTensorsFile> file;
  std::vector<std::string> names;  // tensors sorted by begin
  PlanFile plan;
};

struct DeviceRequest {
  size_t begin = 0, end = 0;  // bytes in the data section
  DType src = DType::kF32;
  Tensor dst;
};

// The identity (device, inode, size, modification time) of the open file `fd` of `f`.
SafeTensorsFile::Identity file_identity(const StreamFile& f, int fd) {
  struct stat st {};
  VGEN_CHECK(fstat(fd, &st) == 0, ExitCode::kModel, "cannot stat {}: {}", f.file->path(), std::strerror(errno));
  return SafeTensorsFile::Identity{uint64_t(st.st_dev), uint64_t(st.st_ino), uint64_t(st.st_size),
                                   int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

// The checkpoint files this rank reads, open for one run(); closed by close_all() or when dropped
// (an error on the way).
struct OpenFiles {
  std::vector<int> fds;  // per file, -1 when not open
  OpenFiles() = default;
  OpenFiles(const OpenFiles&) = delete;
  OpenFiles& operator=(const OpenFiles&) = delete;
  ~OpenFiles() { close_all(); }
  void close_all() {
    for (int& fd : fds)
      if (fd >= 0) ::close(fd), fd = -1;
  }
};

// One run(): the node's needs and segments, this rank's destinations, open files and reads, and
// what it read and received. Built in place and never moved (the host sink holds host_data).
struct StreamRun {
  std::vector<NeedFlags> needs;  // per rank that plans together (the node's, or this rank's alone)
  int me = 0;                    // this rank among them
  bool to_device = false;        // device requests (else host ones)
  bool shared = false;           // the node's ranks send each other what they read
  size_t cap = 0;                // largest segment
  std::vector<Segment> segs;
  std::vector<std::shared_ptr<char[]>> host_data;  // per file: the data section of a host request
  std::unique_ptr<SegmentSink> sink;
  OpenFiles open;  // after the sink: closed before it goes
  std::vector<ReadJob> jobs;
  std::vector<size_t> job_of;  // per segment: its job, SIZE_MAX when another rank reads it
  std::vector<int> marks;      // per component: the sink's mark when it was in place, -1 none
  size_t received = 0, read = 0;
};

}  // namespace

WeightStreamOptions WeightStreamOptions::from_env() {
  WeightStreamOptions o;
  o.threads = env_int("VGEN_LOAD_THREADS", o.threads, 1);
  o.buffer_bytes = size_t(env_int("VGEN_LOAD_BUFFER_MIB", int(o.buffer_bytes >> 20), 1)) << 20;
  o.buffers = env_int("VGEN_LOAD_BUFFERS", o.buffers, 1);
  o.share = env_int("VGEN_LOAD_SHARE", 1, 0) != 0;
  return o;
}

struct WeightStream::Impl {
  std::shared_ptr<Communicator> host, device;
  std::vector<std::string> comp_names;
  std::vector<StreamFile> files;
  std::unordered_map<const SafeTensorsFile*, int> file_index;
  // Requests since the last run().
  std::vector<std::vector<DeviceRequest>> device_req;  // per file
  std::vector<uint8_t> host_req;                       // per file
  std::vector<std::function<void()>> done;
  bool started = false;
  Timer since_start;

  std::string describe(int file, size_t at) const {
    const StreamFile& f = files[size_t(file)];
    for (size_t i = 0; i < f.names.size(); ++i)
      if (at >= f.plan.tensors[i].begin && at < f.plan.tensors[i].end)
        return fmt::format("{}: tensor '{}'", f.file->path(), f.names[i]);
    return fmt::format("{}: data offset {}", f.file->path(), at);
  }

  // The phases of run(), in this order.
  void plan(StreamRun& r, const WeightStreamOptions& opt);
  void open_reads(StreamRun& r);
  void pump(StreamRun& r, const WeightStreamOptions& opt);
  void check_unchanged(StreamRun& r);

 private:
  NeedFlags own_needs(const std::vector<PlanFile>& plan_files) const;
  void gather_needs(StreamRun& r, const NeedFlags& mine, bool share);
  std::unique_ptr<SegmentSink> make_sink(StreamRun& r, int buffers);
};

WeightStream::WeightStream(std::shared_ptr<Communicator> node_host, std::shared_ptr<Communicator> node_device,
                           const WeightStreamOptions& options)
    : impl_(std::make_unique<Impl>()), opt_(options) {
  impl_->host = std::move(node_host);
  impl_->device = std::move(node_device);
  VGEN_CHECK(opt_.threads >= 1 && opt_.buffers >= 1 && opt_.buffer_bytes >= 4096, ExitCode::kUsage,
             "weight stream: {} threads, {} buffers of {} bytes", opt_.threads, opt_.buffers, opt_.buffer_bytes);
}

WeightStream::~WeightStream() = default;

int WeightStream::add_component(const std::string& name, const WeightStore& store) {
  Impl& m = *impl_;
  const int c = int(m.comp_names.size());
  m.comp_names.push_back(name);
  for (const auto& f : store.files()) {
    if (m.file_index.count(f.get())) continue;
    StreamFile sf;
    sf.comp = c;
    sf.file = f;
    std::vector<std::pair<const TensorInfo*, std::string>> ts;
    for (auto& [n, ti] : f->infos()) ts.push_back({&ti, n});
    std::stable_sort(ts.begin(), ts.end(), [](auto& a, auto& b) { return a.first->begin < b.first->begin; });
    for (auto& [ti, n] : ts) {
      sf.names.push_back(n);
      sf.plan.tensors.push_back({ti->begin, ti->end, dtype_size(ti->dtype)});
    }
    sf.plan.data_size = f->data_size();
    m.file_index[f.get()] = int(m.files.size());
    m.files.push_back(std::move(sf));
    m.device_req.emplace_back();
    m.host_req.push_back(0);
  }
  return c;
}

void WeightStream::request(int c, const std::string& name, const Tensor& dst, const Shape& file_shape) {
  Impl& m = *impl_;
  VGEN_ASSERT(c >= 0 && c < int(m.comp_names.size()), "weight stream: no component {}", c);
  VGEN_ASSERT(dst.defined() && dst.device() == Device::kCUDA, "weight stream: '{}' needs a device destination", name);
  int fi = -1;
  const TensorInfo* ti = nullptr;
  for (size_t i = 0; i < m.files.size() && !ti; ++i) {
    if (m.files[i].comp != c) continue;
    auto it = m.files[i].file->infos().find(name);
    if (it != m.files[i].file->infos().end()) fi = int(i), ti = &it->second;
  }
  const std::string& path = ti ? m.files[size_t(fi)].file->path() : m.comp_names[size_t(c)];
  VGEN_CHECK(ti != nullptr, ExitCode::kModel, "{}: missing tensor '{}'{}", path, name,
             file_shape.empty() ? "" : fmt::format(" (expected shape {})", shape_str(file_shape)));
  if (!file_shape.empty())
    VGEN_CHECK(ti->shape == file_shape, ExitCode::kModel, "{}: tensor '{}' has shape {}, the config implies {}", path,
               name, shape_str(ti->shape), shape_str(file_shape));
  // Same rank: the same shape (a transposed matrix must not pass); otherwise a view of the same size.
  if (file_shape.empty() && int(ti->shape.size()) == dst.ndim())
    VGEN_CHECK(ti->shape == dst.shape(), ExitCode::kModel, "{}: tensor '{}' has shape {}, the config implies {}",
               path, name, shape_str(ti->shape), shape_str(dst.shape()));
  VGEN_CHECK(shape_numel(ti->shape) == dst.numel(), ExitCode::kModel,
             "{}: tensor '{}' has shape {} ({} elements), the config implies {}", path, name, shape_str(ti->shape),
             shape_numel(ti->shape), dst.str());
  VGEN_CHECK(ti->dtype == DType::kF32 || ti->dtype == DType::kBF16 || ti->dtype == DType::kF16, ExitCode::kModel,
             "{}: tensor '{}' has dtype {}, expected F32, BF16 or F16", path, name, dtype_name(ti->dtype));
  m.device_req[size_t(fi)].push_back({ti->begin, ti->end, ti->dtype, dst});
}

void WeightStream::request_host(int c) {
  Impl& m = *impl_;
  VGEN_ASSERT(c >= 0 && c < int(m.comp_names.size()), "weight stream: no component {}", c);
  for (size_t i = 0; i < m.files.size(); ++i)
    if (m.files[i].comp == c) m.host_req[i] = 1;
}

void WeightStream::on_done(std::function<void()> f) { impl_->done.push_back(std::move(f)); }

// This rank's needs, one flag per plan unit, plus the kind of destination (1 host, 2 device).
NeedFlags WeightStream::Impl::own_needs(const std::vector<PlanFile>& plan_files) const {
  NeedFlags mine(plan_units(plan_files) + 1, 0);
  uint8_t kind = 0;
  for (size_t fi = 0, u = 0; fi < files.size(); ++fi) {
    const StreamFile& f = files[fi];
    for (size_t t = 0; t < f.plan.tensors.size(); ++t, ++u)
      for (auto& r : device_req[fi])
        if (r.begin < f.plan.tensors[t].end && f.plan.tensors[t].begin < r.end) mine[u] = 1;
    if (host_req[fi]) mine[u] = 1, kind |= 1;
    ++u;
    if (!device_req[fi].empty()) kind |= 2;
  }
  mine.back() = kind;
  return mine;
}

// The node's needs (the same plan on every rank), or this rank's alone (collective over the node
// when shared); the kind of the load's destinations and whether the node shares its reads.
void WeightStream::Impl::gather_needs(StreamRun& r, const NeedFlags& mine, bool share) {
  const bool node = host && host->size() > 1 && share;
  if (node) {
    Tensor send = Tensor::empty({int64_t(mine.size())}, DType::kU8);
    std::memcpy(send.raw(), mine.data(), mine.size());
    Tensor all = Tensor::empty({int64_t(mine.size()) * host->size()}, DType::kU8);
    host->all_gather(send, all);
    const uint8_t* p = all.data<uint8_t>();
    for (int k = 0; k < host->size(); ++k)
      r.needs.emplace_back(p + size_t(k) * mine.size(), p + size_t(k + 1) * mine.size());
    r.me = host->rank();
  } else {
    r.needs.push_back(mine);
  }
  uint8_t kinds = 0;
  for (auto& n : r.needs) kinds |= n.back(), n.pop_back();
  VGEN_ASSERT(kinds != 3, "weight stream: host and device requests in one load are not supported");
  r.to_device = kinds == 2;
  r.shared = node;
  if (node && r.to_device && !device) {  // no NCCL: each rank reads what it needs itself
    NeedFlags own = r.needs[size_t(r.me)];
    r.needs.assign(1, own);
    r.me = 0;
    r.shared = false;
  }
}

// Where the segments' bytes go: converted into the device requests they overlap, or copied into
// the host buffers.
std::unique_ptr<SegmentSink> WeightStream::Impl::make_sink(StreamRun& r, int buffers) {
  if (r.to_device)
    return make_device_sink(r.cap, buffers, [this](const Segment& s, const void* base) {
      for (auto& rq : device_req[size_t(s.file)]) {
        const size_t b = std::max(rq.begin, s.begin), e = std::min(rq.end, s.end);
        if (b >= e) continue;
        const size_t es = dtype_size(rq.src);
        device_convert_into(static_cast<const char*>(base) + (b - s.begin), rq.src, rq.dst, (b - rq.begin) / es,
                            (e - b) / es);
      }
    });
  return std::make_unique<HostSink>(r.cap, r.host_data);
}

// The node's plan (the same on every rank: collective over the node), the host buffers and the sink.
void WeightStream::Impl::plan(StreamRun& r, const WeightStreamOptions& opt) {
  std::vector<PlanFile> plan_files;
  for (auto& f : files) plan_files.push_back(f.plan);
  gather_needs(r, own_needs(plan_files), opt.share);
  r.cap = plan_segment_size(plan_needed_bytes(plan_files, r.needs), int(r.needs.size()), opt.buffer_bytes);
  r.segs = plan_segments(plan_files, r.needs, r.cap, kGap);

  // Host destinations: one buffer per requested file's data section.
  r.host_data.resize(files.size());
  for (size_t fi = 0; fi < files.size(); ++fi)
    if (host_req[fi]) r.host_data[fi] = std::shared_ptr<char[]>(new char[std::max<size_t>(files[fi].plan.data_size, 1)]);
  r.sink = make_sink(r, opt.buffers);
}

// Open what this rank reads; the files must be the ones whose headers were validated. One read
// job per segment this rank reads, in plan order.
void WeightStream::Impl::open_reads(StreamRun& r) {
  r.open.fds.assign(files.size(), -1);
  r.job_of.assign(r.segs.size(), SIZE_MAX);
  std::vector<int>& fds = r.open.fds;
  for (size_t i = 0; i < r.segs.size(); ++i) {
    const Segment& s = r.segs[i];
    if (s.reader != r.me) continue;
    const size_t fi = size_t(s.file);
    if (fds[fi] < 0) {
      const std::string& path = files[fi].file->path();
      fds[fi] = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      VGEN_CHECK(fds[fi] >= 0, ExitCode::kModel, "cannot open {}: {}", path, std::strerror(errno));
      VGEN_CHECK(file_identity(files[fi], fds[fi]) == files[fi].file->identity(), ExitCode::kModel,
                 "{} changed after its header was read (another file, size or modification time)", path);
      posix_fadvise(fds[fi], 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    r.job_of[i] = r.jobs.size();
    r.jobs.push_back({fds[fi], s.file, files[fi].file->data_offset() + s.begin, s.begin, s.end - s.begin});
  }
}

// Every segment in plan order (collective over the node when shared): one this rank read goes to
// the others that need it and to its own destinations; one it needs from another rank is
// received. Marks each component once its last segment is in place.
void WeightStream::Impl::pump(StreamRun& r, const WeightStreamOptions& opt) {
  // Per component: the last segment this rank needs of it.
  std::vector<int64_t> last_of(comp_names.size(), -1);
  for (size_t i = 0; i < r.segs.size(); ++i)
    if (std::binary_search(r.segs[i].needers.begin(), r.segs[i].needers.end(), r.me))
      last_of[size_t(files[size_t(r.segs[i].file)].comp)] = int64_t(i);
  r.marks.assign(comp_names.size(), -1);

  // Declared after the files are opened and dropped before they close: its readers use them.
  ReaderPool pool(std::move(r.jobs), opt.threads, opt.buffers, r.cap, *r.sink,
                  [&](const ReadJob& j, size_t at) { return describe(j.file, at); });
  Communicator* comm = r.to_device ? device.get() : host.get();
  for (size_t i = 0; i < r.segs.size(); ++i) {
    const Segment& s = r.segs[i];
    const bool need = std::binary_search(s.needers.begin(), s.needers.end(), r.me);
    if (s.reader == r.me) {
      void* buf = pool.wait(r.job_of[i]);
      std::function<void()> reusable;
      Tensor bytes = r.sink->own(s, buf, reusable);
      if (r.shared)
        for (int p : s.needers)
          if (p != r.me) comm->send(bytes, p);
      if (need) r.sink->deliver(s, bytes);
      pool.release(r.job_of[i], std::move(reusable));
    } else if (need) {
      Tensor bytes = r.sink->recv_buffer(s);
      comm->recv(bytes, s.reader);
      r.received += s.end - s.begin;
      r.sink->deliver(s, bytes);
    } else {
      continue;
    }
    for (size_t c = 0; c < last_of.size(); ++c)
      if (last_of[c] == int64_t(i)) r.marks[c] = r.sink->mark();
  }
  r.sink->finish();
  r.read = pool.bytes_read();
}

// The files read are still the ones opened (kModel naming one that changed while it was read);
// then they are closed.
void WeightStream::Impl::check_unchanged(StreamRun& r) {
  for (size_t fi = 0; fi < files.size(); ++fi)
    if (r.open.fds[fi] >= 0)
      VGEN_CHECK(file_identity(files[fi], r.open.fds[fi]) == files[fi].file->identity(), ExitCode::kModel,
                 "{} changed while it was read (size or modification time)", files[fi].file->path());
  r.open.close_all();
}

void WeightStream::run() {
  Impl& m = *impl_;
  Timer run_timer;
  if (!m.started) m.since_start.reset(), m.started = true;
  const double run_start = m.since_start.seconds();
  StreamRun r;
  m.plan(r, opt_);  // collective over the node when it shares its reads
  m.open_reads(r);
  m.pump(r, opt_);  // the segments' sends and receives
  m.check_unchanged(r);

  // Stats, then the files read into host memory take it over.
  stats_.bytes_read += r.read;
  stats_.bytes_received += r.received;
  for (size_t fi = 0; fi < m.files.size(); ++fi) {
    const StreamFile& f = m.files[fi];
    size_t bytes = m.host_req[fi] ? f.plan.data_size : 0;
    for (auto& rq : m.device_req[fi]) bytes += rq.end - rq.begin;
    if (bytes) stats_.components[m.comp_names[size_t(f.comp)]].bytes += bytes;
    if (r.host_data[fi]) f.file->adopt_data(std::shared_ptr<void>(r.host_data[fi], r.host_data[fi].get()));
  }
  for (size_t c = 0; c < r.marks.size(); ++c)
    if (r.marks[c] >= 0) stats_.components[m.comp_names[c]].seconds = run_start + r.sink->seconds_at(r.marks[c]);
  std::vector<std::function<void()>> done = std::move(m.done);
  m.done.clear();
  for (auto& rq : m.device_req) rq.clear();
  std::fill(m.host_req.begin(), m.host_req.end(), 0);
  for (auto& f : done) f();
  stats_.seconds += run_timer.seconds();
  log_debug("weight stream: {} segments, {:.1f} MiB read here, {:.1f} MiB received, {:.2f} s", r.segs.size(),
            double(r.read) / 1048576.0, double(r.received) / 1048576.0, run_timer.seconds());
}

}  // namespace vgen

#ifndef VGEN_WITH_CUDA
namespace vgen {

std::unique_ptr<SegmentSink> make_device_sink(size_t, int, std::function<void(const Segment&, const void*)>) {
  VGEN_THROW(ExitCode::kUsage, "loading weights to the device: this vgen was built without the CUDA backend");
}

void device_convert_into(const void*, DType, const Tensor&, size_t, size_t) {
  VGEN_THROW(ExitCode::kUsage, "loading weights to the device: this vgen was built without the CUDA backend");
}

}  // namespace vgen
#endif
