// Student's t distribution quantiles and t-based confidence intervals for the mean.
#pragma once

#include <span>

namespace vqsim::sim {

// Quantile of Student's t distribution with df degrees of freedom: the t with P(T <= t) = p.
// The CDF is evaluated through the regularized incomplete beta function,
//   P(T > t) = I_x(df/2, 1/2) / 2,  x = df / (df + t^2),  t >= 0,
// (continued fraction with the modified Lentz method; cf. Press et al., "Numerical Recipes",
// §6.4) and inverted with a bracketed Newton iteration. Accurate to better than 1e-6 relative for
// df >= 1 and p in (0.5, 0.9999]; p < 0.5 is answered by symmetry, p = 0.5 gives 0.
// Throws std::invalid_argument for df < 1 or p outside the open interval (0, 1).
double student_t_quantile(double p, int df);

// Regularized incomplete beta function I_x(a, b) for a, b > 0, x in [0, 1] (the same continued
// fraction): behind Student's t here and the F test of calibration's repeat checks.
double regularized_incomplete_beta(double a, double b, double x);

// Two-sided confidence interval for the mean of independent, identically distributed samples.
struct Interval {
  double mean = 0.0;        // sample mean (0 when n == 0)
  double half_width = 0.0;  // t_{(1+level)/2, n-1} * s / sqrt(n); 0 when n < 2 (no spread known)
  double lower = 0.0;       // mean - half_width
  double upper = 0.0;       // mean + half_width
  int n = 0;                // number of samples used
};

// Student-t interval with n-1 degrees of freedom; mean and variance by Welford's one-pass method.
// With fewer than two samples the width is unknowable: half_width is 0 and lower == upper == mean,
// and callers must look at `n` to tell this apart from a genuinely zero-variance sample. The
// function never returns NaN or infinity: it throws std::invalid_argument when level is not in
// (0, 1) or a sample is not finite.
Interval confidence_interval(std::span<const double> samples, double level = 0.95);

}  // namespace vqsim::sim
