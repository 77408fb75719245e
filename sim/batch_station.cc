#include "sim/batch_station.h"

namespace vqsim::sim {

BatchStation::BatchStation(Simulator& sim, std::string name, Distribution service)
    : Component(sim, std::move(name)), service_(std::move(service)) {}

time_ns BatchStation::batch_service_ns(std::size_t) { return service_.sample_ns(rng_); }

void BatchStation::accept(JobId job, int) {
  const time_ns now = sim_.now();
  flow_.arrive(now);
  waiting_.push_back(Waiting{job, now});
  if (!busy_) start_batch();
}

void BatchStation::start_batch() {
  busy_ = true;
  busy_time_.set(sim_.now(), 1.0);
  serving_.swap(waiting_);
  waiting_.clear();
  batch_size_.add(static_cast<double>(serving_.size()));
  sim_.schedule_in(batch_service_ns(serving_.size()), this, 0, 0);
}

void BatchStation::handle(std::uint32_t, std::uint64_t) {
  const time_ns now = sim_.now();
  busy_ = false;
  busy_time_.set(now, 0.0);
  // Released in arrival order; the next batch starts first so that a job sent on below and
  // coming straight back joins the batch after it, as a new flush would.
  std::vector<Waiting> done;
  done.swap(serving_);
  if (!waiting_.empty()) start_batch();
  for (const Waiting& w : done) {
    flow_.depart(now, now - w.arrival);
    out.send(w.job);
  }
}

void BatchStation::reset_statistics(time_ns now) {
  flow_.reset(now);
  busy_time_.reset(now);
  batch_size_.clear();
}

void BatchStation::report(Metrics& m, time_ns now) const {
  report_flow(m, name(), flow_, now);
  m.add(name() + ".utilization", busy_time_.mean(now));
  m.add(name() + ".batch_mean", batch_size_.count() ? batch_size_.mean() : 0.0);
}

}  // namespace vqsim::sim
