// Shared scaffolding for sample paths of the engine's stations (test_batch_station.cc,
// test_bql.cc, test_queueing_validation.cc): a source that sends one job at each given instant, a
// sink that records when each job arrived, and a station whose jobs need another's lock.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/fcfs_station.h"
#include "sim/simulator.h"

namespace vqsim::test {

// Sends one job at each of the given times.
class Arrivals : public sim::Component {
 public:
  Arrivals(sim::Simulator& sim, std::string name, std::vector<sim::time_ns> times)
      : sim::Component(sim, std::move(name)), times_(std::move(times)) {}
  sim::Port out;
  void validate() const override { sim::require_connected(*this, out, "out"); }
  void start() override {
    for (std::size_t i = 0; i < times_.size(); ++i) sim_.schedule_at(times_[i], this, 0, i);
  }
  void handle(std::uint32_t, std::uint64_t) override { out.send(sim_.jobs().allocate(sim_.now())); }

 private:
  std::vector<sim::time_ns> times_;
};

// Records the instant each job reaches it, and ends it.
class Recorder : public sim::Component {
 public:
  Recorder(sim::Simulator& sim, std::string name) : sim::Component(sim, std::move(name)) {}
  std::vector<sim::time_ns> times;
  void accept(sim::JobId job, int) override {
    times.push_back(sim_.now());
    sim_.jobs().release(job);
    sim_.count_completion();
  }
};

// A station whose every job needs a lock that `holder` holds for each of its passes
// (sim::FcfsStation::waits_for): `servers` servers, `service` per job once it has the lock.
class LockWaiter final : public sim::FcfsStation {
 public:
  LockWaiter(sim::Simulator& sim, std::string name, sim::FcfsStation& holder, int servers, sim::Distribution service)
      : sim::FcfsStation(sim, std::move(name), servers, std::move(service)), holder_(holder) {}

 protected:
  sim::FcfsStation* waits_for(sim::JobId) override { return &holder_; }

 private:
  sim::FcfsStation& holder_;
};

// A station whose jobs, once their work is done, leave `late_ns` later (FcfsStation::leaves_now,
// release): a model of a server stopped part of the way through its work.
class LateLeaver final : public sim::FcfsStation {
 public:
  LateLeaver(sim::Simulator& sim, std::string name, sim::Distribution service, sim::time_ns late_ns)
      : sim::FcfsStation(sim, std::move(name), 1, std::move(service)), late_ns_(late_ns) {}
  void handle(std::uint32_t kind, std::uint64_t payload) override {
    if (kind == kLeave)
      release(0);
    else
      sim::FcfsStation::handle(kind, payload);
  }

 protected:
  bool leaves_now(std::uint32_t) override {
    sim_.schedule_in(late_ns_, this, kLeave, 0);
    return false;
  }

 private:
  static constexpr std::uint32_t kLeave = 100;
  sim::time_ns late_ns_;
};

}  // namespace vqsim::test
