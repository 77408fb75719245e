// Simulation time: integer nanoseconds since the start of a run.
//
// Integer time makes event order exact and output byte-identical across machines; 2^63 ns is
// about 292 years of simulated time, far beyond any run.
#pragma once

#include <cstdint>

namespace vqsim::sim {

using time_ns = std::int64_t;

inline constexpr time_ns kNsPerUs = 1'000;
inline constexpr time_ns kNsPerMs = 1'000'000;
inline constexpr time_ns kNsPerS = 1'000'000'000;
inline constexpr time_ns kTimeNever = INT64_MAX;

}  // namespace vqsim::sim
