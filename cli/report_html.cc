#include "cli/report_html.h"

#include <stdexcept>

namespace vqsim::cli {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// JSON inside <script>: the HTML parser ends the element at the first "</script" whatever the
// JSON means, so '<' (and '>', '&' for good measure) are written as \u escapes, which JSON reads
// back as the same characters. They can only occur inside strings.
std::string script_safe_json(const nlohmann::ordered_json& j) {
  const std::string text = j.dump();
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

std::string asset(std::string_view name) {
  const std::string_view a = report_asset(name);
  if (a.empty()) throw std::logic_error("report: the embedded file " + std::string(name) + " is missing from this build");
  // The scripts go into <script> elements verbatim: one holding "</script" would end early.
  if (a.find("</script") != std::string_view::npos)
    throw std::logic_error("report: " + std::string(name) + " contains </script and cannot be inlined");
  return std::string(a);
}

}  // namespace

std::string report_page_html(const nlohmann::ordered_json& doc) {
  const std::string title = doc.value("title", std::string("vqsim report"));
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // No request of any kind leaves the page: everything it needs is in it. Vega compiles its
  // expressions with Function() (unsafe-eval); the styles and scripts are inline.
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
       "style-src 'unsafe-inline'; img-src data:; font-src data:\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<meta name=\"generator\" content=\"vqsim " + html_escape(doc.value("generator", std::string())) + "\">\n";
  h += "<title>" + html_escape(title) + "</title>\n";
  h += "<style>\n" + asset("report_page.css") + "</style>\n</head>\n<body>\n";
  h += "<main id=\"report\"><h1>" + html_escape(title) +
       "</h1><noscript><p>This report draws its tables and charts with JavaScript; enable it to see them. The numbers are "
       "in the JSON below (view the page's source).</p></noscript></main>\n";
  // The numbers: the command's JSON, whole. Tests read it back and compare it with the command's
  // --format json.
  h += "<script type=\"application/json\" id=\"vqsim-data\">" + script_safe_json(doc) + "</script>\n";
  // Vega (BSD-3-Clause), Vega-Lite (BSD-3-Clause), vega-embed (BSD-3-Clause): third_party/vega.
  for (const char* name : {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "report_page.js"})
    h += "<script>\n" + asset(name) + "\n</script>\n";
  h += "</body>\n</html>\n";
  return h;
}

}  // namespace vqsim::cli
