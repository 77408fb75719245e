// Distributions: every factory's sampler against its own analytic moments, the analytic
// moments against values worked out by hand, the percentile-list empirical against its points,
// and the parameter checks.
//
// Sampling checks use 400k draws from a fixed stream and a tolerance of 5 standard errors:
// for the mean SE = sqrt(variance / n) (from the analytic variance), for the sample variance
// SE = sqrt((mu4 - variance^2) / n) with mu4 the sample's fourth central moment. A correct
// sampler passes with a wide margin; a wrong parameterisation (scale vs rate, sigma vs sigma^2,
// a missing branch) misses by hundreds of standard errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/distribution.h"
#include "sim/rng.h"

using namespace vqsim::sim;

namespace {

constexpr std::size_t kDraws = 400'000;
constexpr double kStandardErrors = 5.0;

struct SampleMoments {
  double mean = 0.0;
  double variance = 0.0;  // unbiased
  double mu4 = 0.0;       // fourth central moment
};

SampleMoments moments_of(const std::vector<double>& x) {
  const double n = static_cast<double>(x.size());
  double sum = 0.0;
  for (double v : x) sum += v;
  SampleMoments m;
  m.mean = sum / n;
  double s2 = 0.0, s4 = 0.0;
  for (double v : x) {
    const double d = (v - m.mean) * (v - m.mean);
    s2 += d;
    s4 += d * d;
  }
  m.variance = s2 / (n - 1.0);
  m.mu4 = s4 / n;
  return m;
}

std::vector<double> sample(const Distribution& d, Rng& rng, std::size_t n = kDraws) {
  std::vector<double> x(n);
  for (auto& v : x) v = d.sample(rng);
  return x;
}

struct Case {
  std::string label;
  Distribution dist;
  double mean;      // worked out by hand (see the table)
  double variance;  // worked out by hand
};

// Hand values. e = Euler's number; all arithmetic is spelled out next to each case.
std::vector<Case> cases() {
  const double e025 = std::exp(0.25);
  // hyperexponential_balanced(1000, 4): p1 = (1 + sqrt(3/5)) / 2, means 1000 / (2 p_i).
  return {
      {"deterministic(7)", Distribution::deterministic(7.0), 7.0, 0.0},
      {"exponential(mean 1000)", Distribution::exponential(1000.0), 1000.0, 1e6},
      // (low + high) / 2 = 200; (high - low)^2 / 12 = 40000 / 12.
      {"uniform(100, 300)", Distribution::uniform(100.0, 300.0), 200.0, 40000.0 / 12.0},
      {"normal(500, 100)", Distribution::normal(500.0, 100.0), 500.0, 10000.0},
      // median 1000, sigma 0.5: mean = 1000 e^(sigma^2/2) = 1000 e^0.125,
      // variance = (e^(sigma^2) - 1) e^(2 mu + sigma^2) = (e^0.25 - 1) 1e6 e^0.25.
      {"lognormal(median 1000, sigma 0.5)", Distribution::lognormal(1000.0, 0.5), 1000.0 * std::exp(0.125),
       (e025 - 1.0) * 1e6 * e025},
      // mean 2000, cv 1: variance = (cv mean)^2 = 4e6.
      {"lognormal_mean_cv(2000, 1)", Distribution::lognormal_mean_cv(2000.0, 1.0), 2000.0, 4e6},
      // shape k, scale t: mean k t, variance k t^2.
      {"gamma(shape 0.5, scale 200)", Distribution::gamma(0.5, 200.0), 100.0, 0.5 * 200.0 * 200.0},
      {"gamma(shape 3.5, scale 100)", Distribution::gamma(3.5, 100.0), 350.0, 3.5 * 100.0 * 100.0},
      // Erlang-4 with mean 1000: four phases of mean 250, variance 4 * 250^2.
      {"erlang(4, mean 1000)", Distribution::erlang(4, 1000.0), 1000.0, 4.0 * 250.0 * 250.0},
      // p = (0.2, 0.8), means (5000, 250): mean = 1000 + 200 = 1200;
      // E[X^2] = sum p_i 2 m_i^2 = 0.2*2*25e6 + 0.8*2*62500 = 1.01e7; variance = 1.01e7 - 1.44e6.
      {"hyperexponential(0.2/5000, 0.8/250)", Distribution::hyperexponential({0.2, 0.8}, {5000.0, 250.0}), 1200.0,
       1.01e7 - 1.44e6},
      // Three branches, one with probability 0: it must never be drawn and not count.
      // mean = 0.5*100 + 0.5*300 = 200; E[X^2] = 0.5*2*1e4 + 0.5*2*9e4 = 1e5; variance = 6e4.
      {"hyperexponential(0.5/100, 0/1e6, 0.5/300)", Distribution::hyperexponential({0.5, 0.0, 0.5}, {100.0, 1e6, 300.0}), 200.0,
       6e4},
      // Balanced: mean 1000, scv 4 => variance 4e6.
      {"hyperexponential_balanced(1000, scv 4)", Distribution::hyperexponential_balanced(1000.0, 4.0), 1000.0, 4e6},
      // Balanced with scv 1 is a plain exponential (both branches of mean 1000).
      {"hyperexponential_balanced(1000, scv 1)", Distribution::hyperexponential_balanced(1000.0, 1.0), 1000.0, 1e6},
      // {1, 2, 3, 4, 10}: mean 4; population variance (1+4+9+16+100)/5 - 16 = 10.
      {"empirical_samples(1,2,3,4,10)", Distribution::empirical_samples({10.0, 3.0, 1.0, 4.0, 2.0}), 4.0, 10.0},
      // Points (10%, 100), (50%, 200), (90%, 400), (100%, 1000): mass 0.1 at 100, then uniform
      // pieces of mass 0.4 on [100, 200], 0.4 on [200, 400], 0.1 on [400, 1000].
      // mean = 10 + 0.4*150 + 0.4*300 + 0.1*700 = 260.
      // E[X^2] = 0.1*1e4 + 0.4*(1e4+2e4+4e4)/3 + 0.4*(4e4+8e4+16e4)/3 + 0.1*(16e4+40e4+100e4)/3
      //        = 1000 + 28000/3 + 112000/3 + 52000 = 53000 + 140000/3; variance = that - 260^2.
      {"empirical_percentiles(10:100, 50:200, 90:400, 100:1000)",
       Distribution::empirical_percentiles({{50.0, 200.0}, {10.0, 100.0}, {100.0, 1000.0}, {90.0, 400.0}}), 260.0,
       53000.0 + 140000.0 / 3.0 - 260.0 * 260.0},
  };
}

// The inverse CDF described in distribution.h for a percentile list, written out independently.
double percentile_quantile(const std::vector<std::pair<double, double>>& points, double u) {
  if (u <= points.front().first / 100.0) return points.front().second;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const double q0 = points[i - 1].first / 100.0, q1 = points[i].first / 100.0;
    if (u <= q1) return points[i - 1].second + (u - q0) / (q1 - q0) * (points[i].second - points[i - 1].second);
  }
  return points.back().second;
}

}  // namespace

TEST_CASE("Distribution: analytic mean, variance and scv equal the hand-worked values") {
  for (const auto& c : cases()) {
    CAPTURE(c.label);
    CHECK(c.dist.mean() == doctest::Approx(c.mean).epsilon(1e-12));
    CHECK(c.dist.variance() == doctest::Approx(c.variance).epsilon(1e-12));
    CHECK(c.dist.scv() == doctest::Approx(c.variance / (c.mean * c.mean)).epsilon(1e-12));
  }
  // A few scv values that are textbook constants.
  CHECK(Distribution::exponential(123.0).scv() == doctest::Approx(1.0));
  CHECK(Distribution::erlang(5, 77.0).scv() == doctest::Approx(0.2));
  CHECK(Distribution::gamma(0.25, 3.0).scv() == doctest::Approx(4.0));
  CHECK(Distribution::lognormal_mean_cv(10.0, 0.7).scv() == doctest::Approx(0.49));
  CHECK(Distribution::hyperexponential_balanced(5.0, 9.0).scv() == doctest::Approx(9.0));
  // Mean 0: scv is defined as 0 rather than a division by zero.
  CHECK(Distribution::deterministic(0.0).scv() == 0.0);
  CHECK(Distribution::exponential(0.0).scv() == 0.0);
  CHECK(Distribution().mean() == 0.0);  // default: deterministic 0
  CHECK(Distribution().kind() == Distribution::Kind::Deterministic);
}

TEST_CASE("Distribution: sample mean and variance of 400k draws match mean() and variance()") {
  Rng rng = Rng::for_stream(20240601, 0, 0);
  for (const auto& c : cases()) {
    CAPTURE(c.label);
    const SampleMoments s = moments_of(sample(c.dist, rng));
    const double n = static_cast<double>(kDraws);
    const double se_mean = std::sqrt(c.dist.variance() / n);
    const double se_var = std::sqrt(std::max(0.0, s.mu4 - s.variance * s.variance) / n);
    // Deterministic has SE 0: allow rounding only.
    const double slack = 1e-9 * (1.0 + std::fabs(c.dist.mean()));
    CAPTURE(s.mean);
    CAPTURE(s.variance);
    CHECK(std::fabs(s.mean - c.dist.mean()) <= kStandardErrors * se_mean + slack);
    CHECK(std::fabs(s.variance - c.dist.variance()) <= kStandardErrors * se_var + slack * c.dist.mean());
  }
}

TEST_CASE("Distribution: hyperexponential never draws a zero-probability branch") {
  // Branch 1 has mean 1e9 and probability 0: a single draw from it would stand out.
  const auto d = Distribution::hyperexponential({0.5, 0.0, 0.5}, {100.0, 1e9, 300.0});
  Rng rng(3);
  double biggest = 0.0;
  for (int i = 0; i < 200'000; ++i) biggest = std::max(biggest, d.sample(rng));
  CHECK(biggest < 300.0 * 30.0);  // P(exp(300) > 9000) = e^-30 per draw
  // Probabilities are cumulated internally; a first branch of probability 1 takes every draw.
  const auto only_first = Distribution::hyperexponential({1.0, 0.0}, {10.0, 1e9});
  for (int i = 0; i < 10'000; ++i) REQUIRE(only_first.sample(rng) < 10.0 * 40.0);
}

TEST_CASE("Distribution: empirical_samples draws only its samples, each about equally often") {
  const auto d = Distribution::empirical_samples({5.0, 1.0, 3.0});
  Rng rng(11);
  int count[3] = {0, 0, 0};
  const int n = 300'000;
  for (int i = 0; i < n; ++i) {
    const double x = d.sample(rng);
    REQUIRE((x == 1.0 || x == 3.0 || x == 5.0));
    ++count[x == 1.0 ? 0 : x == 3.0 ? 1 : 2];
  }
  // Each is Binomial(n, 1/3): SE = sqrt(n * 2/9) ~ 258; allow 5 SE.
  for (int c : count) CHECK(std::abs(c - n / 3) < 5 * 258);
  // A single sample is a constant.
  const auto one = Distribution::empirical_samples({42.0});
  CHECK(one.sample(rng) == 42.0);
  CHECK(one.variance() == 0.0);
}

TEST_CASE("Distribution: empirical_percentiles reproduces its points as quantiles") {
  const std::vector<std::pair<double, double>> points = {{1.0, 20.0}, {50.0, 100.0}, {90.0, 180.0}, {99.0, 400.0}, {99.9, 900.0}};
  const auto d = Distribution::empirical_percentiles(points);
  Rng rng(99);
  auto x = sample(d, rng);
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());

  for (const auto& point : points) {
    const double percent = point.first, value = point.second;  // (clang 14: CAPTURE cannot capture a binding)
    CAPTURE(percent);
    const double p = percent / 100.0;
    // The sample p-quantile lies, with overwhelming probability, between the true quantiles at
    // p -/+ 5 standard errors of an empirical proportion, sqrt(p (1 - p) / n).
    const double se_p = std::sqrt(p * (1.0 - p) / n);
    const double lo = percentile_quantile(points, std::max(0.0, p - kStandardErrors * se_p));
    const double hi = percentile_quantile(points, std::min(1.0, p + kStandardErrors * se_p));
    const auto idx = static_cast<std::size_t>(std::min(n - 1.0, std::ceil(p * n) - 1.0));
    CAPTURE(x[idx]);
    CHECK(x[idx] >= lo);
    CHECK(x[idx] <= hi);
    // And the listed value itself: P(X < value) <= p <= P(X <= value), as proportions of the
    // draws (the two differ at the first and last value, which carry point masses).
    const double below = static_cast<double>(std::lower_bound(x.begin(), x.end(), value) - x.begin()) / n;
    const double at_or_below = static_cast<double>(std::upper_bound(x.begin(), x.end(), value) - x.begin()) / n;
    CHECK(below <= p + kStandardErrors * se_p);
    CHECK(at_or_below >= p - kStandardErrors * se_p);
  }
  // No tails are invented: nothing below the first value or above the last.
  CHECK(x.front() == 20.0);
  CHECK(x.back() == 900.0);
  // Mass p_first sits exactly at the first value and 1 - p_last exactly at the last value.
  const double at_first = static_cast<double>(std::count(x.begin(), x.end(), 20.0)) / n;
  const double at_last = static_cast<double>(std::count(x.begin(), x.end(), 900.0)) / n;
  CHECK(std::fabs(at_first - 0.01) < kStandardErrors * std::sqrt(0.01 * 0.99 / n));
  CHECK(std::fabs(at_last - 0.001) < kStandardErrors * std::sqrt(0.001 * 0.999 / n));

  // One point only: a constant (the value covers both "below" and "above").
  const auto single = Distribution::empirical_percentiles({{50.0, 7.0}});
  CHECK(single.sample(rng) == 7.0);
  CHECK(single.mean() == 7.0);
  CHECK(single.variance() == 0.0);
}

TEST_CASE("Distribution: sample_ns is never negative and rounds to the nearest nanosecond") {
  // Normal with mean near 0: about half of the untruncated draws are negative.
  const auto d = Distribution::normal(10.0, 100.0);
  Rng rng(5);
  bool never_negative = true;
  int zeros = 0, negatives_untruncated = 0;
  for (int i = 0; i < 100'000; ++i) {
    Rng copy = rng;
    if (d.sample(copy) < 0.0) ++negatives_untruncated;  // sample() itself is untruncated
    const time_ns t = d.sample_ns(rng);
    never_negative = never_negative && t >= 0;
    zeros += t == 0;
  }
  CHECK(never_negative);
  CHECK(negatives_untruncated > 40'000);  // ~46% of N(10, 100) is below 0
  CHECK(zeros >= negatives_untruncated);  // each negative draw became 0 (plus draws in [0, 0.5))
  // Rounding to nearest.
  CHECK(Distribution::deterministic(2.4).sample_ns(rng) == 2);
  CHECK(Distribution::deterministic(2.5).sample_ns(rng) == 3);
  CHECK(Distribution::deterministic(0.0).sample_ns(rng) == 0);
  CHECK(Distribution::deterministic(1e12).sample_ns(rng) == 1'000'000'000'000);
  CHECK(Distribution::empirical_samples({-5.0}).sample_ns(rng) == 0);
  CHECK(Distribution::uniform(-10.0, -1.0).sample_ns(rng) == 0);
}

TEST_CASE("Distribution: sampling is reproducible from the stream alone") {
  // The same stream state gives the same draws; nothing is cached between calls (the polar
  // method's spare normal is deliberately not kept).
  for (const auto& c : cases()) {
    CAPTURE(c.label);
    Rng a(77), b(77);
    std::vector<double> xa, xb;
    for (int i = 0; i < 1000; ++i) xa.push_back(c.dist.sample(a));
    Distribution copy = c.dist;
    for (int i = 0; i < 1000; ++i) xb.push_back(copy.sample(b));
    CHECK(xa == xb);
  }
}

TEST_CASE("Distribution: lognormals of equal parameters share a table and draw bit for bit alike") {
  // The quantile table is interned by (mu, sigma): a second distribution, one built after every
  // holder of the first table is gone, and one of other parameters each draw what a table of
  // their own would give.
  auto draws = [](const Distribution& d) {
    Rng rng(2024);
    std::vector<double> x;
    for (int i = 0; i < 5000; ++i) x.push_back(d.sample(rng));
    return x;
  };
  std::vector<double> first;
  {
    const Distribution a = Distribution::lognormal_mean_cv(1.0, 0.35);
    const Distribution b = Distribution::lognormal_mean_cv(1.0, 0.35);
    first = draws(a);
    CHECK(draws(b) == first);
  }
  const Distribution later = Distribution::lognormal_mean_cv(1.0, 0.35);  // the table rebuilt
  CHECK(draws(later) == first);
  const Distribution other = Distribution::lognormal_mean_cv(1.0, 0.36);
  CHECK(draws(other) != first);
  // Many short-lived parameter sets (a calibration's) leave the cache swept, not grown.
  for (int i = 0; i < 500; ++i) CHECK(Distribution::lognormal(100.0 + i, 0.5).mean() > 0.0);
  CHECK(draws(Distribution::lognormal_mean_cv(1.0, 0.35)) == first);
}

TEST_CASE("Distribution: invalid parameters throw std::invalid_argument") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(Distribution::deterministic(-1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::deterministic(nan), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::deterministic(inf), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::exponential(-1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::exponential(inf), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::uniform(3.0, 2.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::uniform(0.0, inf), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::normal(nan, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::normal(0.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::lognormal(0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::lognormal(-1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::lognormal(1.0, -0.1), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::lognormal_mean_cv(0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::lognormal_mean_cv(1.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::gamma(0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::gamma(-2.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::gamma(1.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::erlang(0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::erlang(2, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::hyperexponential({}, {}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::hyperexponential({0.5}, {1.0, 2.0}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::hyperexponential({0.5, 0.4}, {1.0, 2.0}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::hyperexponential({1.5, -0.5}, {1.0, 2.0}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::hyperexponential({0.5, 0.5}, {1.0, -2.0}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::hyperexponential_balanced(1.0, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::hyperexponential_balanced(0.0, 2.0), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::empirical_samples({}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::empirical_samples({1.0, nan}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::empirical_percentiles({}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::empirical_percentiles({{0.0, 1.0}}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::empirical_percentiles({{101.0, 1.0}}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::empirical_percentiles({{50.0, 1.0}, {50.0, 2.0}}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::empirical_percentiles({{50.0, 2.0}, {90.0, 1.0}}), std::invalid_argument);
  CHECK_THROWS_AS(Distribution::empirical_percentiles({{50.0, inf}}), std::invalid_argument);
  // Boundary values that are valid.
  CHECK_NOTHROW(Distribution::deterministic(0.0));
  CHECK_NOTHROW(Distribution::uniform(2.0, 2.0));
  CHECK_NOTHROW(Distribution::normal(-5.0, 0.0));
  CHECK_NOTHROW(Distribution::hyperexponential_balanced(1.0, 1.0));
  CHECK_NOTHROW(Distribution::empirical_percentiles({{100.0, 3.0}}));
}

TEST_CASE("Distribution: describe() names every kind") {
  for (const auto& c : cases()) {
    CAPTURE(c.label);
    const std::string text = c.dist.describe();
    CHECK_FALSE(text.empty());
    // The first word of the label is the kind, e.g. "gamma" (erlang is described as a gamma,
    // lognormal_mean_cv as a lognormal, the balanced form as a hyperexponential).
    std::string kind = c.label.substr(0, c.label.find_first_of("(_"));
    if (kind == "erlang") kind = "gamma";
    CAPTURE(text);
    CHECK(text.find(kind) != std::string::npos);
  }
  CHECK(Distribution::exponential(1000.0).describe() == "exponential(mean=1000)");
}
