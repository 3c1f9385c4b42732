// Tracker readers (tools/logratio/trackers): every layout written by
// tests/trackers/make_tracker_histories.py from the same 4 runs gives exactly
// the runs, updates and values of the long table (missing stays missing),
// detection names the reader, and bad inputs are errors naming the place.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "dumps.hpp"
#include "long_runs.hpp"
#include "table.hpp"
#include "table_stream.hpp"
#include "trackers/attributes.hpp"
#include "trackers/detect.hpp"
#include "trackers/json_scan.hpp"
#include "trackers/lenient_json.hpp"
#include "trackers/to_runs.hpp"

namespace {

namespace tr = logratio_cli::trackers;
const std::string metric = "train/train_rollout_logprob_abs_diff";

std::string data(const std::string& name) { return std::string(LOGRATIO_TEST_DATA) + "/trackers/" + name; }

struct series {
    std::string group;
    std::vector<double> update, value;
};

// The reference: the long table (run, group, update, metric) read as text.
std::map<std::string, series> reference() {
    const auto t = logratio_cli::read_table(data("long.csv"));
    std::map<std::string, series> out;
    for (std::size_t i = 0; i < t.row_count(); ++i) {
        auto& s = out[std::string(t.cell(i, 0))];
        s.group = std::string(t.cell(i, 1));
        s.update.push_back(std::stod(std::string(t.cell(i, 2))));
        s.value.push_back(t.cell(i, 3).empty() ? std::nan("") : std::stod(std::string(t.cell(i, 3))));
    }
    return out;
}

std::vector<logratio_cli::run_input> convert(const tr::history_set& set, const std::string& step_column = "") {
    logratio_cli::history_options o;
    o.step_column = step_column;
    std::vector<logratio_cli::run_input> out;
    for (const auto& h : set.runs) {
        std::string how;
        out.push_back(tr::run_from_history(h, metric, o, how));
    }
    return out;
}

// Same runs, same updates, bit-identical values (NaN where NaN), and the
// group when the layout gives one.
void check_same_as_reference(const std::vector<logratio_cli::run_input>& got, bool groups) {
    const auto want = reference();
    REQUIRE(got.size() == want.size());
    for (const auto& r : got) {
        INFO("run '" << r.series.run << "'");
        REQUIRE(want.count(r.series.run) == 1);
        const auto& w = want.at(r.series.run);
        if (groups) CHECK(r.series.group == w.group);
        REQUIRE(r.series.update == w.update);
        REQUIRE(r.series.value.size() == w.value.size());
        for (std::size_t i = 0; i < w.value.size(); ++i) {
            INFO("update " << w.update[i]);
            if (std::isnan(w.value[i])) CHECK(std::isnan(r.series.value[i]));
            else CHECK(r.series.value[i] == w.value[i]);
        }
    }
}

tr::history_set read_auto(const std::string& path) {
    auto d = tr::read_input(path, "auto");
    REQUIRE(d.kind == tr::detected_input::history);
    return d.set;
}

}  // namespace

TEST_CASE("the reference long table: 4 runs, a crash, a NaN update, a skipped update") {
    const auto r = reference();
    REQUIRE(r.size() == 4);
    CHECK(r.at("async run 1").update.size() == 6);
    CHECK(r.at("async run 2").update.size() == 11);
    CHECK(std::isnan(r.at("sync run 2").value[6]));
}

TEST_CASE("long table with a UTF-8 BOM and CRLF line ends reads like the plain one") {
    auto d = tr::read_input(data("long_bom_crlf.csv"), "auto");
    REQUIRE(d.kind == tr::detected_input::long_table);
    CHECK(d.streamed.columns[0] == "run");
    std::vector<std::vector<logratio_cli::run_input>> got(1);
    logratio_cli::long_table_runs(d.streamed, {metric}, got);
    const auto& rs = got[0];
    check_same_as_reference(rs, true);
}

TEST_CASE("W&B history tables, one file per run: train/step is the step, the directory the group") {
    std::vector<logratio_cli::run_input> all;
    for (const char* f : {"async/async run 1.csv", "async/async run 2.csv", "sync/sync run 1.csv", "sync/sync run 2.csv"}) {
        const auto set = read_auto(data(std::string("wandb_history/") + f));
        CHECK(set.reader == "W&B history table");
        REQUIRE(set.runs.size() == 1);
        CHECK(set.runs[0].step_name == "_step");
        CHECK(set.runs[0].metrics.count("train/step") == 1);
        CHECK(set.runs[0].metrics.count("_runtime") == 0);
        auto rs = convert(set);
        all.insert(all.end(), rs.begin(), rs.end());
    }
    check_same_as_reference(all, true);
}

TEST_CASE("W&B multi-run history (run_id): runs never merge, also with --step-column _step") {
    const auto set = read_auto(data("wandb_histories.csv"));
    CHECK(set.reader == "W&B multi-run history table");
    REQUIRE(set.runs.size() == 4);
    check_same_as_reference(convert(set), false);
    const auto by_event = convert(set, "_step");  // the old silent merge: one run
    CHECK(by_event.size() == 4);
    for (const auto& r : by_event) CHECK(r.series.run.find(" run ") != std::string::npos);
}

TEST_CASE("W&B JSON Lines and JSON arrays: NaN tokens, nested values skipped with a note") {
    std::vector<logratio_cli::run_input> lines, arrays;
    for (const char* n : {"async/async run 1", "async/async run 2", "sync/sync run 1", "sync/sync run 2"}) {
        const auto set = read_auto(data(std::string("wandb_jsonl/") + n + ".jsonl"));
        CHECK(set.reader == "JSON Lines history");
        REQUIRE(set.notes.size() == 1);
        CHECK(set.notes[0].find("media/samples") != std::string::npos);
        auto rs = convert(set);
        lines.insert(lines.end(), rs.begin(), rs.end());
        const std::string base = std::string(n).substr(std::string(n).find('/') + 1);
        const auto arr = read_auto(data("wandb_json/" + base + ".json"));
        CHECK(arr.reader == "JSON history (array)");
        auto ra = convert(arr);
        arrays.insert(arrays.end(), ra.begin(), ra.end());
    }
    check_same_as_reference(lines, true);
    check_same_as_reference(arrays, false);
}

TEST_CASE("verl file logger: {step, data} lines, the step is verl's global step") {
    std::vector<logratio_cli::run_input> all;
    for (const char* n : {"async/async run 1", "async/async run 2", "sync/sync run 1", "sync/sync run 2"}) {
        const auto set = read_auto(data(std::string("verl/") + n + ".jsonl"));
        CHECK(set.reader == "verl file-logger history");
        CHECK(set.runs[0].step_name == "step (verl file logger)");
        auto rs = convert(set);
        all.insert(all.end(), rs.begin(), rs.end());
    }
    check_same_as_reference(all, true);
}

TEST_CASE("W&B chart export: runs from column names, __MIN/__MAX are not metrics, Step needs --step-column") {
    const auto set = read_auto(data("chart.csv"));
    CHECK(set.reader == "W&B chart export");
    REQUIRE(set.runs.size() == 4);
    for (const auto& r : set.runs) CHECK(r.metrics.size() == 1);
    CHECK(set.notes.empty());
    CHECK_THROWS_WITH_AS(convert(set), doctest::Contains("looks like a logging-history export"), logratio::format_error);
    check_same_as_reference(convert(set, "Step"), false);
    const auto b = read_auto(data("chart_bucketed.csv"));
    REQUIRE(b.notes.size() == 4);
    CHECK(b.notes[0].find("bucket means") != std::string::npos);
}

TEST_CASE("W&B chart export: grouped charts give one series per group, with a note") {
    const auto t = logratio_cli::parse_csv("\"Step\",\"Group: sync - m\",\"Group: sync - m__MIN\",\"Group: sync - m__MAX\"\n"
                                           "\"1\",\"0.5\",\"0.25\",\"0.75\"\n", "g.csv");
    const auto set = tr::read_wandb_chart(t);
    REQUIRE(set.runs.size() == 1);
    CHECK(set.runs[0].group == "sync");
    CHECK(set.notes.size() == 2);
}

TEST_CASE("MLflow file store: nested key folders, run names from tags, nan values") {
    const auto set = read_auto(data("mlruns"));
    CHECK(set.reader == "MLflow file store");
    REQUIRE(set.runs.size() == 4);
    CHECK(set.runs[0].name == "async run 1");
    CHECK(set.runs[0].step_name == "MLflow step");
    CHECK(set.runs[0].metrics.count("train/grad_norm") == 1);
    CHECK(set.runs[0].metrics.at(metric).front().wall_time == doctest::Approx(1764000010.0));
    check_same_as_reference(convert(set), false);
    // also one experiment or one run directory
    CHECK(read_auto(data("mlruns/1")).runs.size() == 4);
    CHECK(read_auto(data("mlruns/1/00c0ffee000000000000000000000000")).runs.size() == 1);
}

TEST_CASE("MLflow SQLite store: is_nan rows are NaN, names from tags") {
    const auto set = read_auto(data("mlflow.db"));
    CHECK(set.reader == "MLflow SQLite store");
    check_same_as_reference(convert(set), false);
}

TEST_CASE("TRL trainer_state.json: run = directory above checkpoint-*, the latest checkpoint wins") {
    const auto set = read_auto(data("trl"));
    CHECK(set.reader == "TRL trainer_state.json");
    REQUIRE(set.runs.size() == 4);
    check_same_as_reference(convert(set), true);
    const auto one = read_auto(data("trl/sync/sync run 1/checkpoint-6/trainer_state.json"));
    REQUIRE(one.runs.size() == 1);
    CHECK(one.runs[0].name == "sync run 1");
    CHECK(one.runs[0].metrics.at(metric).size() == 6);
}

TEST_CASE("Python JSON: NaN, Infinity, -Infinity accepted outside strings; syntax errors name file and line") {
    const auto j = tr::parse_python_json("{\"a\": NaN, \"b\": Infinity, \"c\": -Infinity, \"d\": \"NaN\"}", "x.json");
    CHECK(std::isnan(*tr::number_of(j["a"])));
    CHECK(*tr::number_of(j["b"]) == INFINITY);
    CHECK(*tr::number_of(j["c"]) == -INFINITY);
    CHECK_FALSE(tr::number_of(j["d"]).has_value());
    CHECK_THROWS_WITH_AS(tr::read_input(data("bad/syntax.jsonl"), "auto"),
                         doctest::Contains("bad/syntax.jsonl: line 3: not valid JSON"), logratio::format_error);
    CHECK_THROWS_WITH_AS(tr::parse_python_json("[1,\n2,\n3 4]", "y.json"), doctest::Contains("y.json: line 3"),
                         logratio::format_error);
}

TEST_CASE("bad inputs: clear errors naming file and place") {
    CHECK_THROWS_WITH_AS(tr::read_input(data("bad/chart_cut.csv"), "auto"),
                         doctest::Contains("chart_cut.csv: line 3 has 3 fields, the header has 4"), logratio::format_error);
    CHECK_THROWS_WITH_AS(tr::read_input(data("bad/chart_cut_header.csv"), "auto"),
                         doctest::Contains("column 'b - m__MAX' has no value column 'b - m'"), logratio::format_error);
    CHECK_THROWS_WITH_AS(tr::read_input(data("bad/dup_steps.csv"), "auto"),
                         doctest::Contains("dup_steps.csv: line 5: run 'a', metric 'm', step 1: 0.75 here but 0.25 on line 3"),
                         logratio::format_error);
    CHECK_THROWS_WITH_AS(tr::read_input(data("bad/not_mlflow.db"), "auto"),
                         doctest::Contains("without MLflow's tables 'metrics' and 'runs' (tables: notes)"),
                         logratio::format_error);
    CHECK_THROWS_WITH(tr::read_input(data("bad/unknown.csv"), "auto"),
                      doctest::Contains("neither a long table (needs columns 'run' and 'update'), nor a W&B history"));
    CHECK_THROWS_WITH(tr::read_input(data("bad"), "auto"), doctest::Contains("a directory without a history logratio reads"));
    const auto only = read_auto(data("bad/only_step.csv"));
    CHECK_THROWS_WITH_AS(convert(only), doctest::Contains("'_step' counts logging events, not training steps"),
                         logratio::format_error);
}

TEST_CASE("metric choice: the documented order; --metric wins") {
    tr::history_set s;
    s.runs.resize(2);
    s.runs[0].metrics["rollout_corr/kl"] = {};
    s.runs[1].metrics["train/vllm_kl"] = {};
    s.runs[1].metrics["rollout_corr/log_ppl_abs_diff"] = {};
    std::vector<std::string> notes;
    CHECK(tr::choose_metric({&s}, "", notes) == "rollout_corr/log_ppl_abs_diff");
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("verl") != std::string::npos);
    CHECK(tr::choose_metric({&s}, "x", notes) == "x");
    s.runs[0].metrics.clear();
    s.runs[1].metrics = {{"loss", {}}};
    CHECK_THROWS_WITH(tr::choose_metric({&s}, "", notes), doctest::Contains("name one with --metric"));
}

TEST_CASE("step choice: the step metric logged with the metric's events (slime train/step vs rollout/step)") {
    tr::run_history r;
    r.name = "r";
    r.step_name = "_step";
    r.metrics["train/step"] = {{0, 1}, {2, 2}};
    r.metrics["rollout/step"] = {{1, 1}, {3, 2}};
    r.metrics["rollout/m"] = {{1, 0.5}, {3, 0.25}};
    logratio_cli::history_options o;
    std::string how;
    const auto in = tr::run_from_history(r, "rollout/m", o, how);
    CHECK(how.rfind("rollout/step", 0) == 0);
    CHECK(in.series.update == std::vector<double>{1, 2});
    CHECK(in.series.value == std::vector<double>{0.5, 0.25});
}

TEST_CASE("to_runs: every run and metric of a history in one call; runs without the metric left out") {
    tr::history_set s;
    s.input = "h";
    s.runs.resize(3);
    const char* names[] = {"a", "b", "c"};
    for (std::size_t i = 0; i < 3; ++i) {
        s.runs[i].name = names[i];
        s.runs[i].group = i < 2 ? "g" : "h";
        s.runs[i].step_name = "TensorBoard step";
    }
    s.runs[0].metrics["m"] = {{1, 0.5}, {2, std::nan("")}};
    s.runs[0].metrics["k"] = {{2, 7}};
    s.runs[1].metrics["m"] = {{3, 0.25}};
    s.runs[2].metrics["k"] = {{1, 1}};  // no "m": left out
    const auto got = tr::to_runs(s, {"m", "k"}, logratio_cli::history_options());
    REQUIRE(got.per_metric.size() == 2);
    REQUIRE(got.per_metric[0].size() == 2);
    CHECK(got.per_metric[0][0].series.update == std::vector<double>{1, 2});
    CHECK(got.per_metric[1][0].series.value == std::vector<double>{7});
    CHECK(got.per_metric[1][1].series.run == "b");  // no "k": an empty series, same run
    CHECK(got.per_metric[1][1].series.update.empty());
    REQUIRE(got.left_out.size() == 1);
    CHECK(got.left_out[0].first == "c");
    CHECK(got.steps_used.at("TensorBoard step") == 2);
    REQUIRE(got.notes.size() == 2);
    CHECK(got.notes[0] == "h: run 'c' has no 'm': left out");
    CHECK(got.notes[1] == "h: 1 logged value(s) of 'm' in 1 run(s) are NaN: left out of the statistics");
}

TEST_CASE("--group-pattern: first capture group; unmatched runs are listed") {
    std::vector<logratio_cli::run_input> rs(3);
    rs[0].series.run = "sync run 1";
    rs[1].series.run = "async run ü";
    rs[2].series.run = "other";
    CHECK_THROWS_WITH(tr::apply_group_pattern(rs, "^(a?sync) "), doctest::Contains("run(s) 'other'"));
    rs.pop_back();
    tr::apply_group_pattern(rs, "^(a?sync) ");
    CHECK(rs[0].series.group == "sync");
    CHECK(rs[1].series.group == "async");
    CHECK_THROWS_WITH(tr::apply_group_pattern(rs, "sync"), doctest::Contains("needs a capture group"));
}

TEST_CASE("TensorBoard logdir (binary reader): one run per directory, TensorBoard steps") {
    const auto set = read_auto(data("tensorboard"));
    CHECK(set.reader == "TensorBoard");
    REQUIRE(set.runs.size() == 4);
    CHECK(set.runs[0].metrics.count("train/grad_norm") == 1);
    check_same_as_reference(convert(set), false);
}

TEST_CASE("TensorBoard logdir in a <group>/<run> layout: the first directory is the group") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "logratio_test_tb_groups";
    fs::remove_all(dir);
    for (const char* r : {"async run 1", "async run 2", "sync run 1", "sync run 2"}) {
        const std::string run(r);
        const fs::path to = dir / run.substr(0, run.find(' ')) / run;
        fs::create_directories(to);
        for (const auto& f : fs::directory_iterator(fs::path(data("tensorboard")) / run)) fs::copy(f.path(), to);
    }
    fs::create_directories(dir / "extra" / "deeper" / "run");  // three levels: no group
    fs::copy(fs::directory_iterator(fs::path(data("tensorboard")) / "sync run 1")->path(), dir / "extra" / "deeper" / "run");
    const auto set = read_auto(dir.string());
    REQUIRE(set.runs.size() == 5);
    std::map<std::string, std::string> group;
    for (const auto& r : set.runs) group[r.name] = r.group;
    CHECK(group.at("async/async run 1") == "async");
    CHECK(group.at("sync/sync run 2") == "sync");
    CHECK(group.at("extra/deeper/run") == "");
    fs::remove_all(dir);
}

TEST_CASE("W&B offline runs (binary reader): groups from the RunRecord, train/step as the step") {
    const auto set = read_auto(data("wandb_offline"));
    CHECK(set.reader == "W&B offline log");
    REQUIRE(set.runs.size() == 4);
    CHECK(set.runs[0].step_name == "_step");
    check_same_as_reference(convert(set), true);
}

namespace {
// The same input read whole and through `keys`: the same runs, the same
// points of every kept metric, the others listed by name.
void check_filtered_read(const std::string& path, const tr::key_filter& keys) {
    INFO(path);
    const auto all = tr::read_input(path, "auto");
    const auto some = tr::read_input(path, "auto", keys);
    REQUIRE(all.set.runs.size() == some.set.runs.size());
    for (std::size_t i = 0; i < all.set.runs.size(); ++i) {
        const auto& a = all.set.runs[i];
        const auto& s = some.set.runs[i];
        CHECK(a.unread.empty());
        CHECK(tr::metric_list(a, 1000) == tr::metric_list(s, 1000));  // errors list every metric
        CHECK(s.metrics.size() < a.metrics.size());
        CHECK(s.metrics.count(metric) == 1);
        for (const auto& [k, pts] : s.metrics) {
            CHECK(keys.keeps(k));
            REQUIRE(a.metrics.count(k));
            const auto& b = a.metrics.at(k);
            REQUIRE(pts.size() == b.size());
            for (std::size_t j = 0; j < b.size(); ++j) {
                CHECK(pts[j].step == b[j].step);
                CHECK((pts[j].value == b[j].value || (std::isnan(pts[j].value) && std::isnan(b[j].value))));
            }
        }
        for (const auto& k : s.unread) CHECK(!keys.keeps(k));
    }
}
}  // namespace

TEST_CASE("a key filter reads only the wanted metrics, lists the others, and changes no value") {
    // What `logratio runs` reads (trackers::keys_to_read): the metric and the
    // step metrics; every other key is a name in run_history::unread.
    const auto keys = tr::keys_to_read(metric, "", "");
    for (const std::string in : {"wandb_history/async/async run 1.csv", "wandb_histories.csv", "wandb_json/sync run 2.json",
                                 "mlruns", "mlflow.db", "trl", "tensorboard", "wandb_offline"})
        check_filtered_read(data(in), keys);
    for (const std::string dir : {"wandb_jsonl", "verl"})  // one file per run
        for (const auto& e : std::filesystem::recursive_directory_iterator(data(dir)))
            if (e.is_regular_file()) check_filtered_read(e.path().string(), keys);
}

namespace {
// json_scanner on one value: its grammar decision (nlohmann::json::accept is
// the reference for strict JSON).
bool scanner_accepts(const std::string& text) {
    try {
        tr::json_scanner js(text, "t.json");
        js.skip_value();
        return js.at_end();
    } catch (const logratio::format_error&) {
        return false;
    }
}
}  // namespace

TEST_CASE("json_scanner: the JSON grammar as nlohmann_json decides it, numbers and strings as it reads them") {
    for (const std::string t :
         {"0", "-0", "1.5e-3", "1E+2", "123456789012345678901234567890", "2.2250738585072014e-308", "0.1", "[]", "{}",
          "[1, [2, {\"a\": null}], true, false]", "{\"a\": {\"b\": [\"c\"]}}", "\"\\u00e9\\ud83d\\ude00\\n\\\"\\/\"",
          "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"", "  7  ", "01", "1.", ".5", "+1", "-", "1e", "1e+", "[1,]", "{\"a\":1,}",
          "{\"a\" 1}", "{a:1}", "[1 2]", "tru", "nul", "\"a\nb\"", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00x\"",
          "\"\xFF\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"", "\"\xE2\x82\"", "[", "{\"a\":", "\"abc",
          "[1]]", "{} {}", ""}) {
        INFO(t);
        CHECK(scanner_accepts(t) == nlohmann::json::accept(t));
    }
    for (const std::string t : {"0", "-0", "1.5e-3", "123456789012345678901234567890", "2.2250738585072014e-308", "0.1",
                                "-17", "1e308", "4.9e-324", "9007199254740993"}) {
        INFO(t);
        tr::json_scanner js(t, "t.json");
        const double x = js.number();
        CHECK(x == nlohmann::json::parse(t).get<double>());
        CHECK(std::signbit(x) == std::signbit(nlohmann::json::parse(t).get<double>()));
    }
    {
        const std::string t = "\"a\\u00e9\\ud83d\\ude00\\n\\t\\\\ \xC3\xA9\"";
        tr::json_scanner js(t, "t.json");
        std::string s;
        js.string(s);
        CHECK(s == nlohmann::json::parse(t).get<std::string>());
    }
    {  // Python's non-finite tokens; overflow is an error, underflow rounds to zero
        tr::json_scanner js("[NaN, Infinity, -Infinity, 1e-400]", "t.json");
        bool first = true;
        REQUIRE(js.next_element(first));
        CHECK(std::isnan(js.number()));
        REQUIRE(js.next_element(first));
        CHECK(js.number() == INFINITY);
        REQUIRE(js.next_element(first));
        CHECK(js.number() == -INFINITY);
        REQUIRE(js.next_element(first));
        CHECK(js.number() == 0.0);
        CHECK_FALSE(js.next_element(first));
        CHECK(js.at_end());
        tr::json_scanner big("1e400", "t.json");
        CHECK_THROWS_WITH(big.number(), doctest::Contains("number overflow"));
    }
    {  // errors name the line; deep nesting is an error, not a stack overflow
        tr::json_scanner js("[1,\n2,\n3 4]", "y.json");
        CHECK_THROWS_WITH_AS(js.skip_value(), doctest::Contains("y.json: line 3: not valid JSON"), logratio::format_error);
        const std::string deep(100000, '[');
        tr::json_scanner d(deep, "d.json");
        CHECK_THROWS_WITH(d.skip_value(), doctest::Contains("nested more than 256 levels deep"));
        std::string deep_record = "{\"_step\": 1, \"a\": ";
        for (int i = 0; i < 100000; ++i) deep_record += "{\"a\": ";
        CHECK_THROWS_WITH(tr::read_json_history_text(deep_record, "d.jsonl"), doctest::Contains("nested more than 256"));
    }
}

TEST_CASE("JSON history records: verl data dicts, W&B media, run keys, null, booleans, conflicting keys") {
    const auto set = tr::read_json_history_text(
        "{\"_step\": 0, \"run_id\": \"r1\", \"name\": \"n\", \"a\": 1.5, \"b\": null, \"c\": true, "
        "\"img\": {\"_type\": \"image-file\", \"size\": 3}, \"nest\": {\"x\": 2, \"y\": [1]}, \"t\": \"text\"}\n"
        "\n"
        "{\"_step\": 1, \"run_id\": \"r2\", \"a\": NaN, \"_timestamp\": 5}\n",
        "h.jsonl");
    REQUIRE(set.runs.size() == 2);
    const auto& r1 = set.runs[0];
    CHECK(r1.name == "r1");
    CHECK(r1.metrics.at("a")[0].value == 1.5);
    CHECK(r1.metrics.count("b") == 0);  // null: not logged
    CHECK(r1.metrics.at("c")[0].value == 1.0);
    CHECK(r1.metrics.at("nest/x")[0].value == 2.0);
    CHECK(r1.metrics.count("name") == 0);  // a string: skipped with the note
    CHECK(r1.metrics.count("img/size") == 0);
    REQUIRE(set.notes.size() == 1);
    CHECK(set.notes[0] == "h.jsonl: skipped non-scalar values (tables, histograms, media, text) of: img, name, nest/y, t");
    CHECK(std::isnan(set.runs[1].metrics.at("a")[0].value));
    CHECK(set.runs[1].metrics.at("a")[0].wall_time == 5.0);
    const auto verl = tr::read_json_history_text(
        "{\"step\": 3, \"data\": {\"training/global_step\": 3, \"actor\": {\"kl\": 0.5}}, \"other\": 9}\n",
        "verl.jsonl");
    CHECK(verl.reader == "verl file-logger history");
    CHECK(verl.runs[0].metrics.at("actor/kl")[0].value == 0.5);
    CHECK(verl.runs[0].metrics.at("actor/kl")[0].step == 3);
    CHECK(verl.runs[0].metrics.count("other") == 0);
    CHECK_THROWS_WITH(tr::read_json_history_text("{\"_step\": 0, \"a\": 1, \"a\": 2}\n", "dup.jsonl"),
                      doctest::Contains("dup.jsonl: line 1: run 'dup', metric 'a', step 0: 2 here but 1 on line 1"));
    CHECK_THROWS_WITH(tr::read_json_history_text("{\"_step\": 0}\n[1]\n", "arr.jsonl"),
                      doctest::Contains("arr.jsonl: line 2: not a JSON object"));
    CHECK_THROWS_WITH(tr::read_json_history_text("{\"_step\": 0} x\n", "x.jsonl"),
                      doctest::Contains("x.jsonl: line 1: not valid JSON: text after the record"));
    CHECK_THROWS_WITH(tr::read_json_history_text("[{\"_step\": \"s\"}]", "s.json"),
                      doctest::Contains("s.json: record 0: '_step' is not a number"));
}

TEST_CASE("TRL trainer_state.json read in one pass: text and nested values passed over, NaN kept, bad entries named") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "logratio_test_trl_state" / "run a" / "checkpoint-2";
    fs::create_directories(dir);
    const auto write = [&](const std::string& text) {
        std::ofstream(dir / "trainer_state.json") << text;
        return (dir / "trainer_state.json").string();
    };
    const auto ok = tr::read_trl_states(write(
        "{\"best_metric\": null, \"log_history\": [{\"loss\": 0.5, \"step\": 1, \"sampling/sampling_logp_difference/mean\": NaN,"
        " \"note\": \"text\", \"hist\": [1, 2], \"cfg\": {\"a\": 1}, \"flag\": true},"
        " {\"step\": 2, \"loss\": 0.25}], \"trial_params\": null}"));
    REQUIRE(ok.runs.size() == 1);
    const auto& r = ok.runs[0];
    CHECK(r.name == "run a");
    CHECK(r.metrics.at("loss").size() == 2);
    CHECK(r.metrics.at("loss")[1].value == 0.25);
    CHECK(std::isnan(r.metrics.at("sampling/sampling_logp_difference/mean")[0].value));
    CHECK(r.metrics.at("flag")[0].value == 1.0);
    CHECK(r.metrics.count("note") == 0);
    CHECK(r.metrics.count("cfg/a") == 0);
    CHECK_THROWS_WITH(tr::read_trl_states(write("{\"log_history\": [{\"step\": 1}, {\"loss\": 1}]}")),
                      doctest::Contains("trainer_state.json: log_history[1]: an entry without 'step'"));
    CHECK_THROWS_WITH(tr::read_trl_states(write("{\"log_history\": [{\"step\": \"x\"}]}")),
                      doctest::Contains("log_history[0]: 'step' is not a number"));
    CHECK_THROWS_WITH(tr::read_trl_states(write("{\"global_step\": 2}")), doctest::Contains("no 'log_history' list"));
    CHECK_THROWS_WITH(tr::read_trl_states(write("{\"log_history\": [{\"step\": 1},\n]}")),
                      doctest::Contains("trainer_state.json: line 2: not valid JSON"));
    fs::remove_all(dir.parent_path().parent_path());
}

namespace {

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
    for (const auto& n : notes)
        if (n.find(part) != std::string::npos) return true;
    return false;
}
const tr::run_history& run_named(const tr::history_set& set, const std::string& name) {
    for (const auto& r : set.runs)
        if (r.name == name) return r;
    FAIL("no run named '" << name << "'");
    return set.runs.front();
}
std::vector<double> values_of(const tr::run_history& r) {
    std::vector<double> v;
    for (const auto& p : r.metrics.at(metric)) v.push_back(p.value);
    return v;
}

}  // namespace

TEST_CASE("MLflow SQLite store: +-inf kept as +-DBL_MAX by MLflow read as +-inf; deleted runs out; a relaunch kept apart") {
    const auto set = read_auto(data("edge/mlflow_edge.db"));
    // inf-run's deleted twin and its empty relaunch do not count: it keeps its name
    REQUIRE(set.runs.size() == 3);
    const auto v = values_of(run_named(set, "inf-run"));
    REQUIRE(v.size() == 4);
    CHECK(v[0] == 0.125);
    CHECK((std::isinf(v[1]) && v[1] > 0));
    CHECK((std::isinf(v[2]) && v[2] < 0));
    CHECK(v[3] == 0.375);
    CHECK(values_of(run_named(set, "relaunch (bbbb2222)")) == std::vector<double>{0.5});
    CHECK(values_of(run_named(set, "relaunch (cccc3333)")) == std::vector<double>{0.25, 0.75});
    CHECK(has_note(set.notes, "2 runs share a name with another run (a relaunch?)"));
    CHECK(has_note(set.notes, "1 deleted run(s) not read"));
}

TEST_CASE("MLflow file store: deleted runs out, runs without metrics out, a relaunch kept apart") {
    const auto set = read_auto(data("edge/mlruns"));
    REQUIRE(set.runs.size() == 2);
    CHECK(values_of(run_named(set, "relaunch (1111aaaa)")) == std::vector<double>{0.5});
    CHECK(values_of(run_named(set, "relaunch (2222bbbb)")) == std::vector<double>{0.25, 0.75});
    CHECK(has_note(set.notes, "1 deleted run(s) not read"));
}

TEST_CASE("verl file logger: null (orjson's NaN and +-Infinity) is a NaN point, with a note") {
    const auto set = read_auto(data("edge/verl_null.jsonl"));
    REQUIRE(set.runs.size() == 1);
    const auto v = values_of(set.runs[0]);
    REQUIRE(v.size() == 3);
    CHECK(v[0] == 0.125);
    CHECK(std::isnan(v[1]));
    CHECK(v[2] == 0.375);
    CHECK(has_note(set.notes, "1 null value(s) in verl data dicts read as NaN"));
}

TEST_CASE("W&B history: a training step logged at two events (a rewound resume) keeps the last value, with a note") {
    const auto runs = convert(read_auto(data("edge/wandb_rewind.jsonl")));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].series.update == std::vector<double>{1, 2});
    CHECK(runs[0].series.value == std::vector<double>{0.875, 0.75});
    CHECK(has_note(runs[0].notes, "2 training step(s) of '" + metric + "' logged at more than one '_step'"));
}

TEST_CASE("TRL: runs sharing a name in two groups are named by their paths; a renamed trainer_state.json is found") {
    const auto set = read_auto(data("edge/trl"));
    REQUIRE(set.runs.size() == 2);
    CHECK(run_named(set, "async/seed0").group == "async");
    CHECK(values_of(run_named(set, "sync/seed0")) == std::vector<double>{0.125, 0.25});
    const auto renamed = read_auto(data("edge/trl_renamed/run1_trainer_state.json"));
    CHECK(renamed.reader == "TRL trainer_state.json");
    REQUIRE(renamed.runs.size() == 1);
    CHECK(renamed.runs[0].name == "trl_renamed");
    // the file named alone, from inside its directory (no directory part)
    namespace fs = std::filesystem;
    const fs::path here = fs::current_path();
    fs::current_path(data("edge/trl_renamed"));
    const auto local = tr::read_input("run1_trainer_state.json", "auto");
    fs::current_path(here);
    REQUIRE(local.set.runs.size() == 1);
    CHECK(local.set.runs[0].name == "trl_renamed");
    // output_dir/trainer_state.json written at the end of training (global_step 3)
    // is later than its last checkpoint (checkpoint-2): the larger global_step wins
    const auto final_state = read_auto(data("edge/trl_final"));
    REQUIRE(final_state.runs.size() == 1);
    CHECK(values_of(final_state.runs[0]) == std::vector<double>{0.125, 0.25, 0.375});
}

TEST_CASE("JSON Lines: a long table with NaN tokens; a history whose last line was cut off mid-write") {
    auto d = tr::read_input(data("edge/long_nan.jsonl"), "auto");
    REQUIRE(d.kind == tr::detected_input::long_table);
    std::vector<std::vector<logratio_cli::run_input>> got(1);
    logratio_cli::long_table_runs(d.streamed, {"m"}, got);
    const auto& runs = got[0];
    REQUIRE(runs.size() == 1);
    REQUIRE(runs[0].series.value.size() == 2);
    CHECK(runs[0].series.value[0] == 0.5);
    CHECK(std::isnan(runs[0].series.value[1]));
    const auto cut = read_auto(data("edge/wandb_cut.jsonl"));
    CHECK(values_of(cut.runs.at(0)) == std::vector<double>{0.125, 0.25});
    CHECK(has_note(cut.notes, "wandb_cut.jsonl: line 3: the last line has no newline and is not a whole JSON record"));
    // a finished last line without its newline is read; a syntax error in it stays an error
    CHECK(values_of(tr::read_json_history_text("{\"_step\": 0, \"" + metric + "\": 0.5}", "x.jsonl", tr::key_filter()).runs.at(0)) ==
          std::vector<double>{0.5});
    CHECK_THROWS_WITH_AS(tr::read_json_history_text("{\"_step\": 0, \"m\": 0.5,, \"n\": 1}", "x.jsonl", tr::key_filter()),
                         doctest::Contains("x.jsonl: line 1: not valid JSON"), logratio::format_error);
}

// ---------------------------------------------------------------- run attributes (#38)

namespace {

using attribute_map = std::map<std::string, std::string>;

// The attributes make_tracker_histories.py gives each run (config(): a
// nested actor.lr, numbers written as the shortest round trip).
attribute_map config_of(const std::string& run) {
    static const std::map<std::string, std::string> commits{
        {"async run 1", "4f1c2ab"}, {"async run 2", "9e07d3c"}, {"sync run 1", "b52a811"}, {"sync run 2", "c3d94f0"}};
    return {{"runtime_commit", commits.at(run)},
            {"mode", run.substr(0, run.find(' '))},
            {"actor.lr", run == "sync run 2" ? "2e-06" : "1e-06"},
            {"batch_size", "64"}};
}

// Every run's attributes are exactly its config plus `extra`.
void check_config_attributes(const tr::history_set& set, const attribute_map& extra = {}, std::size_t runs = 4) {
    REQUIRE(set.runs.size() == runs);
    for (const auto& r : set.runs) {
        INFO(set.reader << " run '" << r.name << "'");
        attribute_map want = config_of(r.name);
        for (const auto& [k, v] : extra) want[k] = v == "<name>" ? r.name : v;
        CHECK(r.attributes == want);
    }
}

bool has_note(const tr::history_set& set, const std::string& part) {
    for (const auto& n : set.notes)
        if (n.find(part) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("attributes: W&B offline config records (RunRecord and config records, last wins, _wandb skipped) and files/config.yaml") {
    const auto set = read_auto(data("wandb_offline"));
    check_config_attributes(set);
    // runs 0 and 1 changed 'mode' across their config records: said in a note
    CHECK(has_note(set, "W&B run 'async run 1'"));
    CHECK(has_note(set, "attribute(s) given twice with different values, the last kept (as W&B does): mode (draft -> async)"));
    CHECK(has_note(set, "mode (sync -> async)"));
    // runs 2 and 3 have no config record: their files/config.yaml
    CHECK(has_note(set, "r2xsync.wandb: no config record in the log: the run's attributes read from"));
    CHECK(has_note(set, "offline-run-20261203_000000-r3xsync/files/config.yaml"));
}

TEST_CASE("attributes: MLflow params and tags (file store and SQLite), tags by their names, '/' keys as subdirectories") {
    const attribute_map tags{{"mlflow.runName", "<name>"}, {"lab/queue", "a100"}};
    check_config_attributes(read_auto(data("mlruns")), tags);
    check_config_attributes(read_auto(data("mlflow.db")), tags);
}

TEST_CASE("attributes: TensorBoard hparams (session_start_info, numbers shortest round trip), not a metric") {
    const auto set = read_auto(data("tensorboard"));
    check_config_attributes(set);
    for (const auto& r : set.runs) CHECK(r.metrics.count("_hparams_/session_start_info") == 0);
    for (const auto& n : set.notes) CHECK(n.find("_hparams_") == std::string::npos);
}

TEST_CASE("attributes: TRL trainer_state.json's run fields (not its progress: epoch, global_step, best_metric)") {
    const auto set = read_auto(data("trl"));
    REQUIRE(set.runs.size() == 4);
    const attribute_map want{{"train_batch_size", "64"}, {"num_train_epochs", "1"}, {"logging_steps", "1"},
                             {"eval_steps", "500"},      {"save_steps", "6"},       {"max_steps", "12"},
                             {"is_hyper_param_search", "false"}};
    for (const auto& r : set.runs) CHECK(r.attributes == want);
}

TEST_CASE("attributes: a long table's text columns constant per run and its attr: columns; numbers stay metrics") {
    auto d = tr::read_input(data("long.csv"), "auto");
    REQUIRE(d.kind == tr::detected_input::long_table);
    std::vector<std::vector<logratio_cli::run_input>> got(1);
    logratio_cli::long_table_runs(d.streamed, {metric}, got);
    const auto& rs = got[0];
    check_same_as_reference(rs, true);
    REQUIRE(rs.size() == 4);
    for (const auto& r : rs) {
        INFO(r.series.run);
        CHECK(r.attributes == config_of(r.series.run));
    }
    // a text column that varies within a run is no attribute; attr: with two values in a run is an error
    const auto t = logratio_cli::parse_csv("run,update,m,note,attr:seed,phase\na,1,0.5,x,1,warm\na,2,0.25,y,1,\nb,1,0.5,z,2,cold\n", "t.csv");
    std::vector<logratio_cli::run_input> two;
    logratio_test::long_runs(t, "m", two);
    REQUIRE(two.size() == 2);
    CHECK(two[0].attributes == attribute_map{{"seed", "1"}, {"phase", "warm"}});
    CHECK(two[1].attributes == attribute_map{{"seed", "2"}, {"phase", "cold"}});
    const auto bad = logratio_cli::parse_csv("run,update,m,attr:seed\na,1,0.5,1\na,2,0.25,2\n", "bad.csv");
    std::vector<logratio_cli::run_input> none;
    CHECK_THROWS_WITH_AS(logratio_test::long_runs(bad, "m", none),
                         doctest::Contains("bad.csv: line 3, column 'attr:seed': run 'a' has '2' here but '1' on line 2"),
                         logratio::format_error);
}

TEST_CASE("attributes: a W&B history export (JSON Lines, CSV) takes the config.yaml beside it") {
    for (const char* f : {"dirs/wandb_files/files/history.jsonl", "dirs/wandb_files_csv/files/history.csv"}) {
        INFO(f);
        const auto set = read_auto(data(f));
        REQUIRE(set.runs.size() == 1);
        CHECK(set.runs[0].name == "history");
        CHECK(set.runs[0].group == "files");
        attribute_map want = config_of("sync run 1");
        CHECK(set.runs[0].attributes == want);
        CHECK(has_note(set, "history: attributes read from "));
    }
    // a history without one has none
    CHECK(read_auto(data("verl/sync/sync run 1.jsonl")).runs[0].attributes.empty());
}

TEST_CASE("attributes: run_from_history copies them into the run") {
    const auto set = read_auto(data("mlflow.db"));
    const auto rs = convert(set);
    REQUIRE(rs.size() == 4);
    CHECK(rs[3].attributes.at("actor.lr") == "2e-06");
    CHECK(rs[3].attributes.at("mlflow.runName") == "sync run 2");
}

// ---------------------------------------------------------------- directories of history files

TEST_CASE("directories of history files: verl .jsonl, W&B CSV and JSON exports, one run per file, groups by directory") {
    for (const char* dir : {"verl", "wandb_history", "wandb_jsonl"}) {
        INFO(dir);
        const auto set = read_auto(data(dir));
        REQUIRE(set.runs.size() == 4);
        std::map<std::string, std::string> group;
        for (const auto& r : set.runs) group[r.name] = r.group;
        CHECK(group == std::map<std::string, std::string>{
                           {"async run 1", "async"}, {"async run 2", "async"}, {"sync run 1", "sync"}, {"sync run 2", "sync"}});
        check_same_as_reference(convert(set), true);
    }
    CHECK(read_auto(data("verl")).reader == "verl file-logger histories");
    CHECK(read_auto(data("wandb_history")).reader == "W&B history CSV exports");
    CHECK(read_auto(data("wandb_jsonl")).reader == "W&B JSON histories");
    check_same_as_reference(convert(read_auto(data("wandb_json"))), false);  // no group directories
}

TEST_CASE("directories of history files: two files naming one run are kept apart by their paths, with a note") {
    const auto set = read_auto(data("dirs/dup_names"));
    REQUIRE(set.runs.size() == 2);
    CHECK(set.runs[0].name == "a/run");
    CHECK(set.runs[1].name == "b/run");
    CHECK(set.runs[0].group == "a");
    CHECK(set.runs[1].metrics.at(metric)[1].value == 0.5);
    CHECK(has_note(set, "run 'run' of a/run.jsonl is named 'a/run' (another file has a run of the same name"));
}

TEST_CASE("directories of history files: two kinds in one directory are an error naming a file of each") {
    CHECK_THROWS_WITH(tr::read_input(data("dirs/mixed"), "auto"),
                      doctest::Contains("dirs/mixed: a directory without a history logratio reads as one: it mixes kinds of "
                                        "history files: verl file-logger history (.jsonl) (x.jsonl), W&B history CSV export (sub/y.csv); give a "
                                        "directory holding one kind, or the files one by one"));
    CHECK_THROWS_WITH(tr::read_input(data("dirs/mixed"), "json"), doctest::Contains("mixes kinds of history files"));
}

TEST_CASE("a W&B run directory with a sync_tensorboard copy reads the .wandb log; a project directory opens wandb/ or mlruns/") {
    const auto run = read_auto(data("dirs/project_wandb/wandb/run-20261203_000000-r2xsync"));
    CHECK(run.reader == "W&B offline log");
    REQUIRE(run.runs.size() == 1);
    CHECK(run.runs[0].name == "sync run 1");
    CHECK(run.runs[0].attributes == config_of("sync run 1"));
    CHECK(run.runs[0].metrics.count("rollout/raw_reward") == 1);  // the log's keys, not the TensorBoard copy's
    CHECK(has_note(run, "a TensorBoard copy (sync_tensorboard) of their history: read the .wandb logs, skipped 1 event file(s)"));
    const auto project = read_auto(data("dirs/project_wandb"));
    CHECK(project.reader == "W&B offline log");
    REQUIRE(project.runs.size() == 1);
    CHECK(has_note(project, "dirs/project_wandb: a project directory: opened "));
    CHECK(project.notes[0].find("project_wandb/wandb") != std::string::npos);
    const auto mlflow = read_auto(data("dirs/project_mlflow"));
    CHECK(mlflow.reader == "MLflow file store");
    check_same_as_reference(convert(mlflow), false);
    CHECK(has_note(mlflow, "a project directory: opened "));
}

TEST_CASE("attribute text: numbers as %.17g with the fewest digits that round-trip; W&B's config.yaml layout") {
    CHECK(tr::number_text(0.1 + 0.2) == "0.30000000000000004");
    CHECK(tr::number_text(3e-4) == "0.0003");
    CHECK(tr::number_text(1e-6) == "1e-06");
    CHECK(tr::number_text(1000.0) == "1000");
    CHECK(tr::number_text(-2.5) == "-2.5");
    CHECK(tr::number_text(1e20) == "1e+20");
    CHECK(tr::number_text(1e16) == "10000000000000000");
    CHECK(tr::number_text(std::nan("")) == "nan");
    namespace fs = std::filesystem;
    const fs::path f = fs::temp_directory_path() / "logratio_test_config.yaml";
    std::ofstream(f) << "wandb_version: 1\n\n_wandb:\n  desc: null\n  value:\n    cli_version: 0.19.1\n"
                        "actor:\n  desc: null\n  value:\n    lr: 1.0e-06\n    layers:\n    - 64\n    - 32\n"
                        "    name: 'it''s'\n    opt: {}\nnote:\n  value: \"a\\\"b\"\nflag:\n  value: true\n"
                        "none:\n  value: null\nseed:\n  desc: the seed\n  value: 7\n";
    const auto a = tr::read_wandb_config_yaml(f.string());
    fs::remove(f);
    CHECK(a == std::map<std::string, std::string>{{"actor.lr", "1e-06"}, {"actor.layers", "[64, 32]"}, {"actor.name", "it's"},
                                                  {"note", "a\"b"}, {"flag", "true"}, {"seed", "7"}});
}

TEST_CASE("attributes: a dump's __metadata__ but run, group and update") {
    const std::string f = std::string(LOGRATIO_TEST_DATA) + "/../../examples/data/runs/sync/sync-0/update_010.safetensors";
    const auto d = logratio_cli::panel_of_dump(f, "sync/sync-0/update_010.safetensors", nullptr, {});
    CHECK(d.run == "sync-0");
    CHECK(d.attributes == std::map<std::string, std::string>{{"generator", "logratio make_sample"}, {"seed", "20261202"}, {"lag", "0"}});
}

TEST_CASE("a project directory holding mlflow.db opens it; --format json reads a directory of history files") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "logratio_test_project_db";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(data("mlflow.db"), dir / "mlflow.db");
    const auto set = read_auto(dir.string());
    fs::remove_all(dir);
    CHECK(set.reader == "MLflow SQLite store");
    check_same_as_reference(convert(set), false);
    CHECK(has_note(set, ": a project directory: opened "));
    CHECK(set.notes[0].find("mlflow.db") != std::string::npos);
    const auto forced = tr::read_input(data("verl"), "json");
    CHECK(forced.set.reader == "verl file-logger histories");
    check_same_as_reference(convert(forced.set), true);
}

// #42: the readers' layer as a user meets it.
namespace fs = std::filesystem;
TEST_CASE("MLflow duplicate (key, step) (Stable-Baselines3's double dump): the latest by (timestamp, value) wins, counted") {
    for (const char* input : {"edge/sb3_dup/mlruns", "edge/sb3_dup.db"}) {
        INFO(input);
        const auto set = read_auto(data(input));
        REQUIRE(set.runs.size() == 1);
        CHECK(set.runs[0].name == "ppo");
        CHECK(set.runs[0].id == "5b35b3" + std::string(26, '0'));
        // step 2: 0.2501 is 3 ms later; step 3: one timestamp, the larger value (MLflow's latest_metrics order)
        CHECK(values_of(set.runs[0]) == std::vector<double>{0.125, 0.2501, 0.31});
        CHECK(has_note(set.notes, "run 'ppo': 2 (metric, step) pair(s) logged twice with different values"));
    }
}

TEST_CASE("--update-offset before --steps-per-batch: 1-based TRL steps with offset -1 put step 1 at position 0") {
    const auto set = read_auto(data("trl/sync"));
    logratio_cli::history_options o;
    o.steps_per_batch = 2;
    o.update_offset = -1;
    std::string how;
    const auto r = tr::run_from_history(set.runs[0], metric, o, how);
    REQUIRE(r.series.update.size() >= 2);
    CHECK(r.series.update[0] == 0.0);  // step 1
    CHECK(r.position[0] == 0);
    CHECK(r.position[1] == 1);
}

TEST_CASE("a copied wandb/latest-run/ (byte-identical log) is read once, with a note; the run keeps its W&B id") {
    const fs::path dir = fs::temp_directory_path() / "logratio_test_latest_run";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy(data("dirs/project_wandb/wandb"), dir / "wandb", fs::copy_options::recursive);
    fs::copy(dir / "wandb" / "run-20261203_000000-r2xsync", dir / "wandb" / "latest-run", fs::copy_options::recursive);
    const auto set = read_auto(dir.string());
    REQUIRE(set.runs.size() == 1);
    CHECK(set.runs[0].id == "r2xsync");
    CHECK(set.runs[0].source.find("latest-run") == std::string::npos);  // the run-* directory is the one read
    CHECK(has_note(set.notes, "latest-run/run-r2xsync.wandb: byte-identical to"));
    CHECK(has_note(set.notes, "skipped"));  // its files/ TensorBoard copy, through the project directory
    fs::remove_all(dir);
}

TEST_CASE("real files: sync_tensorboard's global_step is the W&B step; event files in the logdir name the run by it") {
    const std::string run = std::string(LOGRATIO_TEST_DATA) + "/real/wandb/conceptppo/wandb/run-20230723_093735-mxaehod4";
    const auto w = read_auto(std::string(LOGRATIO_TEST_DATA) + "/real/wandb/conceptppo");
    REQUIRE(w.runs.size() == 1);
    logratio_cli::history_options o;
    std::string how;
    const auto r = tr::run_from_history(w.runs[0], "Loss/pi", o, how);
    CHECK(how.rfind("global_step", 0) == 0);
    CHECK(r.series.update.size() == 763);
    CHECK(r.series.update[1] == 65536.0);  // CleanRL's global_step, as in the TensorBoard copy
    const auto tb = tr::read_input(run + "/files", "tensorboard").set;
    REQUIRE(tb.runs.size() == 1);
    CHECK(tb.runs[0].name == "files");
    CHECK(tb.runs[0].metrics.at("Loss/pi").size() == 763);
}
