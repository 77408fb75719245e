#include "models/network.h"

#include <limits>

#include "models/config.h"
#include "sim/delay_station.h"
#include "sim/fcfs_station.h"
#include "sim/ps_station.h"
#include "sim/source.h"

namespace vqsim::models {

NetworkScenario load_network(const std::string& path, const std::vector<std::string>& overrides) {
  toml::table root = parse_toml_file(path, "a network scenario");
  apply_overrides(root, overrides);
  ConfigReader cfg(path);
  cfg.check_keys(root, "", {"description", "run", "population", "source", "cpu", "station"});

  NetworkScenario sc;
  sc.path = path;
  static const toml::table kEmpty;
  const toml::table& run = root["run"].as_table() ? *root["run"].as_table() : kEmpty;
  cfg.check_keys(run, "run", {"seed", "replications", "warmup", "warmup_completions", "duration", "completions"});
  sc.seed = static_cast<std::uint64_t>(cfg.integer(run, "run", "seed", 1, 0, std::numeric_limits<std::int64_t>::max()));
  sc.replications = static_cast<int>(cfg.integer(run, "run", "replications", 10, 1, 100000));
  sc.limits.warmup_ns = cfg.duration(run, "run", "warmup", 0);
  sc.limits.warmup_completions =
      static_cast<std::uint64_t>(cfg.integer(run, "run", "warmup_completions", 0, 0, std::numeric_limits<std::int64_t>::max()));
  sc.limits.measure_ns = cfg.duration(run, "run", "duration", 0);
  sc.limits.measure_completions =
      static_cast<std::uint64_t>(cfg.integer(run, "run", "completions", 0, 0, std::numeric_limits<std::int64_t>::max()));
  if (sc.limits.warmup_ns > 0 && sc.limits.warmup_completions > 0)
    cfg.fail(run.get("warmup"), "run.warmup", "give either warmup or warmup_completions, not both");
  if (sc.limits.measure_ns == 0 && sc.limits.measure_completions == 0)
    cfg.fail(&run, "run", "needs 'duration' (e.g. \"1s\") or 'completions' (e.g. 100000) to know when to stop");

  const toml::table* population = root["population"].as_table();
  const toml::table* source = root["source"].as_table();
  if ((population == nullptr) == (source == nullptr))
    cfg.fail(&root, "population/source", "give exactly one of [population] (closed network) or [source] (open network)");
  if (population != nullptr) {
    cfg.check_keys(*population, "population", {"customers"});
    sc.closed = true;
    sc.customers = static_cast<int>(cfg.integer(*population, "population", "customers", 1, 1, 10'000'000));
  } else {
    cfg.check_keys(*source, "source", {"interarrival"});
    sc.closed = false;
    const toml::node* ia = source->get("interarrival");
    if (ia == nullptr) cfg.fail(source, "source.interarrival", "missing, e.g. { dist = \"exponential\", mean = \"20us\" }");
    sc.interarrival = cfg.distribution(*ia, "source.interarrival");
  }

  std::vector<std::string> names;
  auto claim_name = [&](const toml::table& t, const std::string& key) {
    const std::string name = cfg.string(t, key, "name", "");
    if (name.empty()) cfg.fail(&t, key + ".name", "every entry needs a name");
    for (const char* reserved : {"population", "source", "sink", "run"})
      if (name == reserved) cfg.fail(t.get("name"), key + ".name", "\"" + name + "\" is reserved");
    if (std::find(names.begin(), names.end(), name) != names.end())
      cfg.fail(t.get("name"), key + ".name", "\"" + name + "\" is used twice");
    names.push_back(name);
    return name;
  };
  if (const toml::node* cpus = root.get("cpu")) {
    const toml::array* arr = cpus->as_array();
    if (arr == nullptr || !arr->is_array_of_tables()) cfg.fail(cpus, "cpu", "expected [[cpu]] tables");
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::table& t = *arr->get(i)->as_table();
      const std::string key = "cpu[" + std::to_string(i) + "]";
      cfg.check_keys(t, key, {"name", "cores"});
      sc.cpus.push_back(NetworkCpu{claim_name(t, key), static_cast<int>(cfg.integer(t, key, "cores", 1, 1, 100000))});
    }
  }
  const toml::array* stations = root["station"].as_array();
  if (stations == nullptr || stations->empty() || !stations->is_array_of_tables())
    cfg.fail(root.get("station"), "station", "the network needs at least one [[station]] table");
  for (std::size_t i = 0; i < stations->size(); ++i) {
    const toml::table& t = *stations->get(i)->as_table();
    const std::string key = "station[" + std::to_string(i) + "]";
    cfg.check_keys(t, key, {"name", "kind", "servers", "service", "cpu"});
    NetworkStation st;
    st.name = claim_name(t, key);
    const std::string kind = cfg.string(t, key, "kind", "fcfs", {"fcfs", "ps", "delay"});
    st.kind = kind == "fcfs" ? NetworkStation::Kind::Fcfs
              : kind == "ps" ? NetworkStation::Kind::ProcessorSharing
                             : NetworkStation::Kind::Delay;
    st.servers = static_cast<int>(cfg.integer(t, key, "servers", 1, 1, 1'000'000));
    if (st.kind == NetworkStation::Kind::Delay && t.contains("servers"))
      cfg.fail(t.get("servers"), key + ".servers", "a delay station has no servers to count (every job is served at once)");
    const toml::node* service = t.get("service");
    if (service == nullptr) cfg.fail(&t, key + ".service", "missing, e.g. { dist = \"exponential\", mean = \"10us\" }");
    st.service = cfg.distribution(*service, key + ".service");
    st.cpu = cfg.string(t, key, "cpu", "");
    if (!st.cpu.empty()) {
      if (st.kind != NetworkStation::Kind::Fcfs)
        cfg.fail(t.get("cpu"), key + ".cpu", "only fcfs stations run their servers on a shared cpu");
      bool found = false;
      std::vector<std::string> cpu_names;
      for (const auto& c : sc.cpus) {
        found = found || c.name == st.cpu;
        cpu_names.push_back(c.name);
      }
      if (!found)
        cfg.fail(t.get("cpu"), key + ".cpu", "no [[cpu]] is named \"" + st.cpu + "\"" + did_you_mean(st.cpu, cpu_names));
    }
    sc.stations.push_back(std::move(st));
  }
  return sc;
}

void build_network(const NetworkScenario& sc, sim::Simulator& sim) {
  using namespace vqsim::sim;
  std::vector<CpuResource*> cpus;
  for (const auto& c : sc.cpus) cpus.push_back(&sim.make<CpuResource>(c.name, c.cores));
  Port* prev = nullptr;
  ClosedLoop* loop = nullptr;
  Source* source = nullptr;
  if (sc.closed) {
    loop = &sim.make<ClosedLoop>("population", sc.customers);
    prev = &loop->out;
  } else {
    source = &sim.make<Source>("source", sc.interarrival);
    prev = &source->out;
  }
  for (const auto& st : sc.stations) {
    Port* out = nullptr;
    Component* c = nullptr;
    switch (st.kind) {
      case NetworkStation::Kind::Fcfs: {
        auto& s = sim.make<FcfsStation>(st.name, st.servers, st.service);
        for (std::size_t i = 0; i < sc.cpus.size(); ++i)
          if (sc.cpus[i].name == st.cpu) s.use_cpu(*cpus[i]);
        out = &s.out;
        c = &s;
        break;
      }
      case NetworkStation::Kind::ProcessorSharing: {
        auto& s = sim.make<ProcessorSharingStation>(st.name, st.servers, st.service);
        out = &s.out;
        c = &s;
        break;
      }
      case NetworkStation::Kind::Delay: {
        auto& s = sim.make<DelayStation>(st.name, st.service);
        out = &s.out;
        c = &s;
        break;
      }
    }
    connect(*prev, *c);
    prev = out;
  }
  if (sc.closed)
    connect(*prev, *loop);
  else
    connect(*prev, sim.make<Sink>("sink"));
}

std::optional<sim::MvaResult> solve_network_mva(const NetworkScenario& sc) {
  using sim::MvaStation;
  using sim::MvaStationKind;
  if (!sc.closed) return std::nullopt;
  std::vector<MvaStation> stations;
  for (const auto& st : sc.stations) {
    if (!st.cpu.empty()) return std::nullopt;
    // Product form: FCFS needs exponential service; PS and delay stations take any distribution.
    if (st.kind == NetworkStation::Kind::Fcfs && st.service.kind() != sim::Distribution::Kind::Exponential) return std::nullopt;
    if (st.kind == NetworkStation::Kind::ProcessorSharing && st.servers > 1) return std::nullopt;
    MvaStation m{st.name, MvaStationKind::Queue, 1, {st.service.mean()}};
    if (st.kind == NetworkStation::Kind::Delay) m.kind = MvaStationKind::Delay;
    if (st.kind == NetworkStation::Kind::Fcfs && st.servers > 1) {
      m.kind = MvaStationKind::MultiServer;
      m.servers = st.servers;
    }
    stations.push_back(std::move(m));
  }
  return sim::mva_exact(stations, sc.customers);
}

std::string network_flow_name(const NetworkScenario& sc) { return sc.closed ? "population" : "sink"; }

}  // namespace vqsim::models
