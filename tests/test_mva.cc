// Mean-value analysis against hand-computable closed networks and brute-force normalizing constants.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/mva.h"

using vqsim::sim::mva_exact;
using vqsim::sim::mva_exact_multiclass;
using vqsim::sim::mva_schweitzer;
using vqsim::sim::MvaResult;
using vqsim::sim::MvaStation;
using vqsim::sim::MvaStationKind;

namespace {

MvaStation queue(double d, const char* name = "q") { return {name, MvaStationKind::Queue, 1, {d}}; }
MvaStation delay(double d, const char* name = "z") { return {name, MvaStationKind::Delay, 1, {d}}; }
MvaStation multi(int servers, double d, const char* name = "m") { return {name, MvaStationKind::MultiServer, servers, {d}}; }

double rel_err(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

// Buzen's convolution algorithm for a single-class product-form network, with load-dependent
// stations allowed. A station's unnormalized factor for j customers is
//   f(j) = D^j / prod_{i=1..j} alpha(i),
// alpha(i) = 1 for a Queue, i for a Delay, min(i, servers) for a MultiServer.
// G(n) = (f_1 * f_2 * ... * f_K)(n) (convolution), X(N) = G(N-1) / G(N), and the mean queue length
// at station k is sum_j j f_k(j) G_{-k}(N - j) / G(N), G_{-k} being the convolution without k.
struct Buzen {
  double throughput = 0.0;
  std::vector<double> queue_length;
};

std::vector<double> factor(const MvaStation& s, int N) {
  std::vector<double> f(static_cast<std::size_t>(N) + 1, 1.0);
  for (int j = 1; j <= N; ++j) {
    double alpha = 1.0;
    if (s.kind == MvaStationKind::Delay) alpha = j;
    if (s.kind == MvaStationKind::MultiServer) alpha = std::min(j, s.servers);
    f[static_cast<std::size_t>(j)] = f[static_cast<std::size_t>(j) - 1] * s.demand[0] / alpha;
  }
  return f;
}

std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(a.size(), 0.0);
  for (std::size_t n = 0; n < a.size(); ++n)
    for (std::size_t j = 0; j <= n; ++j) out[n] += a[j] * b[n - j];
  return out;
}

Buzen buzen(const std::vector<MvaStation>& st, int N) {
  const std::size_t n = static_cast<std::size_t>(N);
  std::vector<double> unit(n + 1, 0.0);
  unit[0] = 1.0;
  std::vector<double> G = unit;
  for (const auto& s : st) G = convolve(G, factor(s, N));
  Buzen b;
  b.throughput = G[n - 1] / G[n];
  for (std::size_t k = 0; k < st.size(); ++k) {
    std::vector<double> Gk = unit;
    for (std::size_t i = 0; i < st.size(); ++i)
      if (i != k) Gk = convolve(Gk, factor(st[i], N));
    const std::vector<double> fk = factor(st[k], N);
    double q = 0.0;
    for (std::size_t j = 1; j <= n; ++j) q += static_cast<double>(j) * fk[j] * Gk[n - j];
    b.queue_length.push_back(q / G[n]);
  }
  return b;
}

// Little's law over the whole network: the mean numbers of class-c customers at all stations add
// up to the class population.
void check_population_conserved(const MvaResult& r, const std::vector<int>& pop, double tol) {
  for (std::size_t c = 0; c < pop.size(); ++c) {
    double total = 0.0;
    for (const auto& row : r.queue_length) total += row[c];
    CHECK(total == doctest::Approx(pop[c]).epsilon(tol));
    CHECK(r.throughput[c] * r.cycle_time[c] == doctest::Approx(pop[c]).epsilon(tol));
  }
}

std::vector<MvaStation> tandem5() {
  return {queue(1.0, "s1"), queue(1.25, "s2"), queue(1.5, "s3"), queue(1.75, "s4"), queue(2.0, "s5")};
}

}  // namespace

TEST_CASE("MVA: single queue closed network equals machine-repairman") {
  // N machines each work for an exponential time of mean Z (Delay) and then need repair from one
  // repairman with mean repair time S (Queue). This is the finite-source M/M/1//N queue:
  //   p0 = 1 / sum_{k=0..N} N!/(N-k)! (S/Z)^k,  X = (1 - p0) / S,  R_repair = N / X - Z.
  const double S = 1.0, Z = 5.0;
  for (int N = 1; N <= 12; ++N) {
    double sum = 0.0, term = 1.0;
    for (int k = 0; k <= N; ++k) {
      sum += term;
      term *= (N - k) * S / Z;
    }
    const double p0 = 1.0 / sum;
    const double X = (1.0 - p0) / S;
    const double R = N / X - Z;
    const MvaResult r = mva_exact({queue(S, "repair"), delay(Z, "work")}, N);
    CHECK(rel_err(r.throughput[0], X) < 1e-12);
    CHECK(rel_err(r.residence[0][0], R) < 1e-12);
    CHECK(r.residence[1][0] == doctest::Approx(Z));
    CHECK(rel_err(r.utilization[0][0], 1.0 - p0) < 1e-12);
    CHECK(rel_err(r.cycle_time[0], R + Z) < 1e-12);
    check_population_conserved(r, {N}, 1e-12);
  }
}

TEST_CASE("MVA: two balanced queues give X(N) = N / ((N+1) D)") {
  // Two single-server queues with equal demand D: in product form every split (j, N-j) of the N
  // customers has the same weight D^N, so G(N) = (N+1) D^N and X(N) = G(N-1)/G(N) = N/((N+1) D).
  // By symmetry each queue holds N/2 on average.
  const double D = 0.75;
  for (int N = 1; N <= 50; ++N) {
    const MvaResult r = mva_exact({queue(D, "a"), queue(D, "b")}, N);
    CHECK(rel_err(r.throughput[0], N / ((N + 1) * D)) < 1e-12);
    CHECK(r.queue_length[0][0] == doctest::Approx(N / 2.0).epsilon(1e-12));
    CHECK(r.queue_length[1][0] == doctest::Approx(N / 2.0).epsilon(1e-12));
  }
}

TEST_CASE("MVA: 5-station tandem N=32 approaches the bottleneck bound and matches Buzen's convolution") {
  const auto st = tandem5();
  const int N = 32;
  const MvaResult r = mva_exact(st, N);
  // Bottleneck bound X <= 1 / D_max = 0.5, approached closely with 32 customers.
  CHECK(r.throughput[0] < 0.5);
  CHECK(r.throughput[0] > 0.49);
  const Buzen b = buzen(st, N);
  CHECK(rel_err(r.throughput[0], b.throughput) < 1e-12);
  for (std::size_t k = 0; k < st.size(); ++k) CHECK(rel_err(r.queue_length[k][0], b.queue_length[k]) < 1e-10);
  check_population_conserved(r, {N}, 1e-12);
  CHECK(r.iterations == N);
  CHECK(r.converged);
  CHECK(r.utilization[4][0] == doctest::Approx(r.throughput[0] * 2.0));
}

TEST_CASE("MVA: MultiServer station with N <= servers behaves as a Delay station") {
  for (int N = 1; N <= 4; ++N) {
    const MvaResult a = mva_exact({queue(1.0), multi(4, 3.0), delay(2.0)}, N);
    const MvaResult b = mva_exact({queue(1.0), delay(3.0), delay(2.0)}, N);
    CHECK(rel_err(a.throughput[0], b.throughput[0]) < 1e-13);
    CHECK(rel_err(a.residence[1][0], 3.0) < 1e-13);
    CHECK(rel_err(a.queue_length[0][0], b.queue_length[0][0]) < 1e-13);
    // utilization of a MultiServer is per server
    CHECK(rel_err(a.utilization[1][0], a.throughput[0] * 3.0 / 4.0) < 1e-13);
  }
}

TEST_CASE("MVA: MultiServer with one server equals a Queue") {
  const MvaResult a = mva_exact({multi(1, 2.0), queue(1.0), delay(4.0)}, 15);
  const MvaResult b = mva_exact({queue(2.0), queue(1.0), delay(4.0)}, 15);
  CHECK(rel_err(a.throughput[0], b.throughput[0]) < 1e-13);
  CHECK(rel_err(a.queue_length[0][0], b.queue_length[0][0]) < 1e-12);
}

TEST_CASE("MVA: exact load-dependent MultiServer matches Buzen's convolution with load-dependent rates") {
  SUBCASE("moderate load, N = 1..25") {
    const std::vector<MvaStation> st = {queue(1.0, "cpu"), multi(4, 3.0, "pool"), delay(5.0, "think"), multi(2, 1.5, "pair")};
    for (int N = 1; N <= 25; ++N) {
      const MvaResult r = mva_exact(st, N);
      const Buzen b = buzen(st, N);
      CHECK(rel_err(r.throughput[0], b.throughput) < 1e-11);
      for (std::size_t k = 0; k < st.size(); ++k) CHECK(rel_err(r.queue_length[k][0], b.queue_length[k]) < 1e-10);
      check_population_conserved(r, {N}, 1e-12);
    }
  }
  SUBCASE("saturated 8-server station, N = 200") {
    // Per-server demand 1.0 is the bottleneck: X -> 1 and the pool holds almost everyone.
    const std::vector<MvaStation> st = {queue(0.5, "front"), multi(8, 8.0, "pool"), delay(10.0, "think")};
    const int N = 200;
    const MvaResult r = mva_exact(st, N);
    const Buzen b = buzen(st, N);
    CHECK(r.throughput[0] <= 1.0);
    CHECK(rel_err(r.throughput[0], b.throughput) < 1e-9);
    for (std::size_t k = 0; k < st.size(); ++k) CHECK(rel_err(r.queue_length[k][0], b.queue_length[k]) < 1e-8);
    check_population_conserved(r, {N}, 1e-12);
  }
  SUBCASE("two load-dependent stations near saturation stay accurate for large N") {
    // Here the textbook p(0 | n) = 1 - sum_{j>=1} p(j | n) recursion is off by tens of percent in X
    // from N = 50 on; the solver's ratio form p(0 | n) = p(0 | n-1) X(n) / X_{-k}(n) is not.
    const std::vector<MvaStation> st = {queue(0.99, "front"), multi(32, 32.0, "pool"), multi(4, 3.0, "pair")};
    for (int N : {50, 400}) {
      const MvaResult r = mva_exact(st, N);
      const Buzen b = buzen(st, N);
      CHECK(rel_err(r.throughput[0], b.throughput) < 1e-10);
      for (std::size_t k = 0; k < st.size(); ++k) CHECK(rel_err(r.queue_length[k][0], b.queue_length[k]) < 1e-8);
      check_population_conserved(r, {N}, 1e-12);
    }
  }
  SUBCASE("a MultiServer holding everyone runs at its full rate") {
    // All other demand is zero, so the pool holds all N customers and X = min(N, m) / D.
    const MvaResult a = mva_exact({multi(4, 2.0, "pool"), queue(0.0, "free")}, 10);
    CHECK(rel_err(a.throughput[0], 2.0) < 1e-13);
    const MvaResult b = mva_exact({multi(3, 3.0, "alone")}, 5);
    CHECK(rel_err(b.throughput[0], 1.0) < 1e-13);
    CHECK(rel_err(b.queue_length[0][0], 5.0) < 1e-13);
  }
}

TEST_CASE("MVA: multiclass exact with one class equals single-class exact") {
  const auto st = tandem5();
  const MvaResult a = mva_exact(st, 20);
  const MvaResult b = mva_exact_multiclass(st, {20});
  CHECK(rel_err(a.throughput[0], b.throughput[0]) < 1e-13);
  for (std::size_t k = 0; k < st.size(); ++k) {
    CHECK(rel_err(a.residence[k][0], b.residence[k][0]) < 1e-13);
    CHECK(rel_err(a.queue_length[k][0], b.queue_length[k][0]) < 1e-13);
  }
  CHECK(b.iterations == 21);
}

TEST_CASE("MVA: multiclass exact with identical classes aggregates into one class") {
  // Classes with identical demands are indistinguishable in product form, so the total throughput
  // with populations (3, 5) equals the single-class throughput with 8 customers, split 3:5.
  std::vector<MvaStation> st = {{"a", MvaStationKind::Queue, 1, {1.0, 1.0}},
                                {"b", MvaStationKind::Queue, 1, {2.0, 2.0}},
                                {"z", MvaStationKind::Delay, 1, {4.0, 4.0}}};
  const MvaResult m = mva_exact_multiclass(st, {3, 5});
  const MvaResult s = mva_exact({queue(1.0), queue(2.0), delay(4.0)}, 8);
  CHECK(rel_err(m.throughput[0] + m.throughput[1], s.throughput[0]) < 1e-12);
  CHECK(rel_err(m.throughput[0] / m.throughput[1], 3.0 / 5.0) < 1e-12);
  CHECK(rel_err(m.cycle_time[0], s.cycle_time[0]) < 1e-12);
  check_population_conserved(m, {3, 5}, 1e-12);
}

TEST_CASE("MVA: multiclass exact conserves each class population (Little's law)") {
  std::vector<MvaStation> st = {{"cpu", MvaStationKind::Queue, 1, {0.2, 0.05, 0.4}},
                                {"d1", MvaStationKind::Queue, 1, {1.0, 0.3, 0.0}},
                                {"d2", MvaStationKind::Queue, 1, {0.1, 0.9, 0.5}},
                                {"think", MvaStationKind::Delay, 1, {3.0, 0.0, 1.0}}};
  const std::vector<int> pop = {6, 4, 9};
  const MvaResult r = mva_exact_multiclass(st, pop);
  check_population_conserved(r, pop, 1e-12);
  CHECK(r.iterations == 7 * 5 * 10);
  // Utilization law and the bound sum_c U_{k,c} < 1 at every queue.
  for (std::size_t k = 0; k < 3; ++k) {
    double u = 0.0;
    for (std::size_t c = 0; c < 3; ++c) {
      CHECK(r.utilization[k][c] == doctest::Approx(r.throughput[c] * st[k].demand[c]));
      u += r.utilization[k][c];
    }
    CHECK(u < 1.0);
  }
}

TEST_CASE("MVA: Schweitzer approximation is within 5% of exact on the tandem and exact-ish for large N") {
  const auto st = tandem5();
  for (int N : {1, 2, 5, 10, 32}) {
    const MvaResult e = mva_exact(st, N);
    const MvaResult a = mva_schweitzer(st, {N});
    CHECK(a.converged);
    CHECK(rel_err(a.throughput[0], e.throughput[0]) < 0.05);
    CHECK(rel_err(a.cycle_time[0], e.cycle_time[0]) < 0.05);
    check_population_conserved(a, {N}, 1e-12);
  }
  // N = 1 is exact: nobody else is in the network, and Schweitzer's estimate removes the customer.
  CHECK(rel_err(mva_schweitzer(st, {1}).throughput[0], 1.0 / 7.5) < 1e-9);
  // Large N: both are pinned to the bottleneck bound 1/D_max.
  const MvaResult e = mva_exact(st, 2000);
  const MvaResult a = mva_schweitzer(st, {2000});
  CHECK(a.converged);
  CHECK(rel_err(a.throughput[0], e.throughput[0]) < 1e-4);
  CHECK(rel_err(a.throughput[0], 0.5) < 1e-3);
}

TEST_CASE("MVA: Schweitzer multiclass is close to exact multiclass") {
  std::vector<MvaStation> st = {{"cpu", MvaStationKind::Queue, 1, {0.2, 0.05}},
                                {"d1", MvaStationKind::Queue, 1, {1.0, 0.3}},
                                {"d2", MvaStationKind::Queue, 1, {0.1, 0.9}},
                                {"think", MvaStationKind::Delay, 1, {3.0, 1.0}}};
  for (const std::vector<int>& pop : {std::vector<int>{1, 1}, {3, 2}, {10, 10}, {20, 5}}) {
    const MvaResult e = mva_exact_multiclass(st, pop);
    const MvaResult a = mva_schweitzer(st, pop);
    CHECK(a.converged);
    for (std::size_t c = 0; c < pop.size(); ++c) CHECK(rel_err(a.throughput[c], e.throughput[c]) < 0.05);
    check_population_conserved(a, pop, 1e-12);
  }
}

TEST_CASE("MVA: Schweitzer with Seidmann's MultiServer approximation tracks the exact load-dependent solution") {
  const std::vector<MvaStation> st = {queue(1.0, "cpu"), multi(4, 3.0, "pool"), delay(5.0, "think")};
  for (int N : {1, 4, 10, 30, 100}) {
    const MvaResult e = mva_exact(st, N);
    const MvaResult a = mva_schweitzer(st, {N});
    CHECK(a.converged);
    CHECK(rel_err(a.throughput[0], e.throughput[0]) < 0.08);
    check_population_conserved(a, {N}, 1e-12);
    CHECK(a.utilization[1][0] == doctest::Approx(a.throughput[0] * 3.0 / 4.0));
  }
  // With one server Seidmann's transformation is the identity.
  const MvaResult q = mva_schweitzer({queue(2.0), queue(1.0)}, {7});
  const MvaResult m = mva_schweitzer({multi(1, 2.0), queue(1.0)}, {7});
  CHECK(rel_err(q.throughput[0], m.throughput[0]) < 1e-12);
}

TEST_CASE("MVA: Schweitzer reports non-convergence when out of iterations") {
  const MvaResult a = mva_schweitzer(tandem5(), {32}, 1e-14, 2);
  CHECK_FALSE(a.converged);
  CHECK(a.iterations == 2);
}

TEST_CASE("MVA: invalid inputs throw std::invalid_argument") {
  CHECK_THROWS_AS(mva_exact({queue(-1.0)}, 3), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact({queue(std::nan(""))}, 3), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact({queue(1.0)}, 0), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact({}, 3), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact({queue(0.0), delay(0.0)}, 3), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact({multi(0, 1.0)}, 3), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact({{"two", MvaStationKind::Queue, 1, {1.0, 2.0}}}, 3), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact_multiclass({queue(1.0)}, {2, 2}), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact_multiclass({{"a", MvaStationKind::Queue, 1, {1.0, 1.0}}}, {2, 0}), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact_multiclass({multi(2, 1.0)}, {3}), std::invalid_argument);
  CHECK_THROWS_AS(mva_exact_multiclass({{"a", MvaStationKind::Queue, 1, {1.0, 1.0}}}, {2000, 2000}), std::invalid_argument);
  CHECK_THROWS_AS(mva_schweitzer({queue(1.0)}, {}), std::invalid_argument);
  CHECK_THROWS_AS(mva_schweitzer({queue(1.0)}, {-1}), std::invalid_argument);
  CHECK_THROWS_AS(mva_schweitzer({queue(1.0)}, {3}, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(mva_schweitzer({queue(1.0)}, {3}, 1e-10, 0), std::invalid_argument);
  // The message names the offending station.
  try {
    (void)mva_exact({queue(1.0, "disk"), queue(-2.0, "net")}, 3);
    FAIL("expected an exception");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("'net'") != std::string::npos);
  }
}
