#include "models/emulation_thread.h"

#include <algorithm>
#include <cmath>

namespace vqsim::models {

EmulationThread::EmulationThread(sim::Simulator& sim, std::string name, IoTable& io, double submit_ns, double complete_ns,
                                 double cpu_cv, double poll_window_ns, bool always_polling, double per_page_ns)
    : sim::FcfsStation(sim, std::move(name), 1, sim::Distribution::deterministic(0)),
      io_(io),
      submit_ns_(submit_ns),
      complete_ns_(complete_ns),
      poll_window_ns_(poll_window_ns),
      per_page_ns_(per_page_ns),
      always_polling_(always_polling),
      factor_(cpu_cv > 0 ? sim::Distribution::lognormal_mean_cv(1.0, cpu_cv) : sim::Distribution::deterministic(1.0)) {}

sim::time_ns EmulationThread::service_ns(sim::JobId job) {
  const IoRequest& r = io_[job];
  double mean = complete_ns_;
  if (r.step == Step::host_submit) {
    const double pages = std::ceil(static_cast<double>(r.bytes) / 4096.0);
    mean = submit_ns_ + per_page_ns_ * std::max(0.0, pages - 1);
  }
  return static_cast<sim::time_ns>(mean * factor_.sample(rng_) + 0.5);
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

}  // namespace vqsim::models
