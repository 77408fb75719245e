#include "sim/fork_join.h"

#include <stdexcept>
#include <string>

namespace vqsim::sim {

ForkJoin::ForkJoin(Simulator& sim, std::string name, int branches) : Component(sim, std::move(name)) {
  if (branches < 1) throw std::invalid_argument("fork-join '" + this->name() + "' needs at least one branch");
  branch.resize(static_cast<std::size_t>(branches));
}

void ForkJoin::validate() const {
  for (std::size_t i = 0; i < branch.size(); ++i) require_connected(*this, branch[i], ("branch " + std::to_string(i)).c_str());
  require_connected(*this, out, "out");
}

void ForkJoin::accept(JobId job, int in_port) {
  const time_ns now = sim_.now();
  JobPool& jobs = sim_.jobs();
  if (in_port == kIn) {
    if (forked_at_.size() <= job) forked_at_.resize(job + 1);
    forked_at_[job] = now;
    flow_.arrive(now);
    jobs[job].pending = static_cast<std::uint32_t>(branch.size());
    const std::uint32_t job_class = jobs[job].job_class;
    for (const Port& p : branch) {
      const JobId child = jobs.allocate(now, job_class);  // may grow the pool: no references held
      jobs[child].parent = job;
      p.send(child);
    }
    return;
  }
  if (in_port != kJoin) Component::accept(job, in_port);
  const JobId parent = jobs[job].parent;
  if (parent == kNoJob) throw std::logic_error("fork-join '" + name() + "': a job that was not forked came back");
  jobs.release(job);
  if (--jobs[parent].pending == 0) {
    flow_.depart(now, now - forked_at_[parent]);
    out.send(parent);
  }
}

}  // namespace vqsim::sim
