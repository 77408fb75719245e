#include "sim/distribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>

namespace vqsim::sim {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

bool finite_nonneg(double x) { return std::isfinite(x) && x >= 0.0; }

}  // namespace

namespace {
// Marsaglia & Tsang's ziggurat for the standard normal ("The Ziggurat Method for Generating
// Random Variables", J. Stat. Software 5(8), 2000), 128 layers. It replaces the polar method,
// whose log and sqrt per pair made normal draws the single largest cost of an I/O-path run.
// One change from the paper, after Doornik (2005): the layer index comes from bits of the
// 64-bit draw that the value does not use, so layer and value are independent.
struct Ziggurat {
  double kn_threshold[128];  // |hz| below this: inside the layer's rectangle
  double wn[128];            // hz * wn = x
  double fn[128];            // density at the layer's edge
  Ziggurat() {
    const double m1 = 2147483648.0;
    double dn = 3.442619855899, tn = dn;
    const double vn = 9.91256303526217e-3;
    const double q = vn / std::exp(-0.5 * dn * dn);
    kn_threshold[0] = (dn / q) * m1;
    kn_threshold[1] = 0;
    wn[0] = q / m1;
    wn[127] = dn / m1;
    fn[0] = 1.0;
    fn[127] = std::exp(-0.5 * dn * dn);
    for (int i = 126; i >= 1; --i) {
      dn = std::sqrt(-2.0 * std::log(vn / dn + std::exp(-0.5 * dn * dn)));
      kn_threshold[i + 1] = (dn / tn) * m1;
      tn = dn;
      fn[i] = std::exp(-0.5 * dn * dn);
      wn[i] = dn / m1;
    }
  }
};
const Ziggurat kZig;
}  // namespace

double standard_normal_quantile(double p) noexcept {
  // P. J. Acklam's rational approximation of the inverse normal CDF (relative error < 1.2e-9).
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double low = 0.02425, high = 1 - low;
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  if (p < low) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p <= high) {
    const double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double q = std::sqrt(-2 * std::log(1 - p));
  return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
         ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
}

double standard_normal(Rng& rng) noexcept {
  constexpr double r = 3.442619855899;  // start of the tail
  for (;;) {
    const std::uint64_t bits = rng.next_u64();
    const auto hz = static_cast<std::int32_t>(static_cast<std::uint32_t>(bits >> 32));
    const unsigned iz = static_cast<unsigned>(bits) & 127u;
    const double ahz = std::fabs(static_cast<double>(hz));
    if (ahz < kZig.kn_threshold[iz]) return static_cast<double>(hz) * kZig.wn[iz];
    const double x = static_cast<double>(hz) * kZig.wn[iz];
    if (iz == 0) {
      // The tail beyond r, by Marsaglia's exponential rejection.
      double tx, ty;
      do {
        tx = -std::log(rng.uniform_open0()) / r;
        ty = -std::log(rng.uniform_open0());
      } while (ty + ty < tx * tx);
      return hz > 0 ? r + tx : -r - tx;
    }
    if (kZig.fn[iz] + rng.uniform01() * (kZig.fn[iz - 1] - kZig.fn[iz]) < std::exp(-0.5 * x * x)) return x;
  }
}

double standard_gamma(Rng& rng, double shape) noexcept {
  if (shape < 1.0) {
    // Gamma(a) = Gamma(a + 1) * U^(1/a)  (Marsaglia & Tsang, section 6).
    const double u = rng.uniform_open0();
    return standard_gamma(rng, shape + 1.0) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0.0;
    double v = 0.0;
    do {
      x = standard_normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = rng.uniform_open0();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

Distribution Distribution::deterministic(double value) {
  require(finite_nonneg(value), "deterministic: value must be finite and >= 0");
  Distribution d;
  d.kind_ = Kind::Deterministic;
  d.a_ = value;
  return d;
}

Distribution Distribution::exponential(double mean) {
  require(finite_nonneg(mean), "exponential: mean must be finite and >= 0");
  Distribution d;
  d.kind_ = Kind::Exponential;
  d.a_ = mean;
  return d;
}

Distribution Distribution::uniform(double low, double high) {
  require(std::isfinite(low) && std::isfinite(high) && low <= high, "uniform: need finite low <= high");
  Distribution d;
  d.kind_ = Kind::Uniform;
  d.a_ = low;
  d.b_ = high;
  return d;
}

Distribution Distribution::normal(double mean, double stddev) {
  require(std::isfinite(mean) && finite_nonneg(stddev), "normal: need finite mean and stddev >= 0");
  Distribution d;
  d.kind_ = Kind::Normal;
  d.a_ = mean;
  d.b_ = stddev;
  return d;
}

Distribution Distribution::lognormal(double median, double sigma) {
  require(std::isfinite(median) && median > 0.0 && finite_nonneg(sigma), "lognormal: need median > 0 and sigma >= 0");
  Distribution d;
  d.kind_ = Kind::Lognormal;
  d.a_ = std::log(median);  // mu of the underlying normal
  d.b_ = sigma;
  // Sampling by inverse CDF from a table of quantiles at u = k / kLognormalGrid, linear in
  // between, exact (Acklam's quantile, then exp) in the first and last cell where the curve
  // bends most: one uniform draw and a few flops instead of a normal draw and an exp. The
  // interpolation moves the mean by less than 1e-5 of itself at sigma = 1.
  if (sigma > 0) d.table_ = lognormal_table(d.a_, sigma);
  return d;
}

std::shared_ptr<const double[]> Distribution::lognormal_table(double mu, double sigma) {
  // Interned by the exact bits of (mu, sigma): every holder of a table gets the same values it
  // would have computed itself. The cache holds weak references, so tables of parameters no
  // longer in use (a calibration tries thousands) are freed; expired entries are swept when the
  // cache has doubled since the last sweep.
  struct Cache {
    std::mutex mutex;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::weak_ptr<const double[]>> tables;
    std::size_t sweep_at = 64;
  };
  static Cache cache;
  std::uint64_t mu_bits = 0, sigma_bits = 0;
  std::memcpy(&mu_bits, &mu, sizeof mu);
  std::memcpy(&sigma_bits, &sigma, sizeof sigma);
  const std::lock_guard<std::mutex> lock(cache.mutex);
  std::weak_ptr<const double[]>& slot = cache.tables[{mu_bits, sigma_bits}];
  if (std::shared_ptr<const double[]> shared = slot.lock()) return shared;
  std::shared_ptr<double[]> t(new double[kLognormalGrid + 1]());
  for (int k = 1; k < kLognormalGrid; ++k)
    t[static_cast<std::size_t>(k)] = std::exp(mu + sigma * standard_normal_quantile(static_cast<double>(k) / kLognormalGrid));
  slot = t;
  if (cache.tables.size() >= cache.sweep_at) {
    std::erase_if(cache.tables, [](const auto& entry) { return entry.second.expired(); });
    cache.sweep_at = std::max<std::size_t>(64, 2 * cache.tables.size());
  }
  return t;
}

Distribution Distribution::lognormal_mean_cv(double mean, double cv) {
  require(std::isfinite(mean) && mean > 0.0 && finite_nonneg(cv), "lognormal: need mean > 0 and cv >= 0");
  const double sigma2 = std::log1p(cv * cv);
  return lognormal(mean / std::sqrt(1.0 + cv * cv), std::sqrt(sigma2));
}

Distribution Distribution::gamma(double shape, double scale) {
  require(std::isfinite(shape) && shape > 0.0 && finite_nonneg(scale), "gamma: need shape > 0 and scale >= 0");
  Distribution d;
  d.kind_ = Kind::Gamma;
  d.a_ = shape;
  d.b_ = scale;
  return d;
}

Distribution Distribution::erlang(int phases, double mean) {
  require(phases >= 1, "erlang: need at least one phase");
  require(finite_nonneg(mean), "erlang: mean must be finite and >= 0");
  return gamma(static_cast<double>(phases), mean / phases);
}

Distribution Distribution::hyperexponential(std::vector<double> probabilities, std::vector<double> means) {
  require(!probabilities.empty() && probabilities.size() == means.size(),
          "hyperexponential: need as many probabilities as means, at least one");
  double total = 0.0;
  for (std::size_t i = 0; i < probabilities.size(); ++i) {
    require(finite_nonneg(probabilities[i]) && finite_nonneg(means[i]), "hyperexponential: probabilities and means must be >= 0");
    total += probabilities[i];
  }
  require(std::fabs(total - 1.0) < 1e-9, "hyperexponential: probabilities must sum to 1");
  Distribution d;
  d.kind_ = Kind::Hyperexponential;
  std::partial_sum(probabilities.begin(), probabilities.end(), probabilities.begin());
  probabilities.back() = 1.0;
  d.p_ = std::move(probabilities);
  d.q_ = std::move(means);
  return d;
}

Distribution Distribution::hyperexponential_balanced(double mean, double scv) {
  require(std::isfinite(mean) && mean > 0.0 && std::isfinite(scv) && scv >= 1.0,
          "hyperexponential: balanced form needs mean > 0 and scv >= 1");
  const double p1 = 0.5 * (1.0 + std::sqrt((scv - 1.0) / (scv + 1.0)));
  const double p2 = 1.0 - p1;
  return hyperexponential({p1, p2}, {mean / (2.0 * p1), mean / (2.0 * p2)});
}

Distribution Distribution::empirical_samples(std::vector<double> samples) {
  require(!samples.empty(), "empirical: need at least one sample");
  for (double x : samples) require(std::isfinite(x), "empirical: samples must be finite");
  Distribution d;
  d.kind_ = Kind::Empirical;
  std::sort(samples.begin(), samples.end());
  d.p_ = std::move(samples);
  const double n = static_cast<double>(d.p_.size());
  d.q_.resize(d.p_.size());
  for (std::size_t i = 0; i < d.q_.size(); ++i) d.q_[i] = static_cast<double>(i + 1) / n;
  d.c_ = 0.0;  // 0: discrete (pick a sample); 1: piecewise-linear inverse CDF
  return d;
}

Distribution Distribution::empirical_percentiles(std::vector<std::pair<double, double>> percent_value) {
  require(!percent_value.empty(), "empirical: need at least one percentile point");
  std::sort(percent_value.begin(), percent_value.end());
  Distribution d;
  d.kind_ = Kind::Empirical;
  d.c_ = 1.0;
  double last_value = -INFINITY;
  double last_percent = -1.0;
  for (const auto& [percent, value] : percent_value) {
    require(std::isfinite(percent) && percent > 0.0 && percent <= 100.0, "empirical: percentiles must lie in (0, 100]");
    require(percent > last_percent, "empirical: a percentile is listed twice");
    require(std::isfinite(value) && value >= last_value, "empirical: values must not decrease with the percentile");
    d.q_.push_back(percent / 100.0);
    d.p_.push_back(value);
    last_value = value;
    last_percent = percent;
  }
  return d;
}

double Distribution::lognormal_tail(double u) const noexcept {
  const double q = std::min(u / kLognormalGrid, 1.0 - 0x1.0p-53);
  return std::exp(a_ + b_ * standard_normal_quantile(q));
}

double Distribution::sample_other(Rng& rng) const noexcept {
  switch (kind_) {
    case Kind::Deterministic:
      return a_;
    case Kind::Exponential:
      return -a_ * std::log(rng.uniform_open0());
    case Kind::Uniform:
      return a_ + (b_ - a_) * rng.uniform01();
    case Kind::Normal:
      return a_ + b_ * standard_normal(rng);
    case Kind::Lognormal:
      return std::exp(a_);  // reached only without a table (sd 0); sample() draws from the table
    case Kind::Gamma:
      return b_ * standard_gamma(rng, a_);
    case Kind::Hyperexponential: {
      const double u = rng.uniform01();
      std::size_t i = 0;
      while (i + 1 < p_.size() && u >= p_[i]) ++i;
      return -q_[i] * std::log(rng.uniform_open0());
    }
    case Kind::Empirical: {
      if (c_ == 0.0) return p_[rng.below(p_.size())];
      const double u = rng.uniform01();
      if (u <= q_.front()) return p_.front();
      if (u >= q_.back()) return p_.back();
      const auto it = std::upper_bound(q_.begin(), q_.end(), u);
      const std::size_t hi = static_cast<std::size_t>(it - q_.begin());
      const std::size_t lo = hi - 1;
      const double f = (u - q_[lo]) / (q_[hi] - q_[lo]);
      return p_[lo] + f * (p_[hi] - p_[lo]);
    }
  }
  return 0.0;
}

double Distribution::mean() const noexcept {
  switch (kind_) {
    case Kind::Deterministic:
    case Kind::Exponential:
      return a_;
    case Kind::Uniform:
      return 0.5 * (a_ + b_);
    case Kind::Normal:
      return a_;
    case Kind::Lognormal:
      return std::exp(a_ + 0.5 * b_ * b_);
    case Kind::Gamma:
      return a_ * b_;
    case Kind::Hyperexponential: {
      double m = 0.0, prev = 0.0;
      for (std::size_t i = 0; i < p_.size(); ++i) {
        m += (p_[i] - prev) * q_[i];
        prev = p_[i];
      }
      return m;
    }
    case Kind::Empirical: {
      if (c_ == 0.0) return std::accumulate(p_.begin(), p_.end(), 0.0) / static_cast<double>(p_.size());
      // Mass q_0 at the first value, trapezoids between points, the rest at the last value.
      double m = q_.front() * p_.front();
      for (std::size_t i = 1; i < p_.size(); ++i) m += (q_[i] - q_[i - 1]) * 0.5 * (p_[i] + p_[i - 1]);
      return m + (1.0 - q_.back()) * p_.back();
    }
  }
  return 0.0;
}

double Distribution::variance() const noexcept {
  switch (kind_) {
    case Kind::Deterministic:
      return 0.0;
    case Kind::Exponential:
      return a_ * a_;
    case Kind::Uniform:
      return (b_ - a_) * (b_ - a_) / 12.0;
    case Kind::Normal:
      return b_ * b_;
    case Kind::Lognormal:
      return std::expm1(b_ * b_) * std::exp(2.0 * a_ + b_ * b_);
    case Kind::Gamma:
      return a_ * b_ * b_;
    case Kind::Hyperexponential: {
      double m2 = 0.0, prev = 0.0;
      for (std::size_t i = 0; i < p_.size(); ++i) {
        m2 += (p_[i] - prev) * 2.0 * q_[i] * q_[i];
        prev = p_[i];
      }
      const double m = mean();
      return m2 - m * m;
    }
    case Kind::Empirical: {
      const double m = mean();
      double m2 = 0.0;
      if (c_ == 0.0) {
        for (double x : p_) m2 += x * x;
        return m2 / static_cast<double>(p_.size()) - m * m;
      }
      // Second moment of a uniform on [a, b] is (a^2 + ab + b^2) / 3.
      m2 = q_.front() * p_.front() * p_.front();
      for (std::size_t i = 1; i < p_.size(); ++i) {
        const double a = p_[i - 1], b = p_[i];
        m2 += (q_[i] - q_[i - 1]) * (a * a + a * b + b * b) / 3.0;
      }
      m2 += (1.0 - q_.back()) * p_.back() * p_.back();
      return std::max(0.0, m2 - m * m);
    }
  }
  return 0.0;
}

double Distribution::scv() const noexcept {
  const double m = mean();
  return m == 0.0 ? 0.0 : variance() / (m * m);
}

std::string Distribution::describe() const {
  char buf[160];
  switch (kind_) {
    case Kind::Deterministic:
      std::snprintf(buf, sizeof buf, "deterministic(%g)", a_);
      break;
    case Kind::Exponential:
      std::snprintf(buf, sizeof buf, "exponential(mean=%g)", a_);
      break;
    case Kind::Uniform:
      std::snprintf(buf, sizeof buf, "uniform(%g, %g)", a_, b_);
      break;
    case Kind::Normal:
      std::snprintf(buf, sizeof buf, "normal(mean=%g, stddev=%g)", a_, b_);
      break;
    case Kind::Lognormal:
      std::snprintf(buf, sizeof buf, "lognormal(median=%g, sigma=%g)", std::exp(a_), b_);
      break;
    case Kind::Gamma:
      std::snprintf(buf, sizeof buf, "gamma(shape=%g, scale=%g)", a_, b_);
      break;
    case Kind::Hyperexponential:
      std::snprintf(buf, sizeof buf, "hyperexponential(%zu branches, mean=%g, scv=%g)", p_.size(), mean(), scv());
      break;
    case Kind::Empirical:
      std::snprintf(buf, sizeof buf, "empirical(%zu %s, mean=%g)", p_.size(), c_ == 0.0 ? "samples" : "percentiles", mean());
      break;
  }
  return buf;
}

}  // namespace vqsim::sim
