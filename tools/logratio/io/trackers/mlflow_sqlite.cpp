#include "mlflow_sqlite.hpp"

#include <sqlite3.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <logratio/core/error.hpp>

#include "run_builder.hpp"
#include "../files_read.hpp"

namespace logratio_cli::trackers {

namespace {

struct sqlite_closer {
    void operator()(sqlite3* d) const { sqlite3_close(d); }
};
struct stmt_closer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using sqlite_db = std::unique_ptr<sqlite3, sqlite_closer>;
using sqlite_stmt = std::unique_ptr<sqlite3_stmt, stmt_closer>;

sqlite_stmt prepare(sqlite3* db, const std::string& path, const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
        const std::string msg = sqlite3_errmsg(db);
        sqlite3_finalize(s);
        throw logratio::format_error(path + ": SQLite: " + msg);
    }
    return sqlite_stmt(s);
}

std::string text_col(sqlite3_stmt* s, int i) {
    const auto* t = sqlite3_column_text(s, i);
    return t ? reinterpret_cast<const char*>(t) : "";
}

int step_row(sqlite3* db, sqlite3_stmt* s, const std::string& path) {
    const int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) throw logratio::format_error(path + ": SQLite: " + sqlite3_errmsg(db));
    return rc;
}

std::set<std::string> table_names(sqlite3* db, const std::string& path) {
    std::set<std::string> out;
    auto s = prepare(db, path, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (step_row(db, s.get(), path) == SQLITE_ROW) out.insert(text_col(s.get(), 0));
    return out;
}

/// run_uuid -> name (tags' mlflow.runName, else runs.name, else the uuid) of
/// the store's live runs; the ids of deleted runs (MLflow's searches hide runs
/// whose lifecycle_stage is 'deleted') into `deleted`.
std::map<std::string, std::string> mlflow_run_names(sqlite3* db, const std::string& path, bool has_tags,
                                                    std::set<std::string>& deleted) {
    std::map<std::string, std::string> names;
    auto s = prepare(db, path, "SELECT run_uuid, name, lifecycle_stage FROM runs");
    while (step_row(db, s.get(), path) == SQLITE_ROW) {
        const std::string id = text_col(s.get(), 0), n = text_col(s.get(), 1);
        if (text_col(s.get(), 2) == "deleted") deleted.insert(id);
        else names[id] = n.empty() ? id : n;
    }
    if (has_tags) {
        auto t = prepare(db, path, "SELECT run_uuid, value FROM tags WHERE key = 'mlflow.runName'");
        while (step_row(db, t.get(), path) == SQLITE_ROW)
            if (!text_col(t.get(), 1).empty() && names.count(text_col(t.get(), 0)))
                names[text_col(t.get(), 0)] = text_col(t.get(), 1);
    }
    return names;
}

/// The metrics query: every row, or (a key_filter) only the wanted keys,
/// which MLflow's primary key (key, timestamp, step, run_uuid, ...) indexes.
sqlite_stmt metrics_query(sqlite3* db, const std::string& path, const key_filter& keys) {
    std::string sql = "SELECT run_uuid, key, value, timestamp, step, is_nan FROM metrics";
    if (!keys.keeps_all()) {
        sql += " WHERE key IN (";
        for (std::size_t i = 0; i < keys.wanted().size(); ++i) sql += i ? ",?" : "?";
        sql += ")";
    }
    sql += " ORDER BY rowid";
    auto s = prepare(db, path, sql.c_str());
    for (std::size_t i = 0; !keys.keeps_all() && i < keys.wanted().size(); ++i)
        sqlite3_bind_text(s.get(), static_cast<int>(i + 1), keys.wanted()[i].c_str(), -1, SQLITE_TRANSIENT);
    return s;
}

/// The (run, key) pairs of the store without their values: MLflow's
/// latest_metrics table (one row per pair) where present.
sqlite_stmt metric_names_query(sqlite3* db, const std::string& path, bool has_latest) {
    return prepare(db, path, has_latest ? "SELECT run_uuid, key FROM latest_metrics"
                                        : "SELECT DISTINCT run_uuid, key FROM metrics");
}

/// A metric value as MLflow's SQL store keeps it: SQL has no infinities, so
/// MLflow writes +-inf as +-DBL_MAX (mlflow/store/tracking/sqlalchemy_store.py,
/// _get_metric_value_details) -- read back as the infinity it was, as the
/// file store gives it.
double stored_metric_value(double v) noexcept {
    constexpr double big = std::numeric_limits<double>::max();
    return v == big ? std::numeric_limits<double>::infinity() : v == -big ? -std::numeric_limits<double>::infinity() : v;
}

/// The params and tags tables (key, value, run_uuid) as the attributes of the
/// runs read; a key both a param and a tag keeps the param's value, with a note.
void read_sqlite_attributes(sqlite3* db, const std::string& path, const std::set<std::string>& tables,
                            const std::map<std::string, std::string>& names, std::map<std::string, run_builder>& runs,
                            std::vector<std::string>& notes) {
    for (const char* table : {"params", "tags"}) {
        if (!tables.count(table)) continue;
        const bool tags = std::string(table) == "tags";
        auto s = prepare(db, path, tags ? "SELECT run_uuid, key, value FROM tags ORDER BY rowid"
                                        : "SELECT run_uuid, key, value FROM params ORDER BY rowid");
        while (step_row(db, s.get(), path) == SQLITE_ROW) {
            const auto n = names.find(text_col(s.get(), 0));
            const auto r = n == names.end() ? runs.end() : runs.find(n->second);
            if (r == runs.end()) continue;
            auto& attributes = r->second.run().attributes;
            const std::string key = text_col(s.get(), 1);
            const bool added = attributes.emplace(key, text_col(s.get(), 2)).second;
            if (!added && tags)
                notes.push_back(path + ": run " + n->first + ": '" + key + "' is both a param and a tag: the param's value kept");
        }
    }
}

}  // namespace

history_set read_mlflow_sqlite(const std::string& path, const key_filter& keys) {
    // SQLite opens a database by its name (and resolves it), so the
    // in-memory copy of a piped input (files_read.hpp) is not one it takes
    if (openable_path(path) != path)
        throw logratio::error(path + ": an MLflow SQLite database read from a pipe: SQLite opens files by name; "
                              "save it to a file and give that");
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    sqlite_db db(raw);
    if (rc != SQLITE_OK)
        throw logratio::error(path + ": cannot open as SQLite: " + (raw ? sqlite3_errmsg(raw) : "out of memory"));
    note_file_read(path);
    const auto tables = table_names(db.get(), path);
    if (!tables.count("metrics") || !tables.count("runs")) {
        std::string list;
        for (const auto& t : tables) list += (list.empty() ? "" : ", ") + t;
        throw logratio::format_error(path + ": an SQLite database without MLflow's tables 'metrics' and 'runs' (tables: " +
                                     (list.empty() ? std::string("none") : list) + "); give an MLflow tracking database");
    }
    history_set out;
    std::set<std::string> deleted;
    // two runs with one name never merge: each gets its id in its name (only
    // runs with metrics count: a launch that crashed before logging does not)
    auto live = mlflow_run_names(db.get(), path, tables.count("tags") > 0, deleted);
    std::set<std::string> with_metrics;
    auto m = prepare(db.get(), path, tables.count("latest_metrics") ? "SELECT DISTINCT run_uuid FROM latest_metrics"
                                                                    : "SELECT DISTINCT run_uuid FROM metrics");
    while (step_row(db.get(), m.get(), path) == SQLITE_ROW) with_metrics.insert(text_col(m.get(), 0));
    for (auto it = live.begin(); it != live.end();) it = with_metrics.count(it->first) ? std::next(it) : live.erase(it);
    const auto names = unique_run_names(live, path, out.notes);
    std::map<std::string, run_builder> runs;
    const auto builder = [&](const std::string& uuid) -> run_builder& {
        auto n = names.find(uuid);
        const std::string name = n == names.end() ? uuid : n->second;
        auto it = runs.find(name);
        if (it == runs.end()) {
            it = runs.emplace(name, run_builder(name, path + " run " + uuid, "MLflow step", &keys)).first;
            it->second.run().id = uuid;
            it->second.keep_latest_by_time();
        }
        return it->second;
    };
    if (!keys.keeps_all()) {  // the names of the metrics not read
        auto k = metric_names_query(db.get(), path, tables.count("latest_metrics") > 0);
        while (step_row(db.get(), k.get(), path) == SQLITE_ROW)
            if (const std::string uuid = text_col(k.get(), 0); !deleted.count(uuid))
                builder(uuid).wants(text_col(k.get(), 1));
    }
    auto s = metrics_query(db.get(), path, keys);
    while (step_row(db.get(), s.get(), path) == SQLITE_ROW) {
        const std::string uuid = text_col(s.get(), 0);
        if (deleted.count(uuid)) continue;
        auto& b = builder(uuid);
        const bool is_nan = sqlite3_column_int(s.get(), 5) != 0;
        const double v = is_nan ? std::nan("") : stored_metric_value(sqlite3_column_double(s.get(), 2));
        const double t = sqlite3_column_double(s.get(), 3) / 1000.0;
        b.add(text_col(s.get(), 1), sqlite3_column_int64(s.get(), 4), v, t, path, 0);
    }
    if (runs.empty()) throw logratio::format_error(path + ": the MLflow database has no metrics");
    read_sqlite_attributes(db.get(), path, tables, names, runs, out.notes);
    if (!deleted.empty())
        out.notes.push_back(logratio::detail::concat(path, ": ", deleted.size(), " deleted run(s) not read (as MLflow hides them)"));
    out.reader = "MLflow SQLite store";
    out.input = path;
    out.runs = finish_runs(runs, &out.notes);
    return out;
}

}  // namespace logratio_cli::trackers
