#include "sim/fcfs_station.h"

#include <stdexcept>
#include <string>

namespace vqsim::sim {

FcfsStation::FcfsStation(Simulator& sim, std::string name, int servers, Distribution service)
    : Component(sim, std::move(name)), service_(std::move(service)) {
  if (servers < 1) throw std::invalid_argument("FCFS station '" + this->name() + "' needs at least one server");
  slots_.resize(static_cast<std::size_t>(servers));
  // Stack of idle servers, lowest index on top, so server 0 is used first (deterministic).
  for (int s = servers - 1; s >= 0; --s) idle_.push_back(static_cast<std::uint32_t>(s));
}

void FcfsStation::set_class_service(std::uint32_t job_class, Distribution service) {
  if (class_service_.size() <= job_class) {
    class_service_.resize(job_class + 1);
    class_service_set_.resize(job_class + 1, false);
  }
  class_service_[job_class] = std::move(service);
  class_service_set_[job_class] = true;
}

void FcfsStation::when_pass_ends(Component& target, std::uint32_t kind, std::uint64_t payload) {
  if (servers() != 1)
    throw std::logic_error("FCFS station '" + name() + "' has " + std::to_string(servers()) +
                           " servers: passes are a single server's");
  pass_watchers_.push_back({&target, kind, payload});
}

void FcfsStation::validate() const { require_connected(*this, out, "out"); }

time_ns FcfsStation::service_ns(JobId job) {
  // Most stations serve every class alike: they need not look the job up at all.
  if (class_service_set_.empty()) return service_.sample_ns(rng_);
  const std::uint32_t c = sim_.jobs()[job].job_class;
  if (c < class_service_set_.size() && class_service_set_[c]) return class_service_[c].sample_ns(rng_);
  return service_.sample_ns(rng_);
}

void FcfsStation::accept(JobId job, int) {
  const time_ns now = sim_.now();
  stats_.flow.arrive(now);
  if (pass_left_ == 0) pass_left_ = 1;  // found the station idle: a pass of its own
  if (idle_.empty()) {
    (goes_first(job) ? first_ : queue_).push_back(Slot{job, now});
    stats_.queued.set(now, static_cast<double>(waiting()));
    return;
  }
  const std::uint32_t server = idle_.back();
  idle_.pop_back();
  begin_service(server, Slot{job, now});
}

void FcfsStation::begin_service(std::uint32_t server, Slot slot) {
  const time_ns now = sim_.now();
  slots_[server] = slot;
  stats_.wait.add(static_cast<double>(now - slot.arrival));
  stats_.in_use.set(now, static_cast<double>(slots_.size() - idle_.size()));
  start_work(server);
}

void FcfsStation::start_work(std::uint32_t server) {
  if (FcfsStation* lock = waits_for(slots_[server].job); lock != nullptr && lock->in_pass()) {
    ++lock_waits_;
    lock->when_pass_ends(*this, kLockFree, server);
    return;
  }
  run_work(server);
}

void FcfsStation::run_work(std::uint32_t server) {
  const time_ns service = service_ns(slots_[server].job);
  if (cpu_ != nullptr)
    cpu_->submit_work(this, server, static_cast<double>(service));
  else
    sim_.schedule_in(service, this, kServiceEnd, server);
}

void FcfsStation::handle(std::uint32_t kind, std::uint64_t payload) {
  const auto server = static_cast<std::uint32_t>(payload);
  // Handed the lock between two of its holder's passes: it works now, whatever the holder does.
  if (kind == kLockFree)
    run_work(server);
  else if (leaves_now(server))
    finish_service(server);
}

void FcfsStation::work_done(std::uint64_t token) {
  const auto server = static_cast<std::uint32_t>(token);
  if (leaves_now(server)) finish_service(server);
}

void FcfsStation::finish_service(std::uint32_t server) {
  const time_ns now = sim_.now();
  const Slot done = slots_[server];
  stats_.flow.depart(now, now - done.arrival);
  if (waiting() > 0) {
    const Slot next = first_.empty() ? queue_.pop_front() : first_.pop_front();
    stats_.queued.set(now, static_cast<double>(waiting()));
    begin_service(server, next);
  } else {
    idle_.push_back(server);
    if (idle_.size() == slots_.size()) idle_since_ns_ = now;
    stats_.in_use.set(now, static_cast<double>(slots_.size() - idle_.size()));
  }
  // The pass ends with its last job; the jobs now here make the next.
  const bool pass_ended = pass_left_ > 0 && --pass_left_ == 0;
  if (pass_ended) pass_left_ = static_cast<std::size_t>(busy()) + waiting();
  out.send(done.job);
  // Told after the job has left (it may bring this station new work at once, for the next pass).
  if (pass_ended && !pass_watchers_.empty()) {
    std::vector<Watcher> told;
    told.swap(pass_watchers_);
    for (const Watcher& w : told) sim_.schedule_in(0, w.target, w.kind, w.payload);
  }
}

void FcfsStation::reset_statistics(time_ns now) {
  stats_.reset(now);
  lock_waits_ = 0;
}

void FcfsStation::report(Metrics& m, time_ns now) const { stats_.report(m, name(), now, static_cast<double>(slots_.size())); }

}  // namespace vqsim::sim
