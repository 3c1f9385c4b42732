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

std::vector<std::pair<std::string, std::optional<double>>> dump_columns(const dump_panel& d, bool split) {
    auto cols = logratio::panel_entries(d.panel);
    if (!split) return cols;
    const std::pair<const char*, const logratio::mismatch_part*> parts[] = {
        {"total", d.split ? &d.split->total : nullptr},
        {"numeric", d.split ? &d.split->numeric : nullptr},
        {"lag", d.split ? &d.split->lag : nullptr}};
    for (const auto& [name, m] : parts) {
        const std::pair<const char*, std::optional<double>> vals[] = {
            {"delta_mean", m ? std::optional<double>(m->delta_mean) : std::nullopt},
            {"delta_abs_mean", m ? std::optional<double>(m->delta_abs_mean) : std::nullopt},
            {"delta_std", m ? std::optional<double>(m->delta_std) : std::nullopt},
            {"kl_k3", m ? std::optional<double>(m->kl_k3) : std::nullopt}};
        for (const auto& [metric, v] : vals) cols.emplace_back(std::string(name) + "_" + metric, v);
    }
    return cols;
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
