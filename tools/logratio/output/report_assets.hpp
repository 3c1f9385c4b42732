#pragma once
// The files the HTML report inlines (one file, nothing requested): uPlot
// (vendor/uplot, its version in vendor/uplot/VERSION) and the report's own
// script and style sheet. Their text is compiled into the binary by
// vendor/embed_assets.cmake (tools/CMakeLists.txt); nothing is read at run time.
namespace logratio_cli::assets {

extern const char* const uplot_js;       ///< vendor/uplot/uPlot.iife.min.js
extern const char* const uplot_css;      ///< vendor/uplot/uPlot.min.css
extern const char* const uplot_version;  ///< vendor/uplot/VERSION ("1.6.32\n")
extern const char* const report_js;      ///< report_page.js: charts, legend, table sort/filter
extern const char* const report_css;     ///< report_page.css

}  // namespace logratio_cli::assets
