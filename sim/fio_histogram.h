// FioHistogram: fio's completion-latency histogram ("io_u_plat"), reproduced bin for bin so that
// the simulator's latency percentiles are computed exactly the way fio 3.x reports them.
//
// Source of the layout (fio, github.com/axboe/fio; re-implemented here, not copied):
//   stat.h  FIO_IO_U_PLAT_BITS = 6, FIO_IO_U_PLAT_VAL = 1 << 6 = 64, FIO_IO_U_PLAT_GROUP_NR = 29,
//           FIO_IO_U_PLAT_NR = 29 * 64 = 1856 bins, samples in nanoseconds (fio 3.x).
//   stat.c  plat_val_to_idx()       value -> bin index      (value_to_index here)
//           plat_idx_to_val()       bin index -> the value fio reports for the bin (index_to_value)
//           calc_clat_percentiles() the percentile walk      (percentiles_ns)
//   options.c  default percentile_list "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"
//
// Layout. A value v < 128 ns has its own bin (index == v). Otherwise let msb be the index of v's
// highest set bit (msb >= 7) and e = msb - 6 the number of low "error bits" fio discards: v lands
// in group e + 1 (bins (e+1)*64 .. (e+1)*64 + 63) at offset (v >> e) & 63, so each bin of that
// group is 2^e ns wide and the relative bin width is at most 1/64. Group 28 (msb == 33, values
// from 2^33 ns ~ 8.6 s) is the last; everything from 127 * 2^27 ns ~ 17.05 s upwards, however
// large, is clamped into the last bin, 1855. A bin's reported value is the midpoint of its
// half-open range: lower + 2^(e-1) (fio's "base + (k + 0.5) * 2^e").
//
// Cost: add() is a bit_width (one lzcnt/bsr), a few shifts and a compare, one increment of a
// fixed 1856-entry uint64_t array (14.5 KiB) and one increment of the count. percentiles_ns() is
// one pass over the 1856 bins. The array is allocated at the first sample, outside the object:
// every station keeps a histogram, and 14.5 KiB inside each would put a station's other fields
// (read on every visit) pages apart, and cost the memory of the many histograms never filled.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace vqsim::sim {

class FioHistogram {
 public:
  static constexpr unsigned kBits = 6;             // fio stat.h FIO_IO_U_PLAT_BITS
  static constexpr unsigned kValuesPerGroup = 64;  // FIO_IO_U_PLAT_VAL = 1 << BITS
  static constexpr unsigned kGroups = 29;          // FIO_IO_U_PLAT_GROUP_NR
  static constexpr unsigned kBins = 1856;          // FIO_IO_U_PLAT_NR = GROUP_NR * VAL
  static_assert(kValuesPerGroup == (1u << kBits));
  static_assert(kBins == kGroups * kValuesPerGroup);

  // fio's plat_val_to_idx(): the bin a sample of value_ns nanoseconds is counted in.
  static unsigned value_to_index(std::uint64_t value_ns) noexcept;
  // fio's plat_idx_to_val(): the value fio reports for bin `index` (< kBins), i.e. the midpoint of
  // the bin's range for index >= 128 and the value itself below. The last bin's value is its
  // midpoint as if it were 2^27 ns wide (17112760320 ns), though it collects everything above.
  static std::uint64_t index_to_value(unsigned index) noexcept;
  // Smallest / largest value that value_to_index() maps to `index` (< kBins). The last bin's
  // upper bound is UINT64_MAX because fio clamps every larger value into it.
  static std::uint64_t bin_lower_ns(unsigned index) noexcept;
  static std::uint64_t bin_upper_ns(unsigned index) noexcept;

  FioHistogram() = default;
  FioHistogram(const FioHistogram& other) { *this = other; }
  FioHistogram& operator=(const FioHistogram& other);
  FioHistogram(FioHistogram&&) noexcept = default;
  FioHistogram& operator=(FioHistogram&&) noexcept = default;

  void add(std::uint64_t value_ns);
  void merge(const FioHistogram& other);  // fio's sum of io_u_plat arrays
  void clear() noexcept;
  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t bin(unsigned index) const noexcept {
    assert(index < kBins);
    return bins_ ? bins_[index] : 0;
  }

  // fio's calc_clat_percentiles() rule: walk the bins in index order accumulating counts; the
  // result for percentile p is index_to_value() of the first bin whose cumulative count satisfies
  // cumulative >= p / 100 * count(), with that product evaluated in long double exactly as fio
  // does ((long double)p / 100.0 * nr). One result per entry of `percentiles` (in percent, e.g.
  // 99.9), in the caller's order (fio sorts its list first; the rule is per-percentile, so the
  // order does not change any value). All zeros when count() == 0 (fio prints nothing then).
  // p is clamped to [0, 100] (fio rejects values outside it); p == 0 is satisfied by bin 0, so it
  // yields 0 (fio itself cannot be asked for 0, which terminates its list); NaN is treated as 0.
  std::vector<std::uint64_t> percentiles_ns(std::span<const double> percentiles) const;

  // The same percentiles read finer than fio prints them: within the bin that holds the
  // threshold p / 100 * count(), linearly between the bin's lower and upper edge by the share of
  // its count the threshold needs (the samples taken as spread evenly over the bin). A bin is up
  // to 1/64 of its value wide; this resolves shifts smaller than a bin, which paired comparisons
  // of two setups need (a 0.5% shift otherwise reads as 0 or as a whole bin). All zeros when
  // count() == 0.
  std::vector<double> interpolated_percentiles_ns(std::span<const double> percentiles) const;

  // fio's default percentile_list (options.c): 1,5,10,20,30,40,50,60,70,80,90,95,99,99.5,99.9,
  // 99.95,99.99.
  static std::span<const double> fio_default_percentiles() noexcept;

  // The key fio's JSON output uses for a percentile, printf("%f") in the C locale:
  // 99.9 -> "99.900000", 1 -> "1.000000".
  static std::string percentile_key(double percentile);

 private:
  void allocate();  // the bins, all 0
  std::uint64_t count_ = 0;
  std::unique_ptr<std::uint64_t[]> bins_;  // kBins counts; null until the first sample
};

inline unsigned FioHistogram::value_to_index(std::uint64_t value_ns) noexcept {
  // Values whose highest set bit is at most bit kBits (v < 128) are not rounded at all.
  if (value_ns < 2 * kValuesPerGroup) return static_cast<unsigned>(value_ns);
  const unsigned msb = static_cast<unsigned>(std::bit_width(value_ns)) - 1;  // 7 .. 63
  const unsigned error_bits = msb - kBits;                                   // 1 .. 57
  const unsigned group_base = (error_bits + 1) << kBits;                     // bins before group
  const unsigned offset = static_cast<unsigned>((value_ns >> error_bits) & (kValuesPerGroup - 1));
  const unsigned index = group_base + offset;
  return index < kBins - 1 ? index : kBins - 1;  // fio clamps to FIO_IO_U_PLAT_NR - 1
}

inline void FioHistogram::add(std::uint64_t value_ns) {
  if (!bins_) allocate();
  ++bins_[value_to_index(value_ns)];
  ++count_;
}

}  // namespace vqsim::sim
