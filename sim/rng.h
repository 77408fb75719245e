// Random streams: xoshiro256** seeded through splitmix64.
//
// Every random quantity in a run comes from its own stream, named by (scenario seed,
// replication, stream index), so adding a component or a replication never shifts the draws
// of another, and results do not depend on thread scheduling. xoshiro256** (Blackman & Vigna,
// 2018) costs about 1 ns per 64-bit draw and passes BigCrush; splitmix64 is the seeding
// procedure its authors recommend.
#pragma once

#include <cstdint>

namespace vqsim::sim {

// One step of splitmix64: a bijective mixer used to derive seeds.
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  // The stream for (seed, replication, stream). Each part is folded in through a splitmix64
  // output (a bijective 64-bit mixer), so distinct triples give unrelated 64-bit keys, which the
  // constructor expands into the 256-bit state.
  static Rng for_stream(std::uint64_t seed, std::uint64_t replication, std::uint64_t stream) noexcept {
    std::uint64_t state = seed;
    std::uint64_t h = splitmix64(state);
    state = h ^ replication;
    h = splitmix64(state);
    state = h ^ stream;
    return Rng(splitmix64(state));
  }

  explicit Rng(std::uint64_t seed = 0x853c49e6748fea9bULL) noexcept {
    std::uint64_t sm = seed;
    for (auto& word : s_) word = splitmix64(sm);
  }

  std::uint64_t next_u64() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform on [0, 1) with 53 random bits.
  double uniform01() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform on (0, 1]: safe to take the logarithm of.
  double uniform_open0() noexcept { return static_cast<double>((next_u64() >> 11) + 1) * 0x1.0p-53; }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-64 * n).
  std::uint64_t below(std::uint64_t n) noexcept {
    __extension__ using u128 = unsigned __int128;  // GCC/Clang extension, quiet under -Wpedantic
    return static_cast<std::uint64_t>((static_cast<u128>(next_u64()) * n) >> 64);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace vqsim::sim
