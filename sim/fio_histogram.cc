// FioHistogram: see fio_histogram.h. Layout and percentile rule follow fio's stat.h / stat.c.
#include "sim/fio_histogram.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>

namespace vqsim::sim {

namespace {

// fio options.c, option "percentile_list", .def = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:
// 99.9:99.95:99.99".
constexpr std::array<double, 17> kFioDefaultPercentiles = {1.0,  5.0,  10.0, 20.0, 30.0, 40.0, 50.0,  60.0, 70.0,
                                                           80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99};

// For index >= 128: the group is index / 64 and the number of discarded error bits is group - 1.
constexpr unsigned error_bits_of(unsigned index) noexcept { return (index >> FioHistogram::kBits) - 1; }

}  // namespace

std::uint64_t FioHistogram::bin_lower_ns(unsigned index) noexcept {
  assert(index < kBins);
  if (index < 2 * kValuesPerGroup) return index;
  const unsigned e = error_bits_of(index);
  const std::uint64_t k = index & (kValuesPerGroup - 1);
  // The group's values have their top bit at kBits + e, the next kBits bits equal k.
  return (std::uint64_t{kValuesPerGroup} + k) << e;
}

std::uint64_t FioHistogram::bin_upper_ns(unsigned index) noexcept {
  assert(index < kBins);
  if (index == kBins - 1) return std::numeric_limits<std::uint64_t>::max();
  if (index < 2 * kValuesPerGroup) return index;
  return bin_lower_ns(index) + (std::uint64_t{1} << error_bits_of(index)) - 1;
}

std::uint64_t FioHistogram::index_to_value(unsigned index) noexcept {
  assert(index < kBins);
  if (index < 2 * kValuesPerGroup) return index;
  // fio: base + (k + 0.5) * 2^e with base = 2^(e + kBits). e >= 1 here, so 0.5 * 2^e = 2^(e-1)
  // and the double expression fio evaluates is this integer exactly (all values < 2^35).
  const unsigned e = error_bits_of(index);
  return bin_lower_ns(index) + (std::uint64_t{1} << (e - 1));
}

void FioHistogram::allocate() { bins_ = std::make_unique<std::uint64_t[]>(kBins); }  // value-initialized: 0

FioHistogram& FioHistogram::operator=(const FioHistogram& other) {
  if (this == &other) return *this;
  count_ = other.count_;
  if (!other.bins_) {
    bins_.reset();
    return *this;
  }
  if (!bins_) allocate();
  std::copy_n(other.bins_.get(), kBins, bins_.get());
  return *this;
}

void FioHistogram::merge(const FioHistogram& other) {
  if (other.bins_) {
    if (!bins_) allocate();
    for (unsigned i = 0; i < kBins; ++i) bins_[i] += other.bins_[i];
  }
  count_ += other.count_;
}

void FioHistogram::clear() noexcept {
  if (bins_) std::fill_n(bins_.get(), kBins, std::uint64_t{0});
  count_ = 0;
}

std::vector<std::uint64_t> FioHistogram::percentiles_ns(std::span<const double> percentiles) const {
  const std::size_t n = percentiles.size();
  std::vector<std::uint64_t> out(n, 0);
  if (count_ == 0 || n == 0) return out;

  // Visit the requested percentiles in ascending order (as fio does after its qsort) so that one
  // pass over the bins answers all of them; results go back to the caller's positions.
  std::vector<double> p(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double v = percentiles[j];
    p[j] = std::isnan(v) ? 0.0 : std::clamp(v, 0.0, 100.0);
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&p](std::size_t a, std::size_t b) { return p[a] < p[b]; });

  // The threshold exactly as fio's calc_clat_percentiles() evaluates it:
  //   sum >= ((long double) plist[j].u.f / 100.0 * nr)
  const auto threshold = [this](double pct) { return static_cast<long double>(pct) / 100.0 * static_cast<long double>(count_); };

  std::size_t j = 0;
  std::uint64_t sum = 0;
  for (unsigned i = 0; i < kBins && j < n; ++i) {
    sum += bins_[i];
    while (j < n && static_cast<long double>(sum) >= threshold(p[order[j]])) {
      out[order[j]] = index_to_value(i);
      ++j;
    }
  }
  // Every clamped threshold is <= count_, which the full sum reaches, so all j were assigned.
  assert(j == n);
  return out;
}

std::vector<double> FioHistogram::interpolated_percentiles_ns(std::span<const double> percentiles) const {
  std::vector<double> out(percentiles.size(), 0.0);
  if (count_ == 0) return out;
  for (std::size_t j = 0; j < percentiles.size(); ++j) {
    const double pct = std::isnan(percentiles[j]) ? 0.0 : std::clamp(percentiles[j], 0.0, 100.0);
    const double target = pct / 100.0 * static_cast<double>(count_);
    if (target <= 0) continue;
    std::uint64_t before = 0;
    for (unsigned i = 0; i < kBins; ++i) {
      if (bins_[i] == 0) continue;
      if (static_cast<double>(before + bins_[i]) >= target) {
        if (i == kBins - 1) {
          out[j] = static_cast<double>(index_to_value(i));  // the open last bin has no upper edge
        } else {
          const double width = static_cast<double>(bin_upper_ns(i) - bin_lower_ns(i) + 1);
          const double share = (target - static_cast<double>(before)) / static_cast<double>(bins_[i]);
          out[j] = static_cast<double>(bin_lower_ns(i)) + share * width;
        }
        break;
      }
      before += bins_[i];
    }
  }
  return out;
}

std::span<const double> FioHistogram::fio_default_percentiles() noexcept { return kFioDefaultPercentiles; }

std::string FioHistogram::percentile_key(double percentile) {
  // printf("%f") == fixed notation with 6 decimals; to_chars is the locale-independent
  // equivalent (fio runs in the C locale, so the separator is always '.').
  char buf[400];  // enough for any double in fixed notation with 6 decimals
  const auto res = std::to_chars(buf, buf + sizeof buf, percentile, std::chars_format::fixed, 6);
  return std::string(buf, res.ptr);
}

}  // namespace vqsim::sim
