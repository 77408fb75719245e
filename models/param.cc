#include "models/param.h"

namespace vqsim::models {

void set_rw(IoScenario& s, const std::string& rw) {
  auto& w = s.workload;
  w.rw = rw;
  w.random = rw.rfind("rand", 0) == 0;
  if (rw == "read" || rw == "randread")
    w.read_fraction = 1;
  else if (rw == "write" || rw == "randwrite")
    w.read_fraction = 0;
  else
    w.read_fraction = w.rwmixread / 100.0;
}

Param recorded_key(const char* key, Kind kind, const char* doc) {
  return {key,
          kind,
          "",
          "",
          "calibration/data/seeds",
          std::string("recorded; no effect: ") + doc,
          {},
          0,
          1e18,
          [key](IoScenario& s, const Value& v) {
            s.notes.push_back(std::string(key) + " = " +
                              (v.word.empty() ? (v.flag ? "true" : std::to_string(v.number)) : v.word) +
                              " (recorded, not modelled)");
          },
          {},
          true};
}

}  // namespace vqsim::models
