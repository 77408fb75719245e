// Work submitted to a shared processor (a CPU resource) by another component: the client hands
// over a demand in ns of CPU time and a token of its own, and hears back work_done(token) when
// the processor has served it. This is how threads of several stations compete for cores.
#pragma once

#include <cstdint>

namespace vqsim::sim {

class WorkClient {
 public:
  virtual void work_done(std::uint64_t token) = 0;

 protected:
  ~WorkClient() = default;
};

}  // namespace vqsim::sim
