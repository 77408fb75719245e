#include "models/emulation_thread.h"

namespace vqsim::models {

EmulationThread::EmulationThread(sim::Simulator& sim, std::string name, IoTable& io, double submit_ns, double complete_ns, double cpu_cv,
                                 double poll_window_ns, bool always_polling)
    : sim::FcfsStation(sim, std::move(name), 1, sim::Distribution::deterministic(0)),
      io_(io),
      submit_ns_(submit_ns),
      complete_ns_(complete_ns),
      poll_window_ns_(poll_window_ns),
      always_polling_(always_polling),
      factor_(cpu_cv > 0 ? sim::Distribution::lognormal_mean_cv(1.0, cpu_cv) : sim::Distribution::deterministic(1.0)) {}

sim::time_ns EmulationThread::service_ns(sim::JobId job) {
  const double mean = io_[job].step == Step::host_submit ? submit_ns_ : complete_ns_;
  return static_cast<sim::time_ns>(mean * factor_.sample(rng_) + 0.5);
}

}  // namespace vqsim::models
