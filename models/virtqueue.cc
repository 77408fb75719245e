#include "models/virtqueue.h"

#include <algorithm>
#include <stdexcept>

#include "models/backend.h"
#include "models/emulation_thread.h"  // relay_pass
#include "models/guest_driver.h"

namespace vqsim::models {

InterruptLine::InterruptLine(sim::Simulator& sim, std::string name, IoTable& io, sim::Distribution latency, double handler_ns,
                             double per_completion_ns)
    : sim::Component(sim, std::move(name)),
      io_(io),
      latency_(std::move(latency)),
      handler_ns_(handler_ns),
      per_completion_ns_(per_completion_ns) {}

void InterruptLine::accept(sim::JobId job, int) {
  const sim::time_ns now = sim_.now();
  flow_.arrive(now);
  ++completions_;
  io_[job].irq_leader = armed(true);  // none on its way, and the handler has turned callbacks back on
  io_[job].in_handler = false;
  if (!pending_ && !io_[job].irq_leader) {
    // The handler is still draining the ring: it takes this one in its loop.
    handler_until_ns_ += per_completion_ns_;
    flow_.depart(now, 0);
    out.send(job);
    return;
  }
  waiting_.push_back(Waiting{job, now});
  if (!pending_) {
    pending_ = true;
    leader_ = job;
    io_[job].irq_line = this;
    ++interrupts_;
    sim_.schedule_in(latency_.sample_ns(rng_), this, kRaised, 0);
  }
}

void InterruptLine::handle(std::uint32_t kind, std::uint64_t) {
  const sim::time_ns now = sim_.now();
  // Raised in a pass: taken when the pass ends, with the lock handed over then (kLockFree).
  if (kind == kRaised && bql_holder_ != nullptr && bql_holder_->in_pass()) {
    if (taker_ != nullptr) taker_->raised_under_lock(leader_, *bql_holder_, !relayed_);
    bql_holder_->when_pass_ends(*this, kLockFree);
    return;
  }
  pending_ = false;
  delivering_.swap(waiting_);
  waiting_.clear();
  handler_until_ns_ = static_cast<double>(now) + handler_ns_ + per_completion_ns_ * static_cast<double>(delivering_.size());
  // The handler runs now, ahead of the vCPU's work in progress, which waits for it.
  const double preempting_ns = preempts_ != nullptr ? preempts_->handler_preempts(leader_, delivering_.size()) : 0.0;
  const bool in_handler = preempting_ns > 0;
  if (in_handler) handler_until_ns_ = static_cast<double>(now) + preempting_ns;
  for (const Waiting& w : delivering_) {
    io_[w.job].in_handler = in_handler;
    flow_.depart(now, now - w.arrival);
    out.send(w.job);
  }
  delivering_.clear();
}

void InterruptLine::handled(sim::JobId leader, sim::time_ns now) {
  if (leader == leader_ && !pending_) handler_until_ns_ = std::min(handler_until_ns_, static_cast<double>(now));
}

void InterruptLine::reset_statistics(sim::time_ns now) {
  flow_.reset(now);
  interrupts_ = completions_ = 0;
}

void InterruptLine::report(sim::Metrics& m, sim::time_ns now) const {
  sim::report_flow(m, name(), flow_, now);
  m.add(name() + ".completions_per_interrupt",
        interrupts_ ? static_cast<double>(completions_) / static_cast<double>(interrupts_) : 0.0);
}

Virtqueue::Virtqueue(sim::Simulator& sim, std::string vm, const IoScenario& s, IoTable& io, bool always_exit)
    : Stage(sim, std::move(vm), "virtqueue"),
      io_(io),
      event_idx_(s.vq.event_idx),
      always_exit_(always_exit),
      wakeup_(&sim.make<sim::DelayStation>(local("virtqueue.wakeup"), spread(s.vq.wakeup_ns, 0.5))) {
  sim::connect(wakeup_->out, *this, kWoken);
  // Without the handler's window an interrupt takes only what arrives while it is delivered.
  const bool window = handler_window_on(s);
  for (int q = 0; q < s.queues(); ++q) {
    auto& line = sim.make<InterruptLine>(local("virtqueue.irq" + std::to_string(q)), io, spread(s.vq.irq_ns, 0.5),
                                         window ? interrupt_cost_ns(s) : 0.0, window ? driver_costs(s).complete_ns : 0.0);
    sim::connect(line.out, *this, kInterrupted);
    irqs_.push_back(&line);
  }
}

void Virtqueue::connected(const sim::Port& port) {
  if (&port == &to_host) sim::connect(wakeup_->out, *port.to, port.in_port);
  if (&port == &interrupt)
    for (InterruptLine* line : irqs_) sim::connect(line->out, *port.to, port.in_port);
}

void Virtqueue::accept(sim::JobId job, int in_port) {
  switch (static_cast<In>(in_port)) {
    case kAvail: {
      // After the kick: must the request wait for the thread to be woken?
      IoRequest& r = io_[job];
      if (!consumer_->processing(r.thread)) {
        r.step = Step::wakeup;
        wakeup_->accept(job, 0);
      } else {
        to_host.send(job);
      }
      break;
    }
    case kWoken:
      to_host.send(job);
      break;
    case kUsed: {
      IoRequest& r = io_[job];
      r.step = Step::irq;
      irqs_[r.queue % irqs_.size()]->accept(job, 0);
      break;
    }
    case kInterrupted:
      interrupt.send(job);
      break;
  }
}

void Virtqueue::validate() const {
  sim::require_connected(*this, to_host, "to_host");
  sim::require_connected(*this, interrupt, "interrupt");
  if (consumer_ == nullptr) throw std::logic_error("virtqueue '" + name() + "' has no consumer");
}

void Virtqueue::stations(std::vector<StageInfo>& out) const {
  out.push_back({wakeup_->name(), "virtqueue", 0});
  for (const InterruptLine* line : irqs_) out.push_back({line->name(), "virtqueue", 0});
}

// The per-queue interrupt lines are drawn as one node.
void Virtqueue::draw(StageGraph& g) const {
  g.nodes.push_back({local("virtqueue.irq"), "virtqueue", "station", 0});
  g.nodes.push_back({wakeup_->name(), "virtqueue", "station", 0});
}

std::vector<PortEnd> Virtqueue::entry(int in_port) const {
  if (in_port == kAvail) return {{wakeup_->name(), "kick, thread asleep"}};
  return {{local("virtqueue.irq"), "irqfd"}};
}

std::vector<PortEnd> Virtqueue::exits(const sim::Port& port) const {
  if (&port == &to_host) return {{wakeup_->name(), "woken"}, {"", "kick (suppressed while awake)", kAvail}};
  return {{local("virtqueue.irq"), "interrupt"}};
}

double interrupt_cost_ns(const IoScenario& s) {
  if (s.bare_metal()) return 0;
  return s.host.accel == Accel::tcg ? s.host.tcg_irq_ns : s.vq.irq_handler_ns;
}

bool handler_window_on(const IoScenario& s) {
  if (s.vq.handler_window == HandlerWindow::by_accel) return s.host.accel == Accel::tcg;
  return s.vq.handler_window == HandlerWindow::on;
}

namespace {
// Never more than the n in flight.
double ring_bound(double b, double in_flight) { return in_flight > 0 ? std::min(b, std::max(1.0, in_flight)) : b; }

double completions_per_interrupt_of_one(const IoScenario& s, double completions_per_ns, double in_flight, double lock_wait_ns,
                                        double host_ns) {
  const double wait = std::max(0.0, lock_wait_ns);
  // Without the handler's window: those that reach the ring while it is delivered.
  if (!handler_window_on(s)) return 1.0 + std::max(0.0, completions_per_ns) * (s.vq.irq_ns + wait);
  // An interrupt takes the completions that reach the ring during its delivery (irq_us, and
  // under TCG's lock the rest of the main loop's pass) and its handler's run (interrupt_cost_ns,
  // and per completion the driver's), which lengthens with each:
  // b = 1 + x' (irq + wait + handler + b per), so b = (1 + x' (irq + wait + handler)) / (1 - x' per),
  // x' the rate the others arrive at as the leader sees it ((n - 1) / n of x by the arrival
  // theorem, n in flight on the queue: a lone request is always an interrupt of its own), and
  // never more than the n in flight.
  const double x = std::max(0.0, completions_per_ns) * seen_by_arrival(in_flight);
  // A handler that stops its vCPU's work while it runs (virtqueue.handler_preempts) takes only
  // what the host already had when it began: those the vCPU submitted within the host's time
  // before (host_ns), if its run is longer.
  if (s.vq.handler_preempts)
    return ring_bound(1.0 + x * (s.vq.irq_ns + wait + std::min(interrupt_cost_ns(s), host_ns)), in_flight);
  const double per = driver_costs(s).complete_ns;
  const double open = 1.0 + x * (s.vq.irq_ns + wait + interrupt_cost_ns(s));
  const double b = open / std::max(0.05, 1.0 - x * per);
  return ring_bound(b, in_flight);
}
}  // namespace

double completions_per_interrupt(const IoScenario& s, double completions_per_ns, double in_flight, double lock_wait_ns,
                                 double host_ns) {
  // A batched device (models/backend.h) hands its completions over in batches: an interrupt
  // carries whole batches, arriving at the batch rate.
  const double batch = device_batch_size(s, completions_per_ns, in_flight);
  if (batch > 1)
    return std::min(
        batch * completions_per_interrupt_of_one(s, completions_per_ns / batch, in_flight / batch, lock_wait_ns, host_ns),
        std::max(1.0, in_flight));
  return completions_per_interrupt_of_one(s, completions_per_ns, in_flight, lock_wait_ns, host_ns);
}

int queues_in_use(const IoScenario& s) { return std::max(1, std::min(s.queues(), std::min(s.fio_threads(), s.guest.vcpus))); }

void virtqueue_wakeup_demands(const MvaInputs& in, std::vector<MvaDemand>& out) {
  out.push_back({"virtqueue.wakeup", sim::MvaStationKind::Delay, 1, in.s.vq.wakeup_ns * in.p_wake});
}

double interrupt_lock_wait_ns(const MvaInputs& in) {
  // Under TCG's lock the interrupt's leader waits for the rest of the main loop's pass; the
  // completions that join it during the wait, on average half of it. Raised by the relay as its
  // pass begins (host.tcg_relay_in_pass), for what of that pass outlasts the injection.
  if (const RelayPass relay = relay_pass(in.s); relay.p_finds > 0) return relay.wait_ns;
  return in.bql_wait_ns * 0.5 * (1.0 + in.irq_share);
}

double interrupt_finds_lock(const MvaInputs& in) {
  // The interrupt is raised just after its leader's completion left the holder's pass, so it
  // finds the pass going on only when other work came with that completion: the completions that
  // ride along with an interrupt (1 / irq_share - 1 per interrupt) say how often completions come
  // together, and the holder is busy with one of them as often as a taking finds it busy at all.
  // A lone request's interrupt never finds the lock held (no other work), as in the simulation,
  // where completions that come with the vCPU's own cadence (null-co behind the main loop) find
  // it less often than the loop's utilization. Behind an IOThread without host.tcg_relay_in_pass
  // the main loop's relay raises it at the end of its own job, which takes the queue's
  // completions together (its riders): the pass holds more only for another queue's interrupt.
  if (!(in.irq_share > 0)) return 0;
  // Raised by the relay as its pass begins (host.tcg_relay_in_pass), it finds the pass whenever
  // the pass outlasts the injection, and stops the vCPU only when that was running a request's
  // work: a halted one takes it within its halt's wake-up.
  if (const RelayPass relay = relay_pass(in.s); relay.p_finds > 0) return relay.p_finds * (1 - in.p_guest_idle);
  if (in.s.host.iothreads > 0) {
    const int queues = queues_in_use(in.s);
    return in.p_bql_wait * static_cast<double>(queues - 1) / static_cast<double>(std::max(1, queues));
  }
  return in.p_bql_wait * std::min(1.0, 1.0 / in.irq_share - 1.0);
}

void virtqueue_interrupt_demands(const MvaInputs& in, std::vector<MvaDemand>& out) {
  out.push_back({"virtqueue.irq", sim::MvaStationKind::Delay, 1, in.s.vq.irq_ns + interrupt_lock_wait_ns(in)});
}

// The scenario keys of the virtqueue (models/param.h: how a key is declared).
void virtqueue_keys(std::vector<Param>& t) {
  auto add = [&](Param p) { t.push_back(std::move(p)); };
  add({"virtqueue.kick_exit_us",
       Kind::time_us,
       "us",
       "1.5",
       "docs/sources.md §3 (0.7-0.8 us exit + eventfd signal)",
       "vCPU time of the notify VM exit (skipped while suppressed)",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.vq.kick_exit_ns = v.number; },
       [](const IoScenario& s) { return s.vq.kick_exit_ns / s.guest_cpu_factor() / 1e3; }});
  add({"virtqueue.wakeup_us",
       Kind::time_us,
       "us",
       "8",
       "docs/sources.md §3 (~20 us in a 2016 trace, lower on modern hosts)",
       "latency to wake a sleeping host thread by eventfd",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.vq.wakeup_ns = v.number; },
       [](const IoScenario& s) { return s.vq.wakeup_ns / 1e3; }});
  add({"virtqueue.handler_window",
       Kind::choice,
       "",
       "auto",
       "Linux drivers/block/virtio_blk.c virtblk_done, drivers/scsi/virtio_scsi.c virtscsi_vq_done (callbacks off while "
       "the ring is drained); docs/sources.md §3 (the lab's interrupts recording)",
       "whether an interrupt also takes the completions that reach the ring while its handler drains it (the handler "
       "turns callbacks back on only when it finds the ring empty): on, off, or auto = on under host.accel = tcg, where "
       "the lab measured it, off under kvm (docs/sources.md §3 says why)",
       {"auto", "on", "off"},
       0,
       0,
       [](IoScenario& s, const Value& v) {
         s.vq.handler_window =
             pick<HandlerWindow>({"auto", "on", "off"}, {HandlerWindow::by_accel, HandlerWindow::on, HandlerWindow::off}, v.word);
       }});
  add({"virtqueue.handler_preempts",
       Kind::boolean,
       "",
       "false",
       "Linux kernel/irq (a device interrupt runs in hard-IRQ context, ahead of the task it interrupts), "
       "drivers/virtio/virtio_ring.c vring_interrupt, drivers/block/virtio_blk.c virtblk_done (each request taken from the "
       "ring and completed before the task runs again); off by default: docs/sources.md §3 (the lab's knob split "
       "predicts worse with it, so far)",
       "with virtqueue.handler_window on: the handler runs when its interrupt is delivered, stopping the work of the "
       "fio thread it finds running on the vCPU for as long as it takes (virtqueue.irq_handler_us or host.tcg_irq_us, "
       "and the driver's completion of each request it delivers), so that vCPU submits nothing while the handler "
       "drains the ring; false: the handler's cost waits its turn with the completion's work, and the vCPU goes on "
       "submitting meanwhile",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.vq.handler_preempts = v.flag; }});
  add({"virtqueue.irq_us",
       Kind::time_us,
       "us",
       "2",
       "docs/sources.md §3 (irqfd, posted interrupts)",
       "irqfd to guest interrupt handler latency",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.vq.irq_ns = v.number; },
       [](const IoScenario& s) { return s.vq.irq_ns / 1e3; }});
  add({"virtqueue.irq_handler_us",
       Kind::time_us,
       "us",
       "1.0",
       "[I] interrupt entry/exit + vring_interrupt",
       "guest vCPU time per interrupt; completions that arrive while one is pending share it",
       {},
       0,
       1e12,
       [](IoScenario& s, const Value& v) { s.vq.irq_handler_ns = v.number; },
       [](const IoScenario& s) { return s.vq.irq_handler_ns / s.guest_cpu_factor() / 1e3; }});
  add({"virtqueue.event_idx",
       Kind::boolean,
       "",
       "true",
       "virtio spec VIRTIO_RING_F_EVENT_IDX",
       "suppress kicks while the host thread is busy or polling",
       {},
       0,
       0,
       [](IoScenario& s, const Value& v) { s.vq.event_idx = v.flag; }});
}

}  // namespace vqsim::models
