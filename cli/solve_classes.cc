#include "cli/solve_classes.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "cli/common.h"
#include "cli/io_report.h"
#include "models/io_metrics.h"

namespace vqsim::cli {

namespace {

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::string us(double ns) { return std::isfinite(ns) ? fmt("%.2f", ns / 1e3) : std::string("unbounded"); }

std::string vms_word(int n) { return std::to_string(n) + (n == 1 ? " VM" : " VMs"); }

std::string method_line(const models::IoMvaClassesResult& r) {
  if (r.open_loop) return "open network (rate_iops)";
  if (r.exact) return fmt("exact multi-class MVA over %.0f population vectors", r.lattice_points);
  return fmt("Schweitzer-Bard approximate MVA, %d sweeps%s (exact MVA would visit %.3g population vectors)", r.iterations,
             r.converged ? "" : ", NOT converged", r.lattice_points);
}

// The DES's figures of one profile (one VM's): IOPS over both directions and the mean lat.
struct DesProfile {
  double iops = 0, lat_ns = 0;
};
DesProfile des_profile(const models::IoRunReport& des, const std::string& name) {
  if (name.empty()) {  // a single-VM file
    const double rd = des.get("read.iops").mean, wr = des.get("write.iops").mean;
    const double lat =
        rd + wr > 0 ? (rd * des.get("read.lat.mean_ns").mean + wr * des.get("write.lat.mean_ns").mean) / (rd + wr) : 0;
    return {rd + wr, lat};
  }
  return {models::io_metric(des, "vm." + name + ".total.iops").mean,
          models::io_metric(des, "vm." + name + ".total.lat_mean_us").mean * 1e3};
}

// One fio job's (one VM's), under its VM's metric prefix ("vm.<name>." or "" in a single-VM
// file); zeros where the report has no such job.
DesProfile des_job(const models::IoRunReport& des, const std::string& vm, const std::string& job) {
  const std::string at = (vm.empty() ? "" : "vm." + vm + ".") + job + ".";
  try {
    return {models::io_metric(des, at + "total.iops").mean, models::io_metric(des, at + "total.lat_mean_us").mean * 1e3};
  } catch (const std::invalid_argument&) {
    return {};
  }
}

bool mva_jobs(const models::IoMvaClassesResult& r) {
  for (const auto& p : r.profiles)
    if (!p.jobs.empty()) return true;
  return false;
}

std::string vm_label(const std::string& name) { return name.empty() ? "the VM" : "vm " + name; }

std::string stage_table(const std::vector<models::IoMvaStage>& stages, const char* indent) {
  std::string out = fmt("%s%-28s %14s %12s %10s\n", indent, "stage", "residence (µs)", "utilization", "number");
  for (const auto& st : stages)
    out += fmt("%s%-28s %14s %12.3f %10s\n", indent, st.name.c_str(), us(st.residence_ns).c_str(), st.utilization,
               std::isfinite(st.number_mean) ? fmt("%.2f", st.number_mean).c_str() : "unbounded");
  return out;
}

nlohmann::ordered_json stages_json(const std::vector<models::IoMvaStage>& stages) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& st : stages)
    a.push_back({{"name", st.name},
                 {"residence_ns", finite_or_null(st.residence_ns)},
                 {"demand_ns", st.demand_ns},
                 {"utilization", finite_or_null(st.utilization)},
                 {"number_mean", finite_or_null(st.number_mean)}});
  return a;
}

const models::StageRow* des_row(const models::IoRunReport& des, const std::string& name) {
  for (const auto& row : des.stages)
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace

void refuse_several_disks_for_mva(const models::IoScenario& s, const std::string& what) {
  // Several disks in one VM: the MVA's stations are one disk's path per VM.
  for (const auto& p : s.profiles)
    if (p.count > 0 && p.scenario.multi_disk())
      throw UsageError(what + ": " + s.path + ": vm." + p.name + " has " + std::to_string(p.scenario.disks.size()) +
                       " disks ([[vm.disk]] tables), and the MVA models one disk per VM; use vqsim run (the simulation)");
}

nlohmann::ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

bool several_profiles(const models::IoScenario& s) {
  int running = 0;
  for (const auto& p : s.profiles) running += p.count > 0 ? 1 : 0;
  return running > 1;
}

bool mva_by_classes(const models::IoScenario& s) {
  bool jobs = !s.multi_vm() && s.multi_job();
  for (const auto& p : s.profiles) jobs = jobs || (p.count > 0 && p.scenario.multi_job());
  return jobs || several_profiles(s);
}

std::string mva_classes_text(const models::IoScenario& s, const models::IoMvaClassesResult& r, double solve_ms) {
  std::string out = fmt("vqsim %s solve %s (%s; %.1f ms)\n%s\n\n", VQSIM_VERSION, s.path.c_str(), method_line(r).c_str(),
                        solve_ms, setup_line(s).c_str());
  int vms = 0;
  for (const auto& p : r.profiles) vms += p.count;
  out += fmt("host: %zu VM profile%s, %s: IOPS %.0f, mean lat %s µs over every VM's I/Os; bottleneck %s\n", r.profiles.size(),
             r.profiles.size() == 1 ? "" : "s", vms_word(vms).c_str(), r.total_iops, us(r.lat_mean_ns).c_str(),
             r.bottleneck.c_str());
  if (r.saturated) out += "some stage is over 100% busy: the open network's mean latencies are unbounded\n";
  bool jobs = false;
  for (const auto& p : r.profiles) {
    const auto& f = p.figures;
    out += fmt("\n%s (%s, %d in flight per VM): one VM: IOPS %.0f (read %.0f, write %.0f); mean lat %s µs = slat %s + clat %s\n",
               vm_label(p.name).c_str(), vms_word(p.count).c_str(), p.population, f.iops, f.read_iops, f.write_iops,
               us(f.lat_mean_ns).c_str(), us(f.slat_mean_ns).c_str(), us(f.clat_mean_ns).c_str());
    out += fmt("  the profile's %s: IOPS %.0f; bottleneck %s\n", vms_word(p.count).c_str(), f.total_iops, f.bottleneck.c_str());
    if (!p.jobs.empty())
      out += fmt("  (over its %s jobs; residence: the mean over their I/Os)\n", r.phases > 1 ? "first stonewall group's" : "fio");
    out += stage_table(f.stages, "  ");
    for (const auto& j : p.jobs) {
      jobs = true;
      const auto& g = j.figures;
      out += fmt("  job %s%s (%d in flight per VM): IOPS %.0f (read %.0f, write %.0f); mean lat %s µs = slat %s + clat %s\n",
                 j.name.c_str(), r.phases > 1 ? fmt(", group %d", j.phase).c_str() : "", j.population, g.iops, g.read_iops,
                 g.write_iops, us(g.lat_mean_ns).c_str(), us(g.slat_mean_ns).c_str(), us(g.clat_mean_ns).c_str());
      out += stage_table(g.stages, "    ");
    }
  }
  out += "\n(per-VM stations: one VM's utilization; shared stations: the profile's share, all its VMs";
  out += jobs ? "; a job's rows: its part of them)\n" : ")\n";
  if (r.phases > 1)
    out +=
        fmt("(%d stonewall groups, solved one after the other; the host and the shared stations: the first group)\n", r.phases);
  out += "\nshared stations: utilization per server, by VM profile\n";
  std::string head = fmt("%-28s %8s %8s", "station", "servers", "total");
  for (const auto& p : r.profiles) head += fmt(" %10.10s", p.name.c_str());
  out += head + "\n";
  for (const auto& sh : r.shared) {
    std::string line =
        fmt("%-28s %8s %8.3f", sh.name.c_str(), sh.delay ? "inf" : std::to_string(sh.servers).c_str(), sh.utilization);
    for (const double u : sh.by_profile) line += fmt(" %10.3f", u);
    out += line + (sh.delay ? "  (delay: mean number busy)" : "") + "\n";
  }
  return out;
}

namespace {

// One VM's or one fio job's MVA figures, as the `vms` and `jobs` entries carry them.
nlohmann::ordered_json figures_json(const models::IoMvaResult& f) {
  return {{"iops", f.iops},
          {"read_iops", f.read_iops},
          {"write_iops", f.write_iops},
          {"total_iops", f.total_iops},
          {"lat_mean_ns", finite_or_null(f.lat_mean_ns)},
          {"slat_mean_ns", finite_or_null(f.slat_mean_ns)},
          {"clat_mean_ns", finite_or_null(f.clat_mean_ns)},
          {"bottleneck", f.bottleneck},
          {"stages", stages_json(f.stages)}};
}

}  // namespace

nlohmann::ordered_json mva_classes_json(const models::IoMvaClassesResult& r) {
  nlohmann::ordered_json j;
  j["method"] = r.method;
  j["exact"] = r.exact;
  if (!r.open_loop) {
    j["lattice_points"] = r.lattice_points;
    j["iterations"] = r.iterations;
    j["converged"] = r.converged;
  }
  j["open_loop"] = r.open_loop;
  j["saturated"] = r.saturated;
  j["stonewall_groups"] = r.phases;
  j["host"] = {{"total_iops", r.total_iops}, {"lat_mean_ns", finite_or_null(r.lat_mean_ns)}, {"bottleneck", r.bottleneck}};
  j["vms"] = nlohmann::ordered_json::array();
  for (const auto& p : r.profiles) {
    nlohmann::ordered_json v = {{"name", p.name}, {"count", p.count}, {"requests_in_flight", p.population}};
    v.update(figures_json(p.figures));
    if (!p.jobs.empty()) {
      v["jobs"] = nlohmann::ordered_json::array();
      for (const auto& jb : p.jobs) {
        nlohmann::ordered_json o = {{"name", jb.name}, {"group", jb.phase}, {"requests_in_flight", jb.population}};
        o.update(figures_json(jb.figures));
        v["jobs"].push_back(o);
      }
    }
    j["vms"].push_back(v);
  }
  j["shared_stations"] = nlohmann::ordered_json::array();
  for (const auto& sh : r.shared) {
    nlohmann::ordered_json by = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < r.profiles.size(); ++c) by[r.profiles[c].name] = sh.by_profile[c];
    j["shared_stations"].push_back({{"name", sh.name},
                                    {"servers", sh.delay ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(sh.servers)},
                                    {"utilization", sh.utilization},
                                    {"by_vm", by}});
  }
  return j;
}

std::string mva_classes_compare_text(const models::IoScenario& s, const models::IoRunReport& des,
                                     const models::IoMvaClassesResult& mva) {
  std::string out = "MVA (" + method_line(mva) + "), per VM profile" + std::string(mva_jobs(mva) ? " and fio job" : "") +
                    ", one VM's figures:\n";
  bool far = false;
  for (const auto& p : mva.profiles) {
    const DesProfile d = des_profile(des, p.name);
    const double d_iops = d.iops > 0 ? (p.figures.iops - d.iops) / d.iops : 0;
    const double d_lat = d.lat_ns > 0 ? (p.figures.lat_mean_ns - d.lat_ns) / d.lat_ns : 0;
    far = far || std::fabs(d_iops) > 0.10 || std::fabs(d_lat) > 0.10;
    out += fmt("  %s: MVA %.0f IOPS, mean lat %s µs (%+.1f%% and %+.1f%% vs the simulation's %.0f IOPS, %s µs)\n",
               vm_label(p.name).c_str(), p.figures.iops, us(p.figures.lat_mean_ns).c_str(), 100 * d_iops, 100 * d_lat, d.iops,
               us(d.lat_ns).c_str());
    for (const auto& jb : p.jobs) {
      const DesProfile dj = des_job(des, p.name, jb.name);
      const double j_iops = dj.iops > 0 ? (jb.figures.iops - dj.iops) / dj.iops : 0;
      const double j_lat = dj.lat_ns > 0 ? (jb.figures.lat_mean_ns - dj.lat_ns) / dj.lat_ns : 0;
      far = far || std::fabs(j_iops) > 0.10 || std::fabs(j_lat) > 0.10;
      out += fmt("    job %s: MVA %.0f IOPS, mean lat %s µs (%+.1f%% and %+.1f%% vs the simulation's %.0f IOPS, %s µs)\n",
                 jb.name.c_str(), jb.figures.iops, us(jb.figures.lat_mean_ns).c_str(), 100 * j_iops, 100 * j_lat, dj.iops,
                 us(dj.lat_ns).c_str());
    }
    // Its own stations whose time per I/O differs by more than 10% (and 1 µs).
    for (const auto& st : p.figures.stages) {
      const models::StageRow* row = des_row(des, st.name);
      if (row == nullptr || d.iops <= 0) continue;
      bool shared = false;
      for (const auto& sh : mva.shared) shared = shared || sh.name == st.name;
      if (shared) continue;  // the DES row holds every VM's visits: compared below by utilization
      const double des_ns = row->throughput_per_s.mean / d.iops * row->response_mean_ns.mean;
      if (std::fabs(des_ns - st.residence_ns) > std::max(0.10 * des_ns, 1000.0))
        out +=
            fmt("    differs at %s: %.2f µs per I/O by MVA, %.2f by DES\n", st.name.c_str(), st.residence_ns / 1e3, des_ns / 1e3);
    }
  }
  const double des_total = models::io_metric(des, "host.total.iops").mean;
  const double d_total = des_total > 0 ? (mva.total_iops - des_total) / des_total : 0;
  out += fmt("  host: MVA %.0f IOPS (%+.1f%% vs the simulation's %.0f)\n", mva.total_iops, 100 * d_total, des_total);
  for (const auto& sh : mva.shared) {
    const models::StageRow* row = des_row(des, sh.name);
    if (row == nullptr || sh.delay || !row->has_utilization) continue;
    out += fmt("  %s utilization: MVA %.3f, DES %.3f\n", sh.name.c_str(), sh.utilization, row->utilization.mean);
  }
  if (far)
    out +=
        "MVA and DES disagree by more than 10% for some profile or job: the stages' non-exponential times, token limits, "
        "state-dependent "
        "kicks or the QEMU threads held while they wait for a core matter here; trust the DES\n";
  (void)s;
  return out;
}

nlohmann::ordered_json mva_classes_compare_json(const models::IoScenario& s, const models::IoRunReport& des,
                                                const models::IoMvaClassesResult& mva) {
  nlohmann::ordered_json j = mva_classes_json(mva);
  for (std::size_t c = 0; c < mva.profiles.size(); ++c) {
    const DesProfile d = des_profile(des, mva.profiles[c].name);
    j["vms"][c]["des_iops"] = d.iops;
    j["vms"][c]["des_lat_mean_ns"] = d.lat_ns;
    for (std::size_t k = 0; k < mva.profiles[c].jobs.size(); ++k) {
      const DesProfile dj = des_job(des, mva.profiles[c].name, mva.profiles[c].jobs[k].name);
      j["vms"][c]["jobs"][k]["des_iops"] = dj.iops;
      j["vms"][c]["jobs"][k]["des_lat_mean_ns"] = dj.lat_ns;
    }
  }
  j["host"]["des_total_iops"] = models::io_metric(des, "host.total.iops").mean;
  (void)s;
  return j;
}

}  // namespace vqsim::cli
