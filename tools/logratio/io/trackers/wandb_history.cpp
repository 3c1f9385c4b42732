#include "wandb_history.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <logratio/core/error.hpp>

#include "../number_parse.hpp"
#include "run_builder.hpp"

namespace logratio_cli::trackers {

/// The column naming runs in a multi-run history table, if any.
namespace {
/// The columns that name a history table's run, the first present counting.
constexpr const char* run_columns[] = {"run_id", "run", "name"};
}  // namespace

std::optional<std::size_t> history_run_column(const text_table& t) {
    for (const char* k : run_columns)
        if (auto c = t.column(k)) return c;
    return std::nullopt;
}

namespace {

bool is_pandas_index_column(const std::string& name) {
    return name.empty() || name.rfind("Unnamed: ", 0) == 0;
}

/// A cell that is a number from its first to its last byte (no spaces, no
/// '+', no missing-value word) into `x`: then cell_double reads the same
/// value (it trims, then parses with the same parse_double); false sends the
/// cell the general way (parse_cell).
inline bool plain_number(std::string_view cell, double& x) {
    const char c = cell[0];
    if (!((c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
    return parse_double(cell.data(), cell.data() + cell.size(), x) == cell.data() + cell.size();
}

}  // namespace

bool wandb_history_column_kept(const std::string& column, const void* keys) {
    if (column == "_step" || column == "_timestamp") return true;
    for (const char* r : run_columns)
        if (column == r) return true;
    return static_cast<const key_filter*>(keys)->keeps(column);
}

history_set read_wandb_history_table(const text_table& t, const key_filter& keys) {
    using logratio::detail::concat;
    const auto sc = t.column("_step");
    if (!sc) throw logratio::format_error(t.path + ": a W&B history table needs a '_step' column (columns: " +
                                          t.column_list() + ")");
    const auto rc = history_run_column(t), tc = t.column("_timestamp");
    std::vector<std::size_t> metric_cols;
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        const auto& n = t.columns[c];
        if (c == *sc || (rc && c == *rc) || n == "_runtime" || n == "_timestamp" || is_pandas_index_column(n)) continue;
        metric_cols.push_back(c);
    }
    std::vector<const std::string*> unparsed;  // metric columns parse_csv dropped (wandb_history_columns)
    for (const auto& n : t.dropped)
        if (n != "_runtime" && !is_pandas_index_column(n)) unparsed.push_back(&n);
    std::map<std::string, run_builder> runs;
    std::map<std::string, std::vector<run_builder::series*>> series_of;  // per run, per metric column read
    std::set<std::string> skipped;
    const auto place = [&](std::size_t row) { return concat(t.path, ": line ", t.line[row]); };
    const std::string stem = rc ? std::string() : file_stem(t.path);
    // A run met first: its builder, the series of each metric column it reads
    const auto new_run = [&](const std::string& n) {
        const auto r = runs.emplace(n, run_builder(n, t.path, "_step", &keys)).first;
        auto& cache = series_of[n];
        for (const auto c : metric_cols)
            cache.push_back(r->second.wants(t.columns[c]) ? &r->second.of(t.columns[c]) : nullptr);
        for (const auto* u : unparsed) r->second.wants(*u);  // false: noted as unread
        // one run: at most a point per row in each series
        const std::size_t wanted = cache.size() - static_cast<std::size_t>(std::count(cache.begin(), cache.end(), nullptr));
        if (!rc && t.row_count() * wanted <= run_builder::reserve_limit)
            for (auto* s : cache)
                if (s) run_builder::reserve(*s, t.row_count());
        return r;
    };
    auto it = runs.end();
    const std::vector<run_builder::series*>* run_series = nullptr;  // it's (series_of)
    for (std::size_t i = 0; i < t.row_count(); ++i) {
        const double s = parse_cell(t, i, *sc);
        if (std::isnan(s)) throw logratio::format_error(place(i) + ": empty '_step' cell");
        const std::int64_t step = integer_step(s, t.path, t.line[i], "_step");
        // the run of the row: the previous row's unless a run column names another
        const std::string_view name = rc ? t.cell(i, *rc) : std::string_view(stem);
        if (name.empty()) throw logratio::format_error(place(i) + ": empty '" + t.columns[*rc] + "' cell");
        if (it == runs.end() || it->first != name) {
            it = runs.find(std::string(name));
            if (it == runs.end()) it = new_run(std::string(name));
            run_series = &series_of.find(it->first)->second;
        }
        const auto& series = *run_series;
        const double wall = tc ? parse_cell(t, i, *tc) : std::nan("");
        const std::uint64_t where = it->second.where_of(t.path, t.line[i]);
        const std::string_view* const row = &t.cells[i * t.columns.size()];
        for (std::size_t k = 0; k < metric_cols.size(); ++k) {
            if (!series[k]) continue;  // not read (key_filter)
            const std::size_t c = metric_cols[k];
            const std::string_view cell = row[c];
            if (cell.empty()) continue;  // not logged by this event
            double x = 0;
            if (plain_number(cell, x)) {  // most cells: what parse_cell would read, without its trimming
                it->second.add_at(*series[k], step, x, wall, where);
                continue;
            }
            const auto b = cell.find_first_not_of(" \t");
            if (b == std::string_view::npos) continue;  // not logged by this event
            if (cell[b] == '{' || cell[b] == '[') {
                skipped.insert(t.columns[c]);
                continue;
            }
            it->second.add_at(*series[k], step, parse_cell(t, i, c), wall, where);
        }
    }
    history_set out;
    out.reader = rc ? "W&B multi-run history table" : "W&B history table";
    out.input = t.path;
    if (runs.empty()) throw logratio::format_error(t.path + ": no rows");
    out.runs = finish_runs(runs);
    if (!rc) out.runs[0].group = parent_dir_name(t.path);
    if (!skipped.empty()) {
        std::string keys;
        for (const auto& k : skipped) keys += (keys.empty() ? "" : ", ") + k;
        out.notes.push_back(t.path + ": skipped nested values (tables, histograms, media) of: " + keys);
    }
    return out;
}

}  // namespace logratio_cli::trackers
