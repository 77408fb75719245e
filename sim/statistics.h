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
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  void clear() noexcept { *this = Welford{}; }
  std::uint64_t count() const noexcept { return n_; }
  double mean() const noexcept { return mean_; }
  // Sample variance (n - 1 in the denominator); 0 with fewer than two samples.
  double variance() const noexcept { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }
  double stddev() const noexcept { return std::sqrt(variance()); }
  double min() const noexcept { return n_ ? min_ : 0.0; }
  double max() const noexcept { return n_ ? max_ : 0.0; }

 private:
  std::uint64_t n_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
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
  double number_mean = 0.0;      // L: time-average number present
  double throughput_per_ns = 0.0;  // X: completions per ns in the window
  double response_mean_ns = 0.0;   // W
  // What edge effects alone can explain: jobs present when the window opens or closes have part
  // of their time inside it and part outside, O((present at start + at end) / completions);
  // twice that, so that a short run with deep queues is not reported as a broken law.
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
  void arrive(time_ns now) noexcept { number_.add(now, 1.0); }
  void depart(time_ns now, time_ns response) noexcept {
    number_.add(now, -1.0);
    response_.add(response);
  }
  void reset(time_ns now) noexcept {
    number_.reset(now);
    response_.clear();
    window_start_ = now;
    present_at_start_ = number_.value();
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
    const double n = static_cast<double>(std::max<std::uint64_t>(completions(), 1));
    return {number_mean(now), throughput_per_ns(now), response_.moments().mean(), 2.0 * (present_at_start_ + number_now()) / n};
  }

 private:
  TimeAverage number_;
  LatencyStat response_;
  time_ns window_start_ = 0;
  double present_at_start_ = 0.0;
};

}  // namespace vqsim::sim
