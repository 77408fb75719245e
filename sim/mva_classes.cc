// Multi-class MVA of replicated classes; see mva_classes.h for the model and the references.
#include "sim/mva_classes.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace vqsim::sim {

namespace {

std::string label(const std::string& name, std::size_t k) {
  return name.empty() ? "station #" + std::to_string(k) : "station '" + name + "'";
}

void check_demands(const char* fn, const std::string& name, std::size_t k, const std::vector<double>& demand, std::size_t classes,
                   MvaStationKind kind, int servers) {
  const std::string where = std::string(fn) + ": " + label(name, k);
  if (demand.size() != classes)
    throw std::invalid_argument(where + " has " + std::to_string(demand.size()) + " demand entries but there are " +
                                std::to_string(classes) + " classes");
  for (std::size_t c = 0; c < classes; ++c)
    if (!std::isfinite(demand[c]) || demand[c] < 0.0)
      throw std::invalid_argument(where + " has invalid demand " + std::to_string(demand[c]) + " for class " + std::to_string(c) +
                                  " (must be finite and >= 0)");
  if (kind == MvaStationKind::MultiServer && servers < 1)
    throw std::invalid_argument(where + " has " + std::to_string(servers) + " servers; it must be >= 1");
  if (kind != MvaStationKind::Queue && kind != MvaStationKind::Delay && kind != MvaStationKind::MultiServer)
    throw std::invalid_argument(where + " has an unknown kind");
}

// Busy servers of one customer-class demand: X D, over the servers of a multi-server station.
double utilization_of(MvaStationKind kind, int servers, double x, double d) {
  return kind == MvaStationKind::MultiServer ? x * d / servers : x * d;
}

}  // namespace

MvaResult mva_exact_multiclass_ld(const std::vector<MvaStation>& stations, const std::vector<int>& populations,
                                  double max_points) {
  const char* fn = "mva_exact_multiclass_ld";
  if (stations.empty()) throw std::invalid_argument(std::string(fn) + ": the network has no stations");
  if (populations.empty()) throw std::invalid_argument(std::string(fn) + ": at least one customer class is required");
  const std::size_t K = stations.size(), C = populations.size();
  double points_d = 1;
  int total_population = 0;
  for (std::size_t c = 0; c < C; ++c) {
    if (populations[c] < 1)
      throw std::invalid_argument(std::string(fn) + ": population of class " + std::to_string(c) + " is " +
                                  std::to_string(populations[c]) + "; it must be >= 1");
    points_d *= populations[c] + 1.0;
    total_population += populations[c];
  }
  for (std::size_t k = 0; k < K; ++k)
    check_demands(fn, stations[k].name, k, stations[k].demand, C, stations[k].kind, stations[k].servers);
  for (std::size_t c = 0; c < C; ++c) {
    double total = 0;
    for (const MvaStation& s : stations) total += s.demand[c];
    if (!(total > 0))
      throw std::invalid_argument(std::string(fn) + ": class " + std::to_string(c) +
                                  " has zero total demand, so its throughput would be infinite");
  }
  if (points_d > max_points)
    throw std::invalid_argument(std::string(fn) + ": the population lattice has " + std::to_string(points_d) +
                                " points, more than " + std::to_string(max_points) + "; use the approximate MVA");

  // What each station is in the recursion: a multi-server station with at least as many servers
  // as customers is a delay, one with one server a queue; the others are load-dependent (LD),
  // with their marginal probabilities p(0..m-1) stored at offset[k] of each lattice point's block.
  enum class Form { delay, queue, multi };
  std::vector<Form> form(K);
  std::vector<std::size_t> offset(K, 0), m(K, 1), ld;  // ld: the LD stations
  std::size_t probs = 0;
  for (std::size_t k = 0; k < K; ++k) {
    const MvaStation& s = stations[k];
    if (s.kind == MvaStationKind::Delay || (s.kind == MvaStationKind::MultiServer && s.servers >= total_population)) {
      form[k] = Form::delay;
    } else if (s.kind == MvaStationKind::Queue || s.servers == 1) {
      form[k] = Form::queue;
    } else {
      form[k] = Form::multi;
      m[k] = static_cast<std::size_t>(s.servers);
      offset[k] = probs;
      probs += m[k];
      ld.push_back(k);
    }
  }
  // p_k(0 | n) = G_{-k}(n) / G(n) = p_k(0 | n - e_c) X_c(n) / X_c^{-k}(n), X^{-k} the throughput
  // of the network without station k (G(n - e_c) / G(n) = X_c(n)): a product of positive terms,
  // where m p_0 = m - U - sum (m-j) p_j would cancel near saturation (and does, by tens of
  // percent, at a few dozen customers). So every subnetwork without some LD stations is solved
  // alongside, 2^(LD stations) of them, as sim::mva_exact does for one class. Subnetwork `sub`
  // keeps the LD stations whose bit is set; sub \ {k} < sub, so increasing order has it ready.
  if (ld.size() > 12)
    throw std::invalid_argument(std::string(fn) + ": " + std::to_string(ld.size()) +
                                " multi-server stations, more than 12; use the approximate MVA");
  const std::size_t subs = std::size_t{1} << ld.size(), full = subs - 1;
  const auto points = static_cast<std::size_t>(points_d);
  const double numbers = points_d * static_cast<double>(K + probs) * static_cast<double>(subs);
  if (numbers > 8e6)
    throw std::invalid_argument(std::string(fn) + ": the lattice's queue lengths and marginal probabilities need " +
                                std::to_string(numbers) + " numbers, more than 8e6; use the approximate MVA");
  std::vector<std::size_t> stride(C, 1);
  for (std::size_t c = 1; c < C; ++c) stride[c] = stride[c - 1] * static_cast<std::size_t>(populations[c - 1] + 1);
  // in[sub][k]: station k is part of subnetwork sub; served[sub][c]: class c has demand there.
  std::vector<std::vector<bool>> in(subs, std::vector<bool>(K, true)), served(subs, std::vector<bool>(C, false));
  for (std::size_t sub = 0; sub < subs; ++sub) {
    for (std::size_t i = 0; i < ld.size(); ++i) in[sub][ld[i]] = ((sub >> i) & 1U) != 0;
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t c = 0; c < C; ++c)
        if (in[sub][k] && stations[k].demand[c] > 0) served[sub][c] = true;
  }

  std::vector<std::vector<double>> Q(subs, std::vector<double>(points * K, 0.0)),
      P(subs, std::vector<double>(points * probs, 0.0));
  for (std::size_t sub = 0; sub < subs; ++sub)
    for (const std::size_t k : ld) P[sub][offset[k]] = 1.0;  // nobody there at n = 0
  std::vector<int> n(C, 0);
  std::vector<std::vector<double>> X(subs, std::vector<double>(C, 0.0));  // at the current point
  std::vector<double> R(K * C, 0.0);
  for (std::size_t idx = 1; idx < points; ++idx) {
    for (std::size_t c = 0; c < C; ++c) {  // the mixed-radix counter n of lattice point idx
      if (n[c] < populations[c]) {
        ++n[c];
        break;
      }
      n[c] = 0;
    }
    for (std::size_t sub = 0; sub < subs; ++sub) {
      for (std::size_t c = 0; c < C; ++c) {
        X[sub][c] = 0;
        for (std::size_t k = 0; k < K; ++k) R[k * C + c] = 0;
        // A class with no demand in this subnetwork has no state here (G = 0): skipped, and
        // never asked for (p_0 below is 0 wherever such a class is present).
        if (n[c] == 0 || !served[sub][c]) continue;
        const std::size_t prev = idx - stride[c];
        const double* q = &Q[sub][prev * K];
        const double* p = P[sub].data() + prev * probs;  // .data(): P is empty without multi-server stations
        double cycle = 0;
        for (std::size_t k = 0; k < K; ++k) {
          if (!in[sub][k]) continue;
          const double D = stations[k].demand[c];
          double r = D;
          if (form[k] == Form::queue) {
            r = D * (1 + q[k]);
          } else if (form[k] == Form::multi) {
            const double mm = static_cast<double>(m[k]);
            double idle = 0;  // sum_{j<m-1} (m-1-j) p(j): the servers an arrival finds free, less one
            for (std::size_t j = 0; j + 1 < m[k]; ++j) idle += (mm - 1 - static_cast<double>(j)) * p[offset[k] + j];
            r = D / mm * (1 + q[k] + idle);
          }
          R[k * C + c] = r;
          cycle += r;
        }
        X[sub][c] = n[c] / cycle;
      }
      double* q = &Q[sub][idx * K];
      double* p = P[sub].data() + idx * probs;
      for (std::size_t k = 0; k < K; ++k) {
        double sum = 0;
        for (std::size_t c = 0; c < C; ++c) sum += X[sub][c] * R[k * C + c];
        q[k] = sum;
      }
      for (std::size_t i = 0; i < ld.size(); ++i) {
        const std::size_t k = ld[i];
        if (!in[sub][k]) continue;
        for (std::size_t j = 1; j < m[k]; ++j) {
          double pj = 0;
          for (std::size_t c = 0; c < C; ++c)
            if (n[c] > 0) pj += X[sub][c] * stations[k].demand[c] * P[sub][(idx - stride[c]) * probs + offset[k] + j - 1];
          p[offset[k] + j] = pj / static_cast<double>(j);
        }
        const std::size_t without = sub & ~(std::size_t{1} << i);
        double p0 = -1;
        for (std::size_t c = 0; c < C && p0 != 0; ++c) {
          if (n[c] == 0) continue;
          if (!served[without][c] || X[without][c] <= 0) {
            p0 = 0;  // a class present that only this station serves: someone is always here
          } else if (p0 < 0) {
            p0 = P[sub][(idx - stride[c]) * probs + offset[k]] * X[sub][c] / X[without][c];
          }
        }
        p[offset[k]] = std::clamp(p0, 0.0, 1.0);
      }
    }
  }

  MvaResult r;
  r.throughput = X[full];
  r.cycle_time.assign(C, 0);
  r.residence.assign(K, std::vector<double>(C, 0));
  r.queue_length = r.utilization = r.residence;
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t c = 0; c < C; ++c) {
      r.residence[k][c] = R[k * C + c];
      r.cycle_time[c] += R[k * C + c];
      r.queue_length[k][c] = X[full][c] * R[k * C + c];
      r.utilization[k][c] = utilization_of(stations[k].kind, stations[k].servers, X[full][c], stations[k].demand[c]);
    }
  r.iterations = static_cast<int>(points);
  return r;
}

MvaClassResult mva_classes(const std::vector<MvaClassStation>& stations, const std::vector<MvaClass>& classes, MvaMethod method,
                           double max_lattice_points, double tolerance, int max_iterations) {
  const char* fn = "mva_classes";
  if (stations.empty()) throw std::invalid_argument(std::string(fn) + ": the network has no stations");
  if (classes.empty()) throw std::invalid_argument(std::string(fn) + ": at least one customer class is required");
  const std::size_t K = stations.size(), C = classes.size();
  double lattice = 1;  // of the expanded network: (N_c + 1)^(K_c) per class
  for (std::size_t c = 0; c < C; ++c) {
    if (classes[c].population < 1 || classes[c].replicas < 1)
      throw std::invalid_argument(std::string(fn) + ": class '" + classes[c].name + "' has population " +
                                  std::to_string(classes[c].population) + " and " + std::to_string(classes[c].replicas) +
                                  " replicas; both must be >= 1");
    lattice *= std::pow(classes[c].population + 1.0, classes[c].replicas);
  }
  // same_vm(a, b): classes a and b run in the same VMs (jobs of one profile), or are one class.
  for (std::size_t a = 0; a < C; ++a)
    for (std::size_t b = 0; b < a; ++b)
      if (classes[a].vm >= 0 && classes[a].vm == classes[b].vm && classes[a].replicas != classes[b].replicas)
        throw std::invalid_argument(std::string(fn) + ": classes '" + classes[b].name + "' and '" + classes[a].name +
                                    "' are jobs of one VM (vm " + std::to_string(classes[a].vm) + ") but have " +
                                    std::to_string(classes[b].replicas) + " and " + std::to_string(classes[a].replicas) +
                                    " replicas");
  const auto same_vm = [&](std::size_t a, std::size_t b) {
    return a == b || (classes[a].vm >= 0 && classes[a].vm == classes[b].vm);
  };
  for (std::size_t k = 0; k < K; ++k) {
    const MvaClassStation& s = stations[k];
    check_demands(fn, s.name, k, s.demand, C, s.kind, s.servers);
    if (s.owner < -1 || s.owner >= static_cast<int>(C))
      throw std::invalid_argument(std::string(fn) + ": " + label(s.name, k) + " has owner " + std::to_string(s.owner) +
                                  "; it must be -1 (shared) or a class index");
    for (std::size_t c = 0; c < C; ++c)
      if (s.owner >= 0 && !same_vm(c, static_cast<std::size_t>(s.owner)) && s.demand[c] != 0)
        throw std::invalid_argument(std::string(fn) + ": " + label(s.name, k) + " belongs to class " + std::to_string(s.owner) +
                                    "'s VM but has demand for class " + std::to_string(c) + " of another VM");
  }
  for (std::size_t c = 0; c < C; ++c) {
    double total = 0;
    for (const MvaClassStation& s : stations) total += s.demand[c];
    if (!(total > 0))
      throw std::invalid_argument(std::string(fn) + ": class '" + classes[c].name +
                                  "' has zero total demand, so its throughput would be infinite");
  }

  MvaClassResult out;
  out.lattice_points = lattice;
  out.residence.assign(K, std::vector<double>(C, 0));
  out.queue_length = out.utilization = out.residence;
  out.throughput.assign(C, 0);
  out.cycle_time.assign(C, 0);

  bool exact = method == MvaMethod::exact;
  if (method == MvaMethod::exact && lattice > max_lattice_points)
    throw std::invalid_argument(std::string(fn) + ": exact MVA would visit " + std::to_string(lattice) +
                                " population vectors, more than " + std::to_string(max_lattice_points));
  if (method == MvaMethod::automatic && lattice <= max_lattice_points) {
    // The multi-server stations' marginal probabilities, and the 2^(their copies) subnetworks
    // mva_exact_multiclass_ld solves beside the network, have to fit too.
    double probs = 0, copies = 0, multi = 0, customers = 0;
    for (const MvaClass& c : classes) customers += static_cast<double>(c.population) * c.replicas;
    for (const MvaClassStation& s : stations) {
      const double n = s.owner < 0 ? 1.0 : classes[static_cast<std::size_t>(s.owner)].replicas;
      copies += n;
      if (s.kind == MvaStationKind::MultiServer && s.servers > 1 && s.servers < customers) {
        probs += n * s.servers;
        multi += n;
      }
    }
    // And the work: each lattice point visits every station and server for every chain, in
    // each subnetwork; past 3e6 basic steps (about 20 milliseconds) the approximation answers.
    double chains = 0;
    for (const MvaClass& c : classes) chains += c.replicas;
    const double kept = lattice * (copies + probs) * std::pow(2.0, multi);
    exact = multi <= 12 && kept <= 8e6 && lattice * std::pow(2.0, multi) * (copies + 2 * probs) * chains <= 3e6;
  }

  if (exact) {
    // The expanded network: replica r of class c is class first[c] + r; an owned station has a
    // copy per replica of its owner, copy[k] the first one's index.
    std::vector<std::size_t> first(C, 0);
    std::vector<int> populations;
    for (std::size_t c = 0; c < C; ++c) {
      first[c] = populations.size();
      for (int r = 0; r < classes[c].replicas; ++r) populations.push_back(classes[c].population);
    }
    const std::size_t E = populations.size();
    std::vector<MvaStation> net;
    std::vector<std::size_t> copy(K, 0);
    for (std::size_t k = 0; k < K; ++k) {
      const MvaClassStation& s = stations[k];
      copy[k] = net.size();
      if (s.owner < 0) {
        MvaStation e{s.name, s.kind, s.servers, std::vector<double>(E, 0)};
        for (std::size_t c = 0; c < C; ++c)
          for (int r = 0; r < classes[c].replicas; ++r) e.demand[first[c] + static_cast<std::size_t>(r)] = s.demand[c];
        net.push_back(std::move(e));
      } else {
        // Copy r is VM r's: replica r of every class of the owner's VM visits it.
        const auto o = static_cast<std::size_t>(s.owner);
        for (int r = 0; r < classes[o].replicas; ++r) {
          MvaStation e{s.name + "#" + std::to_string(r), s.kind, s.servers, std::vector<double>(E, 0)};
          for (std::size_t c = 0; c < C; ++c)
            if (same_vm(c, o)) e.demand[first[c] + static_cast<std::size_t>(r)] = s.demand[c];
          net.push_back(std::move(e));
        }
      }
    }
    const MvaResult r = mva_exact_multiclass_ld(net, populations, max_lattice_points);
    for (std::size_t c = 0; c < C; ++c) {
      out.throughput[c] = r.throughput[first[c]];
      out.cycle_time[c] = r.cycle_time[first[c]];
      for (std::size_t k = 0; k < K; ++k) {
        if (stations[k].owner >= 0 && !same_vm(c, static_cast<std::size_t>(stations[k].owner))) continue;
        out.residence[k][c] = r.residence[copy[k]][first[c]];
        out.queue_length[k][c] = r.queue_length[copy[k]][first[c]];
        out.utilization[k][c] = r.utilization[copy[k]][first[c]];
      }
    }
    out.exact = true;
    out.method = "exact MVA";
    out.iterations = r.iterations;
    return out;
  }

  if (!(tolerance > 0) || !std::isfinite(tolerance)) throw std::invalid_argument(std::string(fn) + ": tolerance must be > 0");
  if (max_iterations < 1) throw std::invalid_argument(std::string(fn) + ": max_iterations must be >= 1");
  // Schweitzer–Bard on one representative replica per class (the representatives of one VM's
  // classes are in one VM). weight[k][c]: how many chains of class c share station k's queue
  // (every replica at a shared station, one at an owned copy of its VM's).
  std::vector<std::vector<double>> weight(K, std::vector<double>(C, 0));
  std::vector<double> visited(C, 0);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t c = 0; c < C; ++c) {
      weight[k][c] =
          stations[k].owner < 0 ? classes[c].replicas : (same_vm(c, static_cast<std::size_t>(stations[k].owner)) ? 1.0 : 0.0);
      if (stations[k].demand[c] > 0) ++visited[c];
    }
  std::vector<std::vector<double>> Q(K, std::vector<double>(C, 0)), Qa = Q, R = Q, Ra = Q;
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t c = 0; c < C; ++c)
      if (stations[k].demand[c] > 0) Q[k][c] = Qa[k][c] = classes[c].population / visited[c];
  std::vector<double> X(C, 0);
  int it = 0;
  bool converged = false;
  while (it < max_iterations) {
    ++it;
    for (std::size_t k = 0; k < K; ++k) {
      const MvaClassStation& s = stations[k];
      double total = 0;
      for (std::size_t c = 0; c < C; ++c) total += weight[k][c] * Qa[k][c];
      for (std::size_t c = 0; c < C; ++c) {
        const double D = s.demand[c];
        // One of this replica's customers arrives: it sees the others, its own chain less itself.
        const double arrival = std::max(0.0, total - Qa[k][c] / classes[c].population);
        switch (s.kind) {
          case MvaStationKind::Delay:
            R[k][c] = D;
            Ra[k][c] = 0;
            break;
          case MvaStationKind::Queue:
            R[k][c] = Ra[k][c] = D * (1 + arrival);
            break;
          case MvaStationKind::MultiServer: {
            const double m = s.servers;
            Ra[k][c] = D / m * (1 + arrival);      // Seidmann: one server of demand D/m ...
            R[k][c] = Ra[k][c] + D * (m - 1) / m;  // ... and a delay D(m-1)/m
            break;
          }
        }
      }
    }
    for (std::size_t c = 0; c < C; ++c) {
      double cycle = 0;
      for (std::size_t k = 0; k < K; ++k) cycle += R[k][c];
      X[c] = classes[c].population / cycle;
    }
    double worst = 0;
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t c = 0; c < C; ++c) {
        const double q = X[c] * R[k][c];
        worst = std::max(worst, std::abs(q - Q[k][c]) / classes[c].population);
        Q[k][c] = q;
        Qa[k][c] = X[c] * Ra[k][c];
      }
    if (worst <= tolerance) {
      converged = true;
      break;
    }
  }
  for (std::size_t c = 0; c < C; ++c) {
    out.throughput[c] = X[c];
    for (std::size_t k = 0; k < K; ++k) {
      out.residence[k][c] = R[k][c];
      out.cycle_time[c] += R[k][c];
      out.queue_length[k][c] = Q[k][c];
      out.utilization[k][c] = utilization_of(stations[k].kind, stations[k].servers, X[c], stations[k].demand[c]);
    }
  }
  out.exact = false;
  out.method = "Schweitzer-Bard approximate MVA";
  out.iterations = it;
  out.converged = converged;
  return out;
}

}  // namespace vqsim::sim
