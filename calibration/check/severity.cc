#include "calibration/check/check.h"

namespace vqsim::check {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::info:
      return "info";
    case Severity::warning:
      return "warning";
    case Severity::error:
      return "error";
  }
  return "?";
}

}  // namespace vqsim::check
