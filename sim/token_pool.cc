#include "sim/token_pool.h"

#include <stdexcept>

namespace vqsim::sim {

TokenPool::TokenPool(Simulator& sim, std::string name, int tokens)
    : Component(sim, std::move(name)), tokens_(tokens), available_(tokens) {
  if (tokens < 1) throw std::invalid_argument("token pool '" + this->name() + "' needs at least one token");
}

void TokenPool::validate() const {
  require_connected(*this, acquired, "acquired");
  require_connected(*this, released, "released");
}

void TokenPool::grant(JobId job, time_ns asked_at) {
  const time_ns now = sim_.now();
  --available_;
  in_use_.set(now, tokens_ - available_);
  wait_.add(static_cast<double>(now - asked_at));
  acquired.send(job);
}

void TokenPool::accept(JobId job, int in_port) {
  const time_ns now = sim_.now();
  if (in_port == kAcquire) {
    if (asked_at_.size() <= job) asked_at_.resize(job + 1);
    asked_at_[job] = now;
    flow_.arrive(now);
    if (available_ > 0 && waiting_.empty()) {
      grant(job, now);
    } else {
      waiting_.push_back(job);
      queued_.set(now, static_cast<double>(waiting_.size()));
    }
    return;
  }
  if (in_port != kRelease) Component::accept(job, in_port);
  if (available_ >= tokens_) throw std::logic_error("token pool '" + name() + "': a token was returned that was never taken");
  ++available_;
  in_use_.set(now, tokens_ - available_);
  flow_.depart(now, now - asked_at_[job]);
  if (!waiting_.empty()) {
    const JobId next = waiting_.pop_front();
    queued_.set(now, static_cast<double>(waiting_.size()));
    grant(next, asked_at_[next]);
  }
  released.send(job);
}

void TokenPool::reset_statistics(time_ns now) {
  flow_.reset(now);
  wait_.clear();
  in_use_.reset(now);
  queued_.reset(now);
}

void TokenPool::report(Metrics& m, time_ns now) const {
  report_flow(m, name(), flow_, now);
  m.add(name() + ".wait_mean_ns", wait_.mean());
  m.add(name() + ".queue_mean", queued_.mean(now));
  m.add(name() + ".utilization", in_use_.mean(now) / tokens_);
}

}  // namespace vqsim::sim
