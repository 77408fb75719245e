#include "models/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace vqsim::models {
namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

// Splits "12.5us" into 12.5 and "us"; throws when there is no number.
std::pair<double, std::string> split_number(std::string_view text, const char* what) {
  std::string s(text);
  s.erase(std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); }), s.end());
  double value = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || !std::isfinite(value) || value < 0)
    throw std::invalid_argument(std::string("expected ") + what + ", got \"" + std::string(text) + "\"");
  return {value, std::string(ptr, end)};
}

double scaled(std::string_view text, const char* what, std::initializer_list<Unit> units, bool unit_required) {
  const auto [value, unit] = split_number(text, what);
  if (unit.empty() && !unit_required) return value;
  for (const auto& u : units)
    if (unit == u.suffix) return value * u.factor;
  throw std::invalid_argument(std::string("expected ") + what + ", got \"" + std::string(text) + "\"");
}

// "a, b, c": the known words listed in an error message.
std::string join(const std::vector<std::string>& words) {
  std::string list;
  for (const auto& w : words) list += (list.empty() ? "" : ", ") + w;
  return list;
}

}  // namespace

double parse_duration_ns_real(std::string_view text) {
  return scaled(text, "a duration with a unit such as \"250ns\", \"12us\", \"1.5ms\", \"10s\", \"2min\" or \"1h\"",
                {{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"min", 60e9}, {"h", 3600e9}}, true);
}

sim::time_ns parse_duration_ns(std::string_view text) {
  const double ns = parse_duration_ns_real(text);
  if (ns > 9.2e18) throw std::invalid_argument("duration \"" + std::string(text) + "\" is too long");
  return static_cast<sim::time_ns>(std::llround(ns));
}

namespace {

// The number as written ("4", "1.5"), for messages.
std::string number_text(double v) {
  std::ostringstream o;
  o.precision(15);
  o << v;
  return o.str();
}

// A unit vqsim does not take but fio's size syntax does ("KB", "kb", "kib", "Ki"): how fio,
// with its default kb_base=1024, reads `value` with it, against what the standards make of it,
// and what to write instead. Empty when `unit` is not a fio size unit either. fio (parse.c,
// __get_mult_bytes) multiplies by kb_base^n for k/m/g/t(/p) with or without a "b" or "i", and by
// the other base (1000^n) for the three-letter "kib"/"mib"/... forms, in any case.
std::string fio_unit_advice(std::string_view text, double value, const std::string& unit) {
  std::string lower;
  for (char c : unit) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  static constexpr std::string_view kPrefixes = "kmgt";
  const std::size_t power = lower.empty() ? std::string_view::npos : kPrefixes.find(lower[0]);
  if (power == std::string_view::npos) return "";
  const std::string rest = lower.substr(1);
  if (!(rest.empty() || rest == "b" || rest == "i" || rest == "ib")) return "";
  const double iec = value * std::pow(1024.0, static_cast<double>(power + 1));
  const double si = value * std::pow(1000.0, static_cast<double>(power + 1));
  const double fio = rest == "ib" ? si : iec;
  static constexpr const char* kIec[] = {"KiB", "MiB", "GiB", "TiB"};
  const std::string n = number_text(value);
  std::string out = "\"";
  out.append(text);
  out.append("\" ");
  // A spelling whose readings agree ("4Ki") is merely not a standard symbol.
  out.append(rest == "i" ? "is not a unit vqsim takes; " : "is ambiguous: ");
  out.append("fio, with its default kb_base=1024, reads it as ").append(number_text(fio)).append(" bytes");
  if (rest != "i") out.append(fio == iec ? ", SI as " + number_text(si) : ", IEC as " + number_text(iec));
  out.append("; in a scenario write \"").append(n).append(kIec[power]).append("\" (or ").append(number_text(iec));
  out.append(") for ")
      .append(number_text(iec))
      .append(" bytes, ")
      .append(number_text(si))
      .append(" for ")
      .append(number_text(si));
  return out;
}

}  // namespace

// Scenario sizes are IEC (KiB = 1024 bytes) with fio's one-letter shorthands (k = 1024, as fio
// reads it by default) and the SI symbols kB/MB/GB/TB (powers of 1000: bandwidths are stated
// that way, by disk vendors and in fio's own output). Spellings whose meaning depends on who
// reads them are refused with both readings: fio reads "4KB" as 4096 bytes and "4KiB" as 4000.
std::uint64_t parse_size_bytes(std::string_view text) {
  static constexpr const char* kWhat = "a size such as \"512\", \"4k\", \"4KiB\", \"1MiB\" or \"1MB\"";
  static constexpr Unit kUnits[] = {{"B", 1},
                                    {"k", 1024.0},
                                    {"K", 1024.0},
                                    {"KiB", 1024.0},
                                    {"m", 1048576.0},
                                    {"M", 1048576.0},
                                    {"MiB", 1048576.0},
                                    {"g", 1073741824.0},
                                    {"G", 1073741824.0},
                                    {"GiB", 1073741824.0},
                                    {"t", 1099511627776.0},
                                    {"T", 1099511627776.0},
                                    {"TiB", 1099511627776.0},
                                    {"kB", 1e3},
                                    {"MB", 1e6},
                                    {"GB", 1e9},
                                    {"TB", 1e12}};
  const auto [value, unit] = split_number(text, kWhat);
  double bytes = value;
  if (!unit.empty()) {
    const Unit* found = nullptr;
    for (const Unit& u : kUnits)
      if (unit == u.suffix) found = &u;
    if (!found) {
      const std::string advice = fio_unit_advice(text, value, unit);
      if (!advice.empty()) throw std::invalid_argument(advice);
      throw std::invalid_argument(std::string("expected ") + kWhat + ", got \"" + std::string(text) + "\"");
    }
    bytes = value * found->factor;
  }
  if (bytes != std::floor(bytes) || bytes > 1.8e19)
    throw std::invalid_argument("size \"" + std::string(text) + "\" is not a whole number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

double parse_frequency_hz(std::string_view text) {
  return scaled(text, "a frequency such as \"3.2GHz\" or \"800MHz\"", {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}},
                true);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

namespace {
// "a.b.c" -> "c".
std::string last_part(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}
}  // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  if (!best.empty()) return " (did you mean '" + best + "'?)";
  // A key written without its section ("iothreads" for "host.iothreads"), or with the wrong
  // one ("guest.iothreads"): match the last parts, and name every key that shares the best one.
  const std::string tail = last_part(word);
  std::vector<std::string> near;
  const std::size_t limit = std::max<std::size_t>(2, tail.size() / 3) + 1;
  best_distance = limit;
  for (const auto& c : candidates) {
    if (c.find('.') == std::string::npos) continue;
    const std::size_t d = edit_distance(tail, last_part(c));
    if (d < best_distance) {
      best_distance = d;
      near.clear();
    }
    if (d == best_distance && d < limit && std::find(near.begin(), near.end(), c) == near.end()) near.push_back(c);
  }
  if (near.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < near.size(); ++i) list += (i == 0 ? "'" : i + 1 == near.size() ? " or '" : ", '") + near[i] + "'";
  return " (did you mean " + list + "?)";
}

ConfigError::ConfigError(const std::vector<std::string>& messages)
    : std::runtime_error([&] {
        std::string text;
        for (const auto& m : messages) text += (text.empty() ? "" : "\n") + m;
        return text;
      }()) {}

std::vector<std::string> ConfigError::messages() const {
  std::vector<std::string> out;
  std::istringstream in(what());
  for (std::string line; std::getline(in, line);) out.push_back(line);
  if (out.empty()) out.emplace_back(what());
  return out;
}

void ConfigReader::fail(const toml::node* node, const std::string& key, const std::string& message) const {
  std::ostringstream out;
  out << path_;
  if (node != nullptr && node->source().begin.line > 0)
    out << ':' << node->source().begin.line;
  else if (node != nullptr)
    out << " (from --set)";
  out << ": " << key << ": " << message;
  throw ConfigError(out.str());
}

void ConfigReader::check_keys(const toml::table& table, const std::string& prefix,
                              const std::vector<std::string>& allowed) const {
  for (const auto& [k, v] : table) {
    const std::string key(k.str());
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    fail(&v, prefix.empty() ? key : prefix + "." + key,
         "unknown key" + did_you_mean(key, allowed) + "; known here: " + join(allowed));
  }
}

std::int64_t ConfigReader::integer(const toml::table& t, const std::string& prefix, const std::string& key, std::int64_t fallback,
                                   std::int64_t min, std::int64_t max) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return fallback;
  const std::string full = prefix.empty() ? key : prefix + "." + key;
  const auto v = n->value<std::int64_t>();
  if (!v || !n->is_integer()) fail(n, full, "expected an integer");
  if (*v < min || *v > max)
    fail(n, full,
         "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + std::to_string(*v));
  return *v;
}

std::string ConfigReader::string(const toml::table& t, const std::string& prefix, const std::string& key,
                                 const std::string& fallback, const std::vector<std::string>& choices) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return fallback;
  const std::string full = prefix.empty() ? key : prefix + "." + key;
  const auto v = n->value<std::string>();
  if (!v || !n->is_string()) fail(n, full, "expected a string");
  if (!choices.empty() && std::find(choices.begin(), choices.end(), *v) == choices.end()) {
    fail(n, full, "\"" + *v + "\" is not one of: " + join(choices) + did_you_mean(*v, choices));
  }
  return *v;
}

double ConfigReader::duration_value(const toml::node& node, const std::string& key) const {
  const auto s = node.value<std::string>();
  if (!s || !node.is_string()) fail(&node, key, "expected a duration string with a unit, such as \"12us\"");
  try {
    return parse_duration_ns_real(*s);
  } catch (const std::invalid_argument& e) {
    fail(&node, key, e.what());
  }
}

sim::time_ns ConfigReader::duration(const toml::table& t, const std::string& prefix, const std::string& key,
                                    sim::time_ns fallback) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return fallback;
  return static_cast<sim::time_ns>(std::llround(duration_value(*n, prefix.empty() ? key : prefix + "." + key)));
}

sim::Distribution ConfigReader::distribution(const toml::node& node, const std::string& key) const {
  if (node.is_string()) return sim::Distribution::deterministic(duration_value(node, key));
  const toml::table* t = node.as_table();
  if (t == nullptr)
    fail(&node, key, "expected a duration such as \"10us\" or a table such as { dist = \"exponential\", mean = \"10us\" }");
  const std::vector<std::string> kinds = {"deterministic", "exponential", "uniform",          "normal",   "lognormal",
                                          "gamma",         "erlang",      "hyperexponential", "empirical"};
  const std::string kind = string(*t, key, "dist", "", kinds);
  if (kind.empty())
    fail(&node, key,
         "missing 'dist' (one of deterministic, exponential, uniform, normal, lognormal, gamma, erlang, hyperexponential, "
         "empirical)");
  auto need = [&](const char* field) -> double {
    const toml::node* n = t->get(field);
    if (n == nullptr) fail(&node, key, std::string("a ") + kind + " distribution needs '" + field + "'");
    return duration_value(*n, key + "." + field);
  };
  auto number = [&](const char* field) -> double {
    const toml::node* n = t->get(field);
    if (n == nullptr) fail(&node, key, std::string("a ") + kind + " distribution needs '" + field + "'");
    const auto v = n->value<double>();
    if (!v || !std::isfinite(*v)) fail(n, key + "." + field, "expected a number");
    return *v;
  };
  try {
    if (kind == "deterministic") {
      check_keys(*t, key, {"dist", "value"});
      return sim::Distribution::deterministic(need("value"));
    }
    if (kind == "exponential") {
      check_keys(*t, key, {"dist", "mean"});
      return sim::Distribution::exponential(need("mean"));
    }
    if (kind == "uniform") {
      check_keys(*t, key, {"dist", "low", "high"});
      return sim::Distribution::uniform(need("low"), need("high"));
    }
    if (kind == "normal") {
      check_keys(*t, key, {"dist", "mean", "stddev"});
      return sim::Distribution::normal(need("mean"), need("stddev"));
    }
    if (kind == "lognormal") {
      check_keys(*t, key, {"dist", "median", "sigma", "mean", "cv"});
      if (t->contains("median")) return sim::Distribution::lognormal(need("median"), number("sigma"));
      return sim::Distribution::lognormal_mean_cv(need("mean"), number("cv"));
    }
    if (kind == "gamma") {
      check_keys(*t, key, {"dist", "shape", "mean"});
      const double shape = number("shape");
      return sim::Distribution::gamma(shape, need("mean") / shape);
    }
    if (kind == "erlang") {
      check_keys(*t, key, {"dist", "k", "mean"});
      const double k = number("k");
      if (k != std::floor(k) || k < 1 || k > 1e6) fail(t->get("k"), key + ".k", "expected a whole number of phases >= 1");
      return sim::Distribution::erlang(static_cast<int>(k), need("mean"));
    }
    if (kind == "hyperexponential") {
      check_keys(*t, key, {"dist", "mean", "scv"});
      return sim::Distribution::hyperexponential_balanced(need("mean"), number("scv"));
    }
    // empirical: samples = ["10us", ...] or percentiles = { "50" = "10us", "99" = "80us" }
    check_keys(*t, key, {"dist", "samples", "percentiles"});
    if (const toml::array* a = t->get_as<toml::array>("samples")) {
      std::vector<double> samples;
      for (std::size_t i = 0; i < a->size(); ++i)
        samples.push_back(duration_value(*a->get(i), key + ".samples[" + std::to_string(i) + "]"));
      return sim::Distribution::empirical_samples(std::move(samples));
    }
    if (const toml::table* p = t->get_as<toml::table>("percentiles")) {
      std::vector<std::pair<double, double>> points;
      for (const auto& [pk, pv] : *p) {
        double percent = 0;
        const std::string pks(pk.str());
        const auto [ptr, ec] = std::from_chars(pks.data(), pks.data() + pks.size(), percent);
        if (ec != std::errc() || ptr != pks.data() + pks.size())
          fail(&pv, key + ".percentiles." + pks, "the key must be a percentile such as \"99.9\"");
        points.emplace_back(percent, duration_value(pv, key + ".percentiles." + pks));
      }
      return sim::Distribution::empirical_percentiles(std::move(points));
    }
    fail(&node, key, "an empirical distribution needs 'samples' or 'percentiles'");
  } catch (const std::invalid_argument& e) {
    fail(&node, key, e.what());
  }
}

std::string missing_file(const std::string& p) {
  std::error_code ec;
  if (std::filesystem::exists(p, ec)) return "";
  if (ec) return "cannot look up " + p + ": " + ec.message();
  return "no such file " + p;
}

toml::table parse_toml_file(const std::string& path, const char* what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  (void)ec;
  if (!fs::exists(st)) throw ConfigError(path + ": cannot read: no such file; expected " + what + " (TOML)");
  if (fs::is_directory(st)) throw ConfigError(path + ": cannot read: is a directory; expected " + what + " (a TOML file)");
  constexpr std::size_t kMaxBytes = 64u << 20;
  constexpr std::size_t kMaxLine = 1u << 20;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read: permission denied or not a file; expected " + what + " (TOML)");
  std::string text;
  char buf[1 << 16];
  while (text.size() <= kMaxBytes && (in.read(buf, sizeof buf) || in.gcount() > 0))
    text.append(buf, static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw ConfigError(path + ": read error; expected " + what + " (TOML)");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ConfigError(path + ": empty file; expected " + what + " (TOML)");
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos)
    throw ConfigError(path + ":" +
                      std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n')) +
                      ": binary data (a NUL byte); expected " + what + " (TOML)");
  std::size_t line = 1, start = 0;
  for (;;) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t len = (nl == std::string::npos ? text.size() : nl) - start;
    if (len > kMaxLine)
      throw ConfigError(path + ":" + std::to_string(line) + ": a line of more than " + std::to_string(kMaxLine) +
                        " bytes; expected " + what + " (TOML) with lines of at most " + std::to_string(kMaxLine) + " bytes");
    if (nl == std::string::npos) break;
    start = nl + 1;
    ++line;
  }
  if (text.size() > kMaxBytes)
    throw ConfigError(path + ": more than " + std::to_string(kMaxBytes) + " bytes; expected " + what + " (TOML) of at most " +
                      std::to_string(kMaxBytes) + " bytes");
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(path + ":" + std::to_string(e.source().begin.line) + ":" + std::to_string(e.source().begin.column) +
                      ": not valid TOML: " + std::string(e.description()) + " (expected " + what + ")");
  }
}

void apply_overrides(toml::table& root, const std::vector<std::string>& overrides) {
  for (const auto& item : overrides) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--set " + item + ": expected key=value, e.g. --set population.customers=16");
    const std::string key = item.substr(0, eq);
    const std::string text = item.substr(eq + 1);
    // Read the value as TOML; a bare word such as 10us becomes a string.
    toml::table holder;
    try {
      holder = toml::parse("v = " + text);
    } catch (const toml::parse_error&) {
      holder.insert_or_assign("v", text);
    }
    toml::table* table = &root;
    std::size_t start = 0;
    for (;;) {
      const auto dot = key.find('.', start);
      const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (part.empty()) throw ConfigError("--set " + item + ": empty part in the key");
      if (dot == std::string::npos) {
        table->insert_or_assign(part, *holder.get("v"));
        break;
      }
      toml::node* next = table->get(part);
      if (next == nullptr) {
        table->insert_or_assign(part, toml::table{});
        next = table->get(part);
      }
      if (toml::array* arr = next->as_array()) {
        // "station.1.servers": the part after an array is an index.
        const auto dot2 = key.find('.', dot + 1);
        const std::string index_text = key.substr(dot + 1, dot2 == std::string::npos ? std::string::npos : dot2 - dot - 1);
        std::size_t index = 0;
        const auto [ptr, ec] = std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
        if (ec != std::errc() || ptr != index_text.data() + index_text.size() || index >= arr->size() ||
            dot2 == std::string::npos)
          throw ConfigError("--set " + item + ": '" + part + "' is a list; name an entry by its index, 0 to " +
                            std::to_string(arr->size() - 1) + ", then a key");
        next = arr->get(index);
        start = dot2 + 1;
      } else {
        start = dot + 1;
      }
      table = next->as_table();
      if (table == nullptr) throw ConfigError("--set " + item + ": '" + part + "' is a value, not a table");
    }
  }
}

}  // namespace vqsim::models
