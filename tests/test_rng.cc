// Random streams: reproducibility, independence of streams, ranges and uniformity of the derived
// draws, and golden values that pin the algorithm (xoshiro256** seeded through splitmix64).
//
// Every check uses fixed seeds, so each test is deterministic: the statistical bounds are chosen
// generously (several standard errors) so that a correct generator passes them by a wide margin
// and a broken one (a stuck bit, a shared state, a wrong range) fails them.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <unordered_set>
#include <vector>

#include "sim/rng.h"
#include "sim/simulator.h"

using namespace vqsim::sim;

namespace {

std::vector<std::uint64_t> draws(Rng rng, std::size_t n) {
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = rng.next_u64();
  return v;
}

// Pearson correlation of uniform01 draws of two generators, n pairs.
double correlation(Rng a, Rng b, std::size_t n) {
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = a.uniform01(), y = b.uniform01();
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  const double dn = static_cast<double>(n);
  const double cov = sab / dn - (sa / dn) * (sb / dn);
  const double va = saa / dn - (sa / dn) * (sa / dn);
  const double vb = sbb / dn - (sb / dn) * (sb / dn);
  return cov / std::sqrt(va * vb);
}

// Positions at which two sequences agree; 0 expected for unrelated 64-bit streams.
std::size_t agreements(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return same;
}

// An independent transcription of the published xoshiro256** reference (Blackman & Vigna,
// xoshiro256starstar.c), used to check Rng's next_u64 against the algorithm it claims to be.
struct ReferenceXoshiro {
  std::array<std::uint64_t, 4> s;
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
};

constexpr std::size_t kPairs = 100'000;
constexpr double kMaxAbsCorrelation = 0.01;  // ~3 standard errors of r (1/sqrt(100k) = 0.0032)

}  // namespace

TEST_CASE("Rng: the same (seed, replication, stream) gives the same sequence") {
  const auto a = draws(Rng::for_stream(42, 3, 7), 10'000);
  const auto b = draws(Rng::for_stream(42, 3, 7), 10'000);
  CHECK(a == b);
  CHECK(draws(Rng(99), 1000) == draws(Rng(99), 1000));
  // A copied generator continues exactly like the original (streams are plain values).
  Rng r = Rng::for_stream(1, 0, 0);
  r.next_u64();
  Rng copy = r;
  CHECK(draws(r, 100) == draws(copy, 100));
}

TEST_CASE("Rng: other replication, stream or seed gives a different, uncorrelated sequence") {
  const Rng base = Rng::for_stream(42, 0, 0);
  const Rng other_rep = Rng::for_stream(42, 1, 0);
  const Rng other_stream = Rng::for_stream(42, 0, 1);
  const Rng other_seed = Rng::for_stream(43, 0, 0);
  // Replication and stream are not interchangeable: (rep 1, stream 0) != (rep 0, stream 1).
  const auto b = draws(base, 1000);
  CHECK(agreements(b, draws(other_rep, 1000)) == 0);
  CHECK(agreements(b, draws(other_stream, 1000)) == 0);
  CHECK(agreements(b, draws(other_seed, 1000)) == 0);
  CHECK(agreements(draws(other_rep, 1000), draws(other_stream, 1000)) == 0);

  CHECK(std::fabs(correlation(base, other_rep, kPairs)) < kMaxAbsCorrelation);
  CHECK(std::fabs(correlation(base, other_stream, kPairs)) < kMaxAbsCorrelation);
  CHECK(std::fabs(correlation(base, other_seed, kPairs)) < kMaxAbsCorrelation);
  CHECK(std::fabs(correlation(other_rep, other_stream, kPairs)) < kMaxAbsCorrelation);
  // Neighbouring plain seeds too (Rng(s) and Rng(s + 1) share splitmix64 outputs, shifted).
  CHECK(std::fabs(correlation(Rng(1), Rng(2), kPairs)) < kMaxAbsCorrelation);
  // Lag-1 within one stream: x_i against x_{i+1}.
  Rng lagged = base;
  lagged.uniform01();
  CHECK(std::fabs(correlation(base, lagged, kPairs)) < kMaxAbsCorrelation);
}

TEST_CASE("Rng: small (seed, replication, stream) triples never share a stream") {
  // for_stream mixes the triple with xor/multiply/add steps; a collision would make two
  // components (or two replications) draw the same numbers. 16 x 32 x 64 first outputs.
  std::unordered_set<std::uint64_t> firsts;
  std::size_t n = 0;
  for (std::uint64_t seed = 0; seed < 16; ++seed)
    for (std::uint64_t rep = 0; rep < 32; ++rep)
      for (std::uint64_t stream = 0; stream < 64; ++stream, ++n) firsts.insert(Rng::for_stream(seed, rep, stream).next_u64());
  CHECK(firsts.size() == n);
}

TEST_CASE("Simulator::stream: one stream per name, replication and seed") {
  Simulator s1(5, 0), s1_again(5, 0), s1_rep1(5, 1), s2(6, 0);
  CHECK(draws(s1.stream("disk"), 100) == draws(s1_again.stream("disk"), 100));
  CHECK(agreements(draws(s1.stream("disk"), 100), draws(s1.stream("disk2"), 100)) == 0);
  CHECK(agreements(draws(s1.stream("disk"), 100), draws(s1_rep1.stream("disk"), 100)) == 0);
  CHECK(agreements(draws(s1.stream("disk"), 100), draws(s2.stream("disk"), 100)) == 0);
  CHECK(std::fabs(correlation(s1.stream("a"), s1.stream("b"), kPairs)) < kMaxAbsCorrelation);
}

TEST_CASE("Rng: uniform01 lies in [0, 1) and uniform_open0 in (0, 1]") {
  Rng rng(2024);
  double lo = 1.0, hi = 0.0, sum = 0.0;
  bool in_range = true;
  const int n = 1'000'000;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform01();
    in_range = in_range && u >= 0.0 && u < 1.0;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    sum += u;
  }
  CHECK(in_range);
  CHECK(lo < 1e-4);  // the whole interval is reached
  CHECK(hi > 1.0 - 1e-4);
  CHECK(sum / n == doctest::Approx(0.5).epsilon(0.003));  // SE of the mean is 0.0003

  bool open_in_range = true;
  lo = 1.0;
  hi = 0.0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform_open0();
    open_in_range = open_in_range && u > 0.0 && u <= 1.0;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  CHECK(open_in_range);
  CHECK(std::isfinite(std::log(lo)));  // what the (0, 1] range is for
  CHECK(lo < 1e-4);
  CHECK(hi > 1.0 - 1e-4);
}

TEST_CASE("Rng: below(n) stays in [0, n) and is roughly uniform (chi-square on 10 buckets)") {
  Rng rng(7);
  // Range, including the edge cases n = 1 and n near 2^64.
  bool ok = true;
  for (int i = 0; i < 10'000; ++i) {
    ok = ok && rng.below(1) == 0;
    ok = ok && rng.below(2) < 2;
    ok = ok && rng.below(3) < 3;
    ok = ok && rng.below(1'000'003) < 1'000'003;
    ok = ok && rng.below((std::uint64_t{1} << 63) + 1) < (std::uint64_t{1} << 63) + 1;
    ok = ok && rng.below(UINT64_MAX) < UINT64_MAX;
  }
  CHECK(ok);

  // Chi-square with 9 degrees of freedom: mean 9, P(X > 40) ~ 5e-6. Fixed seed, so this is
  // deterministic; the bound only has to be far above what a uniform generator produces.
  const int n = 100'000;
  std::array<int, 10> count{};
  for (int i = 0; i < n; ++i) ++count[rng.below(10)];
  double chi2 = 0.0;
  for (int c : count) chi2 += (c - n / 10.0) * (c - n / 10.0) / (n / 10.0);
  CHECK(chi2 < 40.0);
  // Every bucket within 5% of its expectation (SE is ~1%).
  for (int c : count) CHECK(std::abs(c - n / 10) < n / 200);

  // A non-power-of-two count as well: 3 buckets, 2 degrees of freedom, P(X > 25) ~ 4e-6.
  std::array<int, 3> c3{};
  for (int i = 0; i < n; ++i) ++c3[rng.below(3)];
  double chi3 = 0.0;
  for (int c : c3) chi3 += (c - n / 3.0) * (c - n / 3.0) / (n / 3.0);
  CHECK(chi3 < 25.0);
}

TEST_CASE("Rng: splitmix64 and xoshiro256** match their published reference outputs") {
  // splitmix64 from state 0: the first outputs listed with the reference implementation
  // (Vigna, splitmix64.c; also Java's SplittableRandom), known independently of this code.
  std::uint64_t state = 0;
  CHECK(splitmix64(state) == 0xe220a8397b1dcdafULL);
  CHECK(splitmix64(state) == 0x6e789e6aa1b965f4ULL);
  CHECK(splitmix64(state) == 0x06c45d188009454fULL);

  // The reference transcription above, from state {1, 2, 3, 4}: 11520, 0, ... is the widely
  // quoted start of xoshiro256** from that state, so the transcription itself is checked.
  ReferenceXoshiro ref{{1, 2, 3, 4}};
  CHECK(ref.next() == 11520u);
  CHECK(ref.next() == 0u);
  CHECK(ref.next() == 1509978240u);
  CHECK(ref.next() == 1215971899390074240ULL);

  // Rng(seed) is that generator with its state filled by four splitmix64 outputs of `seed`.
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{42}, std::uint64_t{0x853c49e6748fea9bULL}}) {
    std::uint64_t sm = seed;
    ReferenceXoshiro want{{splitmix64(sm), splitmix64(sm), splitmix64(sm), splitmix64(sm)}};
    Rng rng(seed);
    bool same = true;
    for (int i = 0; i < 1000; ++i) same = same && rng.next_u64() == want.next();
    CHECK(same);
  }
}

TEST_CASE("Rng: golden first outputs (a change of algorithm or seeding changes every result)") {
  // These values were computed once by running this code (not derived independently). If one of
  // them changes, every simulation result changes too: that may be intended (a new generator or
  // a new stream derivation), but then it must be a deliberate decision, and these constants and
  // any recorded reference results updated together.
  Rng r42(42);
  CHECK(r42.next_u64() == 0x15780b2e0c2ec716ULL);
  CHECK(r42.next_u64() == 0x6104d9866d113a7eULL);
  CHECK(r42.next_u64() == 0xae17533239e499a1ULL);
  CHECK(Rng().next_u64() == 0x7d392394307d1852ULL);  // the default seed
  CHECK(Rng::for_stream(1, 2, 3).next_u64() == 0xca69c028e6e283e8ULL);
}
