// First-come-first-served station with c identical servers (G/G/c when fed by a source).
//
// A job waits in a FIFO line until a server is free, holds the server for its service time,
// then leaves through `out`. Service times come from the station's distribution, per job class
// if set_class_service() was used; a model may override service_ns() to compute them from the
// job. With use_cpu(cpu), each server is a thread: serving means running on the shared CPU
// resource, so threads of several stations compete for the same cores.
//
// Cost per job: one event (service end), two Fifo operations at most, O(1) statistics.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/component.h"
#include "sim/distribution.h"
#include "sim/fifo.h"
#include "sim/ps_station.h"
#include "sim/simulator.h"
#include "sim/work.h"

namespace vqsim::sim {

class FcfsStation : public Component, public WorkClient {
 public:
  FcfsStation(Simulator& sim, std::string name, int servers, Distribution service);

  Port out;

  // Jobs of class `job_class` are served with `service` instead of the default.
  void set_class_service(std::uint32_t job_class, Distribution service);
  // Serve on `cpu` (a shared processor) instead of on private servers.
  void use_cpu(CpuResource& cpu) noexcept { cpu_ = &cpu; }

  void accept(JobId job, int in_port) override;
  void handle(std::uint32_t kind, std::uint64_t payload) override;
  void work_done(std::uint64_t token) override;
  void validate() const override;
  void reset_statistics(time_ns now) override;
  void report(Metrics& out, time_ns now) const override;
  const FlowStats* flow() const noexcept override { return &stats_.flow; }

  int servers() const noexcept { return static_cast<int>(slots_.size()); }
  std::size_t waiting() const noexcept { return queue_.size() + first_.size(); }
  int busy() const noexcept { return static_cast<int>(slots_.size() - idle_.size()); }
  // When the station last became completely idle (meaningful while busy() == 0): a model of a
  // thread that polls for a while before it sleeps asks how long it has been idle.
  time_ns idle_since_ns() const noexcept { return idle_since_ns_; }
  // Nothing in service and nothing waiting.
  bool idle() const noexcept { return busy() == 0 && waiting() == 0; }
  // The station works in passes, as an event loop does: a pass serves the jobs present when it
  // began (a job that finds the station idle begins one alone), and the jobs that arrive during a
  // pass make the next. A pass is in progress while any job is in the station. (Passes are a
  // single server's: with several, a later job may leave before a pass's own.)
  bool in_pass() const noexcept { return !idle(); }
  // Sends `target` the event (`kind`, `payload`) at the end of this station's current pass: a
  // model of a lock that the station holds for its pass and releases between passes (an event
  // loop that drops it around its poll) waits for it. The waiter then holds the lock and need not
  // ask again; the station's next pass does not wait for it (the waiter's hold is short).
  void when_pass_ends(Component& target, std::uint32_t kind, std::uint64_t payload = 0);
  // How many jobs have waited for another station's pass (waits_for) since the statistics were
  // last reset: a thread that blocks on a lock sleeps and is woken once for each.
  std::uint64_t lock_waits() const noexcept { return lock_waits_; }

 protected:
  // The service time of `job`; by default a draw from its class's distribution.
  virtual time_ns service_ns(JobId job);
  // A station whose passes hold a lock `job`'s work needs (or null): the job, on its server,
  // waits for that station's pass to end before its work starts (when_pass_ends). The wait is not
  // service: it is not in service_ns and takes no CPU.
  virtual FcfsStation* waits_for(JobId) { return nullptr; }
  // Called when `server`'s work is done: by default the job leaves at once. A model whose server
  // was stopped part of the way through (a thread blocked on a lock while its work ran) returns
  // false and calls release() later, when the work would have ended.
  virtual bool leaves_now(std::uint32_t /*server*/) { return true; }
  // Whether `job`, finding every server busy, waits ahead of the other waiting jobs (behind those
  // that went ahead before it): a thread that does its own next step before what others gave it.
  virtual bool goes_first(JobId) { return false; }
  // The job held by leaves_now() leaves now.
  void release(std::uint32_t server) { finish_service(server); }
  // Moves the waiting jobs for which `ahead(job)` holds ahead of the others (behind those that
  // already went first), in their order: a thread that takes, once it starts on one, every
  // piece of work of that kind already waiting (a loop that drains a ring). O(waiting).
  template <typename Pred>
  void send_ahead(Pred ahead) {
    for (std::size_t n = queue_.size(); n > 0; --n) {
      const Slot s = queue_.pop_front();
      (ahead(s.job) ? first_ : queue_).push_back(s);
    }
  }

 private:
  struct Slot {
    JobId job = kNoJob;
    time_ns arrival = 0;
  };
  enum Event : std::uint32_t { kServiceEnd, kLockFree };
  void begin_service(std::uint32_t server, Slot slot);
  void start_work(std::uint32_t server);
  void run_work(std::uint32_t server);
  void finish_service(std::uint32_t server);

  Distribution service_;
  std::vector<Distribution> class_service_;
  std::vector<bool> class_service_set_;
  CpuResource* cpu_ = nullptr;
  std::vector<Slot> slots_;          // one per server
  std::vector<std::uint32_t> idle_;  // free server indices, used as a stack
  Fifo<Slot> queue_;
  Fifo<Slot> first_;  // waiting jobs that go first (goes_first)
  WaitingLineStats stats_;
  time_ns idle_since_ns_ = 0;
  struct Watcher {
    Component* target;
    std::uint32_t kind;
    std::uint64_t payload;
  };
  std::vector<Watcher> pass_watchers_;
  std::size_t pass_left_ = 0;  // jobs of the current pass not yet served (0: no pass)
  std::uint64_t lock_waits_ = 0;
};

}  // namespace vqsim::sim
