// Closed-form single-station results; see erlang.h.
#include "sim/erlang.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace vqsim::sim {

namespace {

void require(bool ok, const char* fn, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string(fn) + ": " + what);
}

void check_rate(const char* fn, const char* name, double v, bool allow_zero) {
  require(std::isfinite(v) && (allow_zero ? v >= 0.0 : v > 0.0), fn,
          std::string(name) + " = " + std::to_string(v) + (allow_zero ? " must be finite and >= 0" : " must be finite and > 0"));
}

void check_servers(const char* fn, int servers) {
  require(servers >= 1, fn, "servers = " + std::to_string(servers) + " must be >= 1");
}

}  // namespace

double erlang_b(int servers, double offered_load) {
  check_servers("erlang_b", servers);
  check_rate("erlang_b", "offered_load", offered_load, true);
  double b = 1.0;
  for (int k = 1; k <= servers; ++k) b = offered_load * b / (static_cast<double>(k) + offered_load * b);
  return b;
}

double erlang_c(int servers, double offered_load) {
  check_servers("erlang_c", servers);
  check_rate("erlang_c", "offered_load", offered_load, true);
  const double c = static_cast<double>(servers);
  require(offered_load < c, "erlang_c",
          "offered load " + std::to_string(offered_load) + " >= servers " + std::to_string(servers) + ": unstable");
  const double b = erlang_b(servers, offered_load);
  return c * b / (c - offered_load * (1.0 - b));
}

double mmc_mean_wait(double lambda, double mu, int servers) {
  check_rate("mmc_mean_wait", "lambda", lambda, true);
  check_rate("mmc_mean_wait", "mu", mu, false);
  check_servers("mmc_mean_wait", servers);
  const double capacity = static_cast<double>(servers) * mu;
  require(lambda < capacity, "mmc_mean_wait", "utilization lambda / (c mu) >= 1: unstable");
  return erlang_c(servers, lambda / mu) / (capacity - lambda);
}

double mmc_mean_response(double lambda, double mu, int servers) { return mmc_mean_wait(lambda, mu, servers) + 1.0 / mu; }

double mm1_response_quantile(double lambda, double mu, double p) {
  check_rate("mm1_response_quantile", "lambda", lambda, true);
  check_rate("mm1_response_quantile", "mu", mu, false);
  require(lambda < mu, "mm1_response_quantile", "utilization lambda / mu >= 1: unstable");
  require(p >= 0.0 && p < 1.0, "mm1_response_quantile", "p = " + std::to_string(p) + " must be in [0, 1)");
  return -std::log1p(-p) / (mu - lambda);
}

double mg1_mean_wait(double lambda, double mean_service, double scv_service) {
  check_rate("mg1_mean_wait", "lambda", lambda, true);
  check_rate("mg1_mean_wait", "mean_service", mean_service, false);
  check_rate("mg1_mean_wait", "scv_service", scv_service, true);
  const double rho = lambda * mean_service;
  require(rho < 1.0, "mg1_mean_wait", "utilization lambda * E[S] = " + std::to_string(rho) + " >= 1: unstable");
  return rho * mean_service * (1.0 + scv_service) / (2.0 * (1.0 - rho));
}

double mm1_gated_pass_residual(double lambda, double mu) {
  check_rate("mm1_gated_pass_residual", "lambda", lambda, true);
  check_rate("mm1_gated_pass_residual", "mu", mu, false);
  require(lambda < mu, "mm1_gated_pass_residual", "utilization lambda / mu >= 1: unstable");
  const double rho = lambda / mu;
  return rho / (mu * (1.0 - rho * rho));
}

double forkjoin2_mean_response(double lambda, double mu) {
  check_rate("forkjoin2_mean_response", "lambda", lambda, true);
  check_rate("forkjoin2_mean_response", "mu", mu, false);
  require(lambda < mu, "forkjoin2_mean_response", "utilization lambda / mu >= 1: unstable");
  const double rho = lambda / mu;
  return (12.0 - rho) / 8.0 / (mu - lambda);
}

}  // namespace vqsim::sim
