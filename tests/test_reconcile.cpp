// `logratio reconcile` (tools/logratio/commands/reconcile.hpp): the planted
// disagreements of tests/data/trackers/reconcile (written with the result
// expected by tests/trackers/make_reconcile_sources.py) found exactly --
// counts, every difference, what is on one side only -- without options,
// with --map and with --rtol; identical sources agree; the errors; and
// trackers::logged_by_training_step, the steps it matches by.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "commands/reconcile.hpp"
#include "trackers/detect.hpp"
#include "trackers/to_runs.hpp"

namespace {

namespace lc = logratio_cli;
const std::string metric = "train/train_rollout_logprob_abs_diff";

std::string data(const std::string& name) { return std::string(LOGRATIO_TEST_DATA) + "/trackers/" + name; }

nlohmann::json expected(const std::string& which) {
    std::ifstream f(data("reconcile/expected.json"));
    REQUIRE(f);
    return nlohmann::json::parse(f).at(which);
}

/// expected.json's value: a number, or "NaN" / "Infinity" / "-Infinity".
double value(const nlohmann::json& v) {
    if (v.is_number()) return v.get<double>();
    const auto s = v.get<std::string>();
    if (s == "NaN") return std::nan("");
    REQUIRE((s == "Infinity" || s == "-Infinity"));
    return s == "Infinity" ? INFINITY : -INFINITY;
}

/// The same bits, or both NaN.
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

void check_fields(const std::vector<lc::reconcile_field>& got, const nlohmann::json& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(got[i].run == want[i].at("run").get<std::string>());
        CHECK(got[i].step == want[i].at("step").get<double>());
        CHECK(got[i].metric == want[i].at("metric").get<std::string>());
    }
}

/// reconcile_sources on the planted data against one case of expected.json.
void check_case(const std::string& which, const lc::reconcile_options& o) {
    CAPTURE(which);
    const auto e = expected(which);
    const auto r = lc::reconcile_sources({data("reconcile/mlruns")}, data("reconcile/local_history.csv"), o);
    CHECK(r.overlapping == e.at("overlapping").get<std::size_t>());
    CHECK(r.agree == e.at("agree").get<std::size_t>());
    const auto& d = e.at("differ");
    REQUIRE(r.differ.size() == d.size());
    for (std::size_t i = 0; i < d.size(); ++i) {
        CAPTURE(i);
        CHECK(r.differ[i].run == d[i].at("run").get<std::string>());
        CHECK(r.differ[i].step == d[i].at("step").get<double>());
        CHECK(r.differ[i].metric == d[i].at("metric").get<std::string>());
        CHECK(r.differ[i].metric_b == d[i].value("metric_b", d[i].at("metric").get<std::string>()));
        CHECK(same(r.differ[i].a, value(d[i].at("a"))));
        CHECK(same(r.differ[i].b, value(d[i].at("b"))));
    }
    check_fields(r.only_a, e.at("only_a"));
    check_fields(r.only_b, e.at("only_b"));
    CHECK(r.steps_only_a == e.at("steps_only_a").get<std::size_t>());
    CHECK(r.steps_only_b == e.at("steps_only_b").get<std::size_t>());
    CHECK(r.runs_only_a == e.at("runs_only_a").get<std::vector<std::string>>());
    CHECK(r.runs_only_b == e.at("runs_only_b").get<std::vector<std::string>>());
}

std::string temp_file(const std::string& name, const std::string& text) {
    const auto p = std::filesystem::temp_directory_path() / ("logratio_test_reconcile_" + name);
    std::ofstream(p) << text;
    return p.string();
}

std::string error_of(const std::vector<std::string>& a, const std::string& b, const lc::reconcile_options& o = {}) {
    try {
        lc::reconcile_sources(a, b, o);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("reconcile: the planted disagreements, exactly as expected.json says") {
    lc::reconcile_options o;
    check_case("exact", o);
    o.map = lc::parse_metric_map({"train/grad_norm=actor/grad_norm"});
    check_case("map", o);
    o.rtol = 1e-9;  // the ulp changes agree; 2^-20 relative and NaN vs a number still differ
    check_case("rtol_map", o);
    const auto r = lc::reconcile_sources({data("reconcile/mlruns")}, data("reconcile/local_history.csv"), o);
    CHECK(r.differ.size() == 2);
    CHECK(lc::reconcile_summary(r) ==
          "across 81 overlapping numeric fields, the tracker and the local log: 79 agree within rtol 1e-09, 2 differ");
}

TEST_CASE("reconcile: a map of one side's metric changes only that metric's fields") {
    const auto plain = lc::reconcile_sources({data("reconcile/mlruns")}, data("reconcile/local_history.csv"), {});
    lc::reconcile_options o;
    o.map = {{"train/grad_norm", "actor/grad_norm"}};
    const auto mapped = lc::reconcile_sources({data("reconcile/mlruns")}, data("reconcile/local_history.csv"), o);
    CHECK(mapped.overlapping == plain.overlapping + 41);  // the 41 grad norms both sides logged
    CHECK(mapped.differ.size() == plain.differ.size() + 1);
    CHECK(mapped.only_a.size() == plain.only_a.size() - 41);
    CHECK(lc::reconcile_summary(plain) ==
          "across 40 overlapping numeric fields, the tracker and the local log: 35 agree exactly, 5 differ");
}

TEST_CASE("reconcile: the same runs in two trackers agree exactly") {
    const auto r = lc::reconcile_sources({data("mlruns")}, data("mlflow.db"), {});
    CHECK(r.overlapping == 82);  // 41 steps x (metric, grad norm); the NaN of "sync run 2" equals NaN
    CHECK(r.agree == 82);
    CHECK(r.differ.empty());
    CHECK(r.only_a.empty());
    CHECK(r.only_b.empty());
    CHECK(lc::reconcile_summary(r) == "across 82 overlapping numeric fields, the tracker and the local log agree exactly");
    // a W&B history: its training step is train/step (rollout/step for the
    // reward), not _step; its NaN cell is nothing logged
    const auto w = lc::reconcile_sources({data("mlruns")}, data("wandb_histories.csv"), {});
    CHECK(w.overlapping == 81);
    CHECK(w.differ.empty());
    REQUIRE(w.only_a.size() == 1);
    CHECK(w.only_a[0].run == "sync run 2");
    CHECK(w.only_a[0].step == 7);
    CHECK(w.only_b.size() == 41);  // rollout/raw_reward
    // the TensorBoard logdir (float32 values, exact for these) and the long table
    const auto t = lc::reconcile_sources({data("tensorboard")}, data("long.csv"), {});
    CHECK(t.overlapping == 40);
    CHECK(t.differ.empty());
}

TEST_CASE("reconcile: errors name what is wrong") {
    // one side's two inputs holding the same run: never merged
    CHECK(error_of({data("mlruns"), data("mlflow.db")}, data("long.csv")).rfind("A: run 'async run 1' is in ", 0) == 0);
    const auto other = temp_file("other.csv", "run,update,m\nother run,1,0.5\n");
    const auto none = error_of({data("mlruns")}, other);
    CHECK(none.find("no run in common") != std::string::npos);
    CHECK(none.find("'async run 1', 'async run 2'") != std::string::npos);
    CHECK(none.find("B has 'other run'") != std::string::npos);
    const auto late = temp_file("late.csv", "run,update," + metric + "\nasync run 1,100,0.5\n");
    const auto no_field = error_of({data("mlruns")}, late);
    CHECK(no_field.find("no overlapping field") != std::string::npos);
    CHECK(no_field.find("run 'async run 1'") != std::string::npos);
    CHECK(no_field.find("at 1 step(s) 100..100") != std::string::npos);
    CHECK_THROWS_WITH_AS(lc::parse_metric_map({"train/grad_norm"}), doctest::Contains("expected A_NAME=B_NAME"),
                         logratio::error);
    CHECK_THROWS_WITH_AS(lc::parse_metric_map({"a=b", "a=c"}), doctest::Contains("mapped twice"), logratio::error);
    lc::reconcile_options o;
    o.map = {{"train/grad_norm", "nope"}};
    CHECK(error_of({data("mlruns")}, data("mlflow.db"), o) == "--map train/grad_norm=nope: B has no metric 'nope'");
    CHECK(error_of({data("nope")}, data("mlflow.db")).find("nope") != std::string::npos);
}

TEST_CASE("logged_by_training_step: only what was logged, by the training step") {
    namespace tr = lc::trackers;
    std::string how;
    // MLflow: its own step; the logged NaN stays
    const auto ml = tr::read_input(data("mlruns"), "auto");
    const auto& s2 = *std::find_if(ml.set.runs.begin(), ml.set.runs.end(),
                                   [](const tr::run_history& r) { return r.name == "sync run 2"; });
    const auto m = tr::logged_by_training_step(s2, metric, lc::history_options(), how);
    CHECK(how == "MLflow step");
    REQUIRE(m.size() == 12);
    CHECK(std::isnan(m.at(7)));
    // W&B: train/step, not _step (which counts 2 events per step); the
    // missing cell is no point, not NaN; rollout/raw_reward by rollout/step
    const auto wb = tr::read_input(data("wandb_history/sync/sync run 2.csv"), "auto");
    REQUIRE(wb.set.runs.size() == 1);
    const auto w = tr::logged_by_training_step(wb.set.runs[0], metric, lc::history_options(), how);
    CHECK(how.rfind("train/step", 0) == 0);
    CHECK(w.size() == 11);
    CHECK(w.count(7) == 0);
    CHECK(w.begin()->first == 1);
    CHECK(w.rbegin()->first == 12);
    const auto reward = tr::logged_by_training_step(wb.set.runs[0], "rollout/raw_reward", lc::history_options(), how);
    CHECK(how.rfind("rollout/step", 0) == 0);
    CHECK(reward.size() == 12);
    CHECK(tr::logged_by_training_step(wb.set.runs[0], "no such metric", lc::history_options(), how).empty());
}
