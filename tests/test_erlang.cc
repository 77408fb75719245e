// Closed-form single-station formulas against textbook values and their special cases.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/erlang.h"

using namespace vqsim::sim;

TEST_CASE("Erlang B: textbook values and the recursion") {
  CHECK(erlang_b(1, 1.0) == doctest::Approx(0.5).epsilon(1e-15));  // a / (1 + a)
  CHECK(erlang_b(2, 1.0) == doctest::Approx(0.2).epsilon(1e-15));  // (a^2/2) / (1 + a + a^2/2)
  CHECK(erlang_b(10, 5.0) == doctest::Approx(0.01838457033664814).epsilon(1e-12));
  CHECK(erlang_b(3, 0.0) == 0.0);
  // Direct formula B = (a^c / c!) / sum_{k<=c} a^k / k! for a moderate case.
  const double a = 3.7;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k <= 5; ++k) {
    term *= a / k;
    sum += term;
  }
  CHECK(erlang_b(5, a) == doctest::Approx(term / sum).epsilon(1e-13));
  // The recursion stays finite and in [0, 1] where the direct formula would overflow.
  const double big = erlang_b(2000, 1900.0);
  CHECK(big > 0.0);
  CHECK(big < 1.0);
}

TEST_CASE("Erlang C: textbook values and c = 1 reduces to M/M/1") {
  CHECK(erlang_c(2, 1.0) == doctest::Approx(1.0 / 3.0).epsilon(1e-14));
  for (double rho : {0.1, 0.5, 0.9, 0.99}) CHECK(erlang_c(1, rho) == doctest::Approx(rho).epsilon(1e-14));
  // Direct formula C = (a^c/c!) c/(c-a) / (sum_{k<c} a^k/k! + (a^c/c!) c/(c-a)).
  const int c = 5;
  const double a = 3.7;
  double term = 1.0, sum = 0.0;
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double last = term * c / (c - a);
  CHECK(erlang_c(c, a) == doctest::Approx(last / (sum + last)).epsilon(1e-13));
  CHECK(erlang_c(4, 0.0) == 0.0);
}

TEST_CASE("Erlang: M/M/c mean wait and response; M/M/1 and M/M/2 special cases") {
  // M/M/1: W_q = rho / (mu - lambda), W = 1 / (mu - lambda).
  const double lambda = 0.7, mu = 1.0;
  CHECK(mmc_mean_wait(lambda, mu, 1) == doctest::Approx(0.7 / 0.3).epsilon(1e-14));
  CHECK(mmc_mean_response(lambda, mu, 1) == doctest::Approx(1.0 / 0.3).epsilon(1e-14));
  // M/M/2 with lambda = mu = 1: L = 2 rho / (1 - rho^2) = 4/3 (rho = 1/2), so W = 4/3, W_q = 1/3.
  CHECK(mmc_mean_wait(1.0, 1.0, 2) == doctest::Approx(1.0 / 3.0).epsilon(1e-14));
  CHECK(mmc_mean_response(1.0, 1.0, 2) == doctest::Approx(4.0 / 3.0).epsilon(1e-14));
  // Units scale: rates per ns vs per us give times in ns vs us.
  CHECK(mmc_mean_response(0.7e-3, 1e-3, 1) == doctest::Approx(1e3 / 0.3).epsilon(1e-13));
  CHECK(mmc_mean_wait(0.0, 1.0, 3) == 0.0);
}

TEST_CASE("Erlang: M/M/1 response-time quantile is exponential with rate mu - lambda") {
  const double lambda = 0.6, mu = 1.0;
  CHECK(mm1_response_quantile(lambda, mu, 0.5) == doctest::Approx(std::log(2.0) / 0.4).epsilon(1e-14));
  CHECK(mm1_response_quantile(lambda, mu, 0.99) == doctest::Approx(std::log(100.0) / 0.4).epsilon(1e-12));
  CHECK(mm1_response_quantile(lambda, mu, 0.0) == 0.0);
  // Mean of Exp(mu - lambda) equals the M/M/1 mean response.
  CHECK(mm1_response_quantile(lambda, mu, 1.0 - std::exp(-1.0)) ==
        doctest::Approx(mmc_mean_response(lambda, mu, 1)).epsilon(1e-12));
}

TEST_CASE("Erlang: Pollaczek-Khinchine, M/D/1 wait is half of M/M/1 wait") {
  for (double rho : {0.1, 0.5, 0.8, 0.95}) {
    const double s = 2.0, lambda = rho / s;
    const double mm1 = mg1_mean_wait(lambda, s, 1.0);
    CHECK(mm1 == doctest::Approx(mmc_mean_wait(lambda, 1.0 / s, 1)).epsilon(1e-13));
    CHECK(mg1_mean_wait(lambda, s, 0.0) == doctest::Approx(0.5 * mm1).epsilon(1e-14));
  }
  // Hyperexponential-like service (scv = 4): W_q = rho E[S] (1 + 4) / (2 (1 - rho)).
  CHECK(mg1_mean_wait(0.25, 2.0, 4.0) == doctest::Approx(0.5 * 2.0 * 5.0 / (2.0 * 0.5)).epsilon(1e-14));
}

TEST_CASE("Erlang: Nelson-Tantawi two-server fork-join mean response") {
  // Light load: the maximum of two Exp(mu) service times has mean 1.5 / mu.
  CHECK(forkjoin2_mean_response(0.0, 2.0) == doctest::Approx(0.75).epsilon(1e-15));
  // (12 - 0.5) / 8 / (1 - 0.5) = 2.875
  CHECK(forkjoin2_mean_response(0.5, 1.0) == doctest::Approx(2.875).epsilon(1e-15));
  // Always between one M/M/1 response and 1.5 of it.
  for (double rho : {0.1, 0.5, 0.9}) {
    const double fj = forkjoin2_mean_response(rho, 1.0), single = mmc_mean_response(rho, 1.0, 1);
    CHECK(fj > single);
    CHECK(fj <= 1.5 * single);
  }
}

TEST_CASE("Erlang: unstable or invalid parameters throw") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(erlang_b(0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(erlang_b(2, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(erlang_b(2, nan), std::invalid_argument);
  CHECK_THROWS_AS(erlang_c(2, 2.0), std::invalid_argument);
  CHECK_THROWS_AS(erlang_c(2, 3.0), std::invalid_argument);
  CHECK_THROWS_AS(mmc_mean_wait(2.0, 1.0, 2), std::invalid_argument);
  CHECK_THROWS_AS(mmc_mean_wait(1.0, 0.0, 2), std::invalid_argument);
  CHECK_THROWS_AS(mmc_mean_response(-1.0, 1.0, 1), std::invalid_argument);
  CHECK_THROWS_AS(mm1_response_quantile(1.0, 1.0, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(mm1_response_quantile(0.5, 1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(mm1_response_quantile(0.5, 1.0, -0.1), std::invalid_argument);
  CHECK_THROWS_AS(mg1_mean_wait(0.5, 2.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(mg1_mean_wait(0.1, 2.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(mg1_mean_wait(0.1, 0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(forkjoin2_mean_response(1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(forkjoin2_mean_response(0.5, std::numeric_limits<double>::infinity()), std::invalid_argument);
}
