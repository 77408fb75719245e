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
  stats_.in_use.set(now, tokens_ - available_);
  stats_.wait.add(static_cast<double>(now - asked_at));
  acquired.send(job);
}

void TokenPool::accept(JobId job, int in_port) {
  const time_ns now = sim_.now();
  if (in_port == kAcquire) {
    if (asked_at_.size() <= job) asked_at_.resize(job + 1);
    asked_at_[job] = now;
    stats_.flow.arrive(now);
    if (available_ > 0 && waiting_.empty()) {
      grant(job, now);
    } else {
      waiting_.push_back(job);
      stats_.queued.set(now, static_cast<double>(waiting_.size()));
    }
    return;
  }
  if (in_port != kRelease) Component::accept(job, in_port);
  if (available_ >= tokens_) throw std::logic_error("token pool '" + name() + "': a token was returned that was never taken");
  ++available_;
  stats_.in_use.set(now, tokens_ - available_);
  stats_.flow.depart(now, now - asked_at_[job]);
  if (!waiting_.empty()) {
    const JobId next = waiting_.pop_front();
    stats_.queued.set(now, static_cast<double>(waiting_.size()));
    grant(next, asked_at_[next]);
  }
  released.send(job);
}

void TokenPool::reset_statistics(time_ns now) { stats_.reset(now); }

void TokenPool::report(Metrics& m, time_ns now) const { stats_.report(m, name(), now, tokens_); }

}  // namespace vqsim::sim
