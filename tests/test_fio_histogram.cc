// FioHistogram must reproduce fio 3.x's latency histogram bin for bin (fio stat.h / stat.c:
// FIO_IO_U_PLAT_BITS = 6, GROUP_NR = 29, PLAT_NR = 1856, plat_val_to_idx, plat_idx_to_val,
// calc_clat_percentiles). Expected values are computed by hand from fio's formulas or by
// deliberately different brute-force reference code, never by calling the class under test.
#include "sim/fio_histogram.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using vqsim::sim::FioHistogram;

namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// Reference value -> index, by repeated halving instead of bit tricks: halve v until it is below
// 128, counting the halvings e; then v is in [64, 127] and fio's bin is (e + 1) * 64 + (v - 64).
unsigned ref_index(std::uint64_t v) {
  if (v < 128) return static_cast<unsigned>(v);
  unsigned e = 0;
  while (v >= 128) {
    v /= 2;
    ++e;
  }
  const std::uint64_t idx = (e + 1) * 64ULL + (v - 64);
  return idx < 1855 ? static_cast<unsigned>(idx) : 1855u;
}

// Reference index -> value, fio's plat_idx_to_val() formula evaluated in double as fio does:
// error_bits = idx / 64 - 1, base = 2^(error_bits + 6), k = idx % 64, base + (k + 0.5) * 2^e.
std::uint64_t ref_value(unsigned idx) {
  if (idx < 128) return idx;
  const unsigned e = idx / 64 - 1;
  const unsigned long long base = 1ULL << (e + 6);
  const unsigned long long k = idx % 64;
  return static_cast<std::uint64_t>(base + ((k + 0.5) * (1 << e)));
}

// Reference percentiles without a histogram walk: sort the raw samples; with fio's rule the
// answer for p is the bin of the r-th smallest sample (1-based), r the smallest rank with
// r >= p/100 * n (same long double expression as fio). Cumulative count through that sample's
// bin is >= r, through the bin before it <= r - 1 < threshold.
std::vector<std::uint64_t> ref_percentiles(std::vector<std::uint64_t> samples, const std::vector<double>& ps) {
  std::sort(samples.begin(), samples.end());
  const std::uint64_t n = samples.size();
  std::vector<std::uint64_t> out;
  for (double p : ps) {
    const long double threshold = static_cast<long double>(p) / 100.0 * static_cast<long double>(n);
    std::uint64_t r = 1;
    while (static_cast<long double>(r) < threshold) ++r;
    REQUIRE(r <= n);
    out.push_back(ref_value(ref_index(samples[r - 1])));
  }
  return out;
}

}  // namespace

TEST_CASE("fio histogram: constants match fio stat.h (PLAT_BITS 6, 29 groups of 64, 1856 bins)") {
  CHECK(FioHistogram::kBits == 6);
  CHECK(FioHistogram::kValuesPerGroup == 64);
  CHECK(FioHistogram::kGroups == 29);
  CHECK(FioHistogram::kBins == 1856);
}

TEST_CASE("fio histogram: values 0..127 ns have one bin each, index == value == representative") {
  for (unsigned v = 0; v < 128; ++v) {
    CHECK(FioHistogram::value_to_index(v) == v);
    CHECK(FioHistogram::index_to_value(v) == v);
    CHECK(FioHistogram::bin_lower_ns(v) == v);
    CHECK(FioHistogram::bin_upper_ns(v) == v);
  }
}

TEST_CASE("fio histogram: value_to_index at group starts, hand-computed from plat_val_to_idx") {
  // 128: msb 7, error_bits 1, base (1+1)<<6 = 128, offset (128>>1)&63 = 64&63 = 0 -> 128.
  CHECK(FioHistogram::value_to_index(128) == 128);
  // 129: (129>>1)&63 = 64&63 = 0 -> 128 (bins are 2 ns wide from 128 ns on).
  CHECK(FioHistogram::value_to_index(129) == 128);
  // 130: (130>>1)&63 = 65&63 = 1 -> 129.
  CHECK(FioHistogram::value_to_index(130) == 129);
  // 255: msb 7, (255>>1)&63 = 127&63 = 63 -> 191, the last bin of group 2.
  CHECK(FioHistogram::value_to_index(255) == 191);
  // 256: msb 8, error_bits 2, base 3<<6 = 192, (256>>2)&63 = 0 -> 192; 259 still 192; 260 -> 193.
  CHECK(FioHistogram::value_to_index(256) == 192);
  CHECK(FioHistogram::value_to_index(259) == 192);
  CHECK(FioHistogram::value_to_index(260) == 193);
  // 1 ms = 1000000 ns: msb 19 (2^19 = 524288), error_bits 13, base 14<<6 = 896,
  // 1000000>>13 = 122, 122&63 = 58 -> 954.
  CHECK(FioHistogram::value_to_index(1000000) == 954);
}

TEST_CASE("fio histogram: powers of two open a group at (n - 5) * 64, the top clamps to bin 1855") {
  // 2^n with n >= 7: error_bits n - 6, base (n - 5) << 6, offset (2^n >> (n-6)) & 63 = 64&63 = 0.
  for (unsigned n = 7; n <= 33; ++n) {
    const std::uint64_t v = std::uint64_t{1} << n;
    CAPTURE(n);
    CHECK(FioHistogram::value_to_index(v) == (n - 5) * 64);
    CHECK(FioHistogram::value_to_index(v - 1) == (n - 5) * 64 - 1);  // last bin of previous group
  }
  // 2^33 ns (~8.6 s) opens group 28 at 1792; group 28's last bin 1855 starts at 127 * 2^27.
  CHECK(FioHistogram::value_to_index(std::uint64_t{1} << 33) == 1792);
  CHECK(FioHistogram::value_to_index(127ULL << 27) == 1855);  // 17045651456 ns
  CHECK(FioHistogram::value_to_index((127ULL << 27) - 1) == 1854);
  // 2^34 would be base 29<<6 = 1856 in fio, clamped to FIO_IO_U_PLAT_NR - 1 = 1855; so is anything larger.
  for (unsigned n = 34; n <= 63; ++n) CHECK(FioHistogram::value_to_index(std::uint64_t{1} << n) == 1855);
  CHECK(FioHistogram::value_to_index(kMax) == 1855);
  CHECK(FioHistogram::value_to_index(3600ULL * 1000000000ULL) == 1855);  // one hour
}

TEST_CASE("fio histogram: index_to_value, hand-computed from plat_idx_to_val") {
  // fio: error_bits = idx/64 - 1, base = 2^(error_bits+6), k = idx%64, value = base + (k+0.5)*2^e.
  // 128: e = 1, base 128, k 0 -> 128 + 0.5*2 = 129.
  CHECK(FioHistogram::index_to_value(128) == 129);
  // 129: e = 1, k 1 -> 128 + 1.5*2 = 131.
  CHECK(FioHistogram::index_to_value(129) == 131);
  // 191: e = 1, k 63 -> 128 + 63.5*2 = 255.
  CHECK(FioHistogram::index_to_value(191) == 255);
  // 192: e = 2, base 256, k 0 -> 256 + 0.5*4 = 258.
  CHECK(FioHistogram::index_to_value(192) == 258);
  // 954: e = 13, base 2^19 = 524288, k 954 - 896 = 58 -> 524288 + 58.5*8192 = 1003520.
  CHECK(FioHistogram::index_to_value(954) == 1003520);
  // 1000: e = 14, base 2^20 = 1048576, k 1000 - 960 = 40 -> 1048576 + 40.5*16384 = 1712128.
  CHECK(FioHistogram::index_to_value(1000) == 1712128);
  // 1855: e = 27, base 2^33 = 8589934592, k 63 -> 8589934592 + 63.5*134217728 = 17112760320.
  CHECK(FioHistogram::index_to_value(1855) == 17112760320ULL);
  // And every index against the reference formula evaluated in double like fio.
  for (unsigned i = 0; i < FioHistogram::kBins; ++i) {
    CAPTURE(i);
    CHECK(FioHistogram::index_to_value(i) == ref_value(i));
  }
}

TEST_CASE("fio histogram: bin_lower/bin_upper round-trip for every one of the 1856 bins") {
  for (unsigned i = 0; i < FioHistogram::kBins; ++i) {
    CAPTURE(i);
    const std::uint64_t lo = FioHistogram::bin_lower_ns(i);
    const std::uint64_t hi = FioHistogram::bin_upper_ns(i);
    REQUIRE(lo <= hi);
    CHECK(FioHistogram::value_to_index(lo) == i);
    CHECK(FioHistogram::value_to_index(hi) == i);
    CHECK(FioHistogram::value_to_index(FioHistogram::index_to_value(i)) == i);
    CHECK(FioHistogram::index_to_value(i) >= lo);
    CHECK(FioHistogram::index_to_value(i) <= hi);
    if (lo > 0) CHECK(FioHistogram::value_to_index(lo - 1) == i - 1);
    if (i + 1 < FioHistogram::kBins) {
      CHECK(FioHistogram::value_to_index(hi + 1) == i + 1);
      CHECK(FioHistogram::bin_lower_ns(i + 1) == hi + 1);  // the bins tile [0, UINT64_MAX]
    }
  }
  CHECK(FioHistogram::bin_lower_ns(0) == 0);
  CHECK(FioHistogram::bin_lower_ns(1855) == 127ULL << 27);
  CHECK(FioHistogram::bin_upper_ns(1855) == kMax);
  CHECK(FioHistogram::bin_upper_ns(1854) == (127ULL << 27) - 1);
}

TEST_CASE("fio histogram: value_to_index agrees with a halving reference on 0..2^20 and near every 2^n") {
  for (std::uint64_t v = 0; v <= (1u << 20); ++v) {
    if (FioHistogram::value_to_index(v) != ref_index(v)) {
      FAIL("mismatch at v = " << v);
    }
  }
  for (unsigned n = 0; n < 64; ++n) {
    const std::uint64_t p = std::uint64_t{1} << n;
    for (std::uint64_t v : {p - 1, p, p + 1, p + p / 2, p + p / 2 + 1}) {
      CAPTURE(v);
      CHECK(FioHistogram::value_to_index(v) == ref_index(v));
    }
  }
}

TEST_CASE("fio histogram: add counts one sample in value_to_index's bin") {
  FioHistogram h;
  h.add(0);
  h.add(129);
  h.add(128);
  h.add(kMax);
  CHECK(h.count() == 4);
  CHECK(h.bin(0) == 1);
  CHECK(h.bin(128) == 2);
  CHECK(h.bin(1855) == 1);
  std::uint64_t total = 0;
  for (unsigned i = 0; i < FioHistogram::kBins; ++i) total += h.bin(i);
  CHECK(total == 4);
  h.clear();
  CHECK(h.count() == 0);
  CHECK(h.bin(128) == 0);
}

TEST_CASE("fio histogram: percentiles of 1..1000 us uniform follow fio's walk exactly") {
  FioHistogram h;
  std::vector<std::uint64_t> samples;
  for (std::uint64_t us = 1; us <= 1000; ++us) {
    samples.push_back(us * 1000);
    h.add(us * 1000);
  }
  const auto defaults = FioHistogram::fio_default_percentiles();
  const std::vector<double> ps(defaults.begin(), defaults.end());
  const auto got = h.percentiles_ns(ps);
  const auto want = ref_percentiles(samples, ps);
  REQUIRE(got.size() == ps.size());
  for (std::size_t j = 0; j < ps.size(); ++j) {
    CAPTURE(ps[j]);
    CHECK(got[j] == want[j]);
  }
  // Hand check of p50: threshold 500, the 500th sample is 500000 ns: msb 18, error_bits 12,
  // base 13<<6 = 832, 500000>>12 = 122, 122&63 = 58 -> bin 890, value 2^18 + 58.5*4096 = 501760.
  CHECK(got[6] == 501760);
  // p99.9: (long double)99.9 is slightly above 99.9, so the threshold is a hair above 999 and fio
  // needs all 1000 samples: the answer is the bin of 1000000 ns (bin 954, value 1003520).
  CHECK(got[14] == 1003520);
  CHECK(got[16] == 1003520);  // p99.99 likewise
}

TEST_CASE("fio histogram: percentiles of a wide random sample match a sort-based reference") {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> log_ns(0.0, 37.0);  // 1 ns .. ~137 s, past the last bin
  FioHistogram h;
  std::vector<std::uint64_t> samples;
  for (int i = 0; i < 20000; ++i) {
    const auto v = static_cast<std::uint64_t>(std::exp2(log_ns(rng)));
    samples.push_back(v);
    h.add(v);
  }
  // Deliberately unsorted, with duplicates, 100 and a tiny percentile; results stay in this order.
  const std::vector<double> ps = {99.99, 50.0, 0.001, 100.0, 1.0, 99.9, 50.0, 33.3, 99.5, 5.0};
  const auto got = h.percentiles_ns(ps);
  const auto want = ref_percentiles(samples, ps);
  REQUIRE(got.size() == ps.size());
  for (std::size_t j = 0; j < ps.size(); ++j) {
    CAPTURE(ps[j]);
    CHECK(got[j] == want[j]);
  }
  // p100 is the bin of the maximum sample.
  CHECK(got[3] == FioHistogram::index_to_value(FioHistogram::value_to_index(*std::max_element(samples.begin(), samples.end()))));
}

TEST_CASE("fio histogram: empty histogram yields zeros, one per requested percentile") {
  const FioHistogram h;
  CHECK(h.count() == 0);
  const auto got = h.percentiles_ns(FioHistogram::fio_default_percentiles());
  REQUIRE(got.size() == 17);
  for (auto v : got) CHECK(v == 0);
  CHECK(h.percentiles_ns({}).empty());
}

TEST_CASE("fio histogram: merge equals adding both sample sets into one histogram") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint64_t> small(0, 5000), large(0, 40'000'000'000ULL);
  FioHistogram a, b, both;
  for (int i = 0; i < 3000; ++i) {
    const auto x = small(rng);
    const auto y = large(rng);
    a.add(x);
    both.add(x);
    b.add(y);
    both.add(y);
  }
  a.merge(b);
  CHECK(a.count() == both.count());
  for (unsigned i = 0; i < FioHistogram::kBins; ++i) {
    if (a.bin(i) != both.bin(i)) FAIL("bin " << i << " differs");
  }
  CHECK(a.percentiles_ns(FioHistogram::fio_default_percentiles()) ==
        both.percentiles_ns(FioHistogram::fio_default_percentiles()));
}

TEST_CASE("fio histogram: an unfilled histogram has no bins yet; copies, merges and clears keep every count") {
  // The bins are allocated at the first sample (every station has a histogram, many stay empty).
  FioHistogram empty;
  CHECK(empty.count() == 0);
  CHECK(empty.bin(0) == 0);
  CHECK(empty.bin(FioHistogram::kBins - 1) == 0);
  FioHistogram filled;
  for (std::uint64_t v : {5ULL, 5000ULL, 123456ULL, 123456ULL, 40'000'000'000ULL}) filled.add(v);
  FioHistogram copy(filled);
  FioHistogram into_empty;
  into_empty.merge(filled);
  FioHistogram assigned;
  assigned = filled;
  for (const FioHistogram* h : {&copy, &into_empty, &assigned}) {
    CHECK(h->count() == 5);
    for (unsigned i = 0; i < FioHistogram::kBins; ++i)
      if (h->bin(i) != filled.bin(i)) FAIL("bin " << i << " differs");
  }
  copy.add(5);  // a deep copy: the original keeps its counts
  CHECK(filled.bin(5) == 1);
  CHECK(copy.bin(5) == 2);
  assigned = empty;
  CHECK(assigned.count() == 0);
  CHECK(assigned.bin(FioHistogram::value_to_index(123456)) == 0);
  filled.merge(empty);
  CHECK(filled.count() == 5);
  filled.clear();
  CHECK(filled.count() == 0);
  CHECK(filled.bin(FioHistogram::value_to_index(123456)) == 0);
  CHECK(filled.percentiles_ns(FioHistogram::fio_default_percentiles()) ==
        std::vector<std::uint64_t>(FioHistogram::fio_default_percentiles().size(), 0));
}

TEST_CASE("fio histogram: default percentile list is fio's percentile_list default") {
  const std::vector<double> want = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  const auto got = FioHistogram::fio_default_percentiles();
  CHECK(std::vector<double>(got.begin(), got.end()) == want);
}

TEST_CASE("fio histogram: percentile_key formats like printf(\"%f\") in fio's JSON") {
  CHECK(FioHistogram::percentile_key(99.9) == "99.900000");
  CHECK(FioHistogram::percentile_key(1.0) == "1.000000");
  CHECK(FioHistogram::percentile_key(99.95) == "99.950000");
  CHECK(FioHistogram::percentile_key(99.99) == "99.990000");
  CHECK(FioHistogram::percentile_key(50) == "50.000000");
  CHECK(FioHistogram::percentile_key(100) == "100.000000");
  CHECK(FioHistogram::percentile_key(0.0001) == "0.000100");
  CHECK(FioHistogram::percentile_key(99.9999999) == "100.000000");  // %f rounds to 6 decimals
  std::vector<std::string> keys;
  for (double p : FioHistogram::fio_default_percentiles()) keys.push_back(FioHistogram::percentile_key(p));
  CHECK(keys.front() == "1.000000");
  CHECK(keys.back() == "99.990000");
}

TEST_CASE("FioHistogram: interpolated percentiles resolve within a bin, where fio's value is the bin's middle") {
  FioHistogram h;
  // One sample at each ns from 1000 to 1999: bins of 8 and 16 ns there.
  for (std::uint64_t v = 1000; v < 2000; ++v) h.add(v);
  const std::vector<double> pct = {10, 50, 99};
  const auto fine = h.interpolated_percentiles_ns(pct);
  const auto fio = h.percentiles_ns(pct);
  for (std::size_t i = 0; i < pct.size(); ++i) {
    CAPTURE(pct[i]);
    const double exact = 1000 + pct[i] / 100 * 1000;  // the empirical quantile of an even spread
    CHECK(std::fabs(fine[i] - exact) <= 1.0);
    // fio's value is that of the bin holding the threshold: within one bin of the fine one.
    const unsigned bin = FioHistogram::value_to_index(fio[i]);
    CHECK(fine[i] >= static_cast<double>(FioHistogram::bin_lower_ns(bin)));
    CHECK(fine[i] <= static_cast<double>(FioHistogram::bin_upper_ns(bin) + 1));
  }
  // A shift of 0.3% (3 ns at 1000 ns, less than one 8 ns bin) is seen by the fine percentile.
  FioHistogram shifted;
  for (std::uint64_t v = 1003; v < 2003; ++v) shifted.add(v);
  const auto fine_shifted = shifted.interpolated_percentiles_ns(pct);
  CHECK(fine_shifted[0] - fine[0] == doctest::Approx(3.0).epsilon(0.2));
  CHECK(FioHistogram().interpolated_percentiles_ns(pct) == std::vector<double>(3, 0.0));
}
