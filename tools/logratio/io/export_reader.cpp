#include "export_reader.hpp"

#include <cmath>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include <logratio/core/error.hpp>

#include "sha256.hpp"

namespace logratio_cli {

namespace fs = std::filesystem;

namespace {

nlohmann::json read_manifest(const std::string& dir) {
    const std::string path = (fs::path(dir) / export_manifest_name()).string();
    try {
        return nlohmann::json::parse(read_text_file(path));
    } catch (const nlohmann::json::exception& e) {
        throw logratio::format_error(path + ": not valid JSON: " + e.what());
    }
}

/// One of the export's files, checked against the size and SHA-256 the
/// manifest recorded for it: a file cut short or edited since is an error,
/// never a silently different analysis.
text_table verified_table(const std::string& dir, const std::string& name, const nlohmann::json& man) {
    const std::string path = (fs::path(dir) / name).string();
    const std::string text = read_text_file(path);
    for (const auto& o : man.value("outputs", nlohmann::json::array()))
        if (o.value("path", std::string()) == name) {
            const auto bytes = o.value("bytes", std::size_t{0});
            if (text.size() != bytes || sha256_hex(text) != o.value("sha256", std::string()))
                throw logratio::format_error(path + ": " + std::to_string(text.size()) + " bytes whose SHA-256 is not "
                                             "the one manifest.json records (" + std::to_string(bytes) + " bytes): the "
                                             "export was cut short or changed after it was written");
            return parse_csv(text, path);
        }
    throw logratio::format_error(dir + "/" + export_manifest_name() + ": lists no output '" + name + "'");
}

std::size_t column_of(const text_table& t, const std::string& name) {
    const auto c = t.column(name);
    if (!c) throw logratio::format_error(t.path + ": no column '" + name + "' (columns: " + t.column_list() + ")");
    return *c;
}

/// run_attributes.csv (run, key, value) into each run's attributes.
void read_attributes(const std::string& dir, const nlohmann::json& man,
                     std::map<std::string, std::map<std::string, std::string>>& out) {
    if (!fs::exists(fs::path(dir) / "run_attributes.csv")) return;
    const auto t = verified_table(dir, "run_attributes.csv", man);
    const auto rc = column_of(t, "run"), kc = column_of(t, "key"), vc = column_of(t, "value");
    for (std::size_t i = 0; i < t.row_count(); ++i)
        out[std::string(t.cell(i, rc))][std::string(t.cell(i, kc))] = std::string(t.cell(i, vc));
}

/// The run_input a row's run belongs to in `m`, added in first-seen order.
run_input& run_of(exported_metric& m, std::map<std::string, std::size_t>& at, const std::string& run,
                  const std::string& group) {
    auto w = at.emplace(run, m.runs.size());
    if (w.second) {
        run_input r;
        r.series.run = run;
        r.series.group = group;
        m.runs.push_back(std::move(r));
    }
    return m.runs[w.first->second];
}

/// The series of every metric column, the position and zero-gradient
/// columns, from updates.csv.
void read_updates(const std::string& dir, const nlohmann::json& man, export_data& e) {
    const auto t = verified_table(dir, "updates.csv", man);
    e.rows = t.row_count();
    const auto rc = column_of(t, "run"), gc = column_of(t, "group"), uc = column_of(t, "update");
    const auto pc = t.column("position"), zc = t.column("zero_grad_norm");
    std::map<std::string, std::map<std::string, std::string>> attrs;
    read_attributes(dir, man, attrs);
    for (const auto& name : man.at("analysis").at("metrics")) {
        exported_metric m;
        m.metric = name.get<std::string>();
        const auto mc = column_of(t, m.metric);
        std::map<std::string, std::size_t> at;
        for (std::size_t i = 0; i < t.row_count(); ++i) {
            const std::string run(t.cell(i, rc));
            auto& r = run_of(m, at, run, std::string(t.cell(i, gc)));
            if (t.cell(i, mc).empty()) continue;  // not logged at this update
            const double u = parse_cell(t, i, uc);
            r.series.update.push_back(u);
            r.series.value.push_back(parse_cell(t, i, mc));
            if (pc) r.position.push_back(static_cast<long>(parse_cell(t, i, *pc)));
            if (zc && t.cell(i, *zc) == "1") r.zero_grad_norm.push_back(u);
        }
        for (auto& r : m.runs) r.attributes = attrs[r.series.run];
        e.metrics.push_back(std::move(m));
    }
}

}  // namespace

bool is_export_directory(const std::string& path) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return false;
    const auto man = fs::path(path) / export_manifest_name();
    if (!fs::is_regular_file(man, ec)) return false;
    const std::string text = read_text_file(man.string());
    return text.find(std::string("\"") + export_marker_key() + "\"") != std::string::npos;
}

export_data read_export(const std::string& dir) {
    export_data e;
    e.dir = dir;
    const auto man = read_manifest(dir);
    try {
        const auto& an = man.at("analysis");
        e.metric = an.at("metric").get<std::string>();
        e.compare = an.value("compare", std::string());
        e.min_updates = an.value("min_updates", std::size_t{0});
        for (const auto& x : man.value("left_out", nlohmann::json::array()))
            e.left_out.emplace_back(x.at("run").get<std::string>(), x.at("reason").get<std::string>());
        read_updates(dir, man, e);
    } catch (const nlohmann::json::exception& x) {
        throw logratio::format_error(dir + "/" + export_manifest_name() + ": not a logratio export manifest: " + x.what());
    }
    return e;
}

void export_runs(const export_data& e, const std::vector<std::string>& metrics,
                 std::vector<std::vector<run_input>>& got, std::vector<std::string>& notes) {
    std::string known;
    for (const auto& m : e.metrics) known += (known.empty() ? "" : ", ") + m.metric;
    for (std::size_t i = 0; i < metrics.size(); ++i) {
        const exported_metric* found = nullptr;
        for (const auto& m : e.metrics)
            if (m.metric == metrics[i]) found = &m;
        if (found) got[i] = found->runs;
        else if (i == 0)
            throw logratio::error(e.dir + ": the export has no metric '" + metrics[0] + "' (metrics: " + known + ")");
    }
    notes.push_back(e.dir + ": a logratio export: its runs as they were analysed (--update-offset, --position and "
                            "--min-updates were applied when it was written)");
}

}  // namespace logratio_cli
