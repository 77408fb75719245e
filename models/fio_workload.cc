#include "models/fio_workload.h"

#include <algorithm>

#include "models/fio_jobfile.h"
#include "models/guest_block.h"

namespace vqsim::models {

QueueReach queue_reach(const IoScenario& s) {
  QueueReach q;
  const int vcpus_used = std::max(1, std::min(s.fio_threads(), s.guest.vcpus));
  q.queues = std::min(vcpus_used, std::max(1, s.queues()));
  q.threads = s.host.iothreads > 0 ? std::min(q.queues, s.host.iothreads) : 1;
  return q;
}

FioWorkload::FioWorkload(sim::Simulator& sim, std::string vm, const IoScenario& scenario, IoTable& io, std::uint32_t vm_index)
    : Stage(sim, std::move(vm), "fio"), s_(scenario), vm_index_(vm_index), io_(io), per_job_(scenario.multi_job()) {
  // One job (the scenario's workload), or each job of the file's current stonewall group.
  std::vector<std::pair<const WorkloadParams*, std::string>> specs;
  if (!per_job_)
    specs.emplace_back(&s_.workload, "");
  else
    for (const FioJob& j : s_.jobs) specs.emplace_back(&j.workload, j.name);
  job_rngs_.reserve(specs.size());  // stable addresses for Job::rng
  std::uint32_t first = 0;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    Job job;
    job.w = specs[k].first;
    job.prefix = per_job_ ? this->vm() + job_metric_prefix(specs[k].second) : "";
    job.first = first;
    job.threads = static_cast<std::uint32_t>(job.w->numjobs);
    job.depth = job.w->effective_depth();
    IoScenario alone = s_;  // plug merging is decided by the job's own pattern
    alone.workload = *job.w;
    job.merge_ios = plug_merge_ios(alone);
    job.disk = static_cast<std::uint8_t>(job.w->disk);
    if (job.w->rate_iops > 0) job.interarrival = sim::Distribution::exponential(1e9 / job.w->rate_iops);
    if (k == 0) {
      job.rng = &rng_;
    } else {
      job_rngs_.push_back(sim.stream(name() + "." + specs[k].second));
      job.rng = &job_rngs_.back();
    }
    for (std::uint32_t t = 0; t < job.threads; ++t) job_of_.push_back(static_cast<std::uint32_t>(k));
    first += job.threads;
    jobs_.push_back(std::move(job));
  }
  if (s_.multi_disk()) disk_records_.resize(s_.disks.size());
  for (const DiskSpec& d : s_.disks) disk_iothread_.push_back(d.iothread);
  outstanding_.assign(first, 0);
  unreaped_.assign(first, {});
  unreaped_ios_.assign(first, 0);
  backlog_.assign(first, 0);
  next_offset_.assign(first, 0);
}

void FioWorkload::validate() const { sim::require_connected(*this, submit, "submit"); }

void FioWorkload::accept(sim::JobId id, int) {
  const std::uint32_t thread = io_[id].job;
  const WorkloadParams& w = *jobs_[job_of_[thread]].w;
  if (w.iodepth_batch_complete_min <= 1) {
    // Reaped as it comes (io_getevents(1, max) returns at once), its timestamp taken before fio's
    // accounting (GuestThreads): its latency ends there.
    const IoRequest& r = io_[id];
    complete(id, r.reaped_ns > 0 ? r.reaped_ns : sim_.now());
    return;
  }
  // fio waits in io_getevents for min completions (no more than it has in flight), takes at most
  // max (never fewer than min) and refills; what is left in the ring counts towards the next
  // wait, which begins as soon as the queue is full again.
  std::vector<sim::JobId>& ring = unreaped_[thread];
  ring.push_back(id);
  unreaped_ios_[thread] += static_cast<int>(io_[id].ios);
  const int most = std::max(w.iodepth_batch_complete_max, w.iodepth_batch_complete_min);
  while (!ring.empty() && unreaped_ios_[thread] >= std::min(w.iodepth_batch_complete_min, outstanding_[thread])) {
    std::size_t n = 0;
    for (int ios = 0; n < ring.size() && (n == 0 || ios + static_cast<int>(io_[ring[n]].ios) <= most); ++n)
      ios += static_cast<int>(io_[ring[n]].ios);
    const std::vector<sim::JobId> reaped(ring.begin(), ring.begin() + static_cast<std::ptrdiff_t>(n));
    ring.erase(ring.begin(), ring.begin() + static_cast<std::ptrdiff_t>(n));
    for (const sim::JobId r : reaped) {
      unreaped_ios_[thread] -= static_cast<int>(io_[r].ios);
      complete(r, sim_.now());  // the batch's reap: its timestamp now
    }
  }
}

namespace {
int slots_of(const IoScenario& s) {
  if (!s.multi_job()) return s.workload.numjobs * s.workload.effective_depth();
  int n = 0;
  for (const FioJob& j : s.jobs) n += j.workload.numjobs * j.workload.effective_depth();
  return n;
}
}  // namespace

void FioWorkload::stations(std::vector<StageInfo>& out) const { out.push_back({name(), "fio", slots_of(s_)}); }

void FioWorkload::draw(StageGraph& g) const { g.nodes.push_back({name(), "fio", "station", slots_of(s_)}); }

std::vector<PortEnd> FioWorkload::entry(int) const { return {{name(), "reaped"}}; }

std::vector<PortEnd> FioWorkload::exits(const sim::Port&) const { return {{name(), "issue"}}; }

double unreaped_ios(const WorkloadParams& w) {
  if (w.rate_iops > 0) return 0;
  return 0.5 * (std::min(w.iodepth_batch_complete_min, w.effective_depth()) - 1);
}

void fio_demands(const MvaInputs& in, std::vector<MvaDemand>& out) {
  const WorkloadParams& w = in.s.workload;
  if (w.thinktime_ns > 0) out.push_back({"fio.thinktime", sim::MvaStationKind::Delay, 1, w.thinktime_ns});
  // fio waits for iodepth_batch_complete_min completions before it reaps (FioWorkload::accept):
  // each of a thread's unreaped I/Os waits that many over the thread's completion rate (Little's
  // law), time that counts towards clat.
  const double held = unreaped_ios(w);
  if (held > 0 && in.x_fio_thread_per_ns > 0)
    out.push_back({"fio.reap_wait", sim::MvaStationKind::Delay, 1, held / in.ios_per_request / in.x_fio_thread_per_ns});
}

void FioWorkload::start() {
  for (std::uint32_t t = 0; t < outstanding_.size(); ++t) {
    Job& job = jobs_[job_of_[t]];
    if (job.w->rate_iops > 0) {
      sim_.schedule_in(job.interarrival.sample_ns(*job.rng), this, kArrival, t);
    } else {
      issue_slots(t, job.depth);
    }
  }
}

void FioWorkload::issue_slots(std::uint32_t thread, int slots) {
  const int merge = jobs_[job_of_[thread]].merge_ios;
  while (slots > 0) {
    const int n = std::min(slots, merge);
    issue(thread, static_cast<std::uint32_t>(n));
    slots -= n;
  }
}

void FioWorkload::issue(std::uint32_t thread, std::uint32_t ios) {
  const sim::time_ns now = sim_.now();
  const sim::JobId id = sim_.jobs().allocate(now);
  IoRequest& r = io_[id];
  Job& job = jobs_[job_of_[thread]];
  const WorkloadParams& w = *job.w;
  const bool read = w.read_fraction >= 1.0 || (w.read_fraction > 0.0 && job.rng->uniform01() < w.read_fraction);
  r.dir = read ? Direction::read : Direction::write;
  r.ios = ios;
  r.bytes = static_cast<std::uint32_t>(ios * (read ? w.bs_read_bytes : w.bs_write_bytes));
  r.chunks = 1;
  r.sequential = !w.random;
  r.pagecache = false;
  r.needs_flush = false;
  r.irq_leader = false;
  r.irq_line = nullptr;
  r.relay_rides = false;
  r.device_batch = 0;
  r.job = thread;
  r.vm = vm_index_;
  // vq <-> vCPU: thread t runs on vCPU t mod vcpus; blk-mq maps that CPU to queue vcpu mod queues;
  // iothread-vq-mapping spreads queues round robin over the IOThreads.
  const int vcpu = static_cast<int>(thread) % s_.guest.vcpus;
  r.queue = static_cast<std::uint32_t>(vcpu % s_.queues());
  r.thread = s_.host.iothreads > 0 ? r.queue % static_cast<std::uint32_t>(s_.host.iothreads) : 0;
  // A disk on an IOThread of its own (-device virtio-blk-pci,iothread=): every queue of it there.
  r.disk = job.disk;
  if (!disk_iothread_.empty() && disk_iothread_[job.disk] >= 0) r.thread = static_cast<std::uint32_t>(disk_iothread_[job.disk]);
  r.step = Step::tag;
  r.issued_ns = now;
  r.submitted_ns = now;
  r.reaped_ns = 0;
  r.outside_ns = 0;
  outstanding_[thread] += static_cast<int>(ios);
  flow_.arrive(now);
  submit.send(id);
}

void FioWorkload::arrival(std::uint32_t thread) {
  Job& job = jobs_[job_of_[thread]];
  sim_.schedule_in(job.interarrival.sample_ns(*job.rng), this, kArrival, thread);
  if (outstanding_[thread] < job.depth)
    issue(thread);
  else
    ++backlog_[thread];
}

void FioWorkload::handle(std::uint32_t kind, std::uint64_t payload) {
  const auto thread = static_cast<std::uint32_t>(payload & 0xffffffffu);
  if (kind == kArrival)
    arrival(thread);
  else
    issue_slots(thread, static_cast<int>(payload >> 32));  // after a thinktime
}

void FioWorkload::complete(sim::JobId id, sim::time_ns reaped_ns) {
  const sim::time_ns now = sim_.now();
  const IoRequest& r = io_[id];
  const std::uint32_t thread = r.job;
  const std::uint32_t ios = r.ios;
  Job& job = jobs_[job_of_[thread]];
  if (sim_.measuring()) {
    // A merged request completes all its I/Os at once; fio sees each with the same times.
    const double slat = static_cast<double>(r.submitted_ns - r.issued_ns);
    const double clat = static_cast<double>(reaped_ns - r.submitted_ns);
    const double lat = static_cast<double>(reaped_ns - r.issued_ns);
    for (DirectionRecord* rec : {&records_[static_cast<int>(r.dir)], per_job_ ? &job.records[static_cast<int>(r.dir)] : nullptr,
                                 disk_records_.empty() ? nullptr : &disk_records_[r.disk][static_cast<int>(r.dir)]}) {
      if (rec == nullptr) continue;
      rec->ios += ios;
      rec->bytes += r.bytes;
      for (std::uint32_t i = 0; i < ios; ++i) {
        rec->slat.add(slat);
        rec->clat.add(clat);
        rec->lat.add(lat);
      }
    }
  }
  flow_.depart(now, now - r.issued_ns);
  outstanding_[thread] -= static_cast<int>(ios);
  sim_.jobs().release(id);
  sim_.count_completion();
  const WorkloadParams& w = *job.w;
  if (w.rate_iops > 0) {
    if (backlog_[thread] > 0) {
      --backlog_[thread];
      issue(thread);
    }
  } else if (w.thinktime_ns > 0) {
    sim_.schedule_in(static_cast<sim::time_ns>(w.thinktime_ns), this, kIssue, thread | (static_cast<std::uint64_t>(ios) << 32));
  } else {
    issue_slots(thread, static_cast<int>(ios));
  }
}

void FioWorkload::reset_statistics(sim::time_ns now) {
  auto clear = [](std::array<DirectionRecord, 2>& records) {
    for (auto& r : records) {
      r.ios = r.bytes = 0;
      r.slat.clear();
      r.clat.clear();
      r.lat.clear();
    }
  };
  clear(records_);
  for (Job& j : jobs_) clear(j.records);
  for (auto& d : disk_records_) clear(d);
  flow_.reset(now);
  measure_start_ns_ = now;
}

void FioWorkload::report_records(sim::Metrics& m, const std::string& prefix, const std::array<DirectionRecord, 2>& records,
                                 double seconds) const {
  const auto percentiles = sim::FioHistogram::fio_default_percentiles();
  for (int d = 0; d < 2; ++d) {
    const DirectionRecord& r = records[d];
    const std::string dir = prefix + direction_name(static_cast<Direction>(d));
    m.add(dir + ".ios", static_cast<double>(r.ios));
    m.add(dir + ".iops", seconds > 0 ? static_cast<double>(r.ios) / seconds : 0.0);
    m.add(dir + ".bw_bytes_per_s", seconds > 0 ? static_cast<double>(r.bytes) / seconds : 0.0);
    for (const auto& [kind, rec] :
         {std::pair<const char*, const LatencyRecord*>{"slat", &r.slat}, {"clat", &r.clat}, {"lat", &r.lat}}) {
      std::string p = dir;
      p += '.';
      p += kind;
      m.add(p + ".mean_ns", rec->stats.count() ? rec->stats.mean() : 0.0);
      m.add(p + ".stddev_ns", rec->stats.count() > 1 ? rec->stats.stddev() : 0.0);
      m.add(p + ".min_ns", rec->min_ns);
      m.add(p + ".max_ns", rec->max_ns);
      if (std::string(kind) != "slat") {
        const auto values = rec->histogram.percentiles_ns(percentiles);
        for (std::size_t i = 0; i < percentiles.size(); ++i)
          m.add(p + ".p" + sim::FioHistogram::percentile_key(percentiles[i]) + "_ns", static_cast<double>(values[i]));
        // Finer than fio's bins, for paired comparisons (calibration/predict/compare.h).
        const auto fine = rec->histogram.interpolated_percentiles_ns(percentiles);
        for (std::size_t i = 0; i < percentiles.size(); ++i)
          m.add(p + ".p" + sim::FioHistogram::percentile_key(percentiles[i]) + "_interpolated_ns", fine[i]);
      }
    }
  }
}

void FioWorkload::report(sim::Metrics& m, sim::time_ns now) const {
  const double seconds = static_cast<double>(now - measure_start_ns_) / 1e9;
  report_records(m, vm(), records_, seconds);
  sim::report_flow(m, name(), flow_, now);
  for (std::size_t d = 0; d < disk_records_.size(); ++d)
    report_records(m, vm() + disk_prefix(s_.disks[d]), disk_records_[d], seconds);
  if (!per_job_) return;
  for (const Job& j : jobs_) {
    report_records(m, j.prefix, j.records, seconds);
    // The job's measured time: the jobs of another stonewall group ran in a simulation of their own.
    m.add(j.prefix + "simulated_ns", static_cast<double>(now - measure_start_ns_));
  }
}

// The scenario keys of fio in the guest (models/param.h: how a key is declared).
void fio_keys(std::vector<Param>& t) {
  auto add = [&](Param p) { t.push_back(std::move(p)); };
  const std::vector<std::string> rws{"read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"};
  add({"workload.rw", Kind::choice, "", "randread", "fio HOWTO rw", "I/O pattern, as fio's rw", rws, 0, 0,
       [](IoScenario& s, const Value& v) { set_rw(s, v.word == "readwrite" ? "rw" : v.word); }});
  add({"workload.rwmixread",
       Kind::integer,
       "%",
       "50",
       "fio HOWTO rwmixread",
       "share of reads in rw/randrw",
       {},
       0,
       100,
       [](IoScenario& s, const Value& v) {
         s.workload.rwmixread = static_cast<int>(v.number);
         set_rw(s, s.workload.rw);
       }});
  add({"workload.bs",
       Kind::size,
       "bytes",
       "4k",
       "fio HOWTO bs",
       "block size of every request",
       {},
       512,
       1 << 30,
       [](IoScenario& s, const Value& v) {
         s.workload.bs_read_bytes = s.workload.bs_write_bytes = static_cast<std::uint64_t>(v.number);
       }});
  add({"workload.bs_write",
       Kind::size,
       "bytes",
       "= bs",
       "fio HOWTO bs=r,w",
       "block size of writes when it differs",
       {},
       512,
       1 << 30,
       [](IoScenario& s, const Value& v) { s.workload.bs_write_bytes = static_cast<std::uint64_t>(v.number); }});
  add({"workload.iodepth",
       Kind::integer,
       "",
       "1",
       "fio HOWTO iodepth",
       "I/Os in flight per job (psync/sync: always 1)",
       {},
       1,
       65536,
       [](IoScenario& s, const Value& v) { s.workload.iodepth = static_cast<int>(v.number); }});
  add({"workload.numjobs",
       Kind::integer,
       "",
       "1",
       "fio HOWTO numjobs",
       "parallel fio jobs (processes)",
       {},
       1,
       4096,
       [](IoScenario& s, const Value& v) { s.workload.numjobs = static_cast<int>(v.number); }});
  add({"workload.ioengine", Kind::choice, "", "libaio", "fio HOWTO ioengine",
       "psync/sync/pvsync: one I/O at a time; libaio/io_uring: iodepth in flight", fio::modelled_ioengines(), 0, 0,
       [](IoScenario& s, const Value& v) {
         s.workload.ioengine_name = v.word;
         s.workload.ioengine = (v.word == "libaio" || v.word == "aio") ? FioEngine::libaio
                               : v.word == "io_uring"                  ? FioEngine::io_uring
                                                                       : FioEngine::psync;
       }});
  add({"workload.iodepth_batch_submit",
       Kind::integer,
       "",
       "1",
       "fio HOWTO iodepth_batch_submit",
       "I/Os fio submits per io_submit call (one kick per batch)",
       {},
       1,
       65536,
       [](IoScenario& s, const Value& v) { s.workload.iodepth_batch_submit = static_cast<int>(v.number); }});
  add({"workload.iodepth_batch_complete_min",
       Kind::integer,
       "",
       "1",
       "fio HOWTO iodepth_batch_complete_min; fio backend.c wait_for_completions",
       "completions fio waits for before it reaps any and refills the queue (its io_getevents min_nr); the wait is "
       "part of clat",
       {},
       1,
       65536,
       [](IoScenario& s, const Value& v) { s.workload.iodepth_batch_complete_min = static_cast<int>(v.number); }});
  add({"workload.iodepth_batch_complete_max",
       Kind::integer,
       "",
       "1",
       "fio HOWTO iodepth_batch_complete_max (defaults to iodepth_batch_complete_min)",
       "completions fio reaps at most in one go; below iodepth_batch_complete_min it is taken as that",
       {},
       1,
       65536,
       [](IoScenario& s, const Value& v) { s.workload.iodepth_batch_complete_max = static_cast<int>(v.number); }});
  add({"workload.direct",
       Kind::boolean,
       "",
       "true",
       "fio HOWTO direct",
       "O_DIRECT in the guest; the model simulates direct I/O only (false is accepted with a warning)",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.workload.direct = v.flag; }});
  add({"workload.thinktime",
       Kind::time_us,
       "us",
       "0",
       "fio HOWTO thinktime",
       "pause before each I/O of a job slot",
       {},
       0,
       1e15,
       [](IoScenario& s, const Value& v) { s.workload.thinktime_ns = v.number; }});
  add({"workload.rate_iops",
       Kind::real,
       "IOPS",
       "0",
       "fio HOWTO rate_iops, rate_process=poisson",
       "open loop: Poisson arrivals at this rate per job (0 = closed loop)",
       {},
       0,
       1e9,
       [](IoScenario& s, const Value& v) { s.workload.rate_iops = v.number; }});
  add({"workload.runtime",
       Kind::time_s,
       "s",
       "0 (use ios)",
       "fio HOWTO runtime",
       "simulated measurement time per replication",
       {},
       0,
       1e15,
       [](IoScenario& s, const Value& v) { s.workload.runtime_ns = static_cast<sim::time_ns>(v.number); }});
  add({"workload.ramp_time",
       Kind::time_s,
       "s",
       "0.02",
       "fio HOWTO ramp_time",
       "simulated warm-up, excluded from statistics",
       {},
       0,
       1e15,
       [](IoScenario& s, const Value& v) { s.workload.ramp_time_ns = static_cast<sim::time_ns>(v.number); }});
  add({"workload.ios",
       Kind::integer,
       "",
       "200000",
       "",
       "measured I/Os per replication when runtime is 0",
       {},
       1,
       1e13,
       [](IoScenario& s, const Value& v) { s.workload.ios = static_cast<std::uint64_t>(v.number); }});
  add({"workload.fio_job",
       Kind::text,
       "",
       "",
       "",
       "a fio job file (relative to this file); its options fill the workload keys not set here; several jobs are each modelled",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.workload.fio_job = v.word; }});
  // Facts of a recorded setup that the model does not use (yet): accepted so that measurement
  // manifests can describe their runs with them, and shown back to the reader.
  t.push_back(recorded_key("workload.size", Kind::size, "bytes per job (fio size)"));
  t.push_back(recorded_key("workload.tool", Kind::text, "the load generator when it is not fio (e.g. aio-stress)"));
  add({"workload.iodepth_batch",
       Kind::integer,
       "",
       "1",
       "fio HOWTO (alias of iodepth_batch_submit)",
       "I/Os per submit call",
       {},
       1,
       65536,
       [](IoScenario& s, const Value& v) { s.workload.iodepth_batch_submit = static_cast<int>(v.number); }});
}

}  // namespace vqsim::models
