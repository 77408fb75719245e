// `vqsim sweep`: every point of a sweep spec, in parallel (threads, and MPI ranks when built with
// MPI and started by mpirun), each finished point appended durably to a journal, so a killed
// sweep resumes where it stopped; then results.csv, results.jsonl and a fio-plot tree written
// from the journal in point order, the same bytes whatever --jobs or the rank count.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#ifdef VQSIM_HAVE_MPI
#include <mpi.h>
#endif

#include "calibration/fio/writer.h"
#include "calibration/predict/prediction.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/data_dir.h"
#include "cli/io_report.h"
#include "cli/solve_classes.h"
#include "models/config.h"
#include "models/io_metrics.h"
#include "models/io_path_mva.h"
#include "models/scenario.h"
#include "models/sweep.h"

namespace vqsim::cli {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted = true; }

std::string display(const std::string& v) { return v.size() >= 2 && v.front() == '"' ? v.substr(1, v.size() - 2) : v; }

// A number as text, the same on every run and machine.
std::string num(double v) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// The overrides of one point: the spec's --set, seed, replications and length, then the axes.
std::vector<std::string> point_overrides(const models::SweepSpec& spec, const models::SweepPoint& p) {
  std::vector<std::string> o = spec.set;
  o.push_back("run.seed=" + std::to_string(spec.seed));
  o.push_back("run.replications=" + std::to_string(spec.replications));
  if (spec.ios > 0) {
    o.push_back("workload.ios=" + std::to_string(spec.ios));
    o.push_back("workload.runtime=0");
  }
  for (const auto& x : p.overrides()) o.push_back(x);
  return o;
}

models::IoScenario point_scenario(const models::SweepSpec& spec, const models::SweepPoint& p) {
  models::ScenarioSource source = *spec.source;
  for (const std::string& o : point_overrides(spec, p)) source.set(o);
  return source.scenario();
}

// Whether `metric` names a [[vm]] profile this point switches off (vm.<name>.count = 0: a sweep
// from none): its figures are empty there, as a point where that VM does not run has none.
bool switched_off(const models::IoScenario& s, const std::string& metric) {
  if (!s.multi_vm() || metric.rfind("vm.", 0) != 0) return false;
  const std::string name = metric.substr(3, metric.find('.', 3) - 3);
  for (const auto& p : s.profiles)
    if (p.name == name) return p.count == 0;
  return false;
}

// One point's result as a journal row: one line of JSON.
nlohmann::ordered_json evaluate(const models::SweepSpec& spec, const models::SweepPoint& p, bool mva) {
  const models::IoScenario s = point_scenario(spec, p);
  nlohmann::ordered_json row;
  row["point"] = p.index;
  for (const auto& [k, v] : p.settings) row["settings"][k] = display(v);
  row["method"] = mva ? "mva" : "des";
  if (mva) {
    refuse_several_disks_for_mva(s, "sweep --mva");
    // Several running [[vm]] profiles or a VM of several fio jobs: the multi-class MVA (one class
    // per profile and job); a point where one single-job profile runs (a count swept from 0) is
    // that profile's one-class MVA.
    std::optional<models::IoMvaClassesResult> classes;
    models::IoMvaResult one;
    if (mva_by_classes(s)) {
      try {
        classes = models::solve_io_mva_classes(s);
      } catch (const std::invalid_argument& e) {
        throw UsageError("sweep --mva: point " + std::to_string(p.index) + ": " + e.what());
      }
    } else {
      one = models::solve_io_mva(s);
    }
    for (const auto& m : spec.metrics) {
      try {
        row["metrics"][m] = {
            {"mean", classes ? models::io_metric_mva_classes(*classes, s, m) : models::io_metric_mva(one, s, m)}};
      } catch (const std::invalid_argument&) {
        row["metrics"][m] = nullptr;  // a percentile: MVA has means only
      }
    }
    row["bottleneck"] = classes ? classes->bottleneck : one.bottleneck;
    return row;
  }
  const models::IoRunReport r = models::simulate_io(s, 1);
  // A calibrated scenario: each point also gets the whole 95% prediction interval (the model's
  // own error, the parameter draws, the simulation noise; docs/prediction.md), one simulation per
  // draw. Determinism: the draws come from the scenario's seed, the same for every thread count.
  predict::Prediction prediction;
  if (s.calibration.present() && s.calibration.draws > 0) {
    prediction = predict::predict(spec.scenario, point_overrides(spec, p), s, r, 1);
  }
  for (const auto& m : spec.metrics) {
    if (switched_off(s, m)) {
      row["metrics"][m] = nullptr;
      continue;
    }
    const sim::Interval i = models::io_metric(r, m);
    row["metrics"][m] = {{"mean", i.mean}, {"half_width_95", i.half_width}};
    if (const predict::MetricPrediction* pm = prediction.find(m)) {
      row["metrics"][m]["prediction_lower"] = pm->lower;
      row["metrics"][m]["prediction_upper"] = pm->upper;
    }
  }
  if (prediction.draws > 0) row["prediction_distance"] = prediction.distance;
  row["bottleneck"] = r.bottleneck;
  row["little_ok"] = r.little_ok;
  row["fio"] = fio::to_fio_json(to_fio_result(s, r));
  return row;
}

std::string fio_plot_name(const nlohmann::ordered_json& row) {
  // fio-plot reads <rw>-iodepth-<d>-numjobs-<n>.json; every other axis becomes a directory. The
  // point's rw, iodepth and numjobs are in its fio JSON's job options.
  const auto& options = row["fio"]["jobs"][0]["job options"];
  std::string dir;
  for (auto it = row["settings"].begin(); it != row["settings"].end(); ++it) {
    if (it.key() == "workload.iodepth" || it.key() == "workload.numjobs" || it.key() == "workload.rw") continue;
    std::string part = it.key();
    part.append("-");
    part.append(it.value().get<std::string>());
    for (char& c : part)
      if (c == '/' || c == ' ') c = '_';
    if (!dir.empty()) dir.append("/");
    dir.append(part);
  }
  std::string file = options.value("rw", std::string("rw"));
  file.append("-iodepth-")
      .append(options.value("iodepth", std::string("1")))
      .append("-numjobs-")
      .append(options.value("numjobs", std::string("1")));
  file.append(".json");
  return dir.empty() ? file : dir + "/" + file;
}

class Progress {
 public:
  Progress(std::size_t total, std::size_t done) : total_(total), done_(done), start_done_(done), tty_(::isatty(2) != 0) {}
  void tick() {
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    const double rate = secs > 0 ? static_cast<double>(done_ - start_done_) / secs : 0;
    const double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : 0;
    if (tty_) {
      const int width = 30;
      const int filled = static_cast<int>(static_cast<double>(width) * static_cast<double>(done_) / static_cast<double>(total_));
      std::fprintf(stderr, "\r[%s%s] %zu/%zu points, %.1f/s, ETA %.0f s ",
                   std::string(static_cast<std::size_t>(filled), '#').c_str(),
                   std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), done_, total_, rate, eta);
      if (done_ == total_) std::fprintf(stderr, "\n");
    } else if (secs - last_ >= 5 || done_ == total_) {
      last_ = secs;
      std::fprintf(stderr, "sweep: %zu/%zu points, %.1f/s, ETA %.0f s\n", done_, total_, rate, eta);
    }
  }

 private:
  std::mutex mu_;
  std::size_t total_, done_, start_done_;
  bool tty_;
  double last_ = -1e9;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

// Finished rows found in the journals of `dir` (any rank's), keyed by point.
std::map<std::size_t, std::string> read_journals(const fs::path& dir, const std::string& fingerprint) {
  std::map<std::size_t, std::string> rows;
  if (!fs::exists(dir)) return rows;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("journal", 0) != 0 || e.path().extension() != ".jsonl") continue;
    std::ifstream in(e.path());
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        break;  // a line cut by a crash: everything after it is lost anyway
      }
      if (first) {
        first = false;
        if (!j.contains("fingerprint") || j["fingerprint"] != fingerprint)
          throw UsageError(e.path().string() +
                           ": this journal belongs to another sweep (the spec or its scenario changed); remove " + dir.string() +
                           " or use another --out");
        continue;
      }
      rows[j["point"].get<std::size_t>()] = line;
    }
  }
  return rows;
}

}  // namespace

int sweep_main(const std::vector<std::string>& args) {
  std::string spec_path, out_dir;
  std::vector<std::string> overrides;
  int jobs = 0;
  bool resume = false, mva = false, allow_long_runs = false;
  po::options_description opts(
      "usage: vqsim sweep SPEC.toml --out DIR [options]\n\n"
      "Runs every point of a sweep spec (docs/sweep.md): axes over scenario keys, combined as a\n"
      "cartesian product, with zip groups and exclusions. Points run in parallel (--jobs, and MPI\n"
      "ranks under mpirun when vqsim was built with MPI); each finished point is appended to a\n"
      "journal in DIR, so after a crash or Ctrl-C `--resume` runs only what is missing. At the end\n"
      "DIR holds results.csv and results.jsonl (one row per point: settings, metrics with 95%\n"
      "half-widths) and fio-plot/ (<rw>-iodepth-<d>-numjobs-<n>.json in fio JSON, one directory per\n"
      "value of the other axes). The files are the same bytes whatever --jobs or the rank count.\n\n"
      "Examples:\n"
      "  vqsim sweep scenarios/sweeps/iothreads-iodepth.toml --out out/iothreads\n"
      "  vqsim sweep scenarios/sweeps/iothreads-iodepth.toml --out out/iothreads --resume\n"
      "  mpirun -np 4 vqsim sweep scenarios/sweeps/blk-vs-scsi.toml --out out/blk-scsi\n\nOptions");
  opts.add_options()("help,h", "show this help")("spec", po::value(&spec_path), "sweep spec TOML")(
      "out", po::value(&out_dir), "output directory")("jobs", po::value(&jobs)->default_value(0),
                                                      "points in parallel on this machine (0 = all cores)")(
      "resume", po::bool_switch(&resume), "keep the points already in DIR's journal, run the rest")(
      "mva", po::bool_switch(&mva), "a fast first pass: every point by MVA (means only, no percentiles, no fio-plot tree)")(
      "set", po::value(&overrides)->composing(), "a scenario key for every point (repeatable)")(
      "allow-long-runs", po::bool_switch(&allow_long_runs), "lift the limits on simulated I/Os per point (as vqsim run's)");
  po::positional_options_description pos;
  pos.add("spec", 1);
  po::variables_map vm;
  if (!parse_options(args, opts, vm, &pos)) return 0;
  if (spec_path.empty())
    throw UsageError("vqsim sweep needs a spec, e.g. vqsim sweep scenarios/sweeps/iothreads-iodepth.toml --out out");
  spec_path = resolve_scenario(spec_path);
  if (out_dir.empty()) throw UsageError("vqsim sweep needs --out DIR for its results");
  if (jobs < 0) throw UsageError("--jobs must be >= 0");

  int rank = 0, ranks = 1;
#ifdef VQSIM_HAVE_MPI
  int mpi_started = 0;
  MPI_Initialized(&mpi_started);
  if (!mpi_started) MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  struct Finalize {
    ~Finalize() { MPI_Finalize(); }
  } finalize;
#endif
  const models::SweepSpec spec = models::load_sweep(spec_path, overrides);
  if (rank == 0 && !spec.points.empty()) {
    const models::IoScenario first = point_scenario(spec, spec.points.front());
    for (const auto& m : spec.metrics) {
      if (const std::string e = models::io_metric_scenario_error(first, m); !e.empty()) throw UsageError(spec_path + ": " + e);
      const std::string w = models::first_profile_metric_warning(first, m);
      if (!w.empty()) std::cerr << "vqsim: warning: " << spec_path << ": " << w << "\n";
    }
  }
  // A point that would run for hours is refused before anything runs (the MVA sizes each one).
  if (!mva && !allow_long_runs)
    for (const auto& p : spec.points) {
      try {
        check_run_size(point_scenario(spec, p), false);
      } catch (const UsageError& e) {
        throw UsageError(spec_path + ": point " + std::to_string(p.index) + ": " + e.what());
      }
    }
  const fs::path dir(out_dir);
  // "--mva" results live next to the DES ones without mixing journals.
  const std::string fingerprint = spec.fingerprint + (mva ? "-mva" : "");
  if (rank == 0) {
    if (fs::exists(dir) && !resume && fs::exists(dir / "results.csv") == false) {
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind("journal", 0) == 0)
          throw UsageError(dir.string() + " holds an unfinished sweep; add --resume to finish it, or remove the directory");
    }
    fs::create_directories(dir);
  }
#ifdef VQSIM_HAVE_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
  std::map<std::size_t, std::string> done;
  if (resume) done = read_journals(dir, fingerprint);
  std::vector<std::size_t> todo;
  for (const auto& p : spec.points)
    if (!done.count(p.index) && static_cast<int>(p.index % static_cast<std::size_t>(ranks)) == rank) todo.push_back(p.index);
  if (rank == 0)
    std::fprintf(stderr, "sweep: %zu points (%zu done before), %d rank%s, %s\n", spec.points.size(), done.size(), ranks,
                 ranks > 1 ? "s" : "", mva ? "MVA" : "DES");

  // This rank's journal: a header line with the fingerprint, then one line per finished point,
  // each flushed and synced before the next point is counted.
  const fs::path journal = dir / ("journal.rank" + std::to_string(rank) + ".jsonl");
  const bool fresh = !fs::exists(journal) || !resume;
  std::FILE* jf = std::fopen(journal.c_str(), fresh ? "w" : "a");
  if (!jf) throw std::runtime_error("cannot write " + journal.string());
  if (fresh) {
    const std::string header = nlohmann::json{{"fingerprint", fingerprint}, {"spec", spec.path}}.dump() + "\n";
    std::fputs(header.c_str(), jf);
    std::fflush(jf);
  }
  std::mutex jmu;
  const auto previous_int = std::signal(SIGINT, on_sigint);
  const auto previous_term = std::signal(SIGTERM, on_sigint);
  Progress progress(spec.points.size(), done.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex fmu;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const int nthreads = static_cast<int>(
      std::min<std::size_t>(jobs > 0 ? static_cast<std::size_t>(jobs) : hw, std::max<std::size_t>(1, todo.size())));
  auto worker = [&] {
    for (;;) {
      if (g_interrupted) return;
      const std::size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      try {
        const std::string line = evaluate(spec, spec.points[todo[k]], mva).dump() + "\n";
        {
          std::lock_guard<std::mutex> lock(jmu);
          std::fputs(line.c_str(), jf);
          std::fflush(jf);
        }
        // On disk before the point counts as done; outside the lock, so that the other workers
        // keep simulating while this one waits for the disk.
        ::fdatasync(::fileno(jf));
      } catch (...) {
        std::lock_guard<std::mutex> lock(fmu);
        if (!failure) failure = std::current_exception();
        g_interrupted = true;
        return;
      }
      progress.tick();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < nthreads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  std::fclose(jf);
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  if (failure) std::rethrow_exception(failure);
  if (g_interrupted) {
    std::fprintf(stderr, "\nsweep: interrupted; finished points are kept in %s; run again with --resume to finish\n",
                 dir.c_str());
    return 130;
  }
#ifdef VQSIM_HAVE_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
  if (rank != 0) return 0;

  // Assemble the results in point order from every rank's journal.
  const auto rows = read_journals(dir, fingerprint);
  if (rows.size() != spec.points.size())
    throw std::runtime_error("sweep: " + std::to_string(rows.size()) + " of " + std::to_string(spec.points.size()) +
                             " points in the journals");
  std::string jsonl, csv;
  std::vector<std::string> keys;
  for (const auto& [k, v] : spec.points.front().settings) keys.push_back(k);
  csv = "point";
  for (const auto& k : keys) csv += "," + k;
  // Prediction columns when any point has them (a calibrated scenario): the whole interval.
  bool predicted = false;
  for (const auto& [index, line] : rows) predicted = predicted || line.find("\"prediction_lower\"") != std::string::npos;
  for (const auto& m : spec.metrics) {
    csv += "," + m + "," + m + "_hw95";
    if (predicted) csv += "," + m + "_pred_lower," + m + "_pred_upper";
  }
  csv += ",bottleneck\n";
  std::map<std::string, std::string> fio_files;
  for (const auto& [index, line] : rows) {
    nlohmann::ordered_json row = nlohmann::ordered_json::parse(line);
    nlohmann::ordered_json slim = row;
    slim.erase("fio");
    jsonl += slim.dump() + "\n";
    csv += std::to_string(index);
    for (const auto& k : keys) csv += "," + row["settings"][k].get<std::string>();
    for (const auto& m : spec.metrics) {
      const auto& v = row["metrics"][m];
      csv += "," + (v.is_null() ? std::string() : num(v["mean"].get<double>()));
      csv += "," + (v.is_null() || !v.contains("half_width_95") ? std::string() : num(v["half_width_95"].get<double>()));
      if (predicted)
        for (const char* k : {"prediction_lower", "prediction_upper"})
          csv += "," + (v.is_null() || !v.contains(k) ? std::string() : num(v[k].get<double>()));
    }
    csv += "," + row["bottleneck"].get<std::string>() + "\n";
    if (row.contains("fio")) {
      const std::string name = fio_plot_name(row);
      if (fio_files.count(name))
        std::fprintf(stderr,
                     "sweep: fio-plot/%s: two points map to this file (an axis fio-plot cannot show); the later one is kept\n",
                     name.c_str());
      fio_files[name] = row["fio"].dump(2) + "\n";
    }
  }
  write_atomically(dir / "results.jsonl", jsonl);
  write_atomically(dir / "results.csv", csv);
  for (const auto& [name, text] : fio_files) {
    const fs::path p = dir / "fio-plot" / name;
    fs::create_directories(p.parent_path());
    write_atomically(p, text, false);
  }
  // The journals have served; the results are complete.
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("journal", 0) == 0) fs::remove(e.path());
  std::fprintf(stderr, "sweep: %zu points -> %s/results.csv, results.jsonl%s\n", rows.size(), dir.c_str(),
               fio_files.empty() ? "" : ", fio-plot/");
  return 0;
}

}  // namespace vqsim::cli
