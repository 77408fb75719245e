// Closed-form results for single queueing stations, used to validate the simulator and as quick
// analytic estimates. Rates and times are in any consistent units (our callers use nanoseconds as
// double, so rates are per nanosecond); the offered load a = lambda / mu is dimensionless.
//
// Every function throws std::invalid_argument for invalid parameters (negative or non-finite
// rates, servers < 1, probabilities out of range) and for unstable systems (utilization >= 1);
// none of them returns NaN or infinity.
//
// References: L. Kleinrock, "Queueing Systems, Volume 1: Theory", Wiley 1975 (Erlang B/C, M/M/c,
// M/M/1 response time distribution, Pollaczek–Khinchine); R. Nelson, A. N. Tantawi,
// "Approximate analysis of fork/join synchronization in parallel queues", IEEE Transactions on
// Computers 37(6), 1988 (exact two-server fork-join).
#pragma once

namespace vqsim::sim {

// Erlang B: blocking probability of an M/M/c/c loss system with offered load a (Erlangs),
// computed with the stable recursion B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)).
// Any a >= 0 is allowed (a loss system is always stable).
double erlang_b(int servers, double offered_load);

// Erlang C: probability that an arrival to M/M/c (offered load a = lambda/mu < c) has to wait,
// C = c B / (c - a (1 - B)) with B = erlang_b(c, a).
double erlang_c(int servers, double offered_load);

// M/M/c mean waiting time in queue (excluding service): W_q = C(c, a) / (c mu - lambda).
double mmc_mean_wait(double lambda, double mu, int servers);

// M/M/c mean response time (sojourn): W_q + 1/mu.
double mmc_mean_response(double lambda, double mu, int servers);

// p-quantile of the response time of a FCFS M/M/1 queue, which is exponentially distributed with
// rate mu - lambda: t_p = -ln(1 - p) / (mu - lambda). p must be in [0, 1).
double mm1_response_quantile(double lambda, double mu, double p);

// M/G/1 mean waiting time in queue by the Pollaczek–Khinchine formula:
//   W_q = lambda E[S^2] / (2 (1 - rho)) = rho E[S] (1 + scv) / (2 (1 - rho)),  rho = lambda E[S],
// where scv = Var[S] / E[S]^2 is the squared coefficient of variation of the service time
// (scv = 1: M/M/1, scv = 0: M/D/1).
double mg1_mean_wait(double lambda, double mean_service, double scv_service);

// Mean wait of a Poisson arrival for the end of an M/M/1 station's current pass, where the
// station serves in gated passes (each pass serves the jobs present when it began: an event loop
// holding a lock for its pass, sim::FcfsStation::when_pass_ends): the probability rho that a pass
// is in progress times its mean residual E[L^2] / 2E[L]. Summed over a busy period's passes
// (L_1 one service, L_{k+1} the work arriving during L_k: E[L_{k+1} | L_k] = rho L_k and
// E[L_{k+1}^2 | L_k] = 2 lambda L_k / mu^2 + rho^2 L_k^2), E[L] = 1 / (mu - lambda) and
// E[L^2] = 2 / (mu^2 (1 - rho)^2 (1 + rho)), so
//   W = rho / (mu (1 - rho^2)),  rho = lambda / mu.
double mm1_gated_pass_residual(double lambda, double mu);

// Mean response time of a fork-join system with two homogeneous M/M/1 servers (each job forks into
// one task per server and completes when both are done), exact result of Nelson & Tantawi 1988:
//   R = (12 - rho) / 8 * 1 / (mu - lambda),  rho = lambda / mu.
double forkjoin2_mean_response(double lambda, double mu);

}  // namespace vqsim::sim
