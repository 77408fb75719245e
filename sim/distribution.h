// Distributions of durations (and other non-negative quantities), written here rather than
// taken from <random>: the standard leaves the algorithms to each library, so the same seed
// would give other numbers on another compiler. Every sampler draws only from our Rng.
//
// A Distribution is a small value type; sample() is a switch, with no allocation and no
// virtual call. Parameters are in the caller's unit (the engine uses nanoseconds).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/rng.h"
#include "sim/time.h"

namespace vqsim::sim {

class Distribution {
 public:
  enum class Kind { Deterministic, Exponential, Uniform, Normal, Lognormal, Gamma, Hyperexponential, Empirical };

  Distribution() = default;  // deterministic 0

  static Distribution deterministic(double value);
  static Distribution exponential(double mean);
  static Distribution uniform(double low, double high);
  // Normal, truncated at zero when sampled as a duration (sample_ns); sample() is untruncated.
  static Distribution normal(double mean, double stddev);
  // Lognormal given by its median and the stddev of the underlying normal (sigma).
  static Distribution lognormal(double median, double sigma);
  // Lognormal given by its mean and coefficient of variation.
  static Distribution lognormal_mean_cv(double mean, double cv);
  static Distribution gamma(double shape, double scale);
  // Erlang-k with the given mean: a gamma with integer shape k.
  static Distribution erlang(int phases, double mean);
  // Mixture of exponentials: branch i is taken with probability probabilities[i].
  static Distribution hyperexponential(std::vector<double> probabilities, std::vector<double> means);
  // Two-branch hyperexponential with balanced means for a given mean and squared coefficient
  // of variation scv >= 1 (Whitt 1982: p1*m1 = p2*m2).
  static Distribution hyperexponential_balanced(double mean, double scv);
  // Empirical from raw samples: draws one of them uniformly at random.
  static Distribution empirical_samples(std::vector<double> samples);
  // Empirical from a percentile list such as fio's: (percent, value) points, e.g. {99.0, 812}.
  // The inverse CDF is linear between points; below the first percentile it is constant at the
  // first value, above the last at the last value (a percentile list says nothing about the
  // tails, so none are invented).
  static Distribution empirical_percentiles(std::vector<std::pair<double, double>> percent_value);

  // The lognormal's table lookup (every CPU cost and device time in the I/O-path models), the
  // exponential (the queueing validations) and the constant are inline: they are the draws on
  // the simulator's hot path, and the call and switch around them cost about as much as the
  // draw. Every other kind, and the lognormal's tails, go through sample_other(); the arithmetic
  // is the same either way, so every draw is bit for bit what it was.
  double sample(Rng& rng) const noexcept {
    if (kind_ == Kind::Lognormal && table_ != nullptr) {
      const double u = rng.uniform_open0() * kLognormalGrid;  // in (0, grid]
      const auto k = static_cast<int>(u);
      if (k >= 1 && k < kLognormalGrid - 1) {
        const double f = u - k;
        const auto i = static_cast<std::size_t>(k);
        const double* t = table_.get();
        return t[i] + f * (t[i + 1] - t[i]);
      }
      return lognormal_tail(u);
    }
    if (kind_ == Kind::Exponential) return -a_ * std::log(rng.uniform_open0());
    if (kind_ == Kind::Deterministic) return a_;
    return sample_other(rng);
  }
  // A duration: rounded to the nearest nanosecond and never negative.
  time_ns sample_ns(Rng& rng) const noexcept {
    const double x = sample(rng);
    return x <= 0.0 ? 0 : static_cast<time_ns>(x + 0.5);
  }

  Kind kind() const noexcept { return kind_; }
  double mean() const noexcept;
  double variance() const noexcept;
  // Squared coefficient of variation, variance / mean^2 (0 when the mean is 0).
  double scv() const noexcept;
  // One line such as "exponential(mean=1000)".
  std::string describe() const;

 private:
  static constexpr int kLognormalGrid = 1024;  // quantile cells of a lognormal's sampling table
  double sample_other(Rng& rng) const noexcept;
  double lognormal_tail(double u) const noexcept;  // u in (0, grid] outside the table's inner cells
  // The quantiles exp(mu + sigma z(k / grid)) at k = 1 .. grid - 1 (0 at both ends, unused).
  static std::shared_ptr<const double[]> lognormal_table(double mu, double sigma);
  Kind kind_ = Kind::Deterministic;
  double a_ = 0.0;  // meaning depends on kind_, see the factories
  double b_ = 0.0;
  double c_ = 0.0;
  // A lognormal's quantile table, shared by every distribution with the same mu and sigma: the
  // 16 or 64 VMs of one profile draw their CPU costs from the same few tables, which stay in
  // the cache (8 KiB each, read at random cells) where one copy per station did not.
  std::shared_ptr<const double[]> table_;
  std::vector<double> p_;  // hyperexponential cumulative probabilities / empirical values
  std::vector<double> q_;  // hyperexponential means / empirical cumulative probabilities
};

// Standard normal variate by the Marsaglia polar method (exact, two uniforms per pair; the
// spare is not cached so that each call depends only on the stream state).
double standard_normal(Rng& rng) noexcept;
// The inverse of the standard normal CDF (Acklam's approximation); -inf at 0, +inf at 1.
double standard_normal_quantile(double p) noexcept;
// Gamma(shape, 1) by Marsaglia & Tsang (2000), with the shape < 1 boost u^(1/shape).
double standard_gamma(Rng& rng, double shape) noexcept;

}  // namespace vqsim::sim
