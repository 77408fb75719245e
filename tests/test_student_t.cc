// Student t quantiles against published table values and closed forms; t confidence intervals.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "sim/student_t.h"

using vqsim::sim::confidence_interval;
using vqsim::sim::Interval;
using vqsim::sim::student_t_quantile;

namespace {
double rel_err(double a, double b) { return std::abs(a - b) / std::abs(b); }
}  // namespace

TEST_CASE("Student t: quantile(0.975) matches table values for df = 1, 2, 10, 30, 1000") {
  CHECK(rel_err(student_t_quantile(0.975, 1), 12.7062047) < 1e-8);
  CHECK(rel_err(student_t_quantile(0.975, 2), 4.30265273) < 1e-8);
  CHECK(rel_err(student_t_quantile(0.975, 4), 2.77644511) < 1e-8);
  CHECK(rel_err(student_t_quantile(0.975, 10), 2.22813885) < 1e-8);
  CHECK(rel_err(student_t_quantile(0.975, 30), 2.04227246) < 1e-8);
  CHECK(rel_err(student_t_quantile(0.975, 1000), 1.96233908) < 1e-8);
  // Other levels from the same tables.
  CHECK(rel_err(student_t_quantile(0.95, 5), 2.01504837) < 1e-8);
  CHECK(rel_err(student_t_quantile(0.995, 20), 2.84533971) < 1e-8);
  CHECK(rel_err(student_t_quantile(0.9995, 3), 12.9239786) < 1e-8);
  // Large df approaches the normal quantile 1.959963985.
  CHECK(rel_err(student_t_quantile(0.975, 10000000), 1.959964) < 1e-6);
}

TEST_CASE("Student t: quantile equals the closed forms for df = 1 (Cauchy) and df = 2") {
  // df = 1: t = tan(pi (p - 1/2)).  df = 2: with u = 2p - 1, t = u sqrt(2 / (1 - u^2)).
  for (double p : {0.5000001, 0.51, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999}) {
    CHECK(rel_err(student_t_quantile(p, 1), std::tan(std::numbers::pi * (p - 0.5))) < 1e-9);
    const double u = 2.0 * p - 1.0;
    CHECK(rel_err(student_t_quantile(p, 2), u * std::sqrt(2.0 / (1.0 - u * u))) < 1e-9);
  }
}

TEST_CASE("Student t: symmetry, median and monotonicity") {
  CHECK(student_t_quantile(0.5, 7) == 0.0);
  CHECK(student_t_quantile(0.025, 10) == doctest::Approx(-2.22813885).epsilon(1e-8));
  double prev = 0.0;
  for (double p = 0.55; p < 0.9999; p += 0.05) {
    const double t = student_t_quantile(p, 3);
    CHECK(t > prev);
    prev = t;
  }
  // Heavier tails for fewer degrees of freedom.
  CHECK(student_t_quantile(0.99, 3) > student_t_quantile(0.99, 4));
  CHECK_THROWS_AS(student_t_quantile(0.975, 0), std::invalid_argument);
  CHECK_THROWS_AS(student_t_quantile(1.0, 5), std::invalid_argument);
  CHECK_THROWS_AS(student_t_quantile(0.0, 5), std::invalid_argument);
  CHECK_THROWS_AS(student_t_quantile(std::numeric_limits<double>::quiet_NaN(), 5), std::invalid_argument);
}

TEST_CASE("Student t: confidence interval on a hand example") {
  // Samples 1..5: mean 3, sample variance 2.5, t_{0.975,4} = 2.776445105,
  // half width = 2.776445105 * sqrt(2.5 / 5) = 1.963243161.
  const std::vector<double> xs = {1.0, 2.0, 3.0, 4.0, 5.0};
  const Interval ci = confidence_interval(xs);
  CHECK(ci.n == 5);
  CHECK(ci.mean == doctest::Approx(3.0).epsilon(1e-15));
  CHECK(ci.half_width == doctest::Approx(1.963243161).epsilon(1e-8));
  CHECK(ci.lower == doctest::Approx(3.0 - 1.963243161).epsilon(1e-8));
  CHECK(ci.upper == doctest::Approx(3.0 + 1.963243161).epsilon(1e-8));
  // 90% level: t_{0.95,4} = 2.131846786.
  CHECK(confidence_interval(xs, 0.90).half_width == doctest::Approx(2.131846786 * std::sqrt(0.5)).epsilon(1e-8));
}

TEST_CASE("Student t: confidence interval uses Welford (no cancellation with a large offset)") {
  // Values 1e9 + {1, 2, 3}: variance 1; the naive sum-of-squares formula loses it entirely.
  const std::vector<double> xs = {1e9 + 1.0, 1e9 + 2.0, 1e9 + 3.0};
  const Interval ci = confidence_interval(xs);
  CHECK(ci.mean == doctest::Approx(1e9 + 2.0).epsilon(1e-15));
  CHECK(ci.half_width == doctest::Approx(4.30265273 / std::sqrt(3.0)).epsilon(1e-8));
}

TEST_CASE("Student t: confidence interval with fewer than two samples has zero width, never NaN") {
  const std::vector<double> one = {42.0};
  const Interval a = confidence_interval(one);
  CHECK(a.n == 1);
  CHECK(a.mean == 42.0);
  CHECK(a.half_width == 0.0);
  CHECK(a.lower == 42.0);
  CHECK(a.upper == 42.0);
  const Interval b = confidence_interval(std::vector<double>{});
  CHECK(b.n == 0);
  CHECK(b.mean == 0.0);
  CHECK(b.half_width == 0.0);
  // Zero-variance data also has zero width, told apart by n.
  const Interval c = confidence_interval(std::vector<double>{7.0, 7.0, 7.0});
  CHECK(c.n == 3);
  CHECK(c.half_width == 0.0);
  CHECK_THROWS_AS(confidence_interval(std::vector<double>{1.0, std::nan("")}), std::invalid_argument);
  CHECK_THROWS_AS(confidence_interval(std::vector<double>{1.0, 2.0}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(confidence_interval(std::vector<double>{1.0, 2.0}, 0.0), std::invalid_argument);
}
