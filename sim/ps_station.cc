#include "sim/ps_station.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vqsim::sim {
namespace {
// Completion events land on whole nanoseconds; the virtual clock is a double. A task whose
// finish point is within this much virtual time of the clock is done.
constexpr double kVirtualSlackNs = 1e-3;
}  // namespace

ProcessorSharingStation::ProcessorSharingStation(Simulator& sim, std::string name, int servers, Distribution service)
    : Component(sim, std::move(name)), servers_(servers), service_(std::move(service)) {
  if (servers_ < 1) throw std::invalid_argument("processor-sharing station '" + this->name() + "' needs at least one server");
}

void ProcessorSharingStation::validate() const {
  // `out` is only needed when jobs are accepted; a pure CPU resource leaves it unconnected.
}

double ProcessorSharingStation::rate() const noexcept {
  const auto n = static_cast<double>(tasks_.size());
  return n <= servers_ ? 1.0 : servers_ / n;
}

void ProcessorSharingStation::advance() noexcept {
  const time_ns now = sim_.now();
  if (!tasks_.empty()) virtual_ns_ += static_cast<double>(now - virtual_at_) * rate();
  virtual_at_ = now;
}

void ProcessorSharingStation::rearm() {
  if (is_armed_) sim_.cancel(armed_);
  is_armed_ = false;
  if (tasks_.empty()) return;
  const double remaining_v = std::max(0.0, tasks_.front().finish_v - virtual_ns_);
  const auto delay = static_cast<time_ns>(std::ceil(remaining_v / rate()));
  armed_ = sim_.schedule_in(delay, this, 0);
  is_armed_ = true;
}

void ProcessorSharingStation::add_task(WorkClient* client, std::uint64_t token, double demand_ns) {
  advance();
  tasks_.push_back(Task{virtual_ns_ + std::max(0.0, demand_ns), next_task_seq_++, client, token, sim_.now()});
  std::push_heap(tasks_.begin(), tasks_.end(), later);
  flow_.arrive(sim_.now());
  busy_.set(sim_.now(), std::min<double>(static_cast<double>(tasks_.size()), servers_));
  rearm();
}

void ProcessorSharingStation::accept(JobId job, int) { add_task(nullptr, job, static_cast<double>(service_.sample_ns(rng_))); }

void ProcessorSharingStation::submit_work(WorkClient* client, std::uint64_t token, double demand_ns) {
  add_task(client, token, demand_ns);
}

void ProcessorSharingStation::handle(std::uint32_t, std::uint64_t) {
  is_armed_ = false;
  advance();
  const time_ns now = sim_.now();
  // Collect every finished task first, then notify: a client may submit new work from
  // work_done(), which must see a consistent heap.
  std::vector<Task> done;
  while (!tasks_.empty() && tasks_.front().finish_v <= virtual_ns_ + kVirtualSlackNs) {
    std::pop_heap(tasks_.begin(), tasks_.end(), later);
    done.push_back(tasks_.back());
    tasks_.pop_back();
  }
  busy_.set(now, std::min<double>(static_cast<double>(tasks_.size()), servers_));
  rearm();
  for (const Task& t : done) {
    flow_.depart(now, now - t.arrival);
    if (t.client != nullptr)
      t.client->work_done(t.token);
    else
      out.send(static_cast<JobId>(t.token));
  }
}

void ProcessorSharingStation::reset_statistics(time_ns now) {
  flow_.reset(now);
  busy_.reset(now);
}

void ProcessorSharingStation::report(Metrics& m, time_ns now) const {
  report_flow(m, name(), flow_, now);
  m.add(name() + ".utilization", busy_.mean(now) / servers_);
}

}  // namespace vqsim::sim
