#include "models/sweep.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <toml++/toml.h>

#include "models/config.h"
#include "models/io_metrics.h"
#include "models/scenario.h"

namespace vqsim::models {

namespace {

std::string where(const std::string& path, const toml::node& n, const std::string& key) {
  std::string w = path;
  if (n.source().begin.line > 0) w += ":" + std::to_string(n.source().begin.line);
  return w + ": " + key;
}

[[noreturn]] void fail(const std::string& path, const toml::node& n, const std::string& key, const std::string& msg) {
  throw ConfigError(where(path, n, key) + ": " + msg);
}

// A TOML value as the text --set would take ("4", "true", "\"randread\"").
std::string value_text(const std::string& path, const toml::node& n, const std::string& key) {
  if (auto i = n.value_exact<std::int64_t>()) return std::to_string(*i);
  if (auto d = n.value_exact<double>()) {
    std::ostringstream os;
    os.precision(17);
    os << *d;
    return os.str();
  }
  if (auto b = n.value_exact<bool>()) return *b ? "true" : "false";
  if (auto s = n.value_exact<std::string>()) return "\"" + *s + "\"";
  fail(path, n, key, "expected a number, a string or a boolean");
}

std::string display(const std::string& toml_text) {
  if (toml_text.size() >= 2 && toml_text.front() == '"') return toml_text.substr(1, toml_text.size() - 2);
  return toml_text;
}

void check_keys(const std::string& path, const toml::table& t, const std::string& what, const std::vector<std::string>& allowed) {
  for (const auto& [k, n] : t) {
    const std::string key(k.str());
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == key;
    if (!ok) fail(path, n, what.empty() ? key : what + "." + key, "unknown key" + did_you_mean(key, allowed));
  }
}

std::vector<std::string> range_values(const std::string& path, const toml::table& r, const std::string& key) {
  check_keys(path, r, key + ".range", {"from", "to", "step", "log2"});
  auto num = [&](const char* name) -> double {
    const toml::node* n = r.get(name);
    if (!n) fail(path, r, key + ".range", std::string("needs '") + name + "'");
    if (auto i = n->value_exact<std::int64_t>()) return static_cast<double>(*i);
    if (auto d = n->value_exact<double>()) return *d;
    fail(path, *n, key + ".range." + name, "expected a number");
  };
  const double from = num("from"), to = num("to");
  const bool log2 = r.get("log2") && r.get("log2")->value_or(false);
  const bool integer =
      r.get("from")->is_integer() && r.get("to")->is_integer() && (!r.get("step") || r.get("step")->is_integer());
  std::vector<std::string> out;
  auto push = [&](double v) {
    if (integer)
      out.push_back(std::to_string(static_cast<long long>(std::llround(v))));
    else {
      std::ostringstream os;
      os.precision(12);
      os << v;
      out.push_back(os.str());
    }
  };
  if (log2) {
    if (from <= 0 || to < from) fail(path, r, key + ".range", "log2 needs 0 < from <= to");
    for (double v = from; v <= to * (1 + 1e-12); v *= 2) push(v);
  } else {
    const double step = r.get("step") ? num("step") : 1.0;
    if (!(step > 0) || to < from) fail(path, r, key + ".range", "needs from <= to and step > 0");
    const double n = std::floor((to - from) / step + 1e-9);
    if (n > 100000) fail(path, r, key + ".range", "more than 100000 values");
    for (double i = 0; i <= n; ++i) push(from + i * step);
  }
  return out;
}

std::string fnv_hex(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

std::vector<std::string> SweepPoint::overrides() const {
  std::vector<std::string> o;
  for (const auto& [k, v] : settings) o.push_back(k + "=" + v);
  return o;
}

SweepSpec load_sweep(const std::string& path, const std::vector<std::string>& extra_set) {
  toml::table t = parse_toml_file(path, "a sweep spec");
  check_keys(path, t, "", {"scenario", "description", "set", "axis", "exclude", "metrics", "replications", "ios", "seed"});
  SweepSpec spec;
  spec.path = path;
  const toml::node* sc = t.get("scenario");
  if (!sc || !sc->is_string()) throw ConfigError(path + ": scenario: a sweep needs scenario = \"base.toml\"");
  std::filesystem::path base = *sc->value<std::string>();
  if (base.is_relative()) base = std::filesystem::path(path).parent_path() / base;
  if (const std::string why = missing_file(base.string()); !why.empty()) fail(path, *sc, "scenario", why);
  spec.scenario = base.lexically_normal().string();
  spec.description = t["description"].value_or(std::string());
  if (const toml::node* s = t.get("set")) {
    const toml::table* st = s->as_table();
    if (!st) fail(path, *s, "set", "expected a table of scenario keys, e.g. set = { \"host.aio\" = \"native\" }");
    for (const auto& [k, n] : *st)
      spec.set.push_back(std::string(k.str()) + "=" + value_text(path, n, "set." + std::string(k.str())));
  }
  for (const auto& e : extra_set) spec.set.push_back(e);
  auto integer = [&](const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    const auto v = n->value_exact<std::int64_t>();
    if (!v || *v < lo || *v > hi)
      fail(path, *n, key, "expected a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return *v;
  };
  spec.replications = static_cast<int>(integer("replications", 3, 1, 1000));
  spec.ios = static_cast<std::uint64_t>(integer("ios", 0, 0, 1000000000));
  spec.seed = static_cast<std::uint64_t>(integer("seed", 1, 0, INT64_MAX));
  if (const toml::node* m = t.get("metrics")) {
    const toml::array* a = m->as_array();
    if (!a) fail(path, *m, "metrics", "expected a list such as [\"read.iops\", \"read.clat_p99_us\"]");
    for (const auto& n : *a) {
      const auto name = n.value<std::string>();
      if (!name || !is_io_metric(*name))
        fail(path, n, "metrics",
             "unknown metric " + (name ? "'" + *name + "'" + io_metric_suggestion(*name) : std::string("(not a string)")));
      spec.metrics.push_back(*name);
    }
  } else {
    spec.metrics = io_metric_names();
  }
  const auto keys = io_scenario_parameters();
  std::vector<std::string> known;
  for (const auto& p : keys) known.push_back(p.key);
  auto check_key = [&](const toml::node& n, const std::string& key, const std::string& field) {
    for (const auto& k : known)
      if (k == key || k == declared_key(key)) return;  // vm.<name>.… and backend.<name>.… as their declared keys
    fail(path, n, field, "unknown scenario key '" + key + "'" + did_you_mean(key, known));
  };
  if (const toml::node* ax = t.get("axis")) {
    const toml::array* arr = ax->as_array();
    if (!arr) fail(path, *ax, "axis", "expected [[axis]] tables");
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::table* a = arr->get(i)->as_table();
      const std::string field = "axis[" + std::to_string(i) + "]";
      if (!a) fail(path, *arr->get(i), field, "expected a table");
      check_keys(path, *a, field, {"key", "keys", "values", "range"});
      SweepAxis axis;
      if (const toml::node* k = a->get("key")) {
        if (!k->is_string()) fail(path, *k, field + ".key", "expected a scenario key");
        axis.keys.push_back(*k->value<std::string>());
        check_key(*k, axis.keys.back(), field + ".key");
        if (const toml::node* r = a->get("range")) {
          if (!r->is_table())
            fail(path, *r, field + ".range", "expected { from = .., to = .., step = .. } or { from, to, log2 = true }");
          for (auto& v : range_values(path, *r->as_table(), field)) axis.values.push_back({v});
        } else if (const toml::node* vs = a->get("values")) {
          if (!vs->is_array() || vs->as_array()->empty()) fail(path, *vs, field + ".values", "expected a non-empty list");
          for (const auto& v : *vs->as_array()) axis.values.push_back({value_text(path, v, field + ".values")});
        } else {
          fail(path, *a, field, "needs values = [...] or range = {...}");
        }
      } else if (const toml::node* ks = a->get("keys")) {
        // zip: keys = ["a", "b"], values = [[a1, b1], [a2, b2]]
        if (!ks->is_array() || ks->as_array()->size() < 2)
          fail(path, *ks, field + ".keys", "a zip group needs a list of two or more keys");
        for (const auto& k : *ks->as_array()) {
          if (!k.is_string()) fail(path, k, field + ".keys", "expected scenario keys");
          axis.keys.push_back(*k.value<std::string>());
          check_key(k, axis.keys.back(), field + ".keys");
        }
        const toml::node* vs = a->get("values");
        if (!vs || !vs->is_array() || vs->as_array()->empty())
          fail(path, *a, field + ".values", "a zip group needs values = [[...], ...]");
        for (const auto& row : *vs->as_array()) {
          const toml::array* r = row.as_array();
          if (!r || r->size() != axis.keys.size())
            fail(path, row, field + ".values",
                 "each entry must list " + std::to_string(axis.keys.size()) + " values, one per key");
          std::vector<std::string> step;
          for (const auto& v : *r) step.push_back(value_text(path, v, field + ".values"));
          axis.values.push_back(step);
        }
      } else {
        fail(path, *a, field, "needs key = \"...\" (or keys = [...] for a zip group)");
      }
      spec.axes.push_back(axis);
    }
  }
  if (const toml::node* ex = t.get("exclude")) {
    const toml::array* arr = ex->as_array();
    if (!arr) fail(path, *ex, "exclude", "expected [[exclude]] tables of key = value conditions");
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::table* e = arr->get(i)->as_table();
      if (!e) fail(path, *arr->get(i), "exclude", "expected a table");
      std::vector<std::pair<std::string, std::string>> rule;
      for (const auto& [k, n] : *e) {
        const std::string key(k.str());
        check_key(n, key, "exclude[" + std::to_string(i) + "]." + key);
        rule.emplace_back(key, value_text(path, n, key));
      }
      spec.excludes.push_back(rule);
    }
  }
  // The cartesian product, last axis fastest.
  std::size_t total = 1;
  for (const auto& a : spec.axes) {
    total *= a.values.size();
    if (total > 1000000) throw ConfigError(path + ": the sweep has more than 1,000,000 points");
  }
  std::vector<std::size_t> at(spec.axes.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    SweepPoint p;
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      for (std::size_t k = 0; k < spec.axes[a].keys.size(); ++k)
        p.settings.emplace_back(spec.axes[a].keys[k], spec.axes[a].values[at[a]][k]);
    bool excluded = false;
    for (const auto& rule : spec.excludes) {
      bool all = true;
      for (const auto& [k, v] : rule) {
        bool match = false;
        for (const auto& [pk, pv] : p.settings) match = match || (pk == k && display(pv) == display(v));
        all = all && match;
      }
      excluded = excluded || all;
    }
    if (!excluded) {
      p.index = spec.points.size();
      spec.points.push_back(p);
    }
    for (std::size_t a = spec.axes.size(); a-- > 0;) {
      if (++at[a] < spec.axes[a].values.size()) break;
      at[a] = 0;
    }
  }
  if (spec.points.empty()) throw ConfigError(path + ": every point is excluded; nothing to run");
  // Every point must load: a bad value is reported before any time is spent.
  spec.source = std::make_shared<const ScenarioSource>(spec.scenario);
  for (const auto& p : spec.points) {
    try {
      ScenarioSource point = *spec.source;
      for (const auto& x : spec.set) point.set(x);
      for (const auto& x : p.overrides()) point.set(x);
      (void)point.scenario();
    } catch (const ConfigError& e) {
      std::string s;
      for (const auto& [k, v] : p.settings) s += (s.empty() ? "" : ", ") + k + "=" + display(v);
      throw ConfigError(path + ": point " + std::to_string(p.index) + " (" + s + "): " + e.what());
    }
  }
  // The fingerprint: the resolved inputs, including the base scenario's text.
  std::ostringstream f;
  std::ifstream in(spec.scenario);
  f << in.rdbuf() << "\n";
  for (const auto& s : spec.set) f << "set " << s << "\n";
  for (const auto& p : spec.points)
    for (const auto& [k, v] : p.settings) f << p.index << " " << k << "=" << v << "\n";
  for (const auto& m : spec.metrics) f << "metric " << m << "\n";
  f << spec.replications << " " << spec.ios << " " << spec.seed;
  spec.fingerprint = fnv_hex(f.str());
  return spec;
}

}  // namespace vqsim::models
