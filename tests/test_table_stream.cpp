// The streamed long-table reader (tools/logratio/io/table_stream.hpp, what
// `logratio runs` reads a long table with) against the text path it
// replaces there (parse_csv / parse_jsonl + long_format_runs, kept for
// --points, reconcile and these checks): the same runs, series (bit for
// bit, NaN included), attributes, and the same error for every bad table.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>

#include <logratio/core/error.hpp>

#include "number_parse.hpp"
#include "table.hpp"
#include "table_stream.hpp"
#include "trackers/detect.hpp"

namespace {

namespace fs = std::filesystem;
namespace tr = logratio_cli::trackers;
using logratio_cli::run_input;

/// The runs of each metric, or the error (its text) the read threw.
struct outcome {
    std::vector<std::vector<run_input>> runs;
    std::string error;
};

outcome read_text_way(const std::string& path, const std::string& format, const std::vector<std::string>& metrics) {
    outcome o;
    o.runs.resize(metrics.size());
    try {
        auto d = tr::read_input(path, format);
        for (std::size_t m = 0; m < metrics.size(); ++m)
            if (m == 0 || d.table.column(metrics[m])) logratio_cli::long_format_runs(d.table, metrics[m], o.runs[m]);
    } catch (const logratio::format_error& e) {
        o.error = std::string("format: ") + e.what();
    } catch (const logratio::error& e) {
        o.error = e.what();
    }
    return o;
}

outcome read_streamed(const std::string& path, const std::string& format, const std::vector<std::string>& metrics) {
    outcome o;
    o.runs.resize(metrics.size());
    try {
        auto d = tr::read_input(path, format, tr::key_filter(), true);
        REQUIRE(d.kind == tr::detected_input::long_table);
        CHECK(d.table.columns.empty());  // nothing kept as text
        logratio_cli::long_table_runs(d.streamed, metrics, o.runs);
    } catch (const logratio::format_error& e) {
        o.error = std::string("format: ") + e.what();
    } catch (const logratio::error& e) {
        o.error = e.what();
    }
    return o;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

/// The two reads agree; returns the streamed outcome for further checks.
outcome check_same(const std::string& path, const std::vector<std::string>& metrics, const std::string& format = "auto") {
    INFO(path);
    const outcome a = read_text_way(path, format, metrics), b = read_streamed(path, format, metrics);
    CHECK(b.error == a.error);
    if (!a.error.empty()) return b;  // (the text path leaves the runs it had read before the error)
    REQUIRE(a.runs.size() == b.runs.size());
    for (std::size_t m = 0; m < a.runs.size(); ++m) {
        INFO("metric " << metrics[m]);
        REQUIRE(a.runs[m].size() == b.runs[m].size());
        for (std::size_t r = 0; r < a.runs[m].size(); ++r) {
            const auto &x = a.runs[m][r], &y = b.runs[m][r];
            INFO("run " << x.series.run);
            CHECK(x.series.run == y.series.run);
            CHECK(x.series.group == y.series.group);
            CHECK(same_bits(x.series.update, y.series.update));
            CHECK(same_bits(x.series.value, y.series.value));
            CHECK(x.attributes == y.attributes);
            CHECK(x.notes == y.notes);
        }
    }
    return b;
}

/// A table written to a file of the test's own (removed with the directory).
struct scratch_dir {
    fs::path dir = fs::temp_directory_path() / ("logratio_table_stream_" + std::to_string(::getpid()));
    scratch_dir() { fs::create_directories(dir); }
    ~scratch_dir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    std::string file(const std::string& name, const std::string& text) const {
        const auto p = (dir / name).string();
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }
};

std::string data(const std::string& name) { return std::string(LOGRATIO_TEST_DATA) + "/" + name; }

}  // namespace

TEST_CASE("table_stream: the committed long tables read as the text path reads them") {
    for (const char* f : {"runs/edge.csv", "runs/edge_kl.csv", "runs/large.csv", "runs/mixed.csv",
                          "runs/mixed_async_first.csv", "runs/ties.csv", "trackers/edge/nan_update.csv",
                          "trackers/edge/p_underflow.csv", "trackers/long.csv", "trackers/long_bom_crlf.csv",
                          "trackers/edge/long_nan.jsonl"})
        check_same(data(f), {"delta_abs_mean", "kl_k3", "train/train_rollout_logprob_abs_diff", "m", "update"});
    const outcome o = check_same(data("trackers/long.csv"), {"train/train_rollout_logprob_abs_diff"});
    REQUIRE(o.runs[0].size() == 4);
    CHECK(o.runs[0][0].attributes.at("mode") == o.runs[0][0].series.run.substr(0, o.runs[0][0].series.run.find(' ')));
}

TEST_CASE("table_stream: bad tables give the text path's error, in its order") {
    const scratch_dir d;
    const std::vector<std::pair<std::string, std::string>> tables{
        {"metric_cell", "run,update,m\na,1,0.5\na,2,abc\n"},
        {"row_first", "run,update,m\na,1,0.5\n,2,0.25\na,3,abc\n"},
        {"metric_first", "run,update,m\na,1,x\n,2,0.25\n"},
        {"same_row", "run,update,m\na,1,0.5\nb,u,abc\n"},
        {"ragged", "run,update,m\na,1,0.5\na,2\na,3,abc\n"},
        {"two_groups", "run,group,update,m\na,g,1,0.5\nb,g,1,0.5\na,h,2,0.25\n"},
        {"missing_update", "run,update,m\na,1,0.5\na,,0.25\n"},
        {"nan_update", "run,update,m\na,1,0.5\na, nan ,0.25\n"},
        {"inf_update", "run,update,m\na,1,0.5\na,inf,0.25\n"},
        {"dup_sorted", "run,update,m\na,1,0.5\na,2,0.5\nb,1,1\nb,1,2\na,2,0.75\n"},
        {"dup_unsorted", "run,update,m\na,3,0.5\na,1,0.5\nb,2,0\na,3,1\nb,2,1\n"},
        {"attr_conflict", "run,update,m,attr:seed\na,1,0.5,1\na,2,0.25,2\n"},
        {"duplicate_column", "run,update,m,m\na,1,0.5,1\na,2,,2\n"},
        {"unterminated", "run,update,m\na,1,\"0.5\n"},
        {"quote_inside", "run,update,m\na,1,0.5\"\n"},
        {"after_quote", "run,update,m\na,1,\"0.5\"x\n"},
        {"no_metric", "run,update,n\na,1,0.5\n"},
        {"text_other_metric", "run,update,m,note\na,1,0.5,1\na,2,0.25,x\n"},
        {"blank_only", "\n\n"},
    };
    for (const auto& [name, text] : tables) {
        const outcome o = check_same(d.file(name + ".csv", text), {"m", "note"});
        CHECK_MESSAGE(!o.error.empty(), name);
    }
    // the messages themselves (the text path's, worded as before)
    CHECK(read_streamed(d.file("r.csv", "run,update,m\na,1,0.5\n,2,0.25\na,3,abc\n"), "auto", {"m"}).error ==
          "format: " + (d.dir / "r.csv").string() + ": line 3: empty 'run' cell");
    CHECK(read_streamed(d.file("u.csv", "run,update,m\na,3,0.5\na,1,0.5\nb,2,0\na,3,1\nb,2,1\n"), "auto", {"m"}).error ==
          "format: " + (d.dir / "u.csv").string() + ": run 'a' update 3 appears on lines 2 and 5");
    // a table without run or update columns, its format forced
    check_same(d.file("no_run.csv", "update,m\n1,0.5\n"), {"m"}, "long");
    check_same(d.file("no_run.jsonl", "{\"update\": 1, \"m\": 0.5}\n"), {"m"}, "long");
}

TEST_CASE("table_stream: quoting, CRLF, a BOM, blank lines, rows by update, long rows, no last newline") {
    const scratch_dir d;
    const std::vector<std::pair<std::string, std::string>> tables{
        {"quoted", "\xEF\xBB\xBFrun,\"group\",update,m,note\r\n\r\n\"a \"\"q\"\"\",g,1,\"0.5\",\"x\ny\"\r\n"
                   "\"a \"\"q\"\"\",g,2,,\"x\ny\"\r\n\nb,h,1, +1e400 ,z\r\n"},
        {"by_update", "run,group,update,m,phase\na,s,1,0.1,w\nb,t,1,0.2,\nc,s,1,0.3,c\na,s,2,0.4,w\nb,t,2,0.5,\n"
                      "c,s,2,0.6,c\na,s,3,0.7,w\nb,t,3,0.8,\nc,s,3,0.9,c\n"},
        {"unsorted", "run,update,m\na,3,0.3\na,1,0.1\nb,5,0.5\na,2,0.2\nb,4,0.4\n"},
        {"long_rows", "run,group,update,m,attr:config\n"
                      "a-run-with-a-long-name-0001,a-group-name-that-is-long,1,0.012345678901234567,{json: 1}\n"
                      "a-run-with-a-long-name-0001,a-group-name-that-is-long,2,1.5e-300,{json: 1}\n"
                      "b,g,7,-0,\nb,g,8,0.1234567890123456789012345678901234567890,x"},
    };
    for (const auto& [name, text] : tables) {
        const outcome o = check_same(d.file(name + ".csv", text), {"m", "update"});
        CHECK_MESSAGE(o.error.empty(), name);
        CHECK_MESSAGE(!o.runs[0].empty(), name);
    }
    const outcome o = check_same(d.file("by_update.csv", tables[1].second), {"m"});
    REQUIRE(o.runs[0].size() == 3);
    CHECK(o.runs[0][1].series.value == std::vector<double>{0.2, 0.5, 0.8});
    CHECK(o.runs[0][2].attributes == std::map<std::string, std::string>{{"phase", "c"}});
}

TEST_CASE("table_stream: the metrics of a long table (--metrics all)") {
    const scratch_dir d;
    auto t = tr::read_input(d.file("m.csv", "run,group,update,a,b,note,attr:x\nr,g,1,1,,x,1\nr,g,2,2,5,y,1\ns,g,1,3,6,z,2\n"),
                            "auto", tr::key_filter(), true);
    std::vector<std::string> names{"a"};
    logratio_cli::long_table_metric_names(t.streamed, names);
    CHECK(names == std::vector<std::string>{"a"});  // b has 2 numbers, but in two runs; note is text
    t = tr::read_input(d.file("n.csv", "run,update,a,b\nr,1,1,5\nr,2,2,6\n"), "auto", tr::key_filter(), true);
    names.clear();
    logratio_cli::long_table_metric_names(t.streamed, names);
    CHECK(names == std::vector<std::string>{"a", "b"});
}

TEST_CASE("table_stream: cell_double's short-decimal path gives from_chars' double, bit for bit") {
    std::mt19937_64 rng(41);
    for (int i = 0; i < 200000; ++i) {
        const int digits = 1 + static_cast<int>(rng() % 15), point = static_cast<int>(rng() % (digits + 1));
        std::string s = rng() % 4 ? "" : "-";
        for (int k = 0; k < digits; ++k) {
            if (k == point && k > 0) s += '.';
            s += static_cast<char>('0' + rng() % 10);
        }
        double fast = 0, exact = 0;
        REQUIRE(logratio_cli::cell_double(s, fast));
        REQUIRE(logratio_cli::parse_double(s.data(), s.data() + s.size(), exact) == s.data() + s.size());
        INFO(s);
        REQUIRE(std::memcmp(&fast, &exact, sizeof fast) == 0);
    }
}

TEST_CASE("table_stream: line_list packs lines as progressions and gives each back") {
    logratio_cli::line_list l;
    const std::vector<std::size_t> lines{2, 3, 4, 5, 9, 13, 17, 18, 40, 41, 43, 100};
    for (auto x : lines) l.push(x);
    REQUIRE(l.size() == lines.size());
    for (std::size_t k = 0; k < lines.size(); ++k) CHECK(l.at(k) == lines[k]);
}
