#include "models/emulation_thread.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "models/aio_engine.h"
#include "models/guest_block.h"
#include "models/guest_driver.h"
#include "sim/erlang.h"

namespace vqsim::models {

EmulationThread::EmulationThread(sim::Simulator& sim, std::string name, IoTable& io, double submit_ns, double complete_ns,
                                 double cpu_cv, double poll_window_ns, bool always_polling, double per_page_ns, double wake_ns)
    : CoreTimedThread(sim, std::move(name)),
      io_(io),
      submit_ns_(submit_ns),
      complete_ns_(complete_ns),
      poll_window_ns_(poll_window_ns),
      per_page_ns_(per_page_ns),
      wake_ns_(wake_ns),
      always_polling_(always_polling),
      factor_(cpu_cv > 0 ? sim::Distribution::lognormal_mean_cv(1.0, cpu_cv) : sim::Distribution::deterministic(1.0)) {}

sim::time_ns EmulationThread::service_ns(sim::JobId job) {
  IoRequest& r = io_[job];
  double mean = complete_ns_;
  serving_submit_ = r.step == Step::host_submit;
  if (r.step == Step::irq_relay) {
    // One read of the notifier covers every completion signalled before it: a completion the
    // last read already covered rides along with that read's interrupt, at no cost of its own,
    // and so does one that set no notifier (its queue's signal was already on its way).
    r.relay_read = false;
    if (r.relay_rides || r.relay_signalled_ns <= last_read_ns_) return counted(0);
    last_read_ns_ = sim_.now();
    r.relay_read = true;
    // Raised as the pass begins: the read costs the wake-up alone, its work is the pass's rest.
    if (raise_first_) mean = 0;
  }
  if (r.step == Step::host_submit) {
    if (drain_ring_) {
      popping_disk_ = static_cast<std::uint32_t>(r.disk);
      popping_queue_ = r.queue;
      send_ahead([this](sim::JobId j) { return same_ring(io_[j]); });
    }
    const double pages = std::ceil(static_cast<double>(r.bytes) / 4096.0);
    mean = submit_ns_ + per_page_ns_ * std::max(0.0, pages - 1);
  }
  if (r.woke) mean += wake_ns_;
  const auto demand = static_cast<sim::time_ns>(mean * factor_.sample(rng_) + 0.5);
  return counted(demand);
}

void EmulationThread::accept(sim::JobId job, int in_port) {
  const bool woke = asleep();
  if (woke) holding_since_ns_ = sim_.now();
  if (!adaptive_) {
    CoreTimedThread::accept(job, in_port);
    return;
  }
  // aio_poll measures how long it waited (polling included) before this event and adjusts the
  // window for its next wait: an event found without waiting (the thread busy) is a wait of 0.
  const double waited = busy() == 0 && waiting() == 0 ? static_cast<double>(sim_.now() - idle_since_ns()) : 0.0;
  CoreTimedThread::accept(job, in_port);
  auto within = [this](double block) { return poll_ns_ > 0 && block <= poll_ns_; };  // the sweet spot
  auto adjust = [&](double block) {
    if (within(block)) return;
    if (block > poll_window_ns_)
      poll_ns_ = 0;
    else if (poll_ns_ < poll_window_ns_)
      poll_ns_ = next_window(poll_ns_);
  };
  if (notifier_set_ && !within(waited)) {
    // The round (or, at a window of 0, the wait) found nothing and the set notifier returned the
    // wait at once: the window moves as after a wait just past it, and what remains of this wait
    // is measured against the window it moved to.
    const double first = poll_ns_;
    notifier_set_ = false;
    poll_ns_ = next_window(first);
    adjust(waited - first);
  } else {
    adjust(waited);
  }
  if (aio_notifier_ && io_[job].step == Step::host_complete) notifier_set_ = !woke;
}

NotificationBatch::NotificationBatch(sim::Simulator& sim, std::string name, IoTable& io, VirtioBlkBatching mode)
    : sim::Component(sim, std::move(name)), io_(io), mode_(mode) {}

bool NotificationBatch::holds(const IoRequest& r) const noexcept {
  return mode_ == VirtioBlkBatching::all || (mode_ == VirtioBlkBatching::writes && r.dir == Direction::write);
}

void NotificationBatch::accept(sim::JobId job, int) {
  const Direction dir = io_[job].dir;
  if (!held_.empty() && (held_.size() == kMaxHeld || dir != held_dir_)) release();
  held_dir_ = dir;
  flow_.arrive(sim_.now());
  held_.push_back(Held{job, sim_.now()});
}

void NotificationBatch::end_of_notification() { release(); }

void NotificationBatch::release() {
  std::vector<Held> going;
  going.swap(held_);
  const sim::time_ns now = sim_.now();
  for (const Held& h : going) {
    flow_.depart(now, now - h.since);
    out.send(h.job);
  }
}

HostThreads::HostThreads(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io, sim::ProcessorSharingStation* cpu)
    : Stage(sim, std::move(vm), "host.threads"), io_(io), bounce_bytes_(hba_bounce_bytes(s)) {
  const DriverCosts driver = driver_costs(s);
  const double cv = s.host.cpu_cv;
  if (driver.uses_qemu_thread) {
    const AioEngine aio = aio_engine(s);
    const int n = std::max(1, s.host.iothreads);
    const double extra = s.host.iothreads == 0 ? s.host.main_loop_ns : 0.0;
    for (int t = 0; t < n; ++t) {
      const std::string tname =
          local(s.host.iothreads == 0 ? std::string("host.main_loop") : "host.iothread" + std::to_string(t));
      threads_.push_back(&sim.make<EmulationThread>(
          tname, io, driver.emu_submit_ns + aio.submit_ns + extra, driver.emu_complete_ns + extra, cv,
          s.host.iothreads > 0 ? s.host.poll_max_ns : 0.0, false, s.host.emu_per_page_ns, s.host.loop_wake_ns));
      if (s.host.poll_adaptive) threads_.back()->adapt_polling();
      if (s.host.drain_ring) threads_.back()->drain_ring();
      if (aio.poll_leaves_notifier) threads_.back()->keep_aio_notifier();
    }
    if (s.host.iothreads == 0) main_loop_ = threads_.front();
    // Under TCG there is no irqfd (virtio-pci's with_irqfd needs KVM): an IOThread's completion
    // sets the guest notifier, and the main loop's handler reads it and injects the interrupt.
    if (relays_interrupts(s)) {
      relay_ = &sim.make<EmulationThread>(local("host.main_loop"), io, 0.0, s.host.tcg_irq_relay_ns, cv, 0.0, false, 0.0,
                                          s.host.loop_wake_ns);
      relay_pass_ = s.host.tcg_relay_in_pass;
      if (relay_pass_) relay_->raise_first();
    }
    queues_ = std::max(1, s.queues());
    if (relay_ != nullptr && s.host.cores > 0 && cpu != nullptr) {
      slice_ns_ = s.host.sched_slice_ns;
      cores_ = s.host.cores;
    }
    if (relay_ != nullptr) {
      relay_held_.resize(threads_.size());
      relaying_.assign(std::max<std::size_t>(1, s.disks.size()) * static_cast<std::size_t>(queues_), 0);
    }
    if (bql_held_by_main_loop(s)) lock_holder_ = s.host.iothreads == 0 ? threads_.front() : relay_;
  } else if (s.guest.driver == GuestDriver::vhost_scsi) {
    threads_.push_back(&sim.make<EmulationThread>(local("host.vhost_worker"), io, 0.6 * s.host.vhost_worker_ns,
                                                  0.4 * s.host.vhost_worker_ns, cv, 0.0, false));
  } else {
    threads_.push_back(&sim.make<EmulationThread>(local("host.vhost_user"), io, 0.6 * s.host.vhost_user_ns,
                                                  0.4 * s.host.vhost_user_ns, cv, 0.0, true));
  }
  if (driver.uses_qemu_thread && s.guest.driver == GuestDriver::virtio_blk &&
      s.host.virtio_blk_batching != VirtioBlkBatching::none) {
    for (auto* th : threads_) {
      auto& b = sim.make<NotificationBatch>(th->name() + ".batch", io, s.host.virtio_blk_batching);
      sim::connect(b.out, *this, kBatchReleased);
      batches_.push_back(&b);
    }
    submits_queued_.assign(threads_.size(), 0);
  }
  // A vhost-user backend polls on cores of its own.
  if (s.host.cores > 0 && cpu != nullptr && s.guest.driver != GuestDriver::vhost_user_blk) cpu_ = cpu;
  for (auto* th : every_thread()) {
    sim::connect(th->out, *this, kThreadDone);
    if (cpu_ != nullptr) {
      th->use_cpu(*cpu_);
      th->count_host_cores();
    }
  }
}

void HostThreads::connected(const sim::Port& port) {
  if (&port == &submitted)
    for (NotificationBatch* batch : batches_) sim::connect(batch->out, *port.to, port.in_port);
}

void HostThreads::accept(sim::JobId job, int in_port) {
  IoRequest& r = io_[job];
  switch (static_cast<In>(in_port)) {
    case kSubmit:
    case kComplete: {
      r.step = in_port == kSubmit ? Step::host_submit : Step::host_complete;
      if (in_port == kSubmit) r.chunks = static_cast<std::uint32_t>(hba_chunks(bounce_bytes_, r.bytes));
      if (in_port == kSubmit && !batches_.empty()) ++submits_queued_[static_cast<std::size_t>(r.thread)];
      EmulationThread& th = *threads_[r.thread];
      // Asleep in its poll (not working, past its polling window): this request pays the wake.
      r.woke = th.asleep();
      // A kick or a completion that wakes the sleeping main loop: its handler runs, then the
      // timers that expired while it slept (aio_dispatch: handlers, then timers).
      const bool wakes = timers_ != nullptr && &th == main_loop_ && !th.awake();
      th.accept(job, 0);
      if (wakes) timers_->loop_woke(th);
      break;
    }
    case kThreadDone:
      // The thread the relay waits behind ended its pass: it polls now, and may sleep before its slice ends.
      if (gated_ && static_cast<std::size_t>(r.thread) == gate_holder_ && threads_[gate_holder_]->sleeps_at_ns() >= 0)
        watch_gate();
      if (r.step == Step::host_complete && relay_ != nullptr) {
        // The IOThread sets the notifier once per pass, in a bottom half after its handlers
        // (virtio-blk's batch_notify_vqs): its completions wait until it runs out of work.
        const auto t = static_cast<std::size_t>(r.thread);
        relay_held_[t].push_back(job);
        const EmulationThread& th = *threads_[t];
        if (th.busy() > 0 || th.waiting() > 0) break;
        std::vector<sim::JobId> going;
        going.swap(relay_held_[t]);
        for (const sim::JobId j : going) {
          IoRequest& h = io_[j];
          int& relaying = relaying_[relay_slot(h)];
          // QEMU signals only a completion that passes the guest's used_event (virtio_should_notify):
          // while the queue's interrupt is on its way or its handler drains the ring, the
          // completion is on the used ring for that interrupt to take, with no signal. If the
          // signal is still in the relay, the completion goes with it.
          const bool rides = relaying > 0;
          if (!rides && !armed(h)) {
            completed.send(j);
            continue;
          }
          ++relaying;
          h.step = Step::irq_relay;
          h.relay_rides = rides;
          h.relay_signalled_ns = sim_.now();
          h.woke = !rides && relay_->asleep();
          if (!gated_ && slice_ns_ > 0 && h.woke && relay_finds_cores_held(t)) close_gate(t);
          to_relay(j);
        }
      } else if (r.step == Step::irq_relay) {
        --relaying_[relay_slot(r)];
        r.relay_rides = false;
        // The handler raised the interrupt as the relay's pass began (host.tcg_relay_in_pass): the
        // pass goes on, holding the big lock, for the relay's work: a piece of work of its own, with
        // no request (its job is released when it ends).
        if (r.relay_read && relay_pass_) {
          const sim::JobId rest = sim_.jobs().allocate(sim_.now());
          IoRequest& p = io_[rest];  // (may move the table: `r` is not used after this)
          p = IoRequest{};
          p.step = Step::relay_pass;
          relay_->accept(rest, 0);
        }
        completed.send(job);
      } else if (r.step == Step::relay_pass) {
        sim_.jobs().release(job);
      } else if (r.step != Step::host_submit) {
        completed.send(job);
      } else if (batches_.empty()) {
        submitted.send(job);
      } else {
        const auto t = static_cast<std::size_t>(r.thread);
        const bool last = --submits_queued_[t] == 0;  // the ring is empty: the handler returns
        NotificationBatch& batch = *batches_[t];
        if (batch.holds(r))
          batch.accept(job, 0);
        else
          submitted.send(job);
        if (last) batch.end_of_notification();
      }
      break;
    case kBatchReleased:
      submitted.send(job);
      break;
  }
}

bool HostThreads::relay_finds_cores_held(std::size_t t) const {
  // The work running on host.cpu (a vCPU's, another thread's) holds a core each; so does every
  // emulation thread polling with no work (the one that woke the relay among them).
  std::size_t held = cpu_ != nullptr ? cpu_->present() : 0;
  for (std::size_t k = 0; k < threads_.size(); ++k)
    if (k == t || (threads_[k]->awake() && threads_[k]->busy() == 0)) ++held;
  return held >= static_cast<std::size_t>(cores_);
}

void HostThreads::to_relay(sim::JobId job) {
  if (!gated_) {
    relay_->accept(job, 0);
    return;
  }
  // One wake-up for the wait's jobs: the first's, whatever came after it.
  if (!gated_jobs_.empty()) io_[job].woke = false;
  gated_jobs_.push_back(job);
}

void HostThreads::watch_gate() {
  const EmulationThread& holder = *threads_[gate_holder_];
  sim::time_ns at = gate_slice_end_ns_;
  if (const sim::time_ns sleeps = holder.sleeps_at_ns(); sleeps >= 0) at = std::min(at, std::max(sleeps, sim_.now()));
  sim_.schedule_at(at, this, kGateLook, ++gate_look_);
}

void HostThreads::close_gate(std::size_t t) {
  gated_ = true;
  gate_holder_ = t;
  gate_since_ns_ = sim_.now();
  // Its slice runs from its last wake-up, renewed while no one else waits for its core.
  const sim::time_ns held = threads_[t]->holding_since_ns();
  const auto slice = static_cast<sim::time_ns>(slice_ns_);
  gate_slice_end_ns_ = held + slice * ((sim_.now() - held) / slice + 1);
  watch_gate();
}

void HostThreads::open_gate() {
  gated_ = false;
  ++gate_waits_;
  gate_wait_ns_ += static_cast<double>(sim_.now() - gate_since_ns_);
  std::vector<sim::JobId> going;
  going.swap(gated_jobs_);
  for (const sim::JobId j : going) relay_->accept(j, 0);
}

void HostThreads::handle(std::uint32_t kind, std::uint64_t payload) {
  if (kind != kGateLook) {
    Stage::handle(kind, payload);
    return;
  }
  if (!gated_ || payload != gate_look_) return;  // a later look replaced it
  if (sim_.now() >= gate_slice_end_ns_ || threads_[gate_holder_]->asleep()) {
    open_gate();
    return;
  }
  // Still holding its core: polling on, or working (its pass's end looks again).
  watch_gate();
}

void HostThreads::reset_statistics(sim::time_ns now) {
  Stage::reset_statistics(now);
  gate_waits_ = 0;
  gate_wait_ns_ = 0;
  stats_since_ns_ = now;
}

void HostThreads::report(sim::Metrics& m, sim::time_ns now) const {
  Stage::report(m, now);
  if (slice_ns_ <= 0 || now <= stats_since_ns_) return;
  // How often the relay, woken, waited for a core, and for how long on average.
  m.add(relay_->name() + ".core_waits_per_s",
        static_cast<double>(gate_waits_) * 1e9 / static_cast<double>(now - stats_since_ns_));
  m.add(relay_->name() + ".core_wait_us", gate_waits_ > 0 ? gate_wait_ns_ / static_cast<double>(gate_waits_) / 1e3 : 0.0);
}

void HostThreads::signals_to(std::size_t disk, const InterruptArming& arming) {
  if (arming_.size() <= disk) arming_.resize(disk + 1, nullptr);
  arming_[disk] = &arming;
}

bool HostThreads::armed(const IoRequest& r) const {
  return r.disk >= arming_.size() || arming_[r.disk] == nullptr || arming_[r.disk]->armed(r);
}

std::size_t HostThreads::relay_slot(const IoRequest& r) const {
  return static_cast<std::size_t>(r.disk) * static_cast<std::size_t>(queues_) + r.queue % queues_;
}

void HostThreads::validate() const {
  sim::require_connected(*this, submitted, "submitted");
  sim::require_connected(*this, completed, "completed");
}

std::vector<EmulationThread*> HostThreads::every_thread() const {
  std::vector<EmulationThread*> all = threads_;
  if (relay_ != nullptr) all.push_back(relay_);
  return all;
}

void HostThreads::stations(std::vector<StageInfo>& out) const {
  for (const EmulationThread* th : every_thread()) out.push_back({th->name(), "host", 1});
}

void HostThreads::draw(StageGraph& g) const {
  for (const EmulationThread* th : every_thread()) {
    g.nodes.push_back({th->name(), "host", "station", 1});
    if (cpu_ != nullptr) g.edges.push_back({th->name(), cpu_->name(), "runs on", true});
  }
  if (relay_ != nullptr)
    for (const EmulationThread* th : threads_) g.edges.push_back({th->name(), relay_->name(), "guest notifier"});
}

std::vector<PortEnd> HostThreads::entry(int) const {
  std::vector<PortEnd> ends;
  for (const EmulationThread* th : threads_) ends.push_back({th->name(), ""});
  return ends;
}

std::vector<PortEnd> HostThreads::exits(const sim::Port& port) const {
  std::vector<PortEnd> ends;
  if (&port == &completed && relay_ != nullptr) return {{relay_->name(), "inject"}};
  for (const EmulationThread* th : threads_) ends.push_back({th->name(), &port == &submitted ? "submit" : "irqfd"});
  return ends;
}

namespace {
// A QEMU emulation thread's own work per request (the MVA's mean request): its submit visit
// (the device's handler, the AIO submit, the pages beyond the first) and its completion visit;
// the main loop serving the device pays its extra on each.
std::pair<double, double> qemu_thread_visits_ns(const IoScenario& s) {
  const DriverCosts drv = driver_costs(s);
  const AioEngine aio = aio_engine(s);
  const double extra = s.host.iothreads == 0 ? s.host.main_loop_ns : 0.0;
  const double submit = drv.emu_submit_ns + aio.submit_ns + extra +
                        s.host.emu_per_page_ns * std::max(0.0, std::ceil(s.workload.mean_bytes() / 4096.0) - 1);
  return {submit, drv.emu_complete_ns + extra};
}
}  // namespace

void host_thread_demands(const MvaInputs& in, std::vector<MvaDemand>& out) {
  const IoScenario& s = in.s;
  const auto& w = s.workload;
  const DriverCosts drv = driver_costs(s);
  double submit = 0, complete = 0;
  double woken = 0;  // per request: visits that find the thread asleep in its poll
  int n = 1;
  std::string base = "host.main_loop";
  if (drv.uses_qemu_thread) {
    n = std::max(1, s.host.iothreads);
    std::tie(submit, complete) = qemu_thread_visits_ns(s);
    // The wake from the thread's poll: a kick that finds it asleep, and a completion that does
    // (a null device without latency completes within the pass that submitted it).
    const bool async_completion = !(s.backend.kind == BackendKind::null && s.backend.latency_ns <= 0);
    woken = in.p_wake * (async_completion ? 2.0 : 1.0);
    if (s.host.loop_wake_ns > 0) {
      submit += s.host.loop_wake_ns * in.p_wake;
      if (async_completion) complete += s.host.loop_wake_ns * in.p_wake;
    }
    if (s.host.iothreads > 0) base = "host.iothread";
  } else if (s.guest.driver == GuestDriver::vhost_scsi) {
    submit = s.host.vhost_worker_ns;
    base = "host.vhost_worker";
  } else {
    submit = s.host.vhost_user_ns;
    base = "host.vhost_user";
  }
  // Queues are spread round robin over the threads; with fewer queues than threads some idle.
  const int used = std::min(n, s.queues());
  for (int t = 0; t < used; ++t) {
    MvaDemand d{n == 1 ? base : base + std::to_string(t), sim::MvaStationKind::Queue, 1, (submit + complete) / used};
    d.host_thread = true;
    d.wakes = woken / used;
    out.push_back(d);
  }
  // TCG with IOThreads: the main loop relays their interrupts. An IOThread signals once per pass
  // over its work: a completion that finds it busy with others (by the arrival theorem (n - 1) / n
  // of its utilization u, n requests in flight) joins the pass, b = 1 / (1 - seen u) completions
  // a signal. And it signals only while the guest is armed (virtio_should_notify): one signal an
  // interrupt, so at most the interrupts' share of the completions (in.irq_share). A signal is
  // read by a read of its own unless another queue's is pending (a queue's own signals wait for
  // its interrupt): with signals at x per ns over q queues and a read taking r, the share that
  // lead is 1 / (1 + seen x (q - 1) / q r) (the fixed point of lead = 1 - busy, busy = x' lead r);
  // a leader finds the loop asleep as often as it idles.
  if (relays_interrupts(s)) {
    const double relay = s.host.tcg_irq_relay_ns;
    const double n = w.rate_iops > 0 ? 0.0 : static_cast<double>(w.numjobs) * plug_merged_requests_per_job(s);
    const double seen = seen_by_arrival(n);
    const double batch = 1.0 / std::max(0.05, 1.0 - seen * std::clamp(in.u_thread, 0.0, 1.0));
    const double signals = std::min(1.0 / batch, std::clamp(in.irq_share, 0.0, 1.0));  // per completion
    const double x = in.x_thread_per_ns * used * signals;                              // signals per ns
    const double q = queues_in_use(s);
    const double lead = 1.0 / (1.0 + seen * x * (q - 1) / q * relay);
    const double asleep = std::clamp(1.0 - x * lead * relay, 0.0, 1.0);
    MvaDemand d{"host.main_loop", sim::MvaStationKind::Queue, 1, lead * signals * (relay + s.host.loop_wake_ns * asleep)};
    d.core_work = true;
    d.wakes = lead * signals * asleep;
    out.push_back(d);
  }
}

bool relays_interrupts(const IoScenario& s) {
  return driver_costs(s).uses_qemu_thread && s.host.iothreads > 0 && s.host.accel == Accel::tcg && s.host.tcg_irq_relay_ns > 0;
}

RelayPass relay_pass(const IoScenario& s) {
  if (!relays_interrupts(s) || !s.host.tcg_relay_in_pass || !bql_held_by_main_loop(s)) return {};
  const double rest = s.host.tcg_irq_relay_ns, mean = s.vq.irq_ns;
  if (!(rest > 0)) return {};
  if (!(mean > 0)) return {1.0, rest};
  // L lognormal with mean `mean` and cv 0.5: ln L ~ N(mu, sigma^2). E[(R - L)+] is a put's value:
  // R Phi(-d2) - E[L] Phi(-d1), d1 = (ln(E[L] / R) + sigma^2 / 2) / sigma, d2 = d1 - sigma.
  const double sigma = std::sqrt(std::log1p(0.25));
  const auto phi = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  const double d1 = (std::log(mean / rest) + sigma * sigma / 2) / sigma, d2 = d1 - sigma;
  return {phi(-d2), std::max(0.0, rest * phi(-d2) - mean * phi(-d1))};
}

double relay_window_ns(const IoScenario& s, double u_thread) {
  if (!relays_interrupts(s)) return 0.0;
  // The IOThread signals after its pass (the bottom half): the rest of the pass, an M/M/1 busy
  // period's residual u S / (1 - u) with S its work per request; then the main loop's wake-up and
  // read, and its work before the interrupt is raised, or, raised as its pass begins
  // (host.tcg_relay_in_pass), the part of the pass's rest that outlasts the injection.
  const auto [submit, complete] = qemu_thread_visits_ns(s);
  const double u = std::clamp(u_thread, 0.0, 0.9);
  const double relay = s.host.tcg_relay_in_pass ? relay_pass(s).wait_ns : s.host.tcg_irq_relay_ns;
  return (submit + complete) * u / (1 - u) + relay + s.host.loop_wake_ns;
}

bool bql_held_by_main_loop(const IoScenario& s) {
  if (s.host.accel != Accel::tcg || !s.host.tcg_bql || !driver_costs(s).uses_qemu_thread) return false;
  return s.host.iothreads == 0 || relays_interrupts(s);
}

double bql_wait_ns(const IoScenario& s, double u, double demand_ns) {
  // With IOThreads the main loop's passes only relay interrupts, which the MVA's relay already
  // batches (host_thread_demands): the estimate is for the main loop that serves the device.
  if (!bql_held_by_main_loop(s) || s.host.iothreads > 0 || !(u > 0) || !(demand_ns > 0)) return 0;
  // A taking at a random instant finds a pass with probability u and waits for the rest of it:
  // the loop, an M/M/1 at u serving in gated passes (sim::FcfsStation's passes).
  const double visit = demand_ns / 2;  // a request visits it twice: its submit and its completion
  const double busy = std::min(u, 0.9);
  return sim::mm1_gated_pass_residual(busy / visit, 1 / visit);
}

double bql_wait_probability(const IoScenario& s, double u, double demand_ns) {
  // With IOThreads the main loop's passes relay interrupts (relays_interrupts): a taking finds one
  // as often, though the wait itself is left to the relay's batching.
  if (!bql_held_by_main_loop(s) || !(u > 0) || !(demand_ns > 0)) return 0;
  return std::min(u, 0.9);
}

double main_loop_popping(const IoScenario& s, double u) {
  const auto [submit, complete] = qemu_thread_visits_ns(s);
  return std::clamp(u, 0.0, 1.0) * (submit + complete > 0 ? submit / (submit + complete) : 0.0);
}

// The scenario keys of the host threads (and the QEMU process they run in) (models/param.h: how a key is declared).
void host_thread_keys(std::vector<Param>& t) {
  auto add = [&](Param p) { t.push_back(std::move(p)); };
  add({"host.iothreads",
       Kind::integer,
       "",
       "0",
       "QEMU docs/devel/multiple-iothreads.txt",
       "0 = QEMU main loop (BQL); N = IOThreads, virtqueues mapped round robin (iothread-vq-mapping)",
       {},
       0,
       1024,
       [](IoScenario& s, const Value& v) { s.host.iothreads = static_cast<int>(v.number); }});
  add({"host.virtio_blk_batching",
       Kind::choice,
       "",
       "none; by qemu_version",
       "QEMU hw/block/virtio-blk.c (multiwrite up to 2.2, multireq since 2.3, commit 95f7142abc86); docs/sources.md §8",
       "virtio-blk: requests popped in one notification wait for its last one before submission: none, writes (QEMU <= 2.2: "
       "writes "
       "wait, reads go at once), all (QEMU >= 2.3: every request, until the direction changes); none without a qemu_version",
       {"none", "writes", "all"},
       0,
       0,
       [](IoScenario& s, const Value& v) {
         s.host.virtio_blk_batching = pick<VirtioBlkBatching>(
             {"none", "writes", "all"}, {VirtioBlkBatching::none, VirtioBlkBatching::writes, VirtioBlkBatching::all}, v.word);
       }});
  add({"host.poll_adaptive",
       Kind::boolean,
       "",
       "true",
       "QEMU util/aio-posix.c aio_poll (the adjustment of poll_ns after each wait, since 2.9); docs/sources.md §4",
       "the IOThread's polling window follows QEMU's adjustment (from 0, 4 us, doubling while its waits are shorter "
       "than host.poll_max_us, back to 0 after a longer one); false keeps it at host.poll_max_us",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.host.poll_adaptive = v.flag; }});
  add({"host.poll_max_us",
       Kind::time_us,
       "us",
       "32.768; by qemu_version",
       "QEMU iothread.h IOTHREAD_POLL_MAX_NS_DEFAULT; poll-max-ns since 2.9 (qapi/misc.json); docs/sources.md §4, §8",
       "IOThread adaptive polling window (the main loop does not poll); QEMU < 2.9: 0 (no polling)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.poll_max_ns = v.number; }});
  add({"host.emu_submit_us",
       Kind::time_us,
       "us",
       "by driver",
       "docs/sources.md §4 (~3.2 us per request for a 2022 IOThread)",
       "emulation-thread CPU per request on submit (virtio-blk 2.0, virtio-scsi 3.0, scsi-hba 12)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.emu_submit_ns = v.number; },
       [](const IoScenario& s) { return models::driver_costs(s).emu_submit_ns / s.host.cpu_scale / 1e3; }});
  add({"host.emu_complete_us",
       Kind::time_us,
       "us",
       "by driver",
       "[I] docs/sources.md §4",
       "emulation-thread CPU per completion (virtio-blk 1.3, virtio-scsi 2.0, scsi-hba 8)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.emu_complete_ns = v.number; },
       [](const IoScenario& s) { return models::driver_costs(s).emu_complete_ns / s.host.cpu_scale / 1e3; }});
  add({"host.main_loop_us",
       Kind::time_us,
       "us",
       "1.5",
       "[I] docs/sources.md §4 (BQL shared with vCPU exits)",
       "extra per request when the main loop serves the device",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.main_loop_ns = v.number; },
       [](const IoScenario& s) { return s.host.main_loop_ns / s.host.cpu_scale / 1e3; }});
  add({"host.loop_wake_us",
       Kind::time_us,
       "us",
       "0",
       "docs/sources.md §1 (the lab's per-thread CPU time measures ~4 us in KVM terms; off by default until the "
       "MVA estimates how often it is paid on shared cores)",
       "emulation-thread CPU per wake from its poll (ppoll's return, one pass over its handlers): paid by the kick or "
       "completion that finds the thread asleep; at depth the thread is busy or polling and skips it",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.loop_wake_ns = v.number; },
       [](const IoScenario& s) { return s.host.loop_wake_ns / s.host.cpu_scale / 1e3; }});
  add({"host.tcg_irq_relay_us",
       Kind::time_us,
       "us",
       "10.7",
       "QEMU hw/virtio/virtio.c virtio_queue_set_guest_notifier_fd_handler, hw/virtio/virtio-pci.c (with_irqfd needs "
       "KVM); docs/sources.md §1 (the lab's threads recording: 10.7 us in vqsim's host-cost terms)",
       "under host.accel = tcg with IOThreads: the main loop's CPU per interrupt it relays. Without KVM's irqfd an "
       "IOThread's completion sets the guest notifier, which the main loop reads and injects (one read covers every "
       "completion signalled before it; QEMU signals only while the guest is armed, so a queue's completions wait "
       "for its interrupt on its way without a read of their own); no effect under kvm or without IOThreads; 0 = off",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.tcg_irq_relay_ns = v.number; },
       [](const IoScenario& s) { return s.host.tcg_irq_relay_ns / s.host.cpu_scale / 1e3; }});
  add({"host.tcg_bql",
       Kind::boolean,
       "",
       "true",
       "QEMU accel/tcg/cpu-exec.c cpu_handle_interrupt (qemu_mutex_lock_iothread), accel/tcg/cputlb.c "
       "prepare_mmio_access, util/main-loop.c os_host_main_loop_wait; docs/sources.md §4 (the lab's irqtrace recording)",
       "under host.accel = tcg: the vCPU takes the big QEMU lock for its notify write (a kick) and to take an "
       "interrupt, and the main loop holds it for its whole pass (serving the device, or relaying an IOThread's "
       "interrupts): such work of the vCPU waits, off CPU, for the pass to end, and an interrupt raised in a pass "
       "reaches the guest after it with every completion of the pass; no effect under kvm",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.host.tcg_bql = v.flag; }});
  add({"host.drain_ring",
       Kind::boolean,
       "",
       "true",
       "QEMU hw/block/virtio-blk.c virtio_blk_handle_output (2.0) / virtio_blk_handle_vq: virtqueue_pop in a loop until "
       "the ring is empty, then the held requests are submitted; hw/scsi/virtio-scsi.c virtio_scsi_handle_cmd the same "
       "loop; docs/sources.md §4 ('A handler drains its ring')",
       "the emulation thread's handler pops every request on the virtqueue before it returns: once it starts on a "
       "submit, the submits already waiting for that queue, and those the guest adds while it pops, go ahead of its "
       "other work (completions). With host.virtio_blk_batching a held request waits for that loop only. false: the "
       "thread takes submits and completions in arrival order, and a held request waits until no submit is queued",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.host.drain_ring = v.flag; }});
  add({"host.tcg_irq_stall",
       Kind::boolean,
       "",
       "true",
       "QEMU accel/tcg/cpu-exec.c cpu_handle_interrupt (qemu_mutex_lock_iothread when an interrupt is pending); "
       "docs/sources.md §4 ('An AIO completion's interrupt and the rest of the main loop's pass': the lab's vCPU "
       "sleeps per I/O at depth)",
       "under host.accel = tcg with host.tcg_bql: an interrupt raised while the lock's holder is in a pass stops its "
       "vCPU until the pass ends, when it comes: a vCPU running a request's work loses the rest of the pass and pays "
       "host.tcg_lock_wake_us, an idle one wakes and blocks (one more sleep either way); the interrupt's work then takes "
       "no lock. false: the interrupt's work waits for the lock when the vCPU reaches it",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.host.tcg_irq_stall = v.flag; }});
  add({"host.tcg_relay_in_pass",
       Kind::boolean,
       "",
       "true",
       "QEMU util/main-loop.c os_host_main_loop_wait and main_loop_wait (the guest notifier's handler runs inside "
       "glib_pollfds_poll's dispatch; the lock is dropped only before the next poll) and accel/tcg/cpu-exec.c "
       "cpu_handle_interrupt; docs/sources.md §4 ('A relayed interrupt and the rest of the main loop's pass': the lab's "
       "vCPU sleeps per main loop wake behind an IOThread)",
       "under host.accel = tcg with IOThreads and host.tcg_irq_relay_us: the main loop's relay raises the interrupt "
       "as its handler runs, at the start of its pass (after its wake-up), and holds the big lock for the rest "
       "(host.tcg_irq_relay_us): with host.tcg_irq_stall a vCPU running a request's work stops until that pass ends "
       "and pays host.tcg_lock_wake_us; an idle one takes the interrupt when the pass ends, with no sleep beyond its "
       "halt's. false: the relay raises it at the end of its work, outside any pass",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.host.tcg_relay_in_pass = v.flag; }});
  add({"host.sched_slice_us",
       Kind::time_us,
       "us",
       "0",
       "Linux kernel/sched/fair.c (sysctl_sched_base_slice 0.75 ms times 1 + log2 of the CPUs; RUN_TO_PARITY since "
       "6.6, 'sched/eevdf: Curb wakeup-preemption'); docs/sources.md §4 ('TCG's interrupt relay': the lab's relay waits "
       "behind the IOThread that woke it, calibration/data/lab-2026-12-07)",
       "under host.accel = tcg with IOThreads and host.cores: the host scheduler's slice. The main loop, woken to relay "
       "an IOThread's interrupt while every core is held (the work on the cores, and each emulation thread polling "
       "with nothing to do, the waking IOThread among them), waits on that IOThread's core until it sleeps or its "
       "slice ends. Linux 6.6 and later: 750 x (1 + log2 of the cores, at most 8) us, 1500 on 2 cores; 0 = off (a "
       "woken thread takes its share of the cores at once). Not in the MVA",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.sched_slice_ns = v.number; },
       [](const IoScenario& s) { return s.host.sched_slice_ns / 1e3; }});
  add({"host.main_loop_timer_us",
       Kind::time_us,
       "us",
       "1000",
       "QEMU util/async.c aio_ctx_prepare: the main loop's AioContext timeout in whole ms, rounded up "
       "(qemu_timeout_ns_to_ms); docs/sources.md §4",
       "granularity of the main loop's timers (a null device's latency-ns): a timer that expires while the main loop "
       "sleeps runs when the sleep's timeout, rounded up to whole granules, ends or another event wakes the loop; "
       "IOThreads wait in ns; 0 = exact",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.main_loop_timer_ns = v.number; },
       [](const IoScenario& s) { return s.host.main_loop_timer_ns / 1e3; }});
  add({"host.emu_per_page_us",
       Kind::time_us,
       "us",
       "0.1",
       "[I] QEMU maps each descriptor segment (address_space_map) on pop",
       "emulation-thread CPU per 4 KiB page of a request beyond the first (large requests cost more)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.emu_per_page_ns = v.number; },
       [](const IoScenario& s) { return s.host.emu_per_page_ns / s.host.cpu_scale / 1e3; }});
  add({"host.vhost_worker_us",
       Kind::time_us,
       "us",
       "2.0",
       "docs/sources.md §4 (vhost-scsi worker saturates ~510k IOPS)",
       "kernel vhost worker time per request",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.vhost_worker_ns = v.number; },
       [](const IoScenario& s) { return s.host.vhost_worker_ns / s.host.cpu_scale / 1e3; }});
  add({"host.vhost_user_us",
       Kind::time_us,
       "us",
       "1.0",
       "[I] polling user-space backend",
       "vhost-user-blk backend time per request",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.vhost_user_ns = v.number; }});
  add({"host.cpu_cv",
       Kind::real,
       "",
       "0.5",
       "[I]",
       "coefficient of variation of host CPU costs (lognormal)",
       {},
       0,
       10,
       [](IoScenario& s, const Value& v) { s.host.cpu_cv = v.number; },
       [](const IoScenario& s) { return s.host.cpu_cv; }});
  add({"host.cpu_scale",
       Kind::real,
       "",
       "1",
       "calibration",
       "multiplies every host CPU cost (emulation, main loop, AIO submit and hand-off, vhost, page cache, librbd messenger)",
       {},
       1e-3,
       1e3,
       [](IoScenario& s, const Value& v) { s.host.cpu_scale = v.number; },
       [](const IoScenario& s) { return s.host.cpu_scale; }});
  add({"host.qemu_version",
       Kind::text,
       "",
       "",
       "docs/sources.md §8",
       "QEMU's version as `qemu-system-x86_64 --version` prints it (\"2.4.0\", \"7.2.22\"); it sets the keys whose default "
       "says "
       "'by qemu_version' (guest.num_queues, guest.queue_size, host.poll_max_us, host.virtio_blk_batching) and rejects "
       "features it "
       "predates (aio=io_uring before 5.0, virtio-scsi IOThreads before 2.4; several IOThreads per device before 9.0 warn)",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.host.qemu_version = v.word; }});
}

}  // namespace vqsim::models
