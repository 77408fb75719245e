#include "sim/simulator.h"

#include <stdexcept>

namespace vqsim::sim {
namespace {

// FNV-1a: a stable hash of a component's name, so its stream does not depend on build order.
std::uint64_t fnv1a(std::string_view text) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

Component::Component(Simulator& sim, std::string name)
    : sim_(sim), rng_(sim.stream(name)), name_(std::move(name)), name_hash_(fnv1a(name_)) {}

void Component::accept(JobId, int in_port) {
  throw std::logic_error("component '" + name_ + "' takes no jobs (input port " + std::to_string(in_port) + ")");
}

void Component::handle(std::uint32_t kind, std::uint64_t) {
  throw std::logic_error("component '" + name_ + "' got an event of unknown kind " + std::to_string(kind));
}

void require_connected(const Component& owner, const Port& port, const char* port_name) {
  if (!port.connected())
    throw std::logic_error("component '" + owner.name() + "': output port '" + port_name + "' is not connected");
}

void report_flow(Metrics& out, const std::string& prefix, const FlowStats& flow, time_ns now) {
  static constexpr double kPercentiles[] = {50.0, 99.0};
  const auto& moments = flow.response().moments();
  const auto p = flow.response().histogram().percentiles_ns(kPercentiles);
  out.add(prefix + ".throughput_per_s", flow.throughput_per_ns(now) * 1e9);
  out.add(prefix + ".response_mean_ns", moments.mean());
  out.add(prefix + ".response_stddev_ns", moments.stddev());
  out.add(prefix + ".response_p50_ns", static_cast<double>(p[0]));
  out.add(prefix + ".response_p99_ns", static_cast<double>(p[1]));
  out.add(prefix + ".number_mean", flow.number_mean(now));
  out.add(prefix + ".completions", static_cast<double>(flow.completions()));
  const LittleCheck little = flow.little(now);
  out.add(prefix + ".little_rel_error", little.relative_error());
  out.add(prefix + ".little_edge_allowance", little.edge_allowance);
}

void WaitingLineStats::report(Metrics& out, const std::string& prefix, time_ns now, double capacity) const {
  report_flow(out, prefix, flow, now);
  out.add(prefix + ".wait_mean_ns", wait.mean());
  out.add(prefix + ".queue_mean", queued.mean(now));
  out.add(prefix + ".utilization", in_use.mean(now) / capacity);
}

Simulator::Simulator(std::uint64_t seed, std::uint64_t replication) : seed_(seed), replication_(replication) {
  queue_.reserve(256);
}

Simulator::~Simulator() = default;

Rng Simulator::stream(std::string_view name) const noexcept { return Rng::for_stream(seed_, replication_, fnv1a(name)); }

void Simulator::adopt(std::unique_ptr<Component> component) {
  if (!names_.insert(component->name()).second) throw std::logic_error("two components are named '" + component->name() + "'");
  components_.push_back(std::move(component));
}

void Simulator::end_warmup() {
  measuring_ = true;
  warmup_end_ns_ = now_;
  completions_ = 0;
  for (auto& c : components_) c->reset_statistics(now_);
  if (limits_.measure_ns > 0) schedule_at(now_ + limits_.measure_ns, nullptr, kStopRun);
}

RunResult Simulator::run(const RunLimits& limits) {
  if (limits.warmup_ns > 0 && limits.warmup_completions > 0)
    throw std::invalid_argument("warm-up is given both as a time and as a count of completions; give one");
  if (limits.warmup_ns < 0 || limits.measure_ns < 0) throw std::invalid_argument("run limits must not be negative");
  limits_ = limits;
  for (const auto& c : components_) c->validate();
  // Without a warm-up the measured window opens before components start, so what happens at
  // time 0 (jobs injected, tokens granted) is observed, not reset away.
  if (limits_.warmup_ns > 0)
    schedule_at(limits_.warmup_ns, nullptr, kEndWarmup);
  else if (limits_.warmup_completions == 0)
    end_warmup();
  for (auto& c : components_) c->start();

  // The event hash is kept in a local while the loop runs: a member would be stored and reloaded
  // around every virtual call (which could, for all the compiler knows, read it).
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const bool hashing = limits_.hash_events;
  while (!stopped_ && !queue_.empty()) {
    const Event e = queue_.pop();
    if (!cancelled_.empty()) {
      const auto it = cancelled_.find(e.seq());
      if (it != cancelled_.end()) {
        cancelled_.erase(it);
        continue;
      }
    }
    now_ = e.time();
    ++events_;
    if (hashing) hash = mix_event_hash(hash, e);
    if (e.target != nullptr) {
      e.target->handle(e.kind(), e.payload);
    } else if (e.kind() == kEndWarmup) {
      end_warmup();
    } else {
      stopped_ = true;
    }
  }
  result_.drained = !stopped_;
  result_.warmup_end_ns = warmup_end_ns_;
  result_.end_ns = now_;
  result_.events = events_;
  result_.event_hash = hashing ? hash : 0;
  result_.completions = measuring_ ? completions_ : 0;
  return result_;
}

Metrics Simulator::report() const {
  Metrics m;
  for (const auto& c : components_) c->report(m, now_);
  m.add("run.measured_ns", static_cast<double>(now_ - warmup_end_ns_));
  m.add("run.completions", static_cast<double>(result_.completions));
  m.add("run.events", static_cast<double>(events_));
  m.add("run.little_worst_rel_error", worst_little_error());
  return m;
}

double Simulator::worst_little_error(std::string* which) const {
  double worst = 0.0;
  for (const auto& c : components_) {
    const FlowStats* f = c->flow();
    if (f == nullptr || f->completions() == 0) continue;
    const double e = f->little(now_).relative_error();
    if (e > worst) {
      worst = e;
      if (which) *which = c->name();
    }
  }
  return worst;
}

}  // namespace vqsim::sim
