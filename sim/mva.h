// Mean-value analysis (MVA) of closed, product-form (BCMP) queueing networks.
//
// A network is a list of stations; every class of customers circulates forever through them.
// Each station is described only by its service demand per class, D_{k,c} = V_{k,c} * S_{k,c}
// (visit count times mean service time per visit). Times are in whatever unit the caller uses,
// as long as it is consistent (our callers use nanoseconds as double); throughputs come back in
// cycles per that unit.
//
// Station kinds:
//   Queue       — one FCFS exponential (or PS/LCFS-PR, any distribution) server: R = D (1 + A),
//                 A = mean number seen on arrival.
//   Delay       — infinite server (think time, pure latency): R = D.
//   MultiServer — `servers` identical FCFS exponential servers, i.e. a load-dependent station with
//                 service rate multiplier min(j, servers) when j customers are present.
//
// References:
//   E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, "Quantitative System Performance",
//     Prentice-Hall 1984: chapter 6 (single class), chapter 7 (multiple classes) and the
//     treatment of load-dependent service centers.
//   M. Reiser, S. S. Lavenberg, "Mean-Value Analysis of Closed Multichain Queuing Networks",
//     J. ACM 27(2), 1980.
//   P. J. Schweitzer, "Approximate analysis of multiclass closed networks of queues",
//     Proc. Int. Conf. on Stochastic Control and Optimization, Amsterdam 1979.
//   Y. Bard, "Some extensions to multiclass queueing network analysis", Performance '79, 1979.
//   A. Seidmann, P. J. Schweitzer, S. Shalev-Oren, "Computerized closed queueing network models
//     of flexible manufacturing systems", Large Scale Systems 12, 1987.
#pragma once

#include <string>
#include <vector>

namespace vqsim::sim {

enum class MvaStationKind { Queue, Delay, MultiServer };

struct MvaStation {
  std::string name;
  MvaStationKind kind = MvaStationKind::Queue;
  int servers = 1;             // only for MultiServer (load-dependent); must be >= 1
  std::vector<double> demand;  // service demand per class = visits x mean service time, >= 0
};

struct MvaResult {
  std::vector<double> throughput;                 // per class, cycles per time unit
  std::vector<double> cycle_time;                 // per class, sum of residence times over all
                                                  // stations (Delay stations included)
  std::vector<std::vector<double>> residence;     // [station][class], per cycle
  std::vector<std::vector<double>> queue_length;  // [station][class], mean number at the station
                                                  // (waiting + in service)
  std::vector<std::vector<double>> utilization;   // [station][class] = X_c * D_{k,c}
                                                  // (divided by servers for MultiServer; for a
                                                  // Delay station it is the mean number busy)
  int iterations = 0;                             // exact: population steps / lattice points; Schweitzer: sweeps
  bool converged = true;                          // false only when Schweitzer hit max_iterations
};

// Exact single-class MVA (Reiser & Lavenberg 1980; Lazowska et al. ch. 6), recursion over
// n = 1..population. Every station must have exactly one demand entry.
// MultiServer stations are solved exactly with load-dependent MVA (Reiser & Lavenberg 1980;
// Lazowska et al.): the marginal probabilities p_k(j | n), j < servers, of finding j customers at
// the station are carried along the recursion, p_k(j | n) = X(n) D_k / j * p_k(j-1 | n-1).
// The textbook obtains p_k(0 | n) as 1 - sum_{j>=1} p_k(j | n), which is numerically unstable
// (errors of tens of percent in X at a few hundred customers). Here instead
//   p_k(0 | n) = p_k(0 | n-1) * X(n) / X_{-k}(n),
// X_{-k} being the throughput of the network without station k (this is G_{-k}(n) / G(n) written
// as a ratio of throughputs), so every quantity is a sum or product of positive terms. The
// subnetworks are solved alongside: with M MultiServer stations that have 1 < servers < population
// the cost is O(2^M * population * (stations + sum of their servers)). A MultiServer with one server
// is a Queue; one with servers >= population is a Delay.
// Throws std::invalid_argument on: no stations, population < 1, demand count != 1, negative or
// non-finite demand, servers < 1, total demand 0, or M > 24 / more than 2e9 basic steps of work
// (use mva_schweitzer then).
MvaResult mva_exact(const std::vector<MvaStation>& stations, int population);

// Exact multi-class MVA over the whole population lattice {0..N_1} x ... x {0..N_C}
// (Reiser & Lavenberg 1980; Lazowska et al. ch. 7). Queue and Delay stations only.
// Memory is (lattice points) x (stations) doubles.
// Throws std::invalid_argument if the lattice has more than 2e6 points, if a station is
// MultiServer, on any class population < 1, on a demand count different from populations.size(),
// on negative or non-finite demands, or when some class has total demand 0.
MvaResult mva_exact_multiclass(const std::vector<MvaStation>& stations, const std::vector<int>& populations);

// Schweitzer–Bard approximate MVA (Schweitzer 1979, Bard 1979; Lazowska et al. ch. 7), any number
// of classes. The arrival-instant queue length is approximated by
//   A_{k,c} = sum_j Q_{k,j} - Q_{k,c} / N_c
// (remove one class-c customer proportionally), and the fixed point is found by successive
// substitution. Converged when max_{k,c} |Q_{k,c}^{new} - Q_{k,c}^{old}| <= tolerance * N_c.
// MultiServer stations use Seidmann's approximation (Seidmann, Schweitzer & Shalev-Oren 1987):
// a station with m servers and demand D behaves as a single-server queue with demand D/m in
// series with a delay of D (m-1)/m. Only the queue part enters the arrival-instant queue length;
// the reported queue length and residence include both parts. It is exact for m = 1 and for a
// single customer; in between it overestimates residence (underestimates throughput), by several
// percent when the station is near saturation.
// Throws std::invalid_argument on the same input errors as mva_exact_multiclass (MultiServer is
// allowed), on tolerance <= 0 or max_iterations < 1. If max_iterations is reached, the last
// iterate is returned with converged = false.
MvaResult mva_schweitzer(const std::vector<MvaStation>& stations, const std::vector<int>& populations, double tolerance = 1e-10,
                         int max_iterations = 100000);

}  // namespace vqsim::sim
