// `vqsim calibrate`: fit stage parameters to measured fio runs (a manifest) and write a
// calibrated scenario (FIT.toml) that `vqsim run` predicts from, with intervals. Wires
// calibration/fit (dataset, fit, output) to the command line; nothing is written unless the fit
// converged, and what is written appears whole or not at all.
#include <unistd.h>
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "calibration/fit/calibrate.h"
#include "calibration/fit/fit_output.h"
#include "calibration/fit/parameters.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/data_dir.h"
#include "cli/report.h"
#include "models/scenario.h"

namespace vqsim::cli {
namespace po = boost::program_options;

int calibrate_main(const std::vector<std::string>& args) {
  std::string scenario, data, out, report, html, fit_list, cv, holdout, format = "text", loss = "cauchy", spread_starts = "auto";
  int threads = 0, replications = 2, max_rounds = fit::CalibrateOptions{}.max_rounds;
  long long seed = 1;
  bool quiet = false, fit_counts = false;
  std::string keys;
  for (const auto& k : fit::fittable_keys()) keys.append(keys.empty() ? "" : ", ").append(k);
  po::options_description opts(
      "usage: vqsim calibrate --scenario BASE.toml --data MANIFEST.toml --out FIT.toml\n"
      "                       [--fit key,key...] [--holdout REGEX] [--cv loo|config] [--report REPORT.json]\n"
      "                       [--html PAGE.html]\n\n"
      "Fits stage parameters to measured fio runs and writes a calibrated scenario.\n"
      "MANIFEST lists the runs ([[run]] with `file` = a fio output in any format, or inline\n"
      "`measured` numbers; `set` = the scenario keys that describe that run's setup; optional\n"
      "`name` and `weight`; `co_running` for the guests that ran beside it on the host, which are\n"
      "simulated with it); the workload (rw, bs, iodepth, numjobs, ioengine) comes from the fio\n"
      "output where it states it (JSON: fio's defaults for what it does not list). Where nothing\n"
      "states it (terse), `set` must, or `base_workload = true` must say the base's applies: it\n"
      "is never taken from BASE by default. Every `set` key must be a scenario key (`vqsim keys`).\n"
      "BASE is the scenario every run's `set` is applied to.\n\n"
      "The fit: Levenberg-Marquardt in log space on relative errors of IOPS (or bandwidth), mean\n"
      "latency and the clat percentiles present (Cauchy loss: a figure the model cannot come near\n"
      "weighs little; --loss squares for plain least squares), with a weak prior towards the\n"
      "documented defaults;\n"
      "the MVA is the fast model inside it, corrected by the simulation until both agree at the\n"
      "answer. It prints each run measured vs model, the parameters with 95% intervals, and which\n"
      "parameters the data cannot identify, and why: the data hardly narrow it, the parameter\n"
      "draws (refits over the runs reweighted) spread it, two explanations that fit about as well\n"
      "differ in it, or, with --cv, one left-out run alone pins it. FIT.toml = BASE + the fitted\n"
      "values + their\n"
      "uncertainty; `vqsim run FIT.toml --set ...` then predicts other setups with intervals.\n"
      "Method and file formats: docs/calibration.md.\n\n"
      "Fittable parameters (--fit; default: the CPU scales, wake-up and hand-off latencies and the\n"
      "device figures the runs load): " +
      keys +
      "\n\n"
      "Examples:\n"
      "  vqsim calibrate --scenario scenarios/seed000-virtio-scsi.toml \\\n"
      "      --data calibration/data/seeds/000-virtio-scsi-vs-blk.toml --out fit.toml\n"
      "  vqsim calibrate ... --holdout virtio-blk        # fit the others, predict virtio-blk\n"
      "  vqsim calibrate ... --cv loo --report r.json    # leave-one-out error per metric\n"
      "  vqsim calibrate ... --cv loo --html fit.html    # the same report as a page (docs/report.md)\n"
      "  vqsim calibrate ... --cv config                 # each configuration predicted by a fit without it\n\n"
      "Exit status: 0 converged (files written), 1 the fit did not converge (the report is written,\n"
      "FIT.toml is not), 2 bad usage or manifest, 130 interrupted (nothing written).\n\n"
      "Options");
  opts.add_options()("help,h", "show this help")("scenario", po::value(&scenario), "base scenario (TOML)")(
      "data", po::value(&data), "measurement manifest (TOML)")("out", po::value(&out), "calibrated scenario to write")(
      "fit", po::value(&fit_list), "comma-separated parameters to fit instead of the default choice")(
      "holdout", po::value(&holdout), "runs whose name matches this regex are not fitted but predicted")(
      "cv", po::value(&cv),
      "loo: leave-one-out cross-validation over the fitted runs; config: leave out every fitted run of one "
      "configuration at a time, so that the model's own error for another configuration comes from such folds")(
      "loss", po::value(&loss)->default_value("cauchy"),
      "cauchy: figures the model cannot come near (beyond ~10%) weigh less than the rest | squares: plain least squares")(
      "fit-counts", po::bool_switch(&fit_counts),
      "also fit the runs' counts per I/O (count.interrupts_per_io, count.<kind>_wakes_per_io); without it they "
      "are read and left out, and the report says so (docs/calibration.md says why)")("report", po::value(&report),
                                                                                      "also write the report as JSON")(
      "html", po::value(&html), "also write the report as an HTML page with charts (as vqsim report)")(
      "format", po::value(&format)->default_value("text"), "report on stdout: text | json")(
      "threads", po::value(&threads)->default_value(0), "threads (0 = all cores); results do not depend on it")(
      "replications", po::value(&replications)->default_value(2), "simulation replications per run and round")(
      "max-rounds", po::value(&max_rounds)->default_value(max_rounds),
      "rounds of simulation corrections to the MVA before the fit counts as not converged (exit 1); raise it for a fit "
      "that still improves at the limit")("seed", po::value(&seed)->default_value(1),
                                          "simulation seed (the same in every round: common random numbers)")(
      "spread-starts", po::value(&spread_starts)->default_value("auto"),
      "auto: the multi-start's spread starts (2 per fitted parameter) are also refined on the simulation, about 4 "
      "simulations of the fitted runs per start, where that costs at most 2e8 simulated events (a minute or so on one "
      "core; otherwise the report notes it) | simulated: always | screened: never (faster)")("quiet,q", po::bool_switch(&quiet),
                                                                                             "no progress lines on stderr");
  po::variables_map vm;
  if (!parse_options(args, opts, vm)) return 0;
  if (scenario.empty()) throw UsageError("vqsim calibrate needs --scenario BASE.toml (see --help)");
  scenario = resolve_scenario(scenario);
  if (data.empty()) throw UsageError("vqsim calibrate needs --data MANIFEST.toml (see --help)");
  if (out.empty()) throw UsageError("vqsim calibrate needs --out FIT.toml (where the calibrated scenario goes)");
  for (const auto& f : {scenario, data}) {
    if (!std::filesystem::exists(f)) throw UsageError(f + ": no such file");
    if (std::filesystem::is_directory(f)) throw UsageError(f + ": is a directory, expected a TOML file");
  }
  if (std::filesystem::is_directory(out)) throw UsageError("--out " + out + ": is a directory, expected a file name");
  // A file of [[vm]] tables is several profiles; calibration fits one (its runs' `set` keys are
  // one VM's). Fit the profile alone, then name the result as a [[vm]]'s base.
  bool multi_vm = false;
  try {
    multi_vm = models::load_io_scenario(scenario).multi_vm();
  } catch (const models::ConfigError&) {
    // the dataset's loader reports a bad scenario with the run it was loading
  }
  if (multi_vm)
    throw UsageError("--scenario " + scenario +
                     ": a file of [[vm]] tables; calibrate fits one VM profile: give the single-VM scenario (a [[vm]]'s base), "
                     "then use the fit as base = \"FIT.toml\" in that [[vm]] table");
  if (!html.empty() && std::filesystem::is_directory(html))
    throw UsageError("--html " + html + ": is a directory, expected a file name");
  if (!cv.empty() && cv != "loo" && cv != "config")
    throw UsageError("--cv: loo (leave one run out) or config (leave one configuration's runs out), not '" + cv + "'" +
                     did_you_mean(cv, {"loo", "config"}));
  if (loss != "cauchy" && loss != "squares")
    throw UsageError("--loss must be cauchy or squares" + did_you_mean(loss, {"cauchy", "squares"}));
  if (format != "text" && format != "json")
    throw UsageError("--format must be text or json" + did_you_mean(format, {"text", "json"}));
  if (threads < 0) throw UsageError("--threads must be >= 0");
  if (replications < 2 || replications > 100) throw UsageError("--replications must be 2..100 (intervals need two)");
  if (seed < 0) throw UsageError("--seed must be >= 0");
  if (max_rounds < 1 || max_rounds > 100) throw UsageError("--max-rounds must be 1..100");
  if (spread_starts != "auto" && spread_starts != "simulated" && spread_starts != "screened")
    throw UsageError("--spread-starts must be auto, simulated or screened, not '" + spread_starts + "'" +
                     did_you_mean(spread_starts, {"auto", "simulated", "screened"}));
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  fit::CalibrateOptions o;
  if (!fit_list.empty()) {
    std::stringstream ss(fit_list);
    for (std::string k; std::getline(ss, k, ',');)
      if (!k.empty()) o.fit_keys.push_back(k);
  }
  o.holdout = holdout;
  o.leave_one_out = cv == "loo" || cv == "config";
  o.by_configuration = cv == "config";
  o.robust_scale = loss == "cauchy" ? 3.0 : 0.0;  // 3 x the 3% residual unit: ~9%
  o.threads = threads;
  o.replications = replications;
  o.max_rounds = max_rounds;
  o.spread_starts = spread_starts == "simulated"  ? fit::CalibrateOptions::SpreadStarts::simulated
                    : spread_starts == "screened" ? fit::CalibrateOptions::SpreadStarts::screened
                                                  : fit::CalibrateOptions::SpreadStarts::automatic;
  o.seed = static_cast<std::uint64_t>(seed);
  if (!quiet) o.progress = [](const std::string& line) { std::cerr << "calibrate: " << line << std::endl; };

  fit::Dataset d = fit::load_dataset(data, scenario);
  if (!fit_counts) fit::leave_out_counts(d);
  const fit::CalibrationResult r = fit::calibrate(d, o);

  // The command as FIT.toml records it: without the options that cannot change the result, so
  // the file is the same bytes whatever --threads (or -q) was given.
  std::string command = "vqsim calibrate";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--threads" || args[i] == "--report" || args[i] == "--format" || args[i] == "--html") {
      ++i;
      continue;
    }
    if (args[i] == "-q" || args[i] == "--quiet" || args[i].rfind("--threads=", 0) == 0 || args[i].rfind("--report=", 0) == 0 ||
        args[i].rfind("--format=", 0) == 0 || args[i].rfind("--html=", 0) == 0)
      continue;
    command += " " + args[i];
  }
  if (!report.empty()) write_atomically(report, fit::report_json(d, r).dump(2) + "\n");
  // The page holds the JSON --report writes; written converged or not, as the report is.
  if (!html.empty()) write_report_page(html, calibration_doc(fit::report_json(d, r), command));
  if (format == "json")
    std::cout << fit::report_json(d, r).dump(2) << '\n';
  else
    std::cout << fit::report_text(d, r);
  if (!r.converged) {
    std::cerr << "vqsim: calibrate: the fit did not converge (" << r.stop_reason << "); " << out << " was not written\n";
    return 1;
  }
  write_atomically(out, fit::fit_toml(d, r, out, command));
  if (!quiet)
    std::cerr << "calibrate: wrote " << out << (report.empty() ? "" : " and " + report) << (html.empty() ? "" : " and " + html)
              << "\n";
  return 0;
}

}  // namespace vqsim::cli
