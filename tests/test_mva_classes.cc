// Multi-class MVA with multi-server stations and replicated classes (sim/mva_classes.h), against
// the stationary distribution of the same networks' Markov chains, computed here by brute force.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <vector>

#include "sim/mva.h"
#include "sim/mva_classes.h"

using vqsim::sim::MvaClass;
using vqsim::sim::MvaClassStation;
using vqsim::sim::MvaMethod;
using vqsim::sim::MvaStation;
using vqsim::sim::MvaStationKind;

namespace {

// The continuous-time Markov chain of a closed network whose classes each visit their stations
// (those where the class has demand) cyclically in station order: a Queue or MultiServer
// station is processor sharing with capacity min(n, servers) (n customers present, shared
// equally, class c served at rate 1/D_c of its share), a Delay serves every customer at once.
// Product form (BCMP), so exact MVA must give exactly its throughputs and queue lengths. A state
// is the count of each class at each station; the chain is solved by Gaussian elimination of its
// balance equations.
struct Ctmc {
  std::vector<double> throughput;                 // per class
  std::vector<std::vector<double>> queue_length;  // [station][class]
};

Ctmc brute_force(const std::vector<MvaStation>& st, const std::vector<int>& pop) {
  const std::size_t K = st.size(), C = pop.size();
  std::vector<std::vector<std::size_t>> route(C);
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t k = 0; k < K; ++k)
      if (st[k].demand[c] > 0) route[c].push_back(k);
  // Every state: for each class, a composition of its population over its route.
  std::vector<std::vector<int>> states{std::vector<int>(C * K, 0)};
  for (std::size_t c = 0; c < C; ++c) {
    std::vector<std::vector<int>> next;
    for (const auto& base : states) {
      auto place = [&](auto&& self, std::size_t i, int left, std::vector<int>& s) -> void {
        const std::size_t k = route[c][i];
        if (i + 1 == route[c].size()) {
          s[c * K + k] = left;
          next.push_back(s);
          return;
        }
        for (int v = 0; v <= left; ++v) {
          s[c * K + k] = v;
          self(self, i + 1, left - v, s);
        }
      };
      std::vector<int> s = base;
      place(place, 0, pop[c], s);
    }
    states = std::move(next);
  }
  std::map<std::vector<int>, std::size_t> index;
  for (std::size_t i = 0; i < states.size(); ++i) index[states[i]] = i;
  const std::size_t S = states.size();
  // rate(state, k, c): departures of class c from station k.
  auto rate = [&](const std::vector<int>& s, std::size_t k, std::size_t c) {
    const int nkc = s[c * K + k];
    if (nkc == 0 || st[k].demand[c] <= 0) return 0.0;
    const double mu = 1.0 / st[k].demand[c];
    if (st[k].kind == MvaStationKind::Delay) return nkc * mu;
    int nk = 0;
    for (std::size_t d = 0; d < C; ++d) nk += s[d * K + k];
    const int servers = st[k].kind == MvaStationKind::MultiServer ? st[k].servers : 1;
    return static_cast<double>(nkc) / nk * std::min(nk, servers) * mu;
  };
  // Q^T pi = 0 with sum pi = 1: the last balance equation replaced by the normalization.
  std::vector<std::vector<double>> A(S, std::vector<double>(S + 1, 0.0));
  for (std::size_t i = 0; i < S; ++i)
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t c = 0; c < C; ++c) {
        const double r = rate(states[i], k, c);
        if (r == 0) continue;
        const auto at = std::find(route[c].begin(), route[c].end(), k) - route[c].begin();
        const std::size_t next = route[c][(static_cast<std::size_t>(at) + 1) % route[c].size()];
        std::vector<int> to = states[i];
        --to[c * K + k];
        ++to[c * K + next];
        const std::size_t j = index.at(to);
        A[j][i] += r;  // flow into j
        A[i][i] -= r;  // flow out of i
      }
  for (std::size_t i = 0; i < S; ++i) A[S - 1][i] = 1.0;
  A[S - 1][S] = 1.0;
  for (std::size_t col = 0; col < S; ++col) {  // Gaussian elimination with partial pivoting
    std::size_t piv = col;
    for (std::size_t r = col + 1; r < S; ++r)
      if (std::abs(A[r][col]) > std::abs(A[piv][col])) piv = r;
    std::swap(A[col], A[piv]);
    for (std::size_t r = 0; r < S; ++r) {
      if (r == col || A[r][col] == 0) continue;
      const double f = A[r][col] / A[col][col];
      for (std::size_t x = col; x <= S; ++x) A[r][x] -= f * A[col][x];
    }
  }
  Ctmc out;
  out.throughput.assign(C, 0);
  out.queue_length.assign(K, std::vector<double>(C, 0));
  for (std::size_t i = 0; i < S; ++i) {
    const double pi = A[i][S] / A[i][i];
    for (std::size_t c = 0; c < C; ++c) {
      out.throughput[c] += pi * rate(states[i], route[c][0], c);  // a cycle: one departure from its first station
      for (std::size_t k = 0; k < K; ++k) out.queue_length[k][c] += pi * states[i][c * K + k];
    }
  }
  return out;
}

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

}  // namespace

TEST_CASE("exact multi-class MVA with a multi-server station matches the brute-force Markov chain") {
  // 2 classes, two queueing stations (one with 2 servers) and a delay; populations 3 and 2.
  const std::vector<MvaStation> net = {{"cpu", MvaStationKind::MultiServer, 2, {1.0, 3.0}},
                                       {"disk", MvaStationKind::Queue, 1, {2.0, 0.5}},
                                       {"think", MvaStationKind::Delay, 1, {4.0, 1.0}}};
  const std::vector<int> pop = {3, 2};
  const Ctmc truth = brute_force(net, pop);
  const auto r = vqsim::sim::mva_exact_multiclass_ld(net, pop);
  for (std::size_t c = 0; c < 2; ++c) {
    CAPTURE(c);
    CHECK(rel(r.throughput[c], truth.throughput[c]) < 1e-9);
    for (std::size_t k = 0; k < 3; ++k) CHECK(rel(r.queue_length[k][c], truth.queue_length[k][c]) < 1e-9);
    // Little's law over the cycle: the class's customers are somewhere.
    double n = 0;
    for (std::size_t k = 0; k < 3; ++k) n += r.queue_length[k][c];
    CHECK(n == doctest::Approx(pop[c]));
  }
  // Three servers for three customers of class 0 and two of class 1: still a multi-server
  // station (5 customers), again against the chain.
  auto three = net;
  three[0].servers = 3;
  const Ctmc truth3 = brute_force(three, pop);
  const auto r3 = vqsim::sim::mva_exact_multiclass_ld(three, pop);
  for (std::size_t c = 0; c < 2; ++c) CHECK(rel(r3.throughput[c], truth3.throughput[c]) < 1e-9);
}

TEST_CASE("exact multi-class MVA with one class agrees with the single-class load-dependent MVA at 60 customers") {
  const std::vector<MvaStation> net = {{"cores", MvaStationKind::MultiServer, 4, {10.0}},
                                       {"dev", MvaStationKind::MultiServer, 16, {70.0}},
                                       {"thread", MvaStationKind::Queue, 1, {2.0}},
                                       {"z", MvaStationKind::Delay, 1, {50.0}}};
  const auto one = vqsim::sim::mva_exact(net, 60);
  const auto many = vqsim::sim::mva_exact_multiclass_ld(net, {60});
  CHECK(rel(many.throughput[0], one.throughput[0]) < 1e-6);
  for (std::size_t k = 0; k < net.size(); ++k) CHECK(rel(many.queue_length[k][0], one.queue_length[k][0]) < 1e-5);
}

TEST_CASE("replicated classes: exact equals the expanded network's chain; the approximation is close") {
  // Two VMs of profile A (own thread each, population 2) and one VM of profile B (population 3)
  // share a 2-core station and a device.
  const std::vector<MvaClass> classes = {{"a", 2, 2}, {"b", 3, 1}};
  const std::vector<MvaClassStation> st = {{"cores", MvaStationKind::MultiServer, 2, {1.0, 2.0}, -1},
                                           {"device", MvaStationKind::Queue, 1, {1.5, 0.7}, -1},
                                           {"a.thread", MvaStationKind::Queue, 1, {1.2, 0.0}, 0},
                                           {"b.thread", MvaStationKind::Queue, 1, {0.0, 0.9}, 1},
                                           {"wire", MvaStationKind::Delay, 1, {3.0, 3.0}, -1}};
  const auto exact = vqsim::sim::mva_classes(st, classes, MvaMethod::exact);
  CHECK(exact.exact);
  CHECK(exact.lattice_points == doctest::Approx(3.0 * 3.0 * 4.0));
  // The same network written out: classes a#0, a#1, b; each a-replica its own thread, visited
  // cyclically in the order above.
  const std::vector<MvaStation> expanded = {
      {"cores", MvaStationKind::MultiServer, 2, {1.0, 1.0, 2.0}}, {"device", MvaStationKind::Queue, 1, {1.5, 1.5, 0.7}},
      {"a.thread#0", MvaStationKind::Queue, 1, {1.2, 0.0, 0.0}},  {"a.thread#1", MvaStationKind::Queue, 1, {0.0, 1.2, 0.0}},
      {"b.thread", MvaStationKind::Queue, 1, {0.0, 0.0, 0.9}},    {"wire", MvaStationKind::Delay, 1, {3.0, 3.0, 3.0}}};
  const Ctmc truth = brute_force(expanded, {2, 2, 3});
  CHECK(rel(exact.throughput[0], truth.throughput[0]) < 1e-6);
  CHECK(rel(exact.throughput[1], truth.throughput[2]) < 1e-6);
  CHECK(rel(exact.queue_length[1][0], truth.queue_length[1][0]) < 1e-5);  // one a-VM's requests at the device
  CHECK(rel(exact.queue_length[2][0], truth.queue_length[2][0]) < 1e-5);  // at its own thread
  // Schweitzer-Bard: within several percent of exact (2 or 3 customers per chain are its worst
  // case: removing 1/N of a chain's queue is crudest there; 6.4% here).
  const auto approx = vqsim::sim::mva_classes(st, classes, MvaMethod::approximate);
  CHECK_FALSE(approx.exact);
  CHECK(approx.converged);
  for (std::size_t c = 0; c < 2; ++c) CHECK(rel(approx.throughput[c], exact.throughput[c]) < 0.08);
  // Automatic picks exact for so small a lattice.
  CHECK(vqsim::sim::mva_classes(st, classes).exact);
}

TEST_CASE("Schweitzer-Bard on replicas is Schweitzer-Bard on the network written out, and close to exact on a bigger case") {
  // 3 VMs of one profile (population 4 each, own thread) and 2 of another (population 6) on 4
  // cores and a 2-channel device: 5^3 x 7^2 = 6125 lattice points, exact is still affordable.
  const std::vector<MvaClass> classes = {{"web", 4, 3}, {"db", 6, 2}};
  const std::vector<MvaClassStation> st = {{"cores", MvaStationKind::MultiServer, 4, {2.0, 1.0}, -1},
                                           {"device", MvaStationKind::MultiServer, 2, {3.0, 5.0}, -1},
                                           {"web.thread", MvaStationKind::Queue, 1, {2.5, 0}, 0},
                                           {"db.thread", MvaStationKind::Queue, 1, {0, 1.5}, 1},
                                           {"net", MvaStationKind::Delay, 1, {10.0, 4.0}, -1}};
  const auto approx = vqsim::sim::mva_classes(st, classes, MvaMethod::approximate);
  // Written out: 5 classes, each VM its own thread.
  std::vector<MvaStation> out = {{"cores", MvaStationKind::MultiServer, 4, {2, 2, 2, 1, 1}},
                                 {"device", MvaStationKind::MultiServer, 2, {3, 3, 3, 5, 5}},
                                 {"net", MvaStationKind::Delay, 1, {10, 10, 10, 4, 4}}};
  for (int v = 0; v < 5; ++v) {
    MvaStation t{"thread", MvaStationKind::Queue, 1, std::vector<double>(5, 0.0)};
    t.demand[static_cast<std::size_t>(v)] = v < 3 ? 2.5 : 1.5;
    out.push_back(t);
  }
  const auto plain = vqsim::sim::mva_schweitzer(out, {4, 4, 4, 6, 6});
  CHECK(rel(approx.throughput[0], plain.throughput[0]) < 1e-7);
  CHECK(rel(approx.throughput[1], plain.throughput[3]) < 1e-7);
  const auto exact = vqsim::sim::mva_classes(st, classes, MvaMethod::exact, 1e4);
  CHECK(exact.exact);
  for (std::size_t c = 0; c < 2; ++c) {
    CAPTURE(c);
    CHECK(rel(approx.throughput[c], exact.throughput[c]) < 0.05);
    CHECK(rel(approx.cycle_time[c], exact.cycle_time[c]) < 0.05);
  }
  // Automatic takes the approximation past the lattice limit, and says so.
  const auto automatic = vqsim::sim::mva_classes(st, classes, MvaMethod::automatic, 1000);
  CHECK_FALSE(automatic.exact);
  CHECK(automatic.method.find("Schweitzer") != std::string::npos);
  CHECK_THROWS_AS(vqsim::sim::mva_classes(st, classes, MvaMethod::exact, 1000), std::invalid_argument);
}

TEST_CASE("mva_classes refuses malformed networks") {
  const std::vector<MvaClass> one = {{"a", 1, 1}};
  CHECK_THROWS_AS(vqsim::sim::mva_classes({}, one), std::invalid_argument);
  CHECK_THROWS_AS(vqsim::sim::mva_classes({{"q", MvaStationKind::Queue, 1, {1.0}, -1}}, {{"a", 1, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(vqsim::sim::mva_classes({{"q", MvaStationKind::Queue, 1, {1.0}, 3}}, one), std::invalid_argument);
  CHECK_THROWS_AS(vqsim::sim::mva_classes({{"q", MvaStationKind::Queue, 1, {1.0, 2.0}, 0}}, {{"a", 1, 1}, {"b", 1, 1}}),
                  std::invalid_argument);  // owned by a, demand for b
  CHECK_THROWS_AS(vqsim::sim::mva_classes({{"q", MvaStationKind::MultiServer, 0, {1.0}, -1}}, one), std::invalid_argument);
  CHECK_THROWS_AS(vqsim::sim::mva_classes({{"q", MvaStationKind::Queue, 1, {0.0}, -1}}, one), std::invalid_argument);
}

TEST_CASE("the jobs of one VM: classes that share their VM's own stations, per replica; exact equals the chain") {
  // Two VMs of a profile running a reader and a writer: both jobs of VM r use VM r's thread; one
  // VM of another profile has a thread of its own. All share a 2-core station and a device. One
  // customer per chain keeps the chain small (675 states).
  const std::vector<MvaClass> classes = {{"a/reader", 1, 2, 0}, {"a/writer", 1, 2, 0}, {"b", 1, 1, -1}};
  const std::vector<MvaClassStation> st = {{"cores", MvaStationKind::MultiServer, 2, {1.0, 1.5, 2.0}, -1},
                                           {"device", MvaStationKind::Queue, 1, {1.5, 3.0, 0.7}, -1},
                                           {"a.thread", MvaStationKind::Queue, 1, {1.2, 0.4, 0.0}, 1},
                                           {"a.reader_thread", MvaStationKind::Queue, 1, {0.8, 0.0, 0.0}, 0},
                                           {"b.thread", MvaStationKind::Queue, 1, {0.0, 0.0, 0.9}, 2},
                                           {"wire", MvaStationKind::Delay, 1, {3.0, 0.0, 0.0}, -1}};
  const auto exact = vqsim::sim::mva_classes(st, classes, MvaMethod::exact);
  CHECK(exact.exact);
  CHECK(exact.lattice_points == doctest::Approx(32.0));
  // Written out: classes reader#0, reader#1, writer#0, writer#1, b; VM r's thread is visited by
  // reader#r and writer#r, never by the other VM's jobs.
  const std::vector<MvaStation> expanded = {{"cores", MvaStationKind::MultiServer, 2, {1.0, 1.0, 1.5, 1.5, 2.0}},
                                            {"device", MvaStationKind::Queue, 1, {1.5, 1.5, 3.0, 3.0, 0.7}},
                                            {"a.thread#0", MvaStationKind::Queue, 1, {1.2, 0.0, 0.4, 0.0, 0.0}},
                                            {"a.thread#1", MvaStationKind::Queue, 1, {0.0, 1.2, 0.0, 0.4, 0.0}},
                                            {"a.reader_thread#0", MvaStationKind::Queue, 1, {0.8, 0.0, 0.0, 0.0, 0.0}},
                                            {"a.reader_thread#1", MvaStationKind::Queue, 1, {0.0, 0.8, 0.0, 0.0, 0.0}},
                                            {"b.thread", MvaStationKind::Queue, 1, {0.0, 0.0, 0.0, 0.0, 0.9}},
                                            {"wire", MvaStationKind::Delay, 1, {3.0, 3.0, 0.0, 0.0, 0.0}}};
  const std::vector<int> pop = {1, 1, 1, 1, 1};
  const Ctmc truth = brute_force(expanded, pop);
  CHECK(rel(exact.throughput[0], truth.throughput[0]) < 1e-6);
  CHECK(rel(exact.throughput[1], truth.throughput[2]) < 1e-6);
  CHECK(rel(exact.throughput[2], truth.throughput[4]) < 1e-6);
  CHECK(rel(exact.queue_length[2][0], truth.queue_length[2][0]) < 1e-5);  // VM 0's reader at VM 0's thread
  CHECK(rel(exact.queue_length[2][1], truth.queue_length[2][2]) < 1e-5);  // VM 0's writer there
  CHECK(rel(exact.queue_length[1][1], truth.queue_length[1][2]) < 1e-5);  // one writer at the device
  // The same jobs as VMs of their own (no vm group) is another network: each job its own thread
  // copy, so the writer no longer queues behind its VM's reader -- the group matters.
  auto apart = classes;
  apart[0].vm = apart[1].vm = -1;
  auto apart_st = st;
  apart_st[2].demand = {1.2, 0.0, 0.0};
  apart_st[2].owner = 0;
  apart_st.push_back({"a.writer_thread", MvaStationKind::Queue, 1, {0.0, 0.4, 0.0}, 1});
  const auto split = vqsim::sim::mva_classes(apart_st, apart, MvaMethod::exact);
  CHECK(split.throughput[1] > exact.throughput[1] * 1.001);
  // Schweitzer-Bard on the representatives is Schweitzer-Bard on the network written out.
  const auto approx = vqsim::sim::mva_classes(st, classes, MvaMethod::approximate);
  const auto plain = vqsim::sim::mva_schweitzer(expanded, pop);
  CHECK(rel(approx.throughput[0], plain.throughput[0]) < 1e-7);
  CHECK(rel(approx.throughput[1], plain.throughput[2]) < 1e-7);
  CHECK(rel(approx.throughput[2], plain.throughput[4]) < 1e-7);
  // One customer per chain is the approximation's crudest case (10.1% off here).
  for (std::size_t c = 0; c < 3; ++c) CHECK(rel(approx.throughput[c], exact.throughput[c]) < 0.15);
}

TEST_CASE("the jobs of one VM: one replica count, and a VM's station serves only that VM's classes") {
  const MvaClassStation q{"q", MvaStationKind::Queue, 1, {1.0, 1.0}, 0};
  CHECK_THROWS_WITH_AS(vqsim::sim::mva_classes({q}, {{"a", 1, 2, 0}, {"b", 1, 3, 0}}), doctest::Contains("replicas"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(vqsim::sim::mva_classes({q}, {{"a", 1, 2, 0}, {"b", 1, 2, 1}}), doctest::Contains("another VM"),
                       std::invalid_argument);
  CHECK(vqsim::sim::mva_classes({q}, {{"a", 1, 2, 0}, {"b", 1, 2, 0}}).throughput[1] == doctest::Approx(0.5));
}
