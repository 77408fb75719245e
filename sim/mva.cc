// Mean-value analysis of closed product-form networks; see mva.h for the algorithms and references.
#include "sim/mva.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>

namespace vqsim::sim {

namespace {

std::string station_label(const MvaStation& s, std::size_t k) {
  return s.name.empty() ? "station #" + std::to_string(k) : "station '" + s.name + "'";
}

// Common input checks; every station must have one demand entry per population entry.
void validate(const char* fn, const std::vector<MvaStation>& stations, const std::vector<int>& populations,
              bool allow_multiserver) {
  const std::string where = std::string(fn) + ": ";
  if (stations.empty()) throw std::invalid_argument(where + "the network has no stations");
  if (populations.empty()) throw std::invalid_argument(where + "at least one customer class is required");
  for (std::size_t c = 0; c < populations.size(); ++c) {
    if (populations[c] < 1)
      throw std::invalid_argument(where + "population of class " + std::to_string(c) + " is " + std::to_string(populations[c]) +
                                  "; it must be >= 1");
  }
  const std::size_t classes = populations.size();
  for (std::size_t k = 0; k < stations.size(); ++k) {
    const MvaStation& s = stations[k];
    if (s.demand.size() != classes)
      throw std::invalid_argument(where + station_label(s, k) + " has " + std::to_string(s.demand.size()) +
                                  " demand entries but there are " + std::to_string(classes) + " classes");
    for (std::size_t c = 0; c < classes; ++c) {
      if (!std::isfinite(s.demand[c]) || s.demand[c] < 0.0)
        throw std::invalid_argument(where + station_label(s, k) + " has invalid demand " + std::to_string(s.demand[c]) +
                                    " for class " + std::to_string(c) + " (must be finite and >= 0)");
    }
    if (s.kind == MvaStationKind::MultiServer) {
      if (!allow_multiserver)
        throw std::invalid_argument(where + station_label(s, k) +
                                    " is MultiServer, which this solver does not support (use mva_exact for a "
                                    "single class or mva_schweitzer)");
      if (s.servers < 1)
        throw std::invalid_argument(where + station_label(s, k) + " has " + std::to_string(s.servers) +
                                    " servers; it must be >= 1");
    } else if (s.kind != MvaStationKind::Queue && s.kind != MvaStationKind::Delay) {
      throw std::invalid_argument(where + station_label(s, k) + " has an unknown kind");
    }
  }
  for (std::size_t c = 0; c < classes; ++c) {
    double total = 0.0;
    for (const MvaStation& s : stations) total += s.demand[c];
    if (!(total > 0.0))
      throw std::invalid_argument(where + "class " + std::to_string(c) +
                                  " has zero total demand, so its throughput would be infinite");
  }
}

MvaResult make_result(std::size_t stations, std::size_t classes) {
  MvaResult r;
  r.throughput.assign(classes, 0.0);
  r.cycle_time.assign(classes, 0.0);
  r.residence.assign(stations, std::vector<double>(classes, 0.0));
  r.queue_length.assign(stations, std::vector<double>(classes, 0.0));
  r.utilization.assign(stations, std::vector<double>(classes, 0.0));
  return r;
}

// Fills queue_length and utilization from throughput and residence (Little's law, utilization law).
void finish_result(MvaResult& r, const std::vector<MvaStation>& stations) {
  for (std::size_t k = 0; k < stations.size(); ++k) {
    const double m = stations[k].kind == MvaStationKind::MultiServer ? static_cast<double>(stations[k].servers) : 1.0;
    for (std::size_t c = 0; c < r.throughput.size(); ++c) {
      r.queue_length[k][c] = r.throughput[c] * r.residence[k][c];
      r.utilization[k][c] = r.throughput[c] * stations[k].demand[c] / m;
    }
  }
}

}  // namespace

MvaResult mva_exact(const std::vector<MvaStation>& stations, int population) {
  validate("mva_exact", stations, std::vector<int>{population}, /*allow_multiserver=*/true);
  const std::size_t K = stations.size();

  // How each station is treated. A MultiServer with one server is a Queue; one with at least as
  // many servers as customers (or with zero demand) never queues and is a Delay. The rest are
  // genuinely load-dependent ("LD") and get a bit in the subnetwork masks below.
  enum class Treat { Queue, Delay, LoadDependent };
  std::vector<Treat> treat(K, Treat::Queue);
  std::vector<int> bit(K, -1);
  std::vector<std::size_t> ld;      // station index of LD station i
  std::vector<std::size_t> offset;  // start of LD station i's probabilities within one mask's block
  std::size_t probs = 0;            // probabilities per mask: sum of servers over LD stations
  for (std::size_t k = 0; k < K; ++k) {
    const MvaStation& s = stations[k];
    if (s.kind == MvaStationKind::Delay) {
      treat[k] = Treat::Delay;
    } else if (s.kind == MvaStationKind::MultiServer && s.servers > 1) {
      if (s.servers >= population || s.demand[0] == 0.0) {
        treat[k] = Treat::Delay;
      } else {
        treat[k] = Treat::LoadDependent;
        bit[k] = static_cast<int>(ld.size());
        ld.push_back(k);
        offset.push_back(probs);
        probs += static_cast<std::size_t>(s.servers);
      }
    }
  }
  const std::size_t M = ld.size();
  // Work: 2^M subnetworks x population steps x (stations + probabilities).
  const double work =
      std::ldexp(1.0, static_cast<int>(std::min<std::size_t>(M, 60))) * population * static_cast<double>(K + probs);
  if (M > 24 || work > 2e9)
    throw std::invalid_argument("mva_exact: " + std::to_string(M) +
                                " load-dependent MultiServer stations make exact MVA too expensive (2^" + std::to_string(M) +
                                " subnetworks); use mva_schweitzer");
  const std::size_t masks = std::size_t{1} << M;

  // Per subnetwork `mask` (all Queue/Delay stations plus the LD stations whose bit is set):
  //   X[mask]                  throughput at the current n,
  //   Q[mask*K + k]            mean queue length at n-1, overwritten with the value at n,
  //   p[mask*probs + offset_i + j] = p_i(j | n-1) for j < servers_i, overwritten with p_i(j | n).
  std::vector<double> X(masks, 0.0);
  std::vector<double> Q(masks * K, 0.0);
  std::vector<double> p(masks * probs, 0.0);
  for (std::size_t mask = 0; mask < masks; ++mask)
    for (std::size_t i = 0; i < M; ++i) p[mask * probs + offset[i]] = 1.0;  // empty network
  std::vector<double> R(K, 0.0);
  constexpr double kInf = std::numeric_limits<double>::infinity();

  for (int n = 1; n <= population; ++n) {
    // Removing a station clears a bit, so every subnetwork a mask depends on has a smaller number
    // and is already solved for this n.
    for (std::size_t mask = 0; mask < masks; ++mask) {
      double* Qm = &Q[mask * K];
      double* pm = probs > 0 ? &p[mask * probs] : nullptr;
      double cycle = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        const double D = stations[k].demand[0];
        switch (treat[k]) {
          case Treat::Delay:
            R[k] = D;
            break;
          case Treat::Queue:
            R[k] = D * (1.0 + Qm[k]);
            break;
          case Treat::LoadDependent: {
            const std::size_t i = static_cast<std::size_t>(bit[k]);
            if (((mask >> i) & 1U) == 0) {
              R[k] = 0.0;
              break;
            }
            // R = D * sum_{j>=1} j / min(j, m) * p(j-1 | n-1)
            //   = D/m * (1 + Q(n-1) + sum_{j=0}^{m-2} (m-1-j) p(j | n-1)).
            const int m = stations[k].servers;
            const double* pk = pm + offset[i];
            double corr = 0.0;
            for (int j = 0; j <= m - 2; ++j) corr += static_cast<double>(m - 1 - j) * pk[j];
            R[k] = D / m * (1.0 + Qm[k] + corr);
            break;
          }
        }
        cycle += R[k];
      }
      if (cycle == 0.0) {
        // Only a subnetwork without LD stations whose other demands are all zero: customers
        // pass through it instantly.
        X[mask] = kInf;
        continue;
      }
      const double x = static_cast<double>(n) / cycle;
      X[mask] = x;
      for (std::size_t k = 0; k < K; ++k) Qm[k] = x * R[k];
      for (std::size_t i = 0; i < M; ++i) {
        if (((mask >> i) & 1U) == 0) continue;
        const MvaStation& s = stations[ld[i]];
        double* pk = pm + offset[i];
        const double xd = x * s.demand[0];
        // p(j | n) = X(n) D / j * p(j-1 | n-1) for 1 <= j < m (descending, so pk[j-1] is old).
        for (int j = s.servers - 1; j >= 1; --j) pk[j] = xd / j * pk[j - 1];
        // p(0 | n) = G_{-i}(n) / G(n) = p(0 | n-1) * X(n) / X_{-i}(n), X_{-i} being the
        // throughput of the subnetwork without station i: a product of positive factors instead
        // of the cancelling 1 - sum_{j>=1} p(j | n).
        const double x_without = X[mask & ~(std::size_t{1} << i)];
        pk[0] = std::isinf(x_without) ? 0.0 : pk[0] * x / x_without;
      }
    }
  }

  // The full network is the last mask, so R and X[masks-1] hold its solution at n = population.
  MvaResult r = make_result(K, 1);
  r.throughput[0] = X[masks - 1];
  double cycle = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    r.residence[k][0] = R[k];
    cycle += R[k];
  }
  r.cycle_time[0] = cycle;
  finish_result(r, stations);
  r.iterations = population;
  r.converged = true;
  return r;
}

MvaResult mva_exact_multiclass(const std::vector<MvaStation>& stations, const std::vector<int>& populations) {
  validate("mva_exact_multiclass", stations, populations, /*allow_multiserver=*/false);
  const std::size_t K = stations.size();
  const std::size_t C = populations.size();

  constexpr double kMaxPoints = 2e6;
  double points_d = 1.0;
  for (int n : populations) points_d *= static_cast<double>(n) + 1.0;
  if (points_d > kMaxPoints)
    throw std::invalid_argument("mva_exact_multiclass: the population lattice has " + std::to_string(points_d) +
                                " points (more than 2e6); use mva_schweitzer instead");
  const std::size_t points = static_cast<std::size_t>(points_d);

  // Mixed-radix index of a population vector: idx = sum_c n_c * stride_c. Removing one class-c
  // customer lowers the index by stride_c, so visiting indices in increasing order always has
  // every predecessor n - e_c solved already.
  std::vector<std::size_t> stride(C, 1);
  for (std::size_t c = 1; c < C; ++c) stride[c] = stride[c - 1] * static_cast<std::size_t>(populations[c - 1] + 1);

  std::vector<double> Qtot(points * K, 0.0);  // total mean queue length per station at each point
  std::vector<int> n(C, 0);
  std::vector<double> R(K * C, 0.0);  // [k * C + c] at the current point
  std::vector<double> X(C, 0.0);

  for (std::size_t idx = 1; idx < points; ++idx) {
    // Advance the mixed-radix counter n to match idx.
    for (std::size_t c = 0; c < C; ++c) {
      if (n[c] < populations[c]) {
        ++n[c];
        break;
      }
      n[c] = 0;
    }
    for (std::size_t c = 0; c < C; ++c) {
      X[c] = 0.0;
      if (n[c] == 0) {
        for (std::size_t k = 0; k < K; ++k) R[k * C + c] = 0.0;
        continue;
      }
      const double* Qprev = &Qtot[(idx - stride[c]) * K];
      double cycle = 0.0;
      for (std::size_t k = 0; k < K; ++k) {
        const double D = stations[k].demand[c];
        const double rk = stations[k].kind == MvaStationKind::Delay ? D : D * (1.0 + Qprev[k]);
        R[k * C + c] = rk;
        cycle += rk;
      }
      X[c] = static_cast<double>(n[c]) / cycle;
    }
    double* Qcur = &Qtot[idx * K];
    for (std::size_t k = 0; k < K; ++k) {
      double q = 0.0;
      for (std::size_t c = 0; c < C; ++c) q += X[c] * R[k * C + c];
      Qcur[k] = q;
    }
  }

  // The last index is the full population vector, so R and X hold its solution.
  MvaResult r = make_result(K, C);
  for (std::size_t c = 0; c < C; ++c) {
    r.throughput[c] = X[c];
    double cycle = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      r.residence[k][c] = R[k * C + c];
      cycle += R[k * C + c];
    }
    r.cycle_time[c] = cycle;
  }
  finish_result(r, stations);
  r.iterations = static_cast<int>(points);
  r.converged = true;
  return r;
}

MvaResult mva_schweitzer(const std::vector<MvaStation>& stations, const std::vector<int>& populations, double tolerance,
                         int max_iterations) {
  validate("mva_schweitzer", stations, populations, /*allow_multiserver=*/true);
  if (!(tolerance > 0.0) || !std::isfinite(tolerance))
    throw std::invalid_argument("mva_schweitzer: tolerance must be finite and > 0");
  if (max_iterations < 1) throw std::invalid_argument("mva_schweitzer: max_iterations must be >= 1");
  const std::size_t K = stations.size();
  const std::size_t C = populations.size();

  // Q[k][c]: mean number of class-c customers at station k. Qa[k][c]: the part of it that
  // customers arriving at k queue behind (all of Q for Queue, the single-server part for
  // MultiServer under Seidmann's approximation, nothing for Delay).
  std::vector<std::vector<double>> Q(K, std::vector<double>(C, 0.0));
  std::vector<std::vector<double>> Qa(K, std::vector<double>(C, 0.0));
  std::vector<std::vector<double>> R(K, std::vector<double>(C, 0.0));
  std::vector<std::vector<double>> Ra(K, std::vector<double>(C, 0.0));
  std::vector<double> X(C, 0.0);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t c = 0; c < C; ++c) Q[k][c] = Qa[k][c] = static_cast<double>(populations[c]) / static_cast<double>(K);

  bool converged = false;
  int it = 0;
  while (it < max_iterations) {
    ++it;
    for (std::size_t k = 0; k < K; ++k) {
      double total = 0.0;
      for (std::size_t c = 0; c < C; ++c) total += Qa[k][c];
      const MvaStation& s = stations[k];
      for (std::size_t c = 0; c < C; ++c) {
        const double D = s.demand[c];
        // Schweitzer: a class-c arrival sees the network with one class-c customer removed,
        // taken proportionally from where class c is.
        const double arrival = std::max(0.0, total - Qa[k][c] / static_cast<double>(populations[c]));
        switch (s.kind) {
          case MvaStationKind::Delay:
            R[k][c] = D;
            Ra[k][c] = 0.0;
            break;
          case MvaStationKind::Queue:
            R[k][c] = Ra[k][c] = D * (1.0 + arrival);
            break;
          case MvaStationKind::MultiServer: {
            const double m = static_cast<double>(s.servers);
            Ra[k][c] = D / m * (1.0 + arrival);      // Seidmann: single server, demand D/m ...
            R[k][c] = Ra[k][c] + D * (m - 1.0) / m;  // ... plus a pure delay D(m-1)/m
            break;
          }
        }
      }
    }
    for (std::size_t c = 0; c < C; ++c) {
      double cycle = 0.0;
      for (std::size_t k = 0; k < K; ++k) cycle += R[k][c];
      X[c] = static_cast<double>(populations[c]) / cycle;
    }
    double worst = 0.0;  // max_{k,c} |dQ| / N_c
    for (std::size_t k = 0; k < K; ++k) {
      for (std::size_t c = 0; c < C; ++c) {
        const double q = X[c] * R[k][c];
        worst = std::max(worst, std::abs(q - Q[k][c]) / static_cast<double>(populations[c]));
        Q[k][c] = q;
        Qa[k][c] = X[c] * Ra[k][c];
      }
    }
    if (worst <= tolerance) {
      converged = true;
      break;
    }
  }

  MvaResult r = make_result(K, C);
  for (std::size_t c = 0; c < C; ++c) {
    r.throughput[c] = X[c];
    double cycle = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      r.residence[k][c] = R[k][c];
      cycle += R[k][c];
    }
    r.cycle_time[c] = cycle;
  }
  finish_result(r, stations);
  r.iterations = it;
  r.converged = converged;
  return r;
}

}  // namespace vqsim::sim
