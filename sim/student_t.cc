// Student's t quantile via the regularized incomplete beta function; see student_t.h.
#include "sim/student_t.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace vqsim::sim {

namespace {

// ln Gamma(x) for x > 0 by the Lanczos approximation (g = 7, 9 coefficients; ~1e-15 relative).
// Written out here rather than calling std::lgamma, which writes the global `signgam` and is
// therefore not safe to call from several simulation threads at once.
double log_gamma(double x) {
  static constexpr double kCoef[9] = {0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
                                      771.32342877765313,   -176.61502916214059,   12.507343278686905,
                                      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  if (x < 0.5) return log_gamma(x + 1.0) - std::log(x);  // Gamma(x) = Gamma(x + 1) / x
  const double xm1 = x - 1.0;
  double a = kCoef[0];
  for (int i = 1; i < 9; ++i) a += kCoef[i] / (xm1 + static_cast<double>(i));
  const double t = xm1 + 7.5;
  return 0.5 * std::log(2.0 * std::numbers::pi) + (xm1 + 0.5) * std::log(t) - t + std::log(a);
}

// Stirling remainder: ln Gamma(x) = (x - 1/2) ln x - x + ln(2 pi)/2 + stirling_delta(x).
double stirling_delta(double x) {
  const double r = 1.0 / x, r2 = r * r;
  return r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 / 1680.0)));
}

// ln B(a, b) = ln Gamma(a) + ln Gamma(b) - ln Gamma(a + b). When the larger argument is big the
// two large log-gammas would cancel, so their difference is formed from Stirling's series instead.
double log_beta(double a, double b) {
  const double big = std::max(a, b), small = std::min(a, b);
  if (big < 20.0) return log_gamma(a) + log_gamma(b) - log_gamma(a + b);
  // ln Gamma(big) - ln Gamma(big + small)
  //   = -(big - 1/2) ln(1 + small/big) - small ln(big + small) + small + delta(big) - delta(big + small)
  const double diff = -(big - 0.5) * std::log1p(small / big) - small * std::log(big + small) + small + stirling_delta(big) -
                      stirling_delta(big + small);
  return log_gamma(small) + diff;
}

// Continued fraction for I_x(a, b) (modified Lentz), valid for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-16;
  const double qab = a + b, qap = a + 1.0, qam = a - 1.0;
  double c = 1.0;
  double d = 1.0 - qab * x / qap;
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 100000; ++m) {
    const double dm = static_cast<double>(m);
    const double m2 = 2.0 * dm;
    // even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m))
    double aa = dm * (b - dm) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    // odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
    aa = -(a + dm) * (qab + dm) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1.0) < kEps) break;
  }
  return h;
}

// Regularized incomplete beta I_x(a, b); y = 1 - x is passed separately so that neither needs to
// be formed by a cancelling subtraction.
double incomplete_beta(double a, double b, double x, double y) {
  if (x <= 0.0) return 0.0;
  if (y <= 0.0) return 1.0;
  const double log_x = x < 0.5 ? std::log(x) : std::log1p(-y);
  const double log_y = y < 0.5 ? std::log(y) : std::log1p(-x);
  const double front = std::exp(a * log_x + b * log_y - log_beta(a, b));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, y) / b;
}

// Upper tail P(T > t) for t >= 0.
double t_upper_tail(double t, double df) {
  const double t2 = t * t;
  const double x = df / (df + t2);
  const double y = t2 / (df + t2);
  // I_x(df/2, 1/2) = 1 - I_y(1/2, df/2); evaluate the form that does not cancel.
  if (y < x) return 0.5 * (1.0 - incomplete_beta(0.5, 0.5 * df, y, x));
  return 0.5 * incomplete_beta(0.5 * df, 0.5, x, y);
}

// Density of Student's t.
double t_pdf(double t, double df) {
  return std::exp(-log_beta(0.5 * df, 0.5) - 0.5 * std::log(df) - 0.5 * (df + 1.0) * std::log1p(t * t / df));
}

}  // namespace

double student_t_quantile(double p, int df) {
  if (df < 1) throw std::invalid_argument("student_t_quantile: df = " + std::to_string(df) + " must be >= 1");
  if (!(p > 0.0 && p < 1.0)) throw std::invalid_argument("student_t_quantile: p = " + std::to_string(p) + " must be in (0, 1)");
  if (p == 0.5) return 0.0;
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);

  const double nu = static_cast<double>(df);
  const double q = 1.0 - p;  // exact for p >= 0.5 (Sterbenz)

  // Bracket the root of tail(t) = q: tail(0) = 1/2 > q, and tail decreases to 0.
  double lo = 0.0, hi = 1.0;
  while (t_upper_tail(hi, nu) > q) {
    lo = hi;
    hi *= 2.0;
    if (!std::isfinite(hi)) throw std::invalid_argument("student_t_quantile: p too close to 1");
  }
  // Newton on f(t) = tail(t) - q (f' = -pdf), falling back to bisection when a step leaves the
  // bracket; the bracket shrinks every iteration.
  double t = 0.5 * (lo + hi);
  for (int it = 0; it < 400; ++it) {
    const double f = t_upper_tail(t, nu) - q;
    if (f == 0.0) return t;
    if (f > 0.0)
      lo = t;
    else
      hi = t;
    const double dens = t_pdf(t, nu);
    double next = dens > 0.0 ? t + f / dens : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    const double step = std::abs(next - t);
    t = next;
    if (step <= 4.0 * std::numeric_limits<double>::epsilon() * t || hi - lo <= 4.0 * std::numeric_limits<double>::epsilon() * hi)
      break;
  }
  return t;
}

Interval confidence_interval(std::span<const double> samples, double level) {
  if (!(level > 0.0 && level < 1.0))
    throw std::invalid_argument("confidence_interval: level = " + std::to_string(level) + " must be in (0, 1)");
  // Welford: running mean and sum of squared deviations.
  double mean = 0.0, m2 = 0.0;
  long long n = 0;
  for (double x : samples) {
    if (!std::isfinite(x)) throw std::invalid_argument("confidence_interval: sample is not finite");
    ++n;
    const double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
  }
  if (n > std::numeric_limits<int>::max()) throw std::invalid_argument("confidence_interval: too many samples");
  Interval out;
  out.n = static_cast<int>(n);
  out.mean = mean;
  if (n >= 2) {
    const double variance = std::max(0.0, m2 / static_cast<double>(n - 1));
    const double t = student_t_quantile(0.5 * (1.0 + level), static_cast<int>(n - 1));
    out.half_width = t * std::sqrt(variance / static_cast<double>(n));
    if (!std::isfinite(out.half_width))
      throw std::invalid_argument("confidence_interval: samples too large, the variance overflows");
  }
  out.lower = mean - out.half_width;
  out.upper = mean + out.half_width;
  return out;
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (!(x > 0.0)) return 0.0;
  if (!(x < 1.0)) return 1.0;
  return incomplete_beta(a, b, x, 1.0 - x);
}

}  // namespace vqsim::sim
