#include "panel_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace logratio_cli {

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string number_cell(std::optional<double> v) {
    if (!v || std::isnan(*v)) return "";
    char b[32];
    std::snprintf(b, sizeof b, "%.17g", *v);
    return b;
}

std::string panel_table_csv(const std::vector<dump_panel>& ds) {
    std::string s = "run,group,update,file";
    const bool split = std::any_of(ds.begin(), ds.end(), [](const dump_panel& d) { return d.split.has_value(); });
    for (const auto& k : dump_columns(ds.empty() ? dump_panel{} : ds.front(), split)) s += "," + k.first;
    s += "\n";
    for (const auto& d : ds) {
        s += csv_cell(d.run) + "," + csv_cell(d.group) + "," + number_cell(d.update) + "," + csv_cell(d.path);
        for (const auto& e : dump_columns(d, split)) s += "," + number_cell(e.second);
        s += "\n";
    }
    return s;
}

}  // namespace logratio_cli
