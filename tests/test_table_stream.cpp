// The long-table reader (tools/logratio/io/table_stream.hpp: the one path
// every command reads a long table with) against committed expected
// outcomes (tests/data/table_stream/expected.txt: the runs, series as hex
// floats, attributes, or the error, of each table here), written by the
// text path this reader replaced (parse_csv / parse_jsonl + long_format_runs,
// deleted after; see that file's header), and against itself: the same
// table as CSV and as JSON Lines, and a CSV read on 1 thread and split into
// chunks on 2 or more (split inside a run, a quoted field, a CRLF; an error
// in each chunk) give the same outcome.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
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

template <class Read>
outcome outcome_of(const std::vector<std::string>& metrics, Read read) {
    outcome o;
    o.runs.resize(metrics.size());
    try {
        auto t = read();
        logratio_cli::long_table_runs(t, metrics, o.runs);
    } catch (const logratio::format_error& e) {
        o.error = std::string("format: ") + e.what();
    } catch (const logratio::error& e) {
        o.error = e.what();
    }
    return o;
}

/// As `logratio runs` reads it (sniffed or `format`, one thread).
outcome read_streamed(const std::string& path, const std::string& format, const std::vector<std::string>& metrics) {
    return outcome_of(metrics, [&] {
        auto d = tr::read_input(path, format, tr::key_filter(), 1);
        REQUIRE(d.kind == tr::detected_input::long_table);
        return std::move(d.streamed);
    });
}

/// A CSV read on `threads` threads, split however small its chunks.
outcome read_split(const std::string& path, unsigned threads, const std::vector<std::string>& metrics) {
    return outcome_of(metrics, [&] { return logratio_cli::read_long_csv(path, threads, 1); });
}

std::string escaped(const std::string& s) {
    std::string o;
    for (char c : s) o += c == '\n' ? std::string("\\n") : c == '\r' ? std::string("\\r") : c == '\\' ? "\\\\" : std::string(1, c);
    return o;
}

std::string hex_list(const std::vector<double>& v) {
    std::string o;
    char b[40];
    for (double x : v) {
        std::snprintf(b, sizeof b, " %a", x);
        o += b;
    }
    return o;
}

/// `text` with each occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (auto at = text.find(from); !from.empty() && at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

/// An outcome as text, for the expected file: the paths in messages as
/// DIR/ (the test's scratch directory) and DATA/ (tests/data).
std::string rendered(const outcome& o, const std::vector<std::string>& metrics, const std::string& dir) {
    std::ostringstream s;
    if (!o.error.empty()) {
        // The data directory first, and a temporary directory only where there is
        // one: with dir empty, every '/' would become "DIR/" (and the committed text
        // would hold the absolute path of the checkout that wrote it).
        std::string e = replaced(o.error, std::string(LOGRATIO_TEST_DATA) + "/", "DATA/");
        if (!dir.empty()) e = replaced(e, dir + "/", "DIR/");
        s << "error: " << escaped(e) << "\n";
        return s.str();
    }
    for (std::size_t m = 0; m < metrics.size(); ++m) {
        s << "metric " << metrics[m] << ": " << o.runs[m].size() << " run(s)\n";
        for (const auto& r : o.runs[m]) {
            s << " run '" << escaped(r.series.run) << "' group '" << escaped(r.series.group) << "'";
            for (const auto& [k, v] : r.attributes) s << " " << escaped(k) << "=" << escaped(v);
            s << "\n  update" << hex_list(r.series.update) << "\n  value" << hex_list(r.series.value) << "\n";
            for (const auto& n : r.notes) s << "  note " << escaped(n) << "\n";
        }
    }
    return s.str();
}

std::string data(const std::string& name) { return std::string(LOGRATIO_TEST_DATA) + "/" + name; }

/// The committed outcomes, by case name ("== NAME" lines open each).
const std::map<std::string, std::string>& expected() {
    static const std::map<std::string, std::string> e = [] {
        std::map<std::string, std::string> m;
        std::ifstream in(data("table_stream/expected.txt"));
        std::string line, name;
        while (std::getline(in, line)) {
            if (line.rfind("== ", 0) == 0) name = line.substr(3);
            else if (!name.empty()) m[name] += line + "\n";
        }
        return m;
    }();
    return e;
}

/// Where the outcomes go instead of being checked (LOGRATIO_WRITE_EXPECTED:
/// how expected.txt is written again).
std::ofstream* expected_out() {
    static std::ofstream* out = [] {
        const char* p = std::getenv("LOGRATIO_WRITE_EXPECTED");
        return p ? new std::ofstream(p) : nullptr;  // lives to the end of the process
    }();
    return out;
}

/// The streamed outcome of `path` is the committed one of case `name` (and,
/// for a CSV, the same split on 2 and 3 threads); returns it.
outcome check_expected(const std::string& name, const std::string& path, const std::vector<std::string>& metrics,
                       const std::string& dir, const std::string& format = "auto") {
    INFO(name);
    const outcome o = read_streamed(path, format, metrics);
    const std::string got = rendered(o, metrics, dir);
    if (auto* out = expected_out()) *out << "== " << name << "\n" << got << std::flush;
    else {
        REQUIRE_MESSAGE(expected().count(name), "no expected outcome for " << name);
        CHECK(got == expected().at(name));
    }
    if (path.size() > 4 && path.compare(path.size() - 4, 4, ".csv") == 0 && format == "auto")
        for (unsigned threads : {2u, 3u}) {
            INFO(threads << " threads");
            CHECK(rendered(read_split(path, threads, metrics), metrics, dir) == got);
        }
    return o;
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
    std::string str() const { return dir.string(); }
};

}  // namespace

TEST_CASE("table_stream: the committed long tables read as expected") {
    for (const char* f : {"runs/edge.csv", "runs/edge_kl.csv", "runs/large.csv", "runs/mixed.csv",
                          "runs/mixed_async_first.csv", "runs/ties.csv", "trackers/edge/nan_update.csv",
                          "trackers/edge/p_underflow.csv", "trackers/long.csv", "trackers/long_bom_crlf.csv",
                          "trackers/edge/long_nan.jsonl"})
        check_expected(f, data(f), {"delta_abs_mean", "kl_k3", "train/train_rollout_logprob_abs_diff", "m", "update"}, "");
    const outcome o = check_expected("long.csv one metric", data("trackers/long.csv"), {"train/train_rollout_logprob_abs_diff"}, "");
    REQUIRE(o.runs[0].size() == 4);
    CHECK(o.runs[0][0].attributes.at("mode") == o.runs[0][0].series.run.substr(0, o.runs[0][0].series.run.find(' ')));
}

TEST_CASE("table_stream: bad tables give their error, in row order") {
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
    // a pair, not a structured binding: clang 14 cannot capture a binding in doctest's message lambda
    for (const auto& table : tables) {
        const std::string& name = table.first;
        const outcome o = check_expected("bad " + name, d.file(name + ".csv", table.second), {"m", "note"}, d.str());
        CHECK_MESSAGE(!o.error.empty(), name);
    }
    // the messages themselves
    CHECK(read_streamed(d.file("r.csv", "run,update,m\na,1,0.5\n,2,0.25\na,3,abc\n"), "auto", {"m"}).error ==
          "format: " + (d.dir / "r.csv").string() + ": line 3: empty 'run' cell");
    CHECK(read_streamed(d.file("u.csv", "run,update,m\na,3,0.5\na,1,0.5\nb,2,0\na,3,1\nb,2,1\n"), "auto", {"m"}).error ==
          "format: " + (d.dir / "u.csv").string() + ": run 'a' update 3 appears on lines 2 and 5");
    // a table without run or update columns, its format forced
    check_expected("no_run csv", d.file("no_run.csv", "update,m\n1,0.5\n"), {"m"}, d.str(), "long");
    check_expected("no_run jsonl", d.file("no_run.jsonl", "{\"update\": 1, \"m\": 0.5}\n"), {"m"}, d.str(), "long");
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
    for (const auto& table : tables) {
        const std::string& name = table.first;
        const outcome o = check_expected("good " + name, d.file(name + ".csv", table.second), {"m", "update"}, d.str());
        CHECK_MESSAGE(o.error.empty(), name);
        CHECK_MESSAGE(!o.runs[0].empty(), name);
    }
    const outcome o = read_streamed(d.file("by_update.csv", tables[1].second), "auto", {"m"});
    REQUIRE(o.runs[0].size() == 3);
    CHECK(o.runs[0][1].series.value == std::vector<double>{0.2, 0.5, 0.8});
    CHECK(o.runs[0][2].attributes == std::map<std::string, std::string>{{"phase", "c"}});
}

TEST_CASE("table_stream: a table as CSV and as JSON Lines reads the same") {
    const scratch_dir d;
    const std::string csv = "run,group,update,m,phase,attr:seed\na,s,2,0.25,warm,1\na,s,1,,warm,1\nb,t,1,NaN,,2\n"
                            "b,t,3,-1e-300,cold,2\n";
    const std::string jsonl = "{\"run\": \"a\", \"group\": \"s\", \"update\": 2, \"m\": 0.25, \"phase\": \"warm\", \"attr:seed\": 1}\n"
                              "{\"run\": \"a\", \"group\": \"s\", \"update\": 1, \"m\": null, \"phase\": \"warm\", \"attr:seed\": 1}\n"
                              "{\"run\": \"b\", \"group\": \"t\", \"update\": 1, \"m\": NaN, \"attr:seed\": 2}\n"
                              "{\"run\": \"b\", \"group\": \"t\", \"update\": 3, \"m\": -1e-300, \"phase\": \"cold\", \"attr:seed\": 2}\n";
    const std::vector<std::string> metrics{"m", "update"};
    const outcome a = read_streamed(d.file("t.csv", csv), "auto", metrics), b = read_streamed(d.file("t.jsonl", jsonl), "auto", metrics);
    REQUIRE(a.error.empty());
    CHECK(rendered(a, metrics, d.str()) == rendered(b, metrics, d.str()));
    REQUIRE(a.runs[0].size() == 2);
    CHECK(a.runs[0][0].attributes == std::map<std::string, std::string>{{"phase", "warm"}, {"seed", "1"}});
    // the same error, worded alike, from either form
    const outcome e = read_streamed(d.file("e.csv", "run,update,m\na,1,0.5\na,1,0.25\n"), "auto", {"m"});
    const outcome f = read_streamed(d.file("e.jsonl", "{\"run\":\"a\",\"update\":1,\"m\":0.5}\n{\"run\":\"a\",\"update\":1,\"m\":0.25}\n"),
                                    "auto", {"m"});
    CHECK(e.error == "format: " + d.str() + "/e.csv: run 'a' update 1 appears on lines 2 and 3");
    CHECK(f.error == "format: " + d.str() + "/e.jsonl: run 'a' update 1 appears on lines 1 and 2");  // JSON Lines has no header line
}

TEST_CASE("table_stream: the metrics of a long table (--metrics all)") {
    const scratch_dir d;
    auto t = tr::read_input(d.file("m.csv", "run,group,update,a,b,note,attr:x\nr,g,1,1,,x,1\nr,g,2,2,5,y,1\ns,g,1,3,6,z,2\n"),
                            "auto", tr::key_filter(), 1);
    std::vector<std::string> names{"a"};
    logratio_cli::long_table_metric_names(t.streamed, names);
    CHECK(names == std::vector<std::string>{"a"});  // b has 2 numbers, but in two runs; note is text
    t = tr::read_input(d.file("n.csv", "run,update,a,b\nr,1,1,5\nr,2,2,6\n"), "auto", tr::key_filter(), 1);
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
    // appended: every split of the list gives the same lines back
    for (std::size_t cut = 0; cut <= lines.size(); ++cut) {
        logratio_cli::line_list a, b;
        for (std::size_t k = 0; k < lines.size(); ++k) (k < cut ? a : b).push(lines[k]);
        a.append(b);
        REQUIRE(a.size() == lines.size());
        for (std::size_t k = 0; k < lines.size(); ++k) CHECK(a.at(k) == lines[k]);
    }
}

namespace {

/// The table read on 1 thread and split on 2 to 40 (the cut points move
/// over every few bytes of a small table): the same outcome each time.
void check_splits(const std::string& path, const std::vector<std::string>& metrics, const std::string& dir) {
    const std::string one = rendered(read_split(path, 1, metrics), metrics, dir);
    for (unsigned threads = 2; threads <= 40; ++threads) {
        INFO(path << " on " << threads << " threads");
        CHECK(rendered(read_split(path, threads, metrics), metrics, dir) == one);
    }
}

/// Rows r,g,update,m of `runs` runs of `n` rows each, grouped by run.
std::string rows_by_run(const std::vector<std::string>& runs, int n, const char* eol = "\n") {
    std::string t = std::string("run,group,update,m,note") + eol;
    for (const auto& r : runs)
        for (int u = 1; u <= n; ++u) t += r + ",g," + std::to_string(u) + "," + std::to_string(u * 0.125) + ",x" + eol;
    return t;
}

}  // namespace

TEST_CASE("table_stream: a CSV split on 2+ threads reads as on one (inside a run, a quoted field, a CRLF)") {
    const scratch_dir d;
    const std::vector<std::string> metrics{"m", "update"};
    // inside a run: run a holds 150 of 200 rows, the cut near the middle
    const auto by_run = d.file("by_run.csv", rows_by_run({"a", "b"}, 100) + rows_by_run({"a"}, 0).substr(24));
    const auto long_run = d.file("long_run.csv", [] {
        std::string t = "run,update,m\n";
        for (int u = 1; u <= 150; ++u) t += "a," + std::to_string(u) + "," + std::to_string(u) + "\n";
        for (int u = 1; u <= 50; ++u) t += "b," + std::to_string(u) + ",0.5\n";
        return t;
    }());
    const auto cut = logratio_cli::long_csv_chunk_lines(long_run, 2);
    REQUIRE(cut.size() == 2);
    CHECK(cut[0] == 2);
    CHECK(cut[1] > 60);  // inside run a (lines 2..151)
    CHECK(cut[1] < 150);
    check_splits(by_run, metrics, d.str());
    check_splits(long_run, metrics, d.str());
    const outcome o = read_split(long_run, 2, {"m"});
    REQUIRE(o.runs[0].size() == 2);
    CHECK(o.runs[0][0].series.value.size() == 150);
    CHECK(o.runs[0][0].series.value[149] == 150);
    // quoted fields holding newlines, commas and "": every cut falls between records (each 3 lines)
    std::string q = "run,update,m,note\n";
    for (int u = 1; u <= 60; ++u) q += "\"r " + std::to_string(u % 3) + "\"," + std::to_string(u) + ",1,\"a \"\"b\"\",\nc\nd\"\n";
    const auto quoted = d.file("quoted.csv", q);
    for (unsigned parts = 2; parts <= 40; ++parts)
        for (const auto line : logratio_cli::long_csv_chunk_lines(quoted, parts)) CHECK((line - 2) % 3 == 0);
    check_splits(quoted, {"m", "note"}, d.str());
    // one quoted field over the middle of the file: the cut moves past it
    const std::string big_field = "run,update,m,note\na,1,1,\"" + std::string(400, '\n') + "\"\na,2,2,x\na,3,3,y\n";
    const auto big = d.file("big_field.csv", big_field);
    const auto big_cut = logratio_cli::long_csv_chunk_lines(big, 2);
    REQUIRE(big_cut.size() == 2);
    CHECK(big_cut[1] == 403);
    check_splits(big, {"m"}, d.str());
    // a stray quote in an unquoted field makes the count odd: no cut after it, the error as on one thread
    check_splits(d.file("stray.csv", "run,update,m\na,1,1\"\n" + rows_by_run({"b"}, 40).substr(24)), {"m"}, d.str());
    // CRLF line ends: cuts land on the '\r' or the '\n' for some thread counts
    const auto crlf = d.file("crlf.csv", rows_by_run({"a", "b", "c"}, 30, "\r\n"));
    check_splits(crlf, metrics, d.str());
    CHECK(read_split(crlf, 7, {"m"}).runs[0].size() == 3);
}

TEST_CASE("table_stream: split on 2+ threads, an error in each chunk: the first in file order, with its line") {
    const scratch_dir d;
    const std::string body = rows_by_run({"a", "b"}, 40).substr(24);  // 80 rows, lines 2..81
    const auto with = [&](int line, const std::string& row) {  // the row at `line` replaced
        std::string t = "run,group,update,m,note\n";
        std::size_t p = 0;
        for (int l = 2; p < body.size(); ++l) {
            const auto e = body.find('\n', p);
            t += l == line ? row + "\n" : body.substr(p, e + 1 - p);
            p = e + 1;
        }
        return t;
    };
    const auto two = [&](int l1, const std::string& r1, int l2, const std::string& r2) {
        std::string t = with(l1, r1);
        const auto e = t.find('\n', [&] { std::size_t p = 0; for (int l = 1; l < l2; ++l) p = t.find('\n', p) + 1; return p; }());
        std::size_t s = 0;
        for (int l = 1; l < l2; ++l) s = t.find('\n', s) + 1;
        return t.substr(0, s) + r2 + t.substr(e);
    };
    struct bad {
        std::string name, text, error;
    };
    const std::vector<bad> cases{
        {"rows", two(10, ",g,9,1,x", 70, "b,g,u,1,x"), "line 10: empty 'run' cell"},
        {"ragged", two(10, "a,g,9", 70, "b,g,29"), "line 10 has 3 fields, the header has 5"},
        {"ragged_late", two(10, ",g,9,1,x", 70, "b,g,29"), "line 70 has 3 fields, the header has 5"},
        {"quote_late", two(10, "a,g,9,zz,x", 70, "b,g,29,1\",x"), "line 70: a quote inside an unquoted field"},
        {"metric_late", two(10, "a,g,9,1,x", 70, "b,g,29,zz,x"), "line 70, column 'm': 'zz' is not a number"},
        {"group_across", with(70, "a,h,99,1,x"), "line 70: run 'a' is in group 'h' here but in 'g' before"},
        {"group_first", two(60, "b,g,19,1,x", 42, "b,h,1,1,x"), "line 43: run 'b' is in group 'g' here but in 'h' before"},
        {"dup_across", with(70, "a,g,3,1,x"), "run 'a' update 3 appears on lines 4 and 70"},
        {"update_late", two(10, "a,g,9,1,x", 75, "b,g,inf,1,x"), "line 75: 'update' is inf (the update column needs a finite number)"},
    };
    for (const auto& c : cases) {
        const auto path = d.file(c.name + ".csv", c.text);
        INFO(c.name);
        const outcome o = read_split(path, 1, {"m", "note"});
        CHECK(o.error == "format: " + path + ": " + c.error);
        check_splits(path, {"m", "note"}, d.str());
    }
    // a text column that varies in the later chunk only (no attribute, for any run), an attr: one across the cut
    const auto note = d.file("note.csv", with(70, "b,g,29,1,y"));
    const outcome n = read_split(note, 2, {"m"});
    REQUIRE(n.error.empty());
    CHECK(n.runs[0][0].attributes.empty());
    CHECK(read_split(d.file("same.csv", with(70, "b,g,29,1,x")), 2, {"m"}).runs[0][1].attributes ==
          std::map<std::string, std::string>{{"note", "x"}});
    check_splits(note, {"m", "note"}, d.str());
    std::string attr = "run,update,m,attr:seed\n";
    for (int u = 1; u <= 80; ++u) attr += std::string("a,") + std::to_string(u) + ",1," + (u == 70 ? "2" : "1") + "\n";
    const auto seed = d.file("seed.csv", attr);
    CHECK(read_split(seed, 2, {"m"}).error ==
          "format: " + seed + ": line 71, column 'attr:seed': run 'a' has '2' here but '1' on line 2 (an attribute has one value per run)");
    check_splits(seed, {"m"}, d.str());
}
