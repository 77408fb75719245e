// Numerically safe running statistics, owned by the component that observes them.
//
// - Welford: mean and variance in one pass without the cancellation of sum-of-squares.
// - TimeAverage: the time integral of a piecewise-constant quantity (queue length, busy
//   servers), for time-weighted means.
// - LatencyStat: Welford plus fio's log-linear histogram, so percentiles compare bin for bin
//   with fio's.
// - FlowStats: what every queueing primitive records (number present, response times,
//   completions) and Little's law L = X * W checked on it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/fio_histogram.h"
#include "sim/time.h"

namespace vqsim::sim {

class Welford {
 public:
  void add(double x) noexcept {
    ++n_;
    const double delta = x - mean_;
    mean_ += delta / static_cast<double>(n_);
    m2_ += delta * (x - mean_);
  }
  void clear() noexcept { *this = Welford{}; }
  std::uint64_t count() const noexcept { return n_; }
  double mean() const noexcept { return mean_; }
  // Sample variance (n - 1 in the denominator); 0 with fewer than two samples.
  double variance() const noexcept { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }
  double stddev() const noexcept { return std::sqrt(variance()); }
  // No min and max: every station adds to a Welford on every departure and none reports them;
  // fio's min/max latencies are kept where they are reported (models/fio_workload.h).

 private:
  std::uint64_t n_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;
};

class TimeAverage {
 public:
  // The observed quantity changes to `value` at time `now`.
  void set(time_ns now, double value) noexcept {
    integral_ += value_ * static_cast<double>(now - last_);
    last_ = now;
    value_ = value;
  }
  void add(time_ns now, double delta) noexcept { set(now, value_ + delta); }
  // Forget the past (end of warm-up); the current value carries on.
  void reset(time_ns now) noexcept {
    integral_ = 0.0;
    start_ = last_ = now;
  }
  double value() const noexcept { return value_; }
  double mean(time_ns now) const noexcept {
    const time_ns span = now - start_;
    return span > 0 ? (integral_ + value_ * static_cast<double>(now - last_)) / static_cast<double>(span) : value_;
  }

 private:
  time_ns start_ = 0;
  time_ns last_ = 0;
  double value_ = 0.0;
  double integral_ = 0.0;
};

class LatencyStat {
 public:
  void add(time_ns latency) noexcept {
    moments_.add(static_cast<double>(latency));
    histogram_.add(static_cast<std::uint64_t>(latency));
  }
  void clear() noexcept {
    moments_.clear();
    histogram_.clear();
  }
  const Welford& moments() const noexcept { return moments_; }
  const FioHistogram& histogram() const noexcept { return histogram_; }

 private:
  Welford moments_;
  FioHistogram histogram_;
};

struct LittleCheck {
  double number_mean = 0.0;        // L: time-average number present
  double throughput_per_ns = 0.0;  // X: completions per ns in the window
  double response_mean_ns = 0.0;   // W
  // What edge effects alone can explain, as a bound, not an estimate. Over a window [t0, t1],
  // integral of N dt minus the sum of the responses completed in it is (time inside the window of
  // the jobs still present at t1) minus (time before t0 of the completed jobs that were present
  // at t0), so its size is at most the larger of the two ages of those groups: (ages at t0 + ages
  // at t1) / (t1 - t0) / max(L, X W). Ages, not counts times the mean response: the jobs present
  // at an instant are length-biased, and under a heavy tail (a 1-in-10^4 stall of 100 ms behind
  // a mean of 10 us) one of them is 10^4 times older than the mean.
  double edge_allowance = 0.0;
  // |L - X W| / max(L, tiny): 0 on a perfect sample path; edge effects of jobs present at the
  // window's ends make it O(jobs present / completions).
  double relative_error() const noexcept {
    const double lw = throughput_per_ns * response_mean_ns;
    const double scale = std::max({number_mean, lw, 1e-12});
    return std::fabs(number_mean - lw) / scale;
  }
};

class FlowStats {
 public:
  void arrive(time_ns now) noexcept {
    number_.add(now, 1.0);
    arrivals_present_ns_ += static_cast<std::uint64_t>(now);
  }
  void depart(time_ns now, time_ns response) noexcept {
    number_.add(now, -1.0);
    arrivals_present_ns_ -= static_cast<std::uint64_t>(now - response);
    // Empty, the arrivals still present must sum to exactly 0: a response that does not match its
    // own arrival (a stale or overwritten time stamp) shows here, and would otherwise pass for an
    // age in the edge bound below.
    if (number_.value() < 0.0 || (number_.value() == 0.0 && arrivals_present_ns_ != 0)) unbalanced_ = true;
    response_.add(response);
  }
  void reset(time_ns now) noexcept {
    number_.reset(now);
    response_.clear();
    window_start_ = now;
    ages_at_start_ns_ = ages_present_ns(now);
  }
  std::uint64_t completions() const noexcept { return response_.moments().count(); }
  const LatencyStat& response() const noexcept { return response_; }
  double number_mean(time_ns now) const noexcept { return number_.mean(now); }
  double number_now() const noexcept { return number_.value(); }
  double throughput_per_ns(time_ns now) const noexcept {
    const time_ns span = now - window_start_;
    return span > 0 ? static_cast<double>(completions()) / static_cast<double>(span) : 0.0;
  }
  LittleCheck little(time_ns now) const noexcept {
    LittleCheck c{number_mean(now), throughput_per_ns(now), response_.moments().mean(), 0.0};
    const double span_ns = static_cast<double>(now - window_start_);
    const double scale = std::max({c.number_mean, c.throughput_per_ns * c.response_mean_ns, 1e-12});
    if (span_ns > 0 && !unbalanced_) c.edge_allowance = (ages_at_start_ns_ + ages_present_ns(now)) / (span_ns * scale);
    return c;
  }

 private:
  // Sum over the jobs present now of (now - their arrival), from the sum of their arrival times:
  // O(1) per event, exact in modular integer arithmetic whatever the run length.
  double ages_present_ns(time_ns now) const noexcept {
    if (number_.value() <= 0.0) return 0.0;
    const auto present = static_cast<std::uint64_t>(number_.value());
    return static_cast<double>(present * static_cast<std::uint64_t>(now) - arrivals_present_ns_);
  }

  TimeAverage number_;
  LatencyStat response_;
  time_ns window_start_ = 0;
  std::uint64_t arrivals_present_ns_ = 0;  // sum of the arrival times of the jobs present (mod 2^64)
  double ages_at_start_ns_ = 0.0;
  bool unbalanced_ = false;  // once seen, nothing is credited to edge effects
};

}  // namespace vqsim::sim
