// Goal-seeking over one integer scenario knob under constraints (`vqsim plan`): the largest
// workload.numjobs with read.clat_p99_us <= 2000, the fewest host.iothreads with
// total.iops >= 300000. Logic only; cli/plan.cc prints it.
//
// The search assumes every constraint is monotone in the knob, in the direction the goal pushes
// against it: when maximizing, a value that satisfies the constraints means every smaller value
// does too (more jobs or a deeper queue only add latency); when minimizing, a value that
// satisfies them means every larger value does too (more IOThreads only add IOPS). Under that
// assumption the feasible values form one interval at an end of the range, and the answer is its
// inner edge. A constraint that the MVA finds getting easier towards the goal (total.iops >= X
// while maximizing iodepth) limits the answer from the other side: it is left out of the search
// and checked at the answer.
//
// Phase 1 solves the MVA (means, about a millisecond a point) by binary search over the range.
// A percentile constraint, which MVA cannot evaluate, is guided by the mean clat of its
// direction under the same bound (a relaxation: the candidate overshoots). Phase 1b simulates
// the candidate, scales each constraint's MVA value by DES / MVA there and searches the MVA
// again between the simulated points (at most two rounds). Phase 2 simulates (DES, replications
// with 95% intervals) outwards from the known points in steps of 1, 2, 4, … until the boundary
// is bracketed, then bisects, so the answer and its neighbour beyond it are both simulated. A
// point satisfies a constraint when the DES mean does; whether the whole interval does is
// reported too (a borderline point's interval straddles the bound). Every simulated point uses
// the scenario's seed (common random numbers), so the output is identical whatever the number
// of threads.
#pragma once

#include <string>
#include <vector>

#include "models/io_results.h"
#include "sim/student_t.h"

namespace vqsim::models {

struct PlanConstraint {
  enum Op { le, ge, lt, gt };
  std::string metric;  // an io_metrics name: read.iops, read.clat_p99_us, total.lat_mean_us, …
  Op op = le;
  double bound = 0;
  std::string bound_text;          // as the user wrote it ("300k"), for messages
  bool holds(double value) const;  // false for a non-finite value
  std::string text() const;        // "read.clat_p99_us <= 2000"
};

const char* plan_op_symbol(PlanConstraint::Op op);

// Parses "METRIC OP VALUE": OP is <=, >=, < or >, spaces are optional, VALUE is a number with an
// optional k, M or G suffix (x 1e3, 1e6, 1e9). Throws std::invalid_argument saying what was
// expected, with a suggestion for a misspelt metric.
PlanConstraint parse_plan_constraint(const std::string& text);

// The integer knobs `plan` can search, and the default ranges of the common ones.
const std::vector<std::string>& plan_integer_knobs();
bool plan_default_range(const std::string& knob, long long* lo, long long* hi);
// Throws std::invalid_argument for an unknown key (with a suggestion) or a non-integer knob.
void check_plan_knob(const std::string& knob);
// "LO:HI" -> lo, hi; throws std::invalid_argument.
void parse_plan_range(const std::string& text, long long* lo, long long* hi);

enum class PlanGoal { maximize, minimize };

struct PlanRequest {
  std::string scenario_path;
  std::vector<std::string> overrides;  // "key=value", applied before the knob
  std::string knob;
  PlanGoal goal = PlanGoal::maximize;
  long long lo = 0, hi = -1;  // hi < lo: the knob's default range
  std::vector<PlanConstraint> constraints;
  int replications = 3;
  int threads = 0;        // for the replications; 0 = all cores
  long long ios = 50000;  // measured I/Os per replication at each simulated point
  int max_des = 24;       // simulated points at most
};

// One constraint checked at one point.
struct PlanCheck {
  PlanConstraint constraint;
  std::string metric;           // what was evaluated: the constraint's metric, or the MVA guide
  bool guide = false;           // MVA: the mean clat stood in for a percentile
  sim::Interval value;          // DES: the 95% interval; MVA: a point (half_width 0)
  bool satisfied = false;       // by the mean
  bool whole_interval = false;  // DES: the whole interval satisfies it
  bool straddles = false;       // DES: the interval contains the bound
  std::string verdict() const;  // "satisfied", "borderline (mean satisfies)", "borderline (mean violates)", "violated"
};

struct PlanPoint {
  long long value = 0;
  std::string method;  // "MVA" or "DES"
  std::vector<PlanCheck> checks;
  bool satisfied = false;  // every check satisfied
};

struct PlanResult {
  PlanRequest request;
  std::string question;  // "largest workload.numjobs in [1, 256] with read.clat_p99_us <= 2000"
  bool feasible = false;
  long long answer = 0;       // feasible: the answer; infeasible: the best end of the range
  bool at_range_end = false;  // feasible and the constraints hold at the far end of the range
  long long mva_candidate = 0;
  std::vector<PlanCheck> answer_checks;                               // DES, at the answer (or the best end when infeasible)
  std::vector<std::pair<std::string, sim::Interval>> answer_metrics;  // DES: IOPS and mean latency too
  IoRunReport answer_report;       // the DES run at the answer (or the best end when infeasible)
  std::vector<PlanPoint> tried;    // in the order evaluated
  std::vector<bool> reversed;      // per constraint: limits the answer from the other side
  std::vector<std::string> notes;  // monotonicity violations, MVA failures, budget
  std::string message;             // the answer in one sentence
};

// Runs the search. Throws ConfigError for a bad scenario or override (including the knob at the
// ends of the range), std::invalid_argument for a bad request.
PlanResult run_plan(const PlanRequest& request);

// Numbers the way plan prints them: "158730", "1701", "0.512"; "unbounded" when not finite.
std::string plan_number(double v);
// "1701 ± 23" (the half width omitted when 0 and n < 2).
std::string plan_interval(const sim::Interval& i);

}  // namespace vqsim::models
