#include "calibration/fit/levenberg_marquardt.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

namespace vqsim::fit {

namespace {

bool finite(const Eigen::VectorXd& v) { return v.allFinite(); }

}  // namespace

Eigen::MatrixXd numeric_jacobian(const ResidualFn& f, const Eigen::VectorXd& u, const Eigen::VectorXd& r0, double step,
                                 const Eigen::VectorXd& upper, int threads, int* evaluations) {
  const auto p = u.size();
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(r0.size(), p);
  std::vector<std::optional<Eigen::VectorXd>> columns(static_cast<std::size_t>(p));
  std::vector<double> steps(static_cast<std::size_t>(p));
  std::atomic<long> next{0};
  auto work = [&] {
    for (long j = next++; j < p; j = next++) {
      // Step backwards at the upper bound, so the model is never asked outside the box.
      const double h = u[j] + step > upper[j] ? -step : step;
      Eigen::VectorXd v = u;
      v[j] += h;
      steps[static_cast<std::size_t>(j)] = h;
      columns[static_cast<std::size_t>(j)] = f(v);
    }
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(p)));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (long j = 0; j < p; ++j) {
    const auto& c = columns[static_cast<std::size_t>(j)];
    if (c && c->size() == r0.size() && finite(*c)) J.col(j) = (*c - r0) / steps[static_cast<std::size_t>(j)];
  }
  if (evaluations) *evaluations += static_cast<int>(p);
  return J;
}

LmResult levenberg_marquardt(const ResidualFn& f, Eigen::VectorXd u0, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                             const LmOptions& o) {
  LmResult out;
  u0 = u0.cwiseMax(lower).cwiseMin(upper);
  auto r0 = f(u0);
  out.evaluations = 1;
  if (!r0 || !finite(*r0)) throw std::runtime_error("the model cannot be evaluated at the starting point");
  Eigen::VectorXd u = u0, r = *r0;
  double cost = r.squaredNorm();
  double lambda = 1e-2;
  Eigen::MatrixXd J = numeric_jacobian(f, u, r, o.step_u, upper, o.threads, &out.evaluations);
  out.stop_reason = "iteration limit reached";
  for (int it = 0; it < o.max_iterations; ++it) {
    if (o.cancelled && o.cancelled()) {
      out.stop_reason = "cancelled";
      break;
    }
    out.iterations = it + 1;
    const Eigen::MatrixXd A = J.transpose() * J;
    const Eigen::VectorXd g = J.transpose() * r;
    bool improved = false;
    Eigen::VectorXd step_taken;
    for (int tries = 0; tries < 12; ++tries) {
      Eigen::MatrixXd M = A;
      for (long i = 0; i < M.rows(); ++i) M(i, i) += lambda * std::max(A(i, i), 1e-9);
      Eigen::VectorXd delta = M.ldlt().solve(-g);
      if (!finite(delta)) {
        lambda *= 10;
        continue;
      }
      Eigen::VectorXd v = (u + delta).cwiseMax(lower).cwiseMin(upper);
      auto rv = f(v);
      ++out.evaluations;
      const double c = rv && finite(*rv) ? rv->squaredNorm() : INFINITY;
      if (c < cost) {
        step_taken = v - u;
        const double rel = (cost - c) / std::max(cost, 1e-300);
        u = v;
        r = *rv;
        cost = c;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        if (rel < o.tolerance_cost || step_taken.lpNorm<Eigen::Infinity>() < o.tolerance_step) {
          out.converged = true;
          out.stop_reason = "converged";
        }
        break;
      }
      lambda *= 4;
    }
    if (!improved) {
      // No step lowers the cost: at a minimum when the gradient is small, else stuck.
      out.converged = g.lpNorm<Eigen::Infinity>() < 1e-6 * std::max(1.0, cost) || lambda > 1e6;
      out.stop_reason = out.converged ? "converged (no further decrease)" : "no step decreases the cost";
      break;
    }
    if (out.converged && !o.final_jacobian) break;
    J = numeric_jacobian(f, u, r, o.step_u, upper, o.threads, &out.evaluations);
    if (out.converged) break;
  }
  out.u = u;
  out.residuals = r;
  out.jacobian = J;
  out.cost = cost;
  return out;
}

}  // namespace vqsim::fit
