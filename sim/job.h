// Jobs (customers) live in a pool and travel between components as 32-bit indices, so moving a
// job costs nothing and no job is allocated per event once the pool has grown.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace vqsim::sim {

using JobId = std::uint32_t;
inline constexpr JobId kNoJob = UINT32_MAX;

struct Job {
  time_ns created_ns = 0;       // when the job entered the network (open) or its cycle began (closed)
  std::uint32_t job_class = 0;  // selects per-class service distributions
  JobId parent = kNoJob;        // fork-join: the job this one was split from
  std::uint32_t pending = 0;    // fork-join: children not yet joined
  std::uint64_t tag = 0;        // free for models (e.g. a flow or job number)
};

class JobPool {
 public:
  JobId allocate(time_ns now, std::uint32_t job_class = 0) {
    JobId id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<JobId>(jobs_.size());
      jobs_.emplace_back();
    }
    jobs_[id] = Job{now, job_class, kNoJob, 0, 0};
    ++live_;
    return id;
  }
  void release(JobId id) {
    free_.push_back(id);
    --live_;
  }
  Job& operator[](JobId id) noexcept { return jobs_[id]; }
  const Job& operator[](JobId id) const noexcept { return jobs_[id]; }
  std::uint64_t live() const noexcept { return live_; }

 private:
  std::vector<Job> jobs_;
  std::vector<JobId> free_;
  std::uint64_t live_ = 0;
};

}  // namespace vqsim::sim
