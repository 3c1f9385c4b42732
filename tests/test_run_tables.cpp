// The run tables the CLI reads (tools/logratio/io/table.hpp): CSV and JSONL
// long-format tables, missing and bad cells, and logging-history exports
// (W&B / MLflow history CSVs: sparse events, a step column, batch positions).
// The expected values are worked out by hand next to each check.
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "runs_output.hpp"
#include "long_runs.hpp"
#include "table.hpp"

TEST_CASE("runs: table reader keeps missing cells missing and names bad cells") {
    using logratio_cli::parse_csv;
    auto t = parse_csv("run,group,update,m\r\nr1,sync,1,0.5\nr1,sync,2,\n\"r,2\",async,1,NaN\n", "t.csv");
    std::vector<logratio_cli::run_input> in;
    logratio_test::long_runs(t, "m", in);
    REQUIRE(in.size() == 2);
    CHECK(in[0].series.value[0] == 0.5);
    CHECK(std::isnan(in[0].series.value[1]));
    CHECK(in[1].series.run == "r,2");
    CHECK(std::isnan(in[1].series.value[0]));
    auto bad = parse_csv("run,group,update,m\nr1,sync,1,abc\n", "b.csv");
    in.clear();
    CHECK_THROWS_WITH(logratio_test::long_runs(bad, "m", in), "b.csv: line 2, column 'm': 'abc' is not a number");
    CHECK_THROWS_WITH(parse_csv("a,b\n1,2,3\n", "c.csv"), "c.csv: line 2 has 3 fields, the header has 2");
    CHECK_THROWS_WITH(parse_csv("a,b\n\"1,2\n", "q.csv"), "q.csv: line 2: unterminated quoted field at end of file");
    CHECK_THROWS_WITH(parse_csv("a,b\n\"1\"x,2\n", "x.csv"), "x.csv: line 2: text after the closing quote of a field");
    CHECK_THROWS_WITH(parse_csv("a,b\n1,2\"\n", "u.csv"), "u.csv: line 2: a quote inside an unquoted field");
    {  // quoted fields: escaped quotes, commas and newlines; CRLF; blank lines; numbers as strtod reads them
        auto q = parse_csv("x,\"y\"\r\n\r\n\"a \"\"q\"\"\",\"1\n2\"\r\n +1e400 ,-1e-400\n", "q.csv");
        REQUIRE(q.row_count() == 2);
        CHECK(q.columns[1] == "y");
        CHECK(q.cell(0, 0) == "a \"q\"");
        CHECK(q.cell(0, 1) == "1\n2");
        CHECK(q.line == std::vector<std::size_t>{3, 5});
        CHECK(logratio_cli::parse_cell(q, 1, 0) == HUGE_VAL);
        CHECK(logratio_cli::parse_cell(q, 1, 1) == 0.0);
        CHECK(logratio_cli::cell_number("0.1").value() == 0.1);
        CHECK(logratio_cli::cell_number("-Infinity").value() == -HUGE_VAL);
        CHECK(std::isnan(logratio_cli::cell_number(" NA ").value()));
        CHECK(!logratio_cli::cell_number("0x10"));
        CHECK(!logratio_cli::cell_number("+-1"));
        CHECK(!logratio_cli::cell_number("1,5"));
    }
    auto dup = parse_csv("run,group,update,m\nr,g,1,1\nr,g,1,2\n", "d.csv");
    in.clear();
    CHECK_THROWS_WITH(logratio_test::long_runs(dup, "m", in), "d.csv: run 'r' update 1 appears on lines 2 and 3");
    CHECK_THROWS_WITH(logratio_cli::parse_jsonl("{\"run\": \"a\"}\n{oops\n", "j.jsonl"),
                      doctest::Contains("j.jsonl: line 2: not valid JSON"));
    auto j = logratio_cli::parse_jsonl("{\"run\":\"a\",\"group\":\"g\",\"update\":1,\"m\":0.1}\n\n"
                                       "{\"run\":\"a\",\"group\":\"g\",\"update\":2,\"m\":null}\n",
                                       "j.jsonl");
    in.clear();
    logratio_test::long_runs(j, "m", in);
    REQUIRE(in.size() == 1);
    CHECK(in[0].series.value[0] == 0.1);
    CHECK(std::isnan(in[0].series.value[1]));
}

TEST_CASE("runs: logging-history export (sparse events, step column, zero grad norm, batch positions)") {
    // _step counts logging events; train/step is the training step; each
    // event logs a subset of the metrics.
    const std::string csv =
        "_step,train/step,train/grad_norm,rollout/delta_abs_mean,train/ppo_kl\n"
        "0,1,0.5,,0.0\n"
        "1,1,,0.011,\n"
        "2,,,,\n"             // a system event without a training step
        "3,2,0.0,0.012,0.02\n"
        "4,3,0.7,0.010,0.0\n"
        "5,4,0.6,,0.03\n"
        "6,4,,0.013,\n";
    auto t = logratio_cli::parse_csv(csv, "exports/async/run7.csv");
    logratio_cli::history_options o;
    CHECK_THROWS_WITH(logratio_cli::history_run(t, "rollout/delta_abs_mean", o),
                      doctest::Contains("looks like a logging-history export"));
    o.step_column = "train/step";
    o.update_offset = -1;
    o.steps_per_batch = 2;
    o.grad_norm_column = "train/grad_norm";
    const auto r = logratio_cli::history_run(t, "rollout/delta_abs_mean", o);
    CHECK(r.series.run == "run7");
    CHECK(r.series.group == "async");
    REQUIRE(r.series.update == std::vector<double>{0, 1, 2, 3});
    CHECK(r.series.value == std::vector<double>{0.011, 0.012, 0.010, 0.013});
    CHECK(r.position == std::vector<long>{1, 0, 1, 0});
    CHECK(r.zero_grad_norm == std::vector<double>{1});
    CHECK(r.notes.size() == 2);  // skipped event, zero-grad listing
    // the KL of the first update of each batch is not averaged with the second
    auto k = logratio_cli::history_run(t, "train/ppo_kl", o);
    const auto pm = logratio_cli::position_means(k);
    REQUIRE(pm.size() == 2);
    CHECK(pm[0].second.second == doctest::Approx(0.025));  // position 0: steps 2, 4
    CHECK(pm[1].second.second == 0.0);                       // position 1: steps 1, 3
    logratio_cli::keep_position(k, 1);
    CHECK(k.series.update == std::vector<double>{0, 2});
}
