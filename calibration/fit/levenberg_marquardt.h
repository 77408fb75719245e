// Levenberg-Marquardt for small nonlinear least squares: minimize sum r_i(u)^2 over u in a box.
// The residual function is evaluated at the point and at forward-difference neighbours for the
// Jacobian; evaluations of one Jacobian run on `threads` threads (the function must be safe to
// call concurrently; results do not depend on the thread count).
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <optional>
#include <string>

namespace vqsim::fit {

struct LmOptions {
  int max_iterations = 60;
  double step_u = 1e-3;          // forward-difference step
  double tolerance_cost = 1e-7;  // relative cost decrease that counts as converged
  double tolerance_step = 1e-5;  // largest |delta u| that counts as converged
  int threads = 1;
  // Whether LmResult::jacobian is the one at the answer when it converged (p more evaluations);
  // false leaves the last one computed, for callers that want only the answer.
  bool final_jacobian = true;
  std::function<bool()> cancelled;  // polled between evaluations
};

struct LmResult {
  Eigen::VectorXd u;
  Eigen::VectorXd residuals;
  Eigen::MatrixXd jacobian;  // at u
  double cost = 0;           // sum of squared residuals
  int iterations = 0;
  int evaluations = 0;
  bool converged = false;
  std::string stop_reason;
};

// Residuals at u, or nullopt where the model cannot be evaluated (treated as infinitely bad).
using ResidualFn = std::function<std::optional<Eigen::VectorXd>(const Eigen::VectorXd& u)>;

// Throws std::runtime_error when the starting point cannot be evaluated.
LmResult levenberg_marquardt(const ResidualFn& f, Eigen::VectorXd u0, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                             const LmOptions& options = {});

// The Jacobian of f at u by forward differences (columns in parallel).
Eigen::MatrixXd numeric_jacobian(const ResidualFn& f, const Eigen::VectorXd& u, const Eigen::VectorXd& r0, double step,
                                 const Eigen::VectorXd& upper, int threads, int* evaluations = nullptr);

}  // namespace vqsim::fit
