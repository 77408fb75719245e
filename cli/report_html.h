// The page `vqsim report` writes: one self-contained HTML file. The numbers are the JSON of the
// command the page reports on, embedded whole in the page; the page's script (cli/report_page.js)
// draws the tables and the Vega-Lite charts from it. Vega, Vega-Lite and vega-embed are inlined
// (third_party/vega), and a Content-Security-Policy forbids every network request, so the page
// opens the same offline as online.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace vqsim::cli {

// A file embedded at build time (cli/embed_assets.cmake): "vega.min.js", "vega-lite.min.js",
// "vega-embed.min.js", "report_page.js", "report_page.css". Empty when there is no such file.
std::string_view report_asset(std::string_view name);

// The page's text: `doc` is {"kind", "title", "source", "data" (the command's JSON), "derived"}
// (cli/report.h); it goes into a <script type="application/json"> with every '<', '>' and '&'
// escaped, so no string in it can end the element.
std::string report_page_html(const nlohmann::ordered_json& doc);

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view text);

}  // namespace vqsim::cli
