#include "models/guest_cpu.h"

#include <algorithm>
#include <cmath>

#include "models/emulation_thread.h"
#include "models/guest_block.h"
#include "models/guest_driver.h"
#include "models/virtqueue.h"

namespace vqsim::models {

double extra_pages(double bytes, double ios) { return std::max(0.0, std::ceil(bytes / 4096.0) - ios); }

double vcpu_background_share(const IoScenario& s) {
  return s.host.accel == Accel::tcg && !s.bare_metal() ? s.host.tcg_vcpu_busy : 0.0;
}

namespace {
// A vCPU's wake-ups: from a halt (KVM's guest.wake_us; under TCG the vCPU thread's own,
// host.tcg_wake_us, in place of it) and, under TCG, after a wait for the big lock.
struct WakeCosts {
  double halt = 0, lock = 0;
};
WakeCosts wake_costs(const IoScenario& s) {
  if (s.bare_metal()) return {};  // bare metal has no vCPU to wake
  if (s.host.accel == Accel::tcg && s.host.tcg_wake_ns > 0) return {s.host.tcg_wake_ns, s.host.tcg_lock_wake_ns};
  return {s.guest.wake_ns, 0.0};
}
}  // namespace

FioWorkSplit fio_work_split(const IoScenario& s) {
  FioWorkSplit w;
  w.outside = std::clamp(s.guest.fio_outside_ns, 0.0, s.guest.fio_submit_ns + s.guest.fio_complete_ns);
  w.complete = std::max(0.0, s.guest.fio_complete_ns - w.outside);
  w.submit = s.guest.fio_submit_ns - std::max(0.0, w.outside - s.guest.fio_complete_ns);
  return w;
}

GuestCpuCosts guest_cpu_costs(const IoScenario& s) {
  const bool bare = s.bare_metal();
  const DriverCosts driver = driver_costs(s);
  const BlockLayer block = block_layer(s);
  const FioWorkSplit fio = fio_work_split(s);
  GuestCpuCosts costs;
  costs.per_io_submit = fio.submit;
  costs.per_request_submit = block.submit_extra_ns + driver.submit_ns;
  costs.per_io_complete = fio.complete;
  costs.per_io_outside = fio.outside;
  costs.per_request_complete = driver.complete_ns;
  costs.per_page = s.guest.per_page_ns;
  // One notify per io_submit call: with iodepth_batch_submit = b, the exit is shared by b I/Os.
  costs.kick_exit = bare ? 0.0 : s.vq.kick_exit_ns / std::max(1, s.workload.iodepth_batch_submit);
  costs.irq_handler = bare ? 0.0 : interrupt_cost_ns(s);
  // The wake-up of a halted vCPU (the default's source is a VM's), and TCG's after the lock.
  const WakeCosts wakes = wake_costs(s);
  costs.wake = wakes.halt;
  costs.lock_wake = wakes.lock;
  costs.halt_after = bare ? 0.0 : s.guest.halt_after_ns;
  costs.cv = s.guest.cpu_cv;
  costs.background = vcpu_background_share(s);
  costs.submit_first = s.guest.fio_submit_first;
  costs.irq_stall = s.host.tcg_irq_stall;
  return costs;
}

FioThread::FioThread(sim::Simulator& sim, std::string name, IoTable& io, GuestCpuCosts costs, const KickPolicy* kick)
    : CoreTimedThread(sim, std::move(name)),
      io_(io),
      c_(costs),
      factor_(costs.cv > 0 ? sim::Distribution::lognormal_mean_cv(1.0, costs.cv) : sim::Distribution::deterministic(1.0)),
      kick_(kick) {}

void FioThread::accept(sim::JobId job, int in_port) {
  if (c_.halt_after > 0 && CoreTimedThread::asleep())
    counted_off_station(std::min(c_.halt_after, static_cast<double>(sim_.now() - idle_since_ns())));
  CoreTimedThread::accept(job, in_port);
}

sim::time_ns FioThread::service_ns(sim::JobId job) {
  IoRequest& r = io_[job];
  const double ios = static_cast<double>(r.ios);
  // Each I/O's pages beyond its first: pinned on submit, released (and dirtied) on completion.
  const double half_pages = 0.5 * c_.per_page * extra_pages(r.bytes, r.ios);
  double ns = half_pages, outside = 0;
  if (r.step == Step::guest_submit) {
    ns += c_.per_io_submit * ios + c_.per_request_submit;
    if (kick_ != nullptr && kick_->kick_needed(r)) ns += c_.kick_exit;
  } else {
    ns += c_.per_io_complete * ios;
    // Done in the interrupt's handler already where it stopped the thread's work (handler_preempts).
    if (!r.in_handler) ns += c_.per_request_complete + (r.irq_leader ? c_.irq_handler : 0.0);
    if (r.woke) ns += c_.wake;
    ns += c_.lock_wake * idle_lock_wakes_;
    idle_lock_wakes_ = 0;
    // fio's accounting, after the completion's timestamp (and the next I/O's preparation, before
    // its own): the last of this work, outside the latency (GuestThreads::accept stamps before it).
    outside = c_.per_io_outside * ios;
  }
  if (r.lock_woke) ns += c_.lock_wake;
  lock_wait_ = false;
  const double factor = factor_.sample(rng_);
  const auto demand = static_cast<sim::time_ns>((ns + outside) * factor + 0.5);
  counted(demand);
  const double stretch = background_stretch();
  r.outside_ns = static_cast<sim::time_ns>(std::min(outside * factor, static_cast<double>(demand)) * stretch + 0.5);
  if (c_.background <= 0) return demand;
  return static_cast<sim::time_ns>(static_cast<double>(demand) * stretch + 0.5);
}

sim::FcfsStation* FioThread::waits_for(sim::JobId job) {
  if (bql_holder_ == nullptr) return nullptr;
  IoRequest& r = io_[job];
  // The notify write is an MMIO access under the lock. Taking an interrupt takes it too: when the
  // thread reaches its completion's work, or (host.tcg_irq_stall) when the interrupt comes
  // (raised_under_lock).
  const bool locks = r.step == Step::guest_submit ? kick_ != nullptr && kick_->kick_needed(r) : r.irq_leader && !c_.irq_stall;
  // A taking that finds the lock held sleeps until the pass ends (sim::FcfsStation::start_work).
  r.lock_woke = locks && bql_holder_->in_pass();
  lock_wait_ = r.lock_woke;
  return locks ? bql_holder_ : nullptr;
}

void FioThread::raised_under_lock(sim::FcfsStation& holder, bool idle_blocks) {
  if (stalled_ || lock_wait_ || (busy() == 0 && !idle_blocks)) return;
  count_wakeup();
  if (busy() == 0) {
    ++idle_lock_wakes_;
    return;
  }
  stalled_ = true;
  stall_from_ns_ = sim_.now();
  holder.when_pass_ends(*this, kStallEnd);
}

double FioThread::handler_preempts(std::size_t completions) {
  if (busy() == 0 || lock_wait_) return 0;
  const double cpu = (c_.irq_handler + c_.per_request_complete * static_cast<double>(completions)) * factor_.sample(rng_);
  counted_off_station(cpu);
  const auto handler = static_cast<sim::time_ns>(cpu * background_stretch() + 0.5);
  if (stalled_) {
    after_stall_ns_ += handler;  // blocked on the lock: the handler runs once it has it
  } else if (held_) {
    held_until_ns_ += handler;
    sim_.schedule_at(held_until_ns_, this, kHeldEnd, ++held_event_);
  } else {
    late_ns_ += handler;
  }
  return static_cast<double>(handler);
}

bool FioThread::goes_first(sim::JobId job) { return c_.submit_first && io_[job].step == Step::guest_submit; }

bool FioThread::leaves_now(std::uint32_t) {
  if (stalled_) {  // the work would have ended, but part of it could not run during the stall
    held_ = owing_ = true;
    owed_ns_ = sim_.now() - stall_from_ns_;
    return false;
  }
  if (late_ns_ > 0) {
    held_ = true;
    held_until_ns_ = sim_.now() + late_ns_;
    late_ns_ = 0;
    sim_.schedule_at(held_until_ns_, this, kHeldEnd, ++held_event_);
    return false;
  }
  return true;
}

void FioThread::handle(std::uint32_t kind, std::uint64_t payload) {
  const sim::time_ns now = sim_.now();
  if (kind == kStallEnd) {
    stalled_ = false;
    // The lock's wake-up is the thread's own work, after the stall.
    const auto wake = static_cast<sim::time_ns>(c_.lock_wake + 0.5);
    counted_off_station(static_cast<double>(wake));
    // Interrupts' handlers taken meanwhile (handler_preempts, their CPU counted there) run then.
    const sim::time_ns after = wake + after_stall_ns_;
    after_stall_ns_ = 0;
    const sim::time_ns stall = now - stall_from_ns_ + after;
    if (held_ && owing_) {
      owing_ = false;
      held_until_ns_ = now + owed_ns_ + after;
    } else if (held_) {
      held_until_ns_ += stall;
    } else {
      late_ns_ += stall;
      return;
    }
    sim_.schedule_at(held_until_ns_, this, kHeldEnd, ++held_event_);
    return;
  }
  if (kind == kHeldEnd) {
    if (payload != held_event_ || !held_) return;  // moved by a later stall
    if (stalled_) {                                // stalled again before its end: what is left waits for this stall's end
      owing_ = true;
      owed_ns_ = now - stall_from_ns_;
      return;
    }
    held_ = false;
    release(0);
    return;
  }
  CoreTimedThread::handle(kind, payload);
}

GuestThreads::GuestThreads(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io, const KickPolicy* kick,
                           sim::ProcessorSharingStation* cpu)
    : Stage(sim, std::move(vm), "guest.threads"), io_(io), cpu_(cpu) {
  const GuestCpuCosts costs = guest_cpu_costs(s);
  for (int j = 0; j < s.workload.numjobs; ++j) {
    auto& th = sim.make<FioThread>(local("guest.fio_job" + std::to_string(j)), io, costs, kick);
    sim::connect(th.out, *this, kDone);
    if (cpu != nullptr) th.use_cpu(*cpu);
    if (cpu != nullptr && s.host.cores > 0) th.count_host_cores();  // the host's cores, not the VM's own vCPUs
    // Every vCPU's background work, counted with the first job's thread (the figures add the kind
    // up); each thread's requests are stretched by it.
    if (costs.background > 0) th.add_background(j == 0 ? costs.background * s.guest.vcpus : 0.0, costs.background);
    threads_.push_back(&th);
  }
}

void GuestThreads::accept(sim::JobId job, int in_port) {
  IoRequest& r = io_[job];
  switch (static_cast<In>(in_port)) {
    case kSubmit:
      r.step = Step::guest_submit;
      threads_[r.job]->accept(job, 0);
      break;
    case kComplete:
      r.step = Step::guest_complete;
      // fio waits in io_getevents while nothing is left to do: a completion then wakes it, from a
      // halt where the vCPU has had the time to reach one (guest.halt_after_us).
      r.woke = threads_[r.job]->asleep();
      threads_[r.job]->accept(job, 0);
      break;
    case kDone:
      if (r.step == Step::guest_submit) {
        r.submitted_ns = sim_.now();
        submitted.send(job);
      } else {
        if (r.irq_leader && r.irq_line != nullptr) r.irq_line->handled(job, sim_.now());
        // fio stamped the completion before its accounting (FioThread::service_ns).
        r.reaped_ns = sim_.now() - std::min(r.outside_ns, sim_.now() - r.submitted_ns);
        completed.send(job);
      }
      break;
  }
}

void GuestThreads::validate() const {
  sim::require_connected(*this, submitted, "submitted");
  sim::require_connected(*this, completed, "completed");
}

void GuestThreads::stations(std::vector<StageInfo>& out) const {
  for (const FioThread* th : threads_) out.push_back({th->name(), "guest", 1});
}

// The per-job threads are drawn as one node.
void GuestThreads::draw(StageGraph& g) const {
  g.nodes.push_back({local("guest.fio_jobs"), "guest", "station", static_cast<int>(threads_.size())});
  if (cpu_ != nullptr) g.edges.push_back({local("guest.fio_jobs"), cpu_->name(), "runs on", true});
}

std::vector<PortEnd> GuestThreads::entry(int in_port) const {
  return {{local("guest.fio_jobs"), in_port == kSubmit ? "submit" : ""}};
}

std::vector<PortEnd> GuestThreads::exits(const sim::Port& port) const {
  return {{local("guest.fio_jobs"), &port == &submitted ? "submit" : "release"}};
}

double kick_finds_lock(const MvaInputs& in) {
  // Behind the main loop a kick comes only while the loop is not popping the ring (its popping
  // takes the request without one): of the time the loop holds the lock (p_bql_wait), the part
  // outside its popping, over the time outside its popping. Behind an IOThread the main loop's
  // passes only relay interrupts, and a kick finds one as often as they hold the lock.
  const double u = in.p_bql_wait;
  if (in.s.host.iothreads > 0 || !(u > 0)) return u;
  const double popping = main_loop_popping(in.s, u);
  return popping < 1 ? std::max(0.0, u - popping) / (1 - popping) : 0.0;
}

void guest_thread_demands(const MvaInputs& in, std::vector<MvaDemand>& out) {
  const IoScenario& s = in.s;
  const auto& w = s.workload;
  const double m = in.ios_per_request;
  const bool bare = s.bare_metal();
  const DriverCosts drv = driver_costs(s);
  const BlockLayer blk = block_layer(s);
  const double kick = bare ? 0.0 : s.vq.kick_exit_ns / std::max(1, w.iodepth_batch_submit) * in.p_kick;
  // The MVA's workload holds a request's bytes (its m I/Os together).
  const double half_pages = 0.5 * s.guest.per_page_ns * extra_pages(w.mean_bytes(), m);
  // The vCPU's background work (host.tcg_vcpu_busy) stretches a request's work by 1 / (1 - share).
  const double stretch = 1 / (1 - vcpu_background_share(s));
  // Under TCG's big lock (host.tcg_bql) a kick waits for the main loop's pass to end: the thread
  // holds its vCPU, off CPU, and pays its wake-up when the lock comes (host.tcg_wake_us), as often
  // as the loop is busy; with host.tcg_irq_stall (whose MVA this is part of) only in the part of
  // its passes outside its popping, when a kick is made at all (kick_finds_lock).
  const WakeCosts wakes = wake_costs(s);
  const double kicks = bare ? 0.0 : in.p_kick / std::max(1, w.iodepth_batch_submit);
  const bool irq_stall = s.host.tcg_irq_stall;
  const double kick_lock = bare ? 0.0 : irq_stall ? kick_finds_lock(in) : in.p_bql_wait;
  const double wait = bare || !(in.p_bql_wait > 0) ? 0.0 : in.bql_wait_ns * kick_lock / in.p_bql_wait * kicks;
  const double lock_wake = wakes.lock * kick_lock * kicks;
  // fio's own work split at its timestamps: the part outside the latency is the completion's last.
  const FioWorkSplit fio = fio_work_split(s);
  const double guest_submit = stretch * (fio.submit * m + blk.submit_extra_ns + drv.submit_ns + kick + half_pages + lock_wake);
  // An interrupt delivers its first completion and those that reach the ring within irq_us, so
  // each I/O pays the per-interrupt cost divided by the mean batch, 1 + (rate per queue) x irq_us.
  // A completion wakes its fio thread when it finds the thread idle (p_guest_idle, io_path_mva.cc);
  // only an interrupt's first can: the others arrive with it.
  // Under TCG a wake-up is the vCPU thread's own (host.tcg_wake_us).
  // Taking an interrupt needs the lock too, when it comes: raised while the lock's holder (the
  // main loop, or the main loop relaying an IOThread's) is in a pass (interrupt_finds_lock), the
  // vCPU blocks until the pass ends (FioThread::raised_under_lock): a wake-up of the lock's, and,
  // when the vCPU was running a request's work, the rest of the pass with it stopped
  // (interrupt_lock_wait_ns, the interrupt's own wait).
  // Without host.tcg_irq_stall it waits when the thread reaches its work: behind the main loop at
  // the end of the pass that raised it (virtqueue.cc), so it rarely finds another; an IOThread's
  // is relayed by the main loop in passes of their own, which it finds as often as a kick does.
  double irq_lock = 0;
  if (!bare) irq_lock = irq_stall ? interrupt_finds_lock(in) : s.host.iothreads > 0 ? in.p_bql_wait : 0.0;
  const double stall = bare || !irq_stall ? 0.0 : interrupt_lock_wait_ns(in) * (1 - in.p_guest_idle) * in.irq_share;
  const double wake = (wakes.halt * in.p_guest_idle + wakes.lock * irq_lock) * in.irq_share;
  // How often a request wakes its fio thread (its vCPU's halts and waits for the lock), whatever
  // a wake-up costs: the simulation's wakeups_per_s of the thread.
  const double woken = (in.p_guest_idle + irq_lock) * in.irq_share + kick_lock * kicks;
  const double outside = stretch * fio.outside * m;
  const double guest_complete = stretch * ((fio.complete + fio.outside) * m + drv.complete_ns + half_pages +
                                           (bare ? 0.0 : interrupt_cost_ns(s) * in.irq_share) + wake);
  // The VM's fio threads (every job's: a job of several is one class among them) decide whether
  // they share its vCPUs, as the simulation's GuestThreads do.
  if (s.fio_threads() > s.guest.vcpus || s.host.cores > 0) {
    // One station for both halves of the threads' work, which take turns on each thread as in
    // the simulation's FioThread (two stations would run a thread's submits and completions side
    // by side). On the host's cores each thread is one server: fewer threads than cores use only
    // as many cores as there are threads (every VM's, where vm.count VMs share the cores). slat:
    // the submit side's share, or with guest.fio_submit_first the submit's own work and wait.
    const int threads = std::max(1, s.fio_threads() * std::max(1, s.vms));
    const int c = s.host.cores > 0 ? std::min(s.host.cores, threads) : s.guest.vcpus;
    const double all = guest_submit + guest_complete + wait + stall;
    out.push_back({"guest.vcpus", sim::MvaStationKind::MultiServer, c, all, wait + stall,
                   s.guest.fio_submit_first ? MvaDemand::Slat::own : MvaDemand::Slat::share, guest_submit + wait, all});
    out.back().shared = s.host.cores > 0;  // host.cores are every VM's; a VM's own vCPUs are its own
    out.back().outside_ns = outside;
    out.back().wakes = woken;
  } else {
    // slat: the submit side's share of the thread's work (the kick aside), or with
    // guest.fio_submit_first the submit's own work and its wait for the lock (it waits for none of
    // its thread's completions: FioThread::goes_first), a job's share of it at each job's station.
    const double all = guest_submit + guest_complete + wait + stall;
    const double share_part = fio.submit * m + blk.submit_extra_ns + drv.submit_ns + half_pages + wait;
    const double whole = share_part + (fio.complete + fio.outside) * m + drv.complete_ns + half_pages;
    const bool own = s.guest.fio_submit_first;
    const double part = own ? (guest_submit + wait) / w.numjobs : share_part;
    for (int j = 0; j < w.numjobs; ++j) {
      out.push_back({"guest.fio_job" + std::to_string(j), sim::MvaStationKind::Queue, 1, all / w.numjobs,
                     (wait + stall) / w.numjobs, own ? MvaDemand::Slat::own : MvaDemand::Slat::share, part, whole});
      out.back().outside_ns = outside / w.numjobs;
      out.back().wakes = woken / w.numjobs;
    }
  }
}

// The scenario keys of the guest threads (models/param.h: how a key is declared).
void guest_thread_keys(std::vector<Param>& t) {
  auto add = [&](Param p) { t.push_back(std::move(p)); };
  add({"guest.vcpus",
       Kind::integer,
       "",
       "2",
       "",
       "guest vCPUs (fio jobs beyond it share them)",
       {},
       1,
       4096,
       [](IoScenario& s, const Value& v) { s.guest.vcpus = static_cast<int>(v.number); }});
  add({"guest.fio_submit_us",
       Kind::time_us,
       "us",
       "3.0",
       "[I] typical syscall + block layer cost",
       "vCPU time of fio + block layer per submit",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.fio_submit_ns = v.number; },
       [](const IoScenario& s) { return s.guest.fio_submit_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.fio_complete_us",
       Kind::time_us,
       "us",
       "2.5",
       "[I]",
       "vCPU time of completion + fio reap per I/O (with guest.fio_submit_us, guest.fio_outside_us of it lies outside "
       "fio's latency)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.fio_complete_ns = v.number; },
       [](const IoScenario& s) { return s.guest.fio_complete_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.fio_outside_us",
       Kind::time_us,
       "us",
       "1.5",
       "fio io_u.c (get_io_u stamps an I/O's start after preparing it; io_completed accounts a completion after "
       "the reap's timestamp); docs/sources.md §1 (a KVM guest's fio, sync 4 KiB at iodepth 1: 43.2k IOPS at 21.64 us "
       "clat, 1.5 us of each I/O's 23.1 outside its latency)",
       "of fio's vCPU time per I/O (guest.fio_submit_us + guest.fio_complete_us, taken from the completion's first), "
       "the part outside its latency: the accounting after a completion's timestamp and the next I/O's preparation "
       "before its own. At iodepth 1 an I/O's cycle is its latency plus this",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.fio_outside_ns = v.number; },
       [](const IoScenario& s) { return s.guest.fio_outside_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.per_page_us",
       Kind::time_us,
       "us",
       "0.095",
       "docs/sources.md §2 (Linux block/bio.c: each page of a direct I/O pinned, released, dirtied; the lab's block sizes)",
       "vCPU time per 4 KiB page of an I/O beyond its first (pinning the user buffer on submit, releasing and dirtying "
       "it on completion)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.per_page_ns = v.number; },
       [](const IoScenario& s) { return s.guest.per_page_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.wake_us",
       Kind::time_us,
       "us",
       "0",
       "docs/sources.md §1 (the lab's per-thread CPU time measures ~15 us in KVM terms; off by default until the "
       "MVA estimates how often it is paid on shared cores)",
       "vCPU time of a completion that finds its fio thread asleep in io_getevents: the idle vCPU's wake-up, the "
       "interrupt's entry, the switch back to fio (at depth completions find fio busy and skip it; none on bare metal)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.wake_ns = v.number; },
       [](const IoScenario& s) { return s.guest.wake_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.fio_submit_first",
       Kind::boolean,
       "",
       "true",
       "fio backend.c do_io (start_time stamped just before io_u_submit; it reaps only once its queue is full); "
       "docs/sources.md §1 (the lab's slat at depth)",
       "fio's thread submits the I/O a reaped completion freed before the completions waiting on it, and its slat "
       "is that submit's own time: at depth the wait for the thread is clat. false: submits and completions take "
       "their turns on the thread in arrival order, and a submit's wait is slat",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.guest.fio_submit_first = v.flag; }});
  add({"guest.halt_after_us",
       Kind::time_us,
       "us",
       "0",
       "Linux kernel/sched/idle.c do_idle (the idle loop halts only while nothing is to run: an interrupt that "
       "wakes a task before the halt ends it); docs/sources.md §1 (the lab: a vCPU at depth woken 0.05 times per I/O "
       "where the guest is idle 3% of the time)",
       "vCPU time from fio's blocking wait to the vCPU's halt: the switch to the idle task and the idle loop's entry. A "
       "completion that wakes fio sooner finds the vCPU still running and pays no guest.wake_us (0: every wait halts "
       "at once, as before). That time is the vCPU's CPU (cpu.vcpus_us_per_io), on no request's path",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.guest.halt_after_ns = v.number; },
       [](const IoScenario& s) { return s.guest.halt_after_ns / s.guest_cpu_factor() / 1e3; }});
  add({"guest.cpu_cv",
       Kind::real,
       "",
       "0.5",
       "[I]",
       "coefficient of variation of guest CPU costs (lognormal)",
       {},
       0,
       10,
       [](IoScenario& s, const Value& v) { s.guest.cpu_cv = v.number; },
       [](const IoScenario& s) { return s.guest.cpu_cv; }});
  add({"guest.cpu_scale",
       Kind::real,
       "",
       "1",
       "calibration",
       "multiplies every guest vCPU cost (fio, block layer, driver, kick exit, interrupt handler)",
       {},
       1e-3,
       1e3,
       [](IoScenario& s, const Value& v) { s.guest.cpu_scale = v.number; },
       [](const IoScenario& s) { return s.guest.cpu_scale; }});
  // The accelerator is QEMU's, but what it changes is the guest's CPU: under TCG every guest
  // instruction is translated, so each vCPU cost above is TCG's multiple of KVM's. Kept apart from
  // guest.cpu_scale so that a fit on TCG runs carries its device and QEMU costs to a KVM
  // prediction without TCG's guest costs (docs/sources.md §1).
  add({"host.accel",
       Kind::choice,
       "",
       "kvm",
       "QEMU -accel; docs/sources.md §1",
       "how QEMU runs the vCPUs: kvm (hardware virtualization) or tcg (binary translation: every guest vCPU cost times "
       "host.tcg_cpu_scale)",
       {"kvm", "tcg"},
       0,
       0,
       [](IoScenario& s, const Value& v) {
         s.host.accel = pick<Accel>({"kvm", "tcg"}, {Accel::kvm, Accel::tcg}, v.word);
       }});
  add({"host.tcg_cpu_scale",
       Kind::real,
       "",
       "3.5",
       "docs/sources.md §1 (the lab's full-counters recording: the vCPU thread's CPU per I/O at depth over vqsim's KVM "
       "guest costs)",
       "under host.accel = tcg, multiplies every guest vCPU cost (on top of guest.cpu_scale); no effect under kvm",
       {},
       1e-3,
       1e3,
       [](IoScenario& s, const Value& v) { s.host.tcg_cpu_scale = v.number; },
       [](const IoScenario& s) { return s.host.tcg_cpu_scale; }});
  // TCG delivers an interrupt through its own slow path (out of the translated code, the BQL, the
  // emulated APIC and its EOI), which is not a multiple of KVM's: measured as a whole, beside the
  // vCPU thread's wake-ups (host.tcg_wake_us) that a halted vCPU's interrupt brings.
  add({"host.tcg_irq_us",
       Kind::time_us,
       "us",
       "15",
       "docs/sources.md §3 (the lab's full-counters recording: the vCPU thread's CPU per I/O by least squares on its "
       "interrupts and its wake-ups per I/O, beyond its per-I/O cost and its background)",
       "under host.accel = tcg, the vCPU thread's CPU per interrupt (delivery, the guest's handler, its EOI), in place of "
       "virtqueue.irq_handler_us x the TCG multiple; a halted vCPU's wake-up is host.tcg_wake_us; no effect under kvm",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.tcg_irq_ns = v.number; },
       [](const IoScenario& s) { return s.host.tcg_irq_ns / 1e3; }});
  // A TCG vCPU thread that sleeps (the guest halts, or its work waits for the big lock) leaves
  // its translated code and the lock behind and pays to come back: the lab's vCPU CPU per I/O
  // follows the thread's wake-ups, not the interrupts (docs/sources.md §1).
  add({"host.tcg_wake_us",
       Kind::time_us,
       "us",
       "54",
       "docs/sources.md §1 (the lab's full-counters recording: the vCPU thread's CPU per I/O by least squares on its "
       "interrupts and its wake-ups per I/O)",
       "under host.accel = tcg, the vCPU thread's CPU per wake-up from a halt that a completion ends (in place of "
       "guest.wake_us; a wait for the big QEMU lock costs host.tcg_lock_wake_us); 0 = off (both); no effect under kvm",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.tcg_wake_ns = v.number; },
       [](const IoScenario& s) { return s.host.tcg_wake_ns / 1e3; }});
  add({"host.tcg_lock_wake_us",
       Kind::time_us,
       "us",
       "18",
       "docs/sources.md §1 ('Which sleeps cost the thread what': least squares of the full-counters recording's vCPU "
       "CPU per I/O on its halts, its other sleeps and its interrupts)",
       "under host.accel = tcg with host.tcg_wake_us on, the vCPU thread's CPU per wake-up from a wait for the big QEMU "
       "lock (host.tcg_bql: a kick, or an interrupt taken while the lock's holder is in a pass); host.tcg_wake_us is a "
       "halt's; no effect under kvm",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.host.tcg_lock_wake_ns = v.number; },
       [](const IoScenario& s) { return s.host.tcg_lock_wake_ns / 1e3; }});
  // A TCG vCPU thread is busy part of the time with work no request causes, as much when the guest
  // waits as when it runs: the lab's vCPU CPU per I/O grows with the time between I/Os, 0.17 us
  // per us from 0.14 ms to 6 ms between I/Os (docs/sources.md §1).
  add({"host.tcg_vcpu_busy",
       Kind::real,
       "",
       "0.17",
       "docs/sources.md §1 (the lab's vcpu-idle recording: the vCPU thread's CPU per I/O against the time per I/O, "
       "null-co at QD1 with latencies of 0 to 5 ms)",
       "under host.accel = tcg, the share of each vCPU thread's time spent on work no request causes (counted in its "
       "CPU time; a request's vCPU work takes 1 / (1 - share) as long); no effect under kvm",
       {},
       0,
       0.9,
       [](IoScenario& s, const Value& v) { s.host.tcg_vcpu_busy = v.number; },
       [](const IoScenario& s) { return s.host.tcg_vcpu_busy; }});
}

}  // namespace vqsim::models
