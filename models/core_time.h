// One thread's core time on the host's shared cores (host.cpu, with host.cores set), counted by
// the threads that run there (FioThread, EmulationThread); models/core_share.h adds them up per
// VM profile and kind of thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "sim/distribution.h"
#include "sim/fcfs_station.h"
#include "sim/metrics.h"
#include "sim/simulator.h"

namespace vqsim::models {

// One thread's core time on host.cpu. A processor-sharing core serves each piece of work for
// exactly its demand, however many threads share it, so the demands the thread starts in the
// window are the core time it takes (up to the one piece in service when the window opens or
// closes), and every thread's together are the station's busy time.
class CoreTime {
 public:
  void enable() noexcept { on_ = true; }
  void add(sim::time_ns demand_ns) noexcept {
    if (on_) ns_ += static_cast<double>(demand_ns);
  }
  // Core time the thread spends outside host.cpu's stations (a vCPU's way into a halt, which
  // runs while nothing waits for it): counted in its figures and in "<name>.off_cpu_cores".
  void add_off_station(double ns) noexcept {
    if (!on_) return;
    ns_ += ns;
    off_station_ns_ += ns;
  }
  void reset(sim::time_ns now) noexcept {
    ns_ = 0;
    off_station_ns_ = 0;
    since_ = now;
  }
  // "<name>.host_cores": the mean number of host cores the thread's work kept busy, and
  // `background_cores` more that it keeps busy all the time with work no request causes. That
  // work runs on host.cpu only inside the thread's requests, which it stretches by
  // 1 / (1 - background_share) (TCG's vCPUs, host.tcg_vcpu_busy): "<name>.off_cpu_cores" is the
  // rest of it, the part of "<name>.host_cores" that host.cpu's utilization does not hold.
  void report(sim::Metrics& m, const std::string& name, sim::time_ns now, double background_cores = 0,
              double background_share = 0) const {
    if (!on_ || now <= since_) return;
    const double window = static_cast<double>(now - since_);
    const double work = ns_ / window, off_station = off_station_ns_ / window;
    m.add(name + ".host_cores", work + background_cores);
    if (background_cores > 0 || background_share > 0 || off_station > 0)
      m.add(name + ".off_cpu_cores",
            off_station + background_cores - background_share / (1 - background_share) * (work - off_station));
  }
  // When the window opened (the last reset).
  sim::time_ns since_ns() const noexcept { return since_; }

 private:
  bool on_ = false;
  double ns_ = 0;
  double off_station_ns_ = 0;  // of ns_
  sim::time_ns since_ = 0;
};

// A thread of one server whose work may run on host.cpu (FioThread, EmulationThread): it counts
// that work's core time and reports it beside its station's figures, and how often it sleeps and
// is woken ("<name>.wakeups_per_s"): work that finds it asleep, and each wait for a lock another
// thread's pass holds (the lab counts both, as each thread's voluntary context switches).
class CoreTimedThread : public sim::FcfsStation {
 public:
  CoreTimedThread(sim::Simulator& sim, std::string name)
      : sim::FcfsStation(sim, std::move(name), 1, sim::Distribution::deterministic(0)) {}

  // Idle since before now: a piece of work arriving now wakes it (one that arrives at the very
  // instant the thread finished its last is taken by the same pass of its loop). A thread that
  // polls after its work (EmulationThread) is asleep only past its polling window.
  virtual bool asleep() const noexcept { return busy() == 0 && waiting() == 0 && idle_since_ns() < sim_.now(); }
  // Count the core time of this thread's work on host.cpu.
  void count_host_cores() noexcept { core_time_.enable(); }
  // Cores it keeps busy besides its requests' work, counted with it, and the share of its time that
  // work takes while a request runs (TCG's vCPUs: host.tcg_vcpu_busy; CoreTime::report).
  void add_background(double cores, double share) noexcept {
    background_cores_ = cores;
    background_share_ = share;
  }
  void accept(sim::JobId job, int in_port) override {
    if (asleep()) ++wakeups_;
    sim::FcfsStation::accept(job, in_port);
  }
  void reset_statistics(sim::time_ns now) override {
    sim::FcfsStation::reset_statistics(now);
    core_time_.reset(now);
    wakeups_ = 0;
  }
  void report(sim::Metrics& m, sim::time_ns now) const override {
    sim::FcfsStation::report(m, now);
    core_time_.report(m, name(), now, background_cores_, background_share_);
    if (const sim::time_ns since = core_time_.since_ns(); now > since)
      m.add(name() + ".wakeups_per_s", static_cast<double>(wakeups_ + lock_waits()) * 1e9 / static_cast<double>(now - since));
  }

 protected:
  // A piece of work's demand, counted as core time (when counting is on); returns it.
  sim::time_ns counted(sim::time_ns demand_ns) noexcept {
    core_time_.add(demand_ns);
    return demand_ns;
  }
  // Core time spent off host.cpu's stations (CoreTime::add_off_station).
  void counted_off_station(double ns) noexcept { core_time_.add_off_station(ns); }
  // A sleep the thread's work does not show (a block on a lock while its work ran): one more wake-up.
  void count_wakeup() noexcept { ++wakeups_; }

 private:
  CoreTime core_time_;
  double background_cores_ = 0, background_share_ = 0;
  std::uint64_t wakeups_ = 0;
};

}  // namespace vqsim::models
