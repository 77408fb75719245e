#include "cli/common.h"

#include <iostream>

namespace vqsim::cli {
namespace po = boost::program_options;

bool parse_options(const std::vector<std::string>& args, const po::options_description& opts, po::variables_map& vm,
                   const po::positional_options_description* positional) {
  try {
    po::command_line_parser parser(args);
    parser.options(opts);
    if (positional != nullptr) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << opts << '\n';
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(std::string(e.what()) + " (see --help)");
  }
  return true;
}

}  // namespace vqsim::cli
