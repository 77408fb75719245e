// `vqsim import`: reads fio results in any format and version and prints the normalized result
// (vqsim JSON), fio 3.x JSON, or fio-like text. Malformed input exits 2 with file, line and why.
#include <boost/program_options.hpp>
#include <iostream>

#include "calibration/fio/parse.h"
#include "calibration/fio/writer.h"
#include "cli/commands.h"
#include "cli/common.h"

namespace vqsim::cli {
namespace po = boost::program_options;

int import_main(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string format = "json";
  bool all_documents = false;
  po::options_description opts(
      "usage: vqsim import FILE... [options]\n\n"
      "Reads fio output of any version in any format fio writes: JSON (fio 2.x with µs keys and\n"
      "padded percentiles, 3.x with ns keys, json+ bins, several documents from --status-interval,\n"
      "warnings before the first '{', client/server client_stats), normal text (2.x 'read : io=…'\n"
      "and 3.x 'read: IOPS=…', also pasted in an e-mail with '> ' quoting and wrapped lines), and\n"
      "terse v2-v5. Says which format and version it detected, then prints the result.\n\n"
      "  --format json      vqsim's normalized schema: units in the key names (default)\n"
      "  --format fio-json  fio 3.x JSON, readable by fio tooling (fio-plot, pbench)\n"
      "  --format text      fio 3.x-style text for people\n\n"
      "Examples:\n"
      "  vqsim import calibration/data/seeds/000-virtio-blk.fio.txt\n"
      "  vqsim import run.json --format text\n"
      "  vqsim import old-fio2.txt --format fio-json > converted.json\n\n"
      "Several files, or several runs in one file (two fio outputs pasted one after the other into\n"
      "an e-mail): one result each, as a JSON array (json, fio-json) or one after the other (text).\n"
      "Exit status 2 on unreadable or malformed input, with the file, line and reason.\n\n"
      "Options");
  opts.add_options()("help,h", "show this help")("file", po::value(&files), "fio output file(s)")(
      "format", po::value(&format)->default_value("json"), "json | fio-json | text")(
      "all-documents", po::bool_switch(&all_documents),
      "fio-json/text: every --status-interval document, not only the final one");
  po::positional_options_description pos;
  pos.add("file", -1);
  po::variables_map vm;
  if (!parse_options(args, opts, vm, &pos)) return 0;
  if (files.empty()) throw UsageError("vqsim import needs at least one fio output file, e.g. vqsim import result.json");
  if (format != "json" && format != "fio-json" && format != "text")
    throw UsageError("--format must be json, fio-json or text" + did_you_mean(format, {"json", "fio-json", "text"}));

  std::vector<fio::ParsedFile> parsed;
  for (const auto& f : files) {
    try {
      parsed.push_back(fio::parse_fio_file(f));
    } catch (const fio::ParseError& e) {
      throw UsageError(e.what());
    }
    std::cerr << "vqsim import: " << f << ": " << parsed.back().detected << "\n";
  }
  // Each run's final document (a file may hold several runs), or every document.
  auto documents = [&](const fio::ParsedFile& p) {
    std::vector<const fio::FioResult*> out;
    if (all_documents)
      for (const auto& d : p.documents) out.push_back(&d);
    else
      out = p.final_results();
    return out;
  };
  if (format == "text") {
    for (const auto& p : parsed)
      for (const auto* d : documents(p)) std::cout << fio::to_fio_text(*d);
    return 0;
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  const fio::FioResult* only = nullptr;  // the one fio-json document, printed fio's way
  for (const auto& p : parsed) {
    if (format == "json") {
      for (std::size_t run = 0; run < p.run_count(); ++run) all.push_back(fio::to_normalized_json(p, run));
    } else {
      for (const auto* d : documents(p)) {
        all.push_back(fio::to_fio_json(*d));
        only = d;
      }
    }
  }
  if (all.size() == 1 && format == "fio-json")
    std::cout << fio::to_fio_json_text(*only);
  else if (all.size() == 1)
    std::cout << all[0].dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else
    std::cout << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // invalid UTF-8 in fio names: U+FFFD
  return 0;
}

}  // namespace vqsim::cli
