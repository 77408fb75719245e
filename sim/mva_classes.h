// Multi-class mean-value analysis with multi-server stations and replicated classes: the
// solver behind a host of several VM profiles, K identical VMs each (models/io_path_mva.h).
// Storage-free; sim/mva.h has the single-class exact MVA and the plain multi-class solvers.
//
// A class here is `replicas` identical, independent closed chains of `population` customers
// each (K VMs of one profile: each VM's requests circulate in that VM only). A station is either
// shared (every replica of every class visits the same one: the host cores, a backend device) or
// owned by one class: then each replica of that class has a copy of its own that no other chain
// visits (a VM's vCPUs, its QEMU main loop or IOThread). Owned stations carry demand for their
// class only -- or, when several classes are the jobs of one VM (MvaClass::vm: a fio job file of
// a reader and a writer), for any class of that VM: the VM's own stations are then copied per
// replica of the VM and visited by replica r of each of its classes (VM r's jobs share VM r's
// vCPUs and threads, never another VM's).
//
// Why replicas and not one class of K x population customers that visits each of K copies with
// probability 1/K (what the single-profile MVA does): in that form a VM's customers are not
// bound to their VM, so a VM at iodepth 1 can have two requests queued at its own IOThread, which
// the real system cannot; with replicas the network is exactly K identical classes, and the
// answer is that network's. The cost does not grow with K in the approximate solver: by
// symmetry every replica of a class has the same solution, so one representative per class is
// iterated, the others entering a shared station's queue as (K - 1) more of the same (the
// symmetric fixed point of Schweitzer's equations on the K-class network; Omari, Franks,
// Woodside, Pan, "Solving layered queueing networks of large client-server systems with
// symmetric replication", WOSP 2005, reduce replicated
// layers the same way).
//
// Methods:
//   exact       — exact multi-class MVA (Reiser & Lavenberg 1980) on the expanded network (K
//                 classes per replicated class) over its whole population lattice, multi-server
//                 stations as load-dependent ones with marginal probabilities (Lazowska et al.
//                 1984, for the single-class form; G. Bolch, S. Greiner, H. de Meer, K. S.
//                 Trivedi, "Queueing Networks and Markov Chains", 2nd ed. 2006, ch. 8, for the
//                 multi-class multi-server recursion used here). Product-form answer: exact for
//                 PS/LCFS-PR stations and for FCFS ones with class-independent exponential times.
//   approximate — Schweitzer–Bard approximate MVA (as sim::mva_schweitzer: A = Q - Q_c / N_c,
//                 Seidmann's split of a multi-server station), on one representative per class.
//   automatic   — exact when the expanded lattice has at most `max_lattice_points` points,
//                 what exact MVA keeps (below) fits in 8e6 doubles and its work in about 3e6
//                 steps (some milliseconds); approximate otherwise.
#pragma once

#include <string>
#include <vector>

#include "sim/mva.h"

namespace vqsim::sim {

struct MvaClass {
  std::string name;
  int population = 1;  // customers of one replica
  int replicas = 1;    // identical chains (VMs) of this class
  // The VM profile the class is a job of: classes with the same vm >= 0 are the jobs of one
  // profile (the same replicas), replica r of each in VM r, sharing that VM's owned stations.
  // -1: the class is a VM of its own.
  int vm = -1;
};

struct MvaClassStation {
  std::string name;
  MvaStationKind kind = MvaStationKind::Queue;
  int servers = 1;             // MultiServer only
  std::vector<double> demand;  // per class: one customer's demand per cycle, >= 0
  // -1: shared; c: one copy per replica of class c's VM, visited by that VM's classes alone
  // (class c alone when its vm is -1).
  int owner = -1;
};

enum class MvaMethod { automatic, exact, approximate };

struct MvaClassResult {
  // Per class, one replica's: throughput in cycles per time unit, cycle time.
  std::vector<double> throughput, cycle_time;
  // [station][class], one replica's customers: residence per cycle, mean number present, and
  // the share of the station's servers they keep busy (X_c D / servers; for an owned station
  // that is its copy's utilization, for a shared one one replica's part of it; Delay: the mean
  // number busy).
  std::vector<std::vector<double>> residence, queue_length, utilization;
  bool exact = false;
  std::string method;         // "exact MVA" or "Schweitzer-Bard approximate MVA"
  double lattice_points = 0;  // of the expanded network (what exact MVA would visit)
  int iterations = 0;         // exact: lattice points; approximate: sweeps
  bool converged = true;      // false only when the approximation hit max_iterations
};

// Exact multi-class MVA with Queue, Delay and MultiServer (load-dependent) stations over the
// population lattice. p_k(j | n), j < m, the probability of j customers at an m-server station,
// is carried along: R_{k,c}(n) = D_{k,c} / m (1 + Q_k(n - e_c) + sum_{j<m-1} (m-1-j) p_k(j | n - e_c)),
// p_k(j | n) = sum_c X_c(n) D_{k,c} p_k(j-1 | n - e_c) / j for 0 < j < m, and
// p_k(0 | n) = p_k(0 | n - e_c) X_c(n) / X_c^{-k}(n), X^{-k} the throughput without station k --
// not the textbook's 1 - sum_j p_k(j | n), which cancels catastrophically near saturation. The
// networks without some of the M multi-server stations are solved alongside (2^M of them), as
// sim::mva_exact does for one class. Memory: lattice points x (stations + sum of their servers)
// x 2^M doubles.
// Throws std::invalid_argument on the inputs mva_exact_multiclass refuses (MultiServer aside),
// servers < 1, more than `max_points` lattice points, M > 12 or more than 8e6 doubles to keep.
MvaResult mva_exact_multiclass_ld(const std::vector<MvaStation>& stations, const std::vector<int>& populations,
                                  double max_points = 2e6);

// Solves a network of replicated classes (see the top of this file). Throws
// std::invalid_argument on: no stations or classes, population or replicas < 1, a demand count
// different from classes.size(), negative or non-finite demands, an owned station with demand
// for a class of another VM or an owner out of range, classes of one vm with different replicas,
// servers < 1, a class with total demand 0, or
// method = exact on a lattice larger than max_lattice_points.
MvaClassResult mva_classes(const std::vector<MvaClassStation>& stations, const std::vector<MvaClass>& classes,
                           MvaMethod method = MvaMethod::automatic, double max_lattice_points = 2e5, double tolerance = 1e-10,
                           int max_iterations = 100000);

}  // namespace vqsim::sim
