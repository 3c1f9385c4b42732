// The readers' fast paths (issue 41, bench/RESULTS.md "Readers") say exactly
// what the paths they replace said: JSON Lines through simdjson against
// json_scanner alone (same runs, values bit for bit, notes, errors), the
// CSV parser's one-pass cells and cell_number's numbers against strtod, the
// W&B history's plain-number cells against parse_cell, run_builder's sorting.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>

#include "table.hpp"
#include "trackers/json_history.hpp"
#include "trackers/run_builder.hpp"
#include "trackers/trl_state.hpp"
#include "trackers/wandb_history.hpp"
#ifdef LOGRATIO_TEST_HAVE_SIMDJSON
#include "trackers/json_ondemand.hpp"
#endif

namespace {

namespace tr = logratio_cli::trackers;

std::uint64_t bits(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
}

/// Everything a history says, as text (values as their bits), or the error.
std::string said(const std::string& text, tr::json_lines_parser p, const tr::key_filter& keys = tr::key_filter()) {
    try {
        const auto set = tr::read_json_history_text(text, "t.jsonl", keys, p);
        std::string s = set.reader + "\n";
        for (const auto& n : set.notes) s += "note " + n + "\n";
        for (const auto& r : set.runs) {
            s += "run " + r.name + " / " + r.group + " / " + r.step_name + "\n";
            for (const auto& u : r.unread) s += " unread " + u + "\n";
            for (const auto& [k, pts] : r.metrics) {
                s += " " + k + ":";
                for (const auto& pt : pts)
                    s += " " + std::to_string(pt.step) + "=" + std::to_string(bits(pt.value)) + "@" +
                         std::to_string(bits(pt.wall_time));
                s += "\n";
            }
        }
        return s;
    } catch (const std::exception& e) {
        return std::string("error ") + e.what();
    }
}

void same_both_ways(const std::string& text, const tr::key_filter& keys = tr::key_filter()) {
    const std::string fast = said(text, tr::json_lines_parser::fastest, keys);
    const std::string slow = said(text, tr::json_lines_parser::scanner, keys);
    CHECK_MESSAGE(fast == slow, text);
}

}  // namespace

TEST_CASE("JSON Lines: simdjson and json_scanner read every record the same") {
    const std::string w = R"({"_step": 0, "_timestamp": 1764000000.5, "a": 0.1, "b": -0, "c": -0.0, "d": 1e-400, )"
                          R"("e": -1e-400, "f": 4e-320, "g": 18446744073709551615, )"
                          R"("i": true, "j": false, "k": null, "s": "text", "arr": [1, [2, {"x": 3}]], )"
                          R"("m": {"_type": "histogram", "bins": [1, 2]}, "n": {"x": {"y": 2.5}}, "u": "é"})";
    // (no backslash, no integer beyond 64 bits in `w`: simdjson refuses such a line and
    // json_scanner reads it on both paths; they are tested apart)
    same_both_ways(R"({"_step": 0, "h": 123456789012345678901234567890, "a": 1})" "\n");
    same_both_ways(R"({"_step": 0, "u": "\u00e9\ud83d\ude00", "a": 1})" "\n");
    // more than 19 digits: simdjson 3.0.1's On-Demand misreads these (0.0667... for the
    // first); json_scanner reads them on both paths (found by fuzz_json_history)
    const std::string long_digits = R"({"_step": 0, "a": 0.62012004852294987792, "b": 0.703548263022233503682e11, )"
                                    R"("c": 12345678901234567890123, "d": 0.1234567890123456789})" "\n";
    same_both_ways(long_digits);
    CHECK(said(long_digits, tr::json_lines_parser::fastest).find(" 0=" + std::to_string(bits(0.62012004852294987792)) + "@") !=
          std::string::npos);
    same_both_ways(w + "\n" + R"({"_step": 1, "a": 0.30000000000000004, "b": 2.2250738585072011e-308})" + "\n");
    // Python's NaN tokens (simdjson refuses them: json_scanner reads the line)
    same_both_ways(R"({"_step": 0, "a": NaN, "b": Infinity, "c": -Infinity})" "\n" R"({"_step": 1, "a": 1})" "\n");
    // verl's file logger: nested data, null as NaN, media in data
    same_both_ways(R"({"step": 1, "data": {"actor": {"lr": 1e-6}, "x": null, "img": {"_type": "image"}}})" "\n"
                   R"({"step": 2, "data": {"actor": {"lr": 2e-6}, "x": 0.5}})" "\n");
    // several runs in one file, a run key, a key filter
    same_both_ways(R"({"_step": 0, "run_id": "r1", "a": 1, "b": 2})" "\n" R"({"_step": 0, "run_id": "r2", "a": 3})" "\n"
                   R"({"_step": 1, "run_id": "r1", "b": 4, "a": 5})" "\n",
                   tr::key_filter({"a"}));
    // CRLF, blank lines, a last line without a newline (whole, then cut off)
    same_both_ways("{\"_step\": 0, \"a\": 1}\r\n\r\n  \n{\"_step\": 1, \"a\": 2}");
    same_both_ways("{\"_step\": 0, \"a\": 1}\n{\"_step\": 1, \"a\": ");
    // a key met twice in one record with two values
    same_both_ways(R"({"_step": 0, "a": 1, "a": 2})" "\n");
}

TEST_CASE("JSON Lines: errors are json_scanner's, naming file and line, on either path") {
    const std::vector<std::string> bad = {
        "{\"_step\": 0, \"a\": 1e400}\n",          // overflow
        "{\"_step\": 0, \"a\": 01}\n",             // leading zero
        "{\"_step\": 0, \"a\": 1} x\n",            // text after the record
        "{\"_step\": 0, \"a\": [1, 2,]}\n",        // inside an array
        "{\"_step\": 0, \"a\": \"\\udc00\"}\n",    // a lone low surrogate
        "{\"_step\": 0, \"a\": \"\xC3\x28\"}\n",   // ill-formed UTF-8
        std::string("{\"_step\": 0, \"a\": \"x") + char(1) + "y\"}\n",  // a raw control character in a string
        "{\"_step\": 0, \"a\": 1}\f\n",                  // a form feed (not JSON whitespace)
        "{\"_step\": 0}\n\xEF\xBB\xBF{\"_step\": 1}\n",    // a byte-order mark inside the file
        "[1]\n{\"_step\": 0}\n",                   // not an object (an array file: one path)
        "{\"_step\": 0}\n5\n",                     // a line that is not an object
        "{\"a\": 1}\n",                            // no step
        "{\"_step\": 0.5, \"a\": 1}\n",            // a step that is not an integer
        "{\"_step\": 0, \"a\": 1}\n{\"step\": 1, \"a\": 1}\n",  // two step keys
        "{\"_step\": 0, \"a\": 1}\n{\"_step\": 0, \"a\": 2}\n",  // conflicting duplicate step
        // what follows a value On-Demand does not consume (a string, Python's NaN):
        // found by fuzz_json_history, where simdjson had skipped over the bad separator
        "{\"_st0p\": \"_st0p\": 0, \"_step\": 1}\n",  // a colon after a string value
        "{\"_step\": 0, \"a\": NaN: 1}\n",            // a colon after NaN
        "{\"_step\": 0, \"a\": -Infinity \"b\": 1}\n",  // no comma after -Infinity
        "{\"_step\": 0, \"s\": \"x\"]\n",              // a string closed by ']'
        "{\"_step\": 0, \"a\": [\"x\" 1]}\n",          // no comma inside an array
        "{\"_step\": 0, \"a\": [NaN}]}\n",             // NaN closed by '}' inside an array
    };
    for (const auto& t : bad) {
        same_both_ways(t);
        CHECK(said(t, tr::json_lines_parser::fastest).rfind("error t.jsonl", 0) == 0);
    }
    std::string deep = "{\"_step\": 0, \"a\": ";
    for (int i = 0; i < 300; ++i) deep += "{\"k\": ";
    deep += "1" + std::string(300, '}') + "}\n";
    same_both_ways(deep);
    CHECK(said(deep, tr::json_lines_parser::fastest).find("line 1: not valid JSON: nested more than 256") !=
          std::string::npos);
    std::string deep_array = "{\"_step\": 0, \"a\": " + std::string(300, '[') + std::string(300, ']') + "}\n";
    same_both_ways(deep_array);
}

TEST_CASE("JSON Lines: a key filter skips the other keys' numbers, with the same values, unread keys and errors") {
    // W&B keys, nested keys, a verl data dict; numbers of every shape the skip checks
    const std::string w = R"({"_step": 0, "_runtime": 1.5, "_timestamp": 17.25, "a": 0.5, "z": 0.00045183232059956533, )"
                          R"("y": -1.5e-07, "x": {"y": 2.5, "q": 3}, "n": 12345678901234567890123, "t": "s", "u": null})"
                          "\n"
                          R"({"_step": 1, "_runtime": 2.5, "_timestamp": 18.25, "a": 0.25, "z": 0, "y": -0, )"
                          R"("x": {"y": 1E+2, "q": 4e-5}, "n": 1, "t": "s", "u": 1})" "\n";
    const std::string verl = R"({"step": 1, "data": {"a": 1.5, "b": 2.5, "c": {"d": 3}}})" "\n"
                             R"({"step": 2, "data": {"a": 0.001, "b": 0.5, "c": {"d": 4}}})" "\n";
    for (const auto& keys : {tr::key_filter({"a"}), tr::key_filter({"x/y"}), tr::key_filter({"nothing"}),
                             tr::key_filter({"a", "c/d"})}) {
        same_both_ways(w, keys);
        same_both_ways(verl, keys);
    }
    const std::string kept = said(w, tr::json_lines_parser::fastest, tr::key_filter({"a"}));
    CHECK(kept.find(" a: 0=" + std::to_string(bits(0.5))) != std::string::npos);
    CHECK(kept.find(" unread z\n") != std::string::npos);
    CHECK(kept.find(" unread x/q\n") != std::string::npos);
    // a bad number under a key the filter does not keep is still the error it was
    for (const char* bad : {"01", "1e400", "1.", "-", "1e", "1e+", ".5", "1.5e5x", "0x10", "+1", "1..2"}) {
        const std::string t = std::string(R"({"_step": 0, "a": 1, "z": )") + bad + "}\n";
        same_both_ways(t, tr::key_filter({"a"}));
        CHECK_MESSAGE(said(t, tr::json_lines_parser::fastest, tr::key_filter({"a"})).rfind("error t.jsonl", 0) == 0, bad);
    }
}

TEST_CASE("JSON Lines: a repeated key reads the same on both paths, with and without a key filter") {
    // (fuzz/regressions/json_history/repeated_keys_key_filter.bin: under a filter the
    // skipped first "data" (a number) hid from the step choice, which then found the second,
    // an object, and read a verl record where json_scanner read a W&B one)
    const std::vector<tr::key_filter> filters = {tr::key_filter(), tr::key_filter({"a"}), tr::key_filter({"x/y"}),
                                                 tr::key_filter({"nothing"}), tr::key_filter({"a", "b"})};
    const std::vector<std::string> texts = {
        // metric keys twice (wanted or not by each filter): equal values, different values
        "{\"_step\": 0, \"a\": 1, \"b\": 2, \"a\": 1}\n{\"_step\": 1, \"a\": 2, \"b\": 3, \"b\": 3}\n",
        "{\"_step\": 0, \"a\": 1, \"a\": 2}\n",
        "{\"_step\": 0, \"b\": 1, \"b\": 2, \"a\": 5}\n",
        // nested: inside one object, the object twice, a flattened key equal to a nested one
        "{\"_step\": 0, \"x\": {\"y\": 1, \"q\": 2, \"y\": 1, \"q\": 3}}\n",
        "{\"_step\": 0, \"x\": {\"y\": 1}, \"a\": 1, \"x\": {\"y\": 2}}\n",
        "{\"_step\": 0, \"x/y\": 1, \"x\": {\"y\": 1}}\n",
        "{\"step\": 1, \"data\": {\"a\": 1, \"b\": 2, \"a\": 1, \"b\": 5}}\n",
        "{\"step\": 1, \"data\": {\"x\": {\"y\": 1, \"y\": 4}, \"a\": 0.5}}\n",
        // a key that places the record twice: an error naming line and key
        "{\"_step\": 0, \"a\": 1, \"_step\": 1}\n",
        "{\"step\": 1, \"data\": 1, \"data\": {\"a\": 1}}\n",
        "{\"step\": 1, \"data\": {\"a\": 1}, \"data\": 2}\n",
        "{\"_step\": 0, \"run_id\": 5, \"run_id\": \"r\", \"a\": 1}\n",
        "{\"_step\": 0, \"_timestamp\": 1, \"a\": 1, \"_timestamp\": 2}\n",
        "{\"_step\": 0, \"name\": \"n\", \"b\": 1, \"name\": \"m\"}\n",
        "{\"_step\": 0, \"x\": {\"_step\": 1, \"data\": 2, \"data\": 3}, \"a\": 1}\n",  // nested: not the record's
        // an escaped key equal to another key (simdjson's path hands such a line to json_scanner)
        "{\"step\": 1, \"st\\u0065p\": 2}\n",
        "{\"_step\": 0, \"\\u0061\": 1, \"a\": 2}\n",
        "{\"_step\": 0, \"b\": 1, \"\\u0062\": 1, \"a\": 1}\n",
        // Python's NaN tokens and bad numbers beside a repeated key; the first error is the first line's
        "{\"_step\": 0, \"a\": 1, \"b\": NaN, \"b\": NaN, \"b\": Infinity}\n",
        "{\"_step\": 0, \"a\": 1}\n{\"_step\": 1, \"b\": 01, \"data\": 1, \"data\": 2}\n",
        "{\"_step\": 0, \"data\": 1, \"data\": 2}\n{\"_step\": 1, \"b\": 01}\n",
        "{\"_step\": 0, \"a\": 1, \"a\": 2}\n{\"_step\": 1, \"b\": 1e400}\n",
    };
    for (const auto& t : texts)
        for (const auto& keys : filters) same_both_ways(t, keys);
    const auto fast = [](const std::string& t, const tr::key_filter& k) { return said(t, tr::json_lines_parser::fastest, k); };
    const tr::key_filter only_a({"a"}), nothing({"nothing"}), x_y({"x/y"});
    CHECK(fast(texts[9], only_a) == "error t.jsonl: line 1: key 'data' appears twice in the record");
    CHECK(fast(texts[9], tr::key_filter()) == "error t.jsonl: line 1: key 'data' appears twice in the record");
    CHECK(fast(texts[8], nothing) == "error t.jsonl: line 1: key '_step' appears twice in the record");
    CHECK(fast(texts[11], only_a) == "error t.jsonl: line 1: key 'run_id' appears twice in the record");
    CHECK(fast(texts[15], only_a) == "error t.jsonl: line 1: key 'step' appears twice in the record");
    // a repeated metric: two points at one step (run_builder: equal kept once, else an error naming both lines)
    CHECK(fast(texts[0], only_a).find(" a: 0=" + std::to_string(bits(1.0)) + "@") != std::string::npos);
    CHECK(fast(texts[1], only_a).find("line 1: run 't', metric 'a', step 0: 2 here but 1 on line 1") != std::string::npos);
    CHECK(fast(texts[1], nothing).find(" unread a\n") != std::string::npos);  // not read: no conflict
    CHECK(fast(texts[2], only_a).find(" unread b\n") != std::string::npos);
    CHECK(fast(texts[4], x_y).find("metric 'x/y', step 0: 2 here but 1") != std::string::npos);
    CHECK(fast(texts[4], only_a).find(" a: 0=" + std::to_string(bits(1.0)) + "@") != std::string::npos);
    CHECK(fast(texts[14], only_a).find(" a: 0=" + std::to_string(bits(1.0)) + "@") != std::string::npos);
    CHECK(fast(texts[20], only_a).rfind("error t.jsonl: line 1: key 'data' appears twice", 0) == 0);
    CHECK(fast(texts[19], only_a).find("line 2: ") != std::string::npos);
}

#ifdef LOGRATIO_TEST_HAVE_SIMDJSON
TEST_CASE("od: plain_number_token is json_scanner's number grammar (short, finite); long_significand counts significant digits") {
    namespace od = tr::od;
    const auto token = [](const char* t) {  // 32 readable bytes after the token, as simdjson's padding gives
        static std::string buf;
        buf = std::string(t) + std::string(40, ' ');
        return od::plain_number_token(std::string_view(buf.data(), std::strlen(t)));
    };
    for (const char* t : {"0", "-0", "1", "12", "0.5", "-0.5", "1e5", "1E+5", "1e-05", "12.5e99", "0.00045183232059956533",
                          "-1234567890.1234567890123456789", "7"})
        CHECK_MESSAGE(token(t), t);
    for (const char* t : {"", "-", "01", "-01", "1.", ".5", "1e", "1e+", "1e100", "1e+100", "1.5e5x", "+1", "1..2",
                          "1.2.3", "1e5e5", "0x10", "1 2", "--1", "1-", "123456789012345678901234567890123"})
        CHECK_MESSAGE(!token(t), t);
    const auto long_sig = [](const std::string& t) {  // padded as token's
        static std::string buf;
        buf = t + std::string(40, ' ');
        return od::long_significand(std::string_view(buf.data(), t.size()));
    };
    CHECK(!long_sig("0.00045183232059956533"));  // 17 significant digits (20 with the zeros)
    CHECK(!long_sig("-0.000000000001234567890123456789e-5"));
    CHECK(long_sig("0.62012004852294987792"));  // 20: simdjson 3.0.1 misreads it
    CHECK(long_sig("100000000000000000000"));
    CHECK(long_sig("1.0000000000000000000e5"));
    CHECK(!long_sig("1.000000000000000000E50000000"));  // 19 before the exponent
    CHECK(!long_sig("0.0000000000000000000000000000000"));  // no significant digit (32 bytes)
    CHECK(long_sig("0.0000000001234567890123456789012"));
    CHECK(long_sig("-0.00000000000000012345678901234567890"));  // past 32 bytes: the byte loop
    CHECK(!long_sig("-0.0000000000000001234567890123456789"));
    // the mask path against the rule counted byte by byte, on random tokens of 20-32 bytes
    const auto counted = [](const std::string& t) {
        int digits = 0;
        bool significant = false;
        for (const char c : t) {
            if (c == 'e' || c == 'E') break;
            significant = significant || (c >= '1' && c <= '9');
            digits += significant && c >= '0' && c <= '9';
        }
        return digits > 19;
    };
    std::uint64_t seed = 12345;
    const auto next = [&] { return seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, seed >> 33; };
    const char alphabet[] = "0000000123456789.-eE+";
    std::size_t mismatches = 0, long_ones = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string t(20 + next() % 13, '0');
        for (auto& c : t) c = alphabet[next() % (sizeof alphabet - 1)];
        if (long_sig(t) != counted(t)) ++mismatches;
        long_ones += counted(t);
    }
    CHECK(mismatches == 0);
    CHECK(long_ones > 1000);  // both answers are met
}
#endif

TEST_CASE("JSON Lines: a record near the end of the text (no padding after it) and a long one") {
    std::string t;
    for (int s = 0; s < 50; ++s) t += "{\"_step\": " + std::to_string(s) + ", \"a\": " + std::to_string(s * 0.1) + "}\n";
    same_both_ways(t);
    std::string wide = "{\"_step\": 0";
    for (int k = 0; k < 5000; ++k) wide += ", \"m" + std::to_string(k) + "\": " + std::to_string(k) + ".25";
    std::string second = wide;
    second.replace(10, 1, "1");  // _step 1
    same_both_ways(wide + "}\n" + second + "}\n");
    const auto set = tr::read_json_history_text(wide + "}\n", "w.jsonl");
    REQUIRE(set.runs.size() == 1);
    CHECK(set.runs[0].metrics.size() == 5000);
    CHECK(set.runs[0].metrics.at("m4999")[0].value == 4999.25);
}

TEST_CASE("cell_number: the doubles strtod gives, missing words, out of range as strtod") {
    using logratio_cli::cell_number;
    for (const char* s : {"0.1", "1e-5", "-2.5E+10", "3.141592653589793", "2.2250738585072011e-308", "4e-320",
                          "123456789012345678901234567890", ".5", "5.", "-0", "1e308"}) {
        const auto x = cell_number(s);
        REQUIRE(x);
        CHECK_MESSAGE(bits(*x) == bits(std::strtod(s, nullptr)), s);
    }
    CHECK(*cell_number("+1.5") == 1.5);
    CHECK(*cell_number(" \t2 ") == 2.0);
    CHECK(*cell_number("1e400") == HUGE_VAL);
    CHECK(*cell_number("-1e400") == -HUGE_VAL);
    CHECK(bits(*cell_number("-1e-400")) == bits(-0.0));
    for (const char* m : {"", "  ", "nan", "NaN", "null", "None", "NA"}) CHECK(std::isnan(*cell_number(m)));
    CHECK(std::isinf(*cell_number("inf")));
    for (const char* t : {"abc", "1,5", "+-1", "1e", "0x10", "1 2", "--1"}) CHECK_MESSAGE(!cell_number(t), t);
}

TEST_CASE("parse_csv: cells, blank lines, quotes, CRLF; a short row names its line") {
    using logratio_cli::parse_csv;
    const auto t = parse_csv("a,b\r\n\r\n1,\"x,\"\"y\"\"\"\n\n2,\"multi\nline\"\n3,\n", "t.csv");
    REQUIRE(t.row_count() == 3);
    CHECK(t.cell(0, 1) == "x,\"y\"");
    CHECK(t.cell(1, 1) == "multi\nline");
    CHECK(t.cell(2, 1).empty());
    CHECK(t.line == std::vector<std::size_t>{3, 5, 7});
    CHECK_THROWS_WITH(parse_csv("a,b\n1,2\n3\n", "t.csv"), "t.csv: line 3 has 1 fields, the header has 2");
    CHECK_THROWS_WITH(parse_csv("\n\n", "t.csv"), "t.csv: empty table (no header line)");
    const auto one = parse_csv("a\n1", "t.csv");  // a tiny first row: the reservation stays bounded
    CHECK(one.row_count() == 1);
}

TEST_CASE("JSON Lines: every committed .jsonl test file reads the same on both paths") {
    std::size_t files = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(LOGRATIO_TEST_DATA)) {
        const auto ext = e.path().extension();
        if (!e.is_regular_file() || (ext != ".jsonl" && ext != ".ndjson")) continue;
        same_both_ways(logratio_cli::read_text_file(e.path().string()));
        ++files;
    }
    CHECK(files >= 5);
}

TEST_CASE("parse_csv: cells of every length around the 16-byte scan, a quote found past it, CRLF") {
    using logratio_cli::parse_csv;
    for (std::size_t n = 0; n <= 40; ++n) {
        const std::string x(n, 'x'), y(n + 3, 'y');
        const auto t = parse_csv("a,b\r\n" + x + "," + y + "\r\n" + y + "," + x + "\n", "t.csv");
        REQUIRE(t.row_count() == 2);
        CHECK(t.cell(0, 0) == x);
        CHECK(t.cell(0, 1) == y);  // the CR before LF is not part of the cell
        CHECK(t.cell(1, 0) == y);
        CHECK(t.cell(1, 1) == x);
        CHECK_THROWS_WITH(parse_csv("a\n" + y + "\"z\n", "q.csv"), "q.csv: line 2: a quote inside an unquoted field");
    }
    // a table moved keeps its views, the bytes of a short text moving with it
    auto small = parse_csv("a\n1\n", "s.csv");
    const auto moved = std::move(small);
    CHECK(moved.cell(0, 0) == "1");
    CHECK(moved.cell(0, 0).data() >= moved.storage.data());
    CHECK(moved.cell(0, 0).data() < moved.storage.data() + moved.storage.size());
}

TEST_CASE("W&B history table: plain-number cells and the general path read the same values") {
    // every cell form parse_cell accepts, beside its plain form
    const char* const forms[] = {"0.5", " 0.5", "0.5 ", "+0.5", "-0.25", "\t-0.25", ".5", "5.", "1e400", "-1e-400",
                                 "nan", "NaN", "-inf", "null", "1.00000000000000011102230246251565404236316680908203125"};
    std::string csv = "_step,m\n";
    for (std::size_t i = 0; i < std::size(forms); ++i) csv += std::to_string(i) + "," + forms[i] + "\n";
    csv += std::to_string(std::size(forms)) + ",\n";  // not logged: no point
    const auto set = tr::read_wandb_history_table(logratio_cli::parse_csv(csv, "h.csv"), tr::key_filter());
    REQUIRE(set.runs.size() == 1);
    const auto& pts = set.runs[0].metrics.at("m");
    REQUIRE(pts.size() == std::size(forms));
    for (std::size_t i = 0; i < pts.size(); ++i) {
        double want = 0;
        REQUIRE(logratio_cli::cell_double(forms[i], want));
        CHECK_MESSAGE(bits(pts[i].value) == bits(want), forms[i]);
    }
    CHECK(pts[0].value == 0.5);
    CHECK(std::isinf(pts[8].value));
}

TEST_CASE("W&B history table: the columns a key filter keeps, parsed alone, read as the whole table does") {
    const tr::key_filter keys({"m", "train/step"});
    const auto whole_and_kept = [&](const std::string& csv) {
        std::string a, b;
        const auto read = [&](logratio_cli::text_table t) {
            try {
                std::string s;
                const auto set = tr::read_wandb_history_table(t, keys);
                for (const auto& n : set.notes) s += "note " + n + "\n";
                for (const auto& r : set.runs) {
                    s += "run " + r.name + "\n";
                    for (const auto& u : r.unread) s += " unread " + u + "\n";
                    for (const auto& [k, pts] : r.metrics)
                        for (const auto& pt : pts)
                            s += " " + k + " " + std::to_string(pt.step) + "=" + std::to_string(bits(pt.value)) + "@" +
                                 std::to_string(bits(pt.wall_time)) + "\n";
                }
                return s;
            } catch (const std::exception& e) {
                return std::string("error ") + e.what();
            }
        };
        const auto parsed = [&](bool kept) {
            try {
                return read(kept ? logratio_cli::parse_csv(std::string(csv), "h.csv", tr::wandb_history_column_kept, &keys)
                                 : logratio_cli::parse_csv(csv, "h.csv"));
            } catch (const std::exception& e) {
                return std::string("error ") + e.what();
            }
        };
        a = parsed(false);
        b = parsed(true);
        CHECK_MESSAGE(a == b, csv);
        return b;
    };
    const std::string one = ",_step,_runtime,_timestamp,train/step,m,other,\"q,x\"\n"
                            "0,0,1.5,17.5,1,0.5,9,\"a,\"\"b\"\n"
                            "1,1,2.5,18.5,2,,abc,c\n\n"
                            "2,2,3.5,19.5,3,0.25,\"{\"\"x\"\": 1}\",\"multi\nline\"\n";
    const std::string said = whole_and_kept(one);
    CHECK(said.find(" m 2=" + std::to_string(bits(0.25))) != std::string::npos);
    CHECK(said.find(" unread other\n") != std::string::npos);
    CHECK(said.find(" unread q,x\n") != std::string::npos);
    CHECK(said.find("_runtime") == std::string::npos);  // not a metric, as in the whole table
    // several runs (a run_id column); errors in dropped columns are the whole table's
    whole_and_kept("_step,run_id,m,z\n0,a,1,2\n0,b,3,4\n1,a,5,6\n");
    for (const char* bad : {"_step,m,z\n0,1,2,3\n", "_step,m,z\n0,1,\"2\n", "_step,m,z\n0,1,2\"x\n",
                            "_step,m,z\n0,1,\"2\"x\n", "_step,m,m\n0,1,2\n", "_step,m,z\n0,1,2\n0,2,2\n"})
        CHECK(whole_and_kept(bad).rfind("error h.csv", 0) == 0);
    const auto t = logratio_cli::parse_csv(std::string(one), "h.csv", tr::wandb_history_column_kept, &keys);
    CHECK(t.columns == std::vector<std::string>{"_step", "_timestamp", "train/step", "m"});
    CHECK(t.dropped == std::vector<std::string>{"", "_runtime", "other", "q,x"});
    CHECK(t.row_count() == 3);
    CHECK(t.cell(2, 3) == "0.25");
}

TEST_CASE("run_builder: points out of order sorted, duplicates kept once or named with both lines") {
    tr::run_builder b("r", "f.csv", "_step");
    const std::string file = "f.csv", other = "g.csv";
    auto& s = b.of("m");
    tr::run_builder::reserve(s, 2);  // fewer than added: the series still grows
    b.add(s, 3, 0.3, 0, file, 10);
    b.add(s, 1, 0.1, 0, file, 11);
    b.add(s, 2, 0.2, 0, other, 12);
    b.add(s, 1, 0.1, 0, other, 13);  // the same value again: kept once
    const auto run = b.finish();
    const auto& pts = run.metrics.at("m");
    REQUIRE(pts.size() == 3);
    CHECK(pts[0].step == 1);
    CHECK(pts[1].value == 0.2);
    CHECK(pts[2].step == 3);
    tr::run_builder bad("r", "f.csv", "_step");
    bad.add("m", 5, 1.0, 0, file, 7);
    bad.add("m", 4, 0.0, 0, file, 8);
    bad.add("m", 5, 2.0, 0, other, 9);
    CHECK_THROWS_WITH(bad.finish(), "g.csv: line 9: run 'r', metric 'm', step 5: 2 here but 1 in f.csv: line 7 "
                                    "(conflicting duplicate step)");
}

TEST_CASE("JSON Lines / TRL: Python's NaN mid-batch, numbers at the edges of double, an escape: the values json_scanner reads") {
    const std::string t = "{\"_step\": 0, \"a\": 1.7976931348623157e308, \"b\": 4.9e-324}\n"
                          "{\"_step\": 1, \"a\": NaN, \"b\": -Infinity}\n"
                          "{\"_step\": 2, \"a\": -0, \"b\": -0.0, \"s\\u00e9\": 2.2250738585072014e-308}\n";
    same_both_ways(t);
    const auto set = tr::read_json_history_text(t, "t.jsonl");
    const auto& a = set.runs.at(0).metrics.at("a");
    CHECK(a[0].value == 1.7976931348623157e308);
    CHECK(std::isnan(a[1].value));
    CHECK(bits(a[2].value) == bits(0.0));
    CHECK(bits(set.runs[0].metrics.at("b")[2].value) == bits(-0.0));
    CHECK(set.runs[0].metrics.at("b")[0].value == 4.9e-324);
    const auto dir = std::filesystem::temp_directory_path() / "lr_trl_od" / "run" / "checkpoint-3";
    std::filesystem::create_directories(dir);
    {
        std::ofstream f(dir / "trainer_state.json");
        f << "{\"global_step\": 3, \"trial_name\": \"t\\u00e9\", \"log_history\": [\n {\"loss\": 0.5, \"step\": 1},\n"
             " {\"loss\": NaN, \"grad_norm\": Infinity, \"step\": 2},\n {\"loss\": -0, \"step\": 3}]}\n";
    }
    const auto trl = tr::read_trl_states(dir.string());
    const auto& loss = trl.runs.at(0).metrics.at("loss");
    REQUIRE(loss.size() == 3);
    CHECK(loss[0].value == 0.5);
    CHECK(std::isnan(loss[1].value));
    CHECK(bits(loss[2].value) == bits(0.0));
    CHECK(std::isinf(trl.runs[0].metrics.at("grad_norm")[0].value));
    CHECK(trl.runs[0].attributes.at("trial_name") == "t\xC3\xA9");
    std::filesystem::remove_all(dir.parent_path().parent_path());
}

TEST_CASE("read_csv_file: the mapped file parses as parse_csv of its text; quotes unescaped in the pages, not the file") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("lr_read_csv_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto written = [&](const std::string& name, const std::string& text) {
        const std::string p = (dir / name).string();
        std::ofstream(p, std::ios::binary) << text;
        return p;
    };
    const auto table_text = [](const logratio_cli::text_table& t) {
        std::string s;
        for (const auto& c : t.columns) s += c + "|";
        for (std::size_t i = 0; i < t.row_count(); ++i) {
            s += "\n" + std::to_string(t.line[i]) + ":";
            for (std::size_t c = 0; c < t.columns.size(); ++c) s += std::string(t.cell(i, c)) + "|";
        }
        for (const auto& d : t.dropped) s += "\ndropped " + d;
        return s;
    };
    std::string page_sized = "a,b\n";  // a file of exactly one page, no newline at its end
    while (page_sized.size() < 4096 - 4) page_sized += "1,2\n";
    page_sized += std::string(4096 - page_sized.size() - 2, '3') + ",4";
    const std::vector<std::string> texts = {
        "\xEF\xBB\xBF" "a,\"b \"\"q\"\"\"\n1,\"x,\"\"y\"\"\nz\"\n\n2,3",  // BOM, escapes, a quoted newline
        "_step,loss,acc\r\n0,0.5,\r\n1,,0.25\r\n",
        page_sized,
    };
    const auto keep_loss = [](const std::string& c, const void*) { return c == "_step" || c == "loss"; };
    for (const auto& text : texts) {
        const std::string p = written("t.csv", text);
        std::string stripped = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? text.substr(3) : text;
        CHECK(table_text(logratio_cli::read_csv_file(p)) == table_text(logratio_cli::parse_csv(std::string(stripped), p)));
        CHECK(table_text(logratio_cli::read_csv_file(p, keep_loss, nullptr)) ==
              table_text(logratio_cli::parse_csv(std::string(stripped), p, keep_loss, nullptr)));
        CHECK(logratio_cli::read_text_file(p) == text);  // copy-on-write: the file is as it was
    }
    const auto t = logratio_cli::read_csv_file(written("q.csv", texts[0]));
    CHECK(t.cell(0, 1) == "x,\"y\"\nz");
    CHECK(t.columns[1] == "b \"q\"");
    const auto moved = logratio_cli::text_table(logratio_cli::read_csv_file(written("m.csv", "a\n7\n")));
    CHECK(moved.cell(0, 0) == "7");
    // errors as parse_csv's; an empty file as parse_csv of ""
    const std::string short_row = written("s.csv", "a,b\n1\n");
    CHECK_THROWS_WITH(logratio_cli::read_csv_file(short_row), (short_row + ": line 2 has 1 fields, the header has 2").c_str());
    const std::string empty = written("e.csv", "");
    CHECK_THROWS_WITH(logratio_cli::read_csv_file(empty), (empty + ": empty table (no header line)").c_str());
    fs::remove_all(dir);
}
