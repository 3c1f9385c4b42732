// The floors of the text readers (issue 41, bench/READERS.md): what the
// bytes of the benchmark's files cost with nothing stored, so that a reader
// rate can be set against what its parser alone allows.
//
//   bench_reader_floors jsonl|trl|csv METRIC FILE...
//
// jsonl / trl (simdjson 3.0 On-Demand, the readers' parser; one document a
// line for jsonl, the whole file for trl):
//   stage 1           iterate() and the first structural character only;
//   walk, all parsed  every member visited, every number converted
//                     (get_double), nested objects and arrays descended;
//   walk, keys parsed the same walk converting only METRIC and the step /
//                     time keys a `logratio runs` call reads; the other
//                     numbers are left unconsumed (a structural skip).
// csv (the readers' SSE2 cell scan, io/table_csv_scan.hpp):
//   cell scan         every cell found, nothing converted;
//   cells + from_chars every cell after the first column converted;
//   cells + 2 columns _step and METRIC converted;
//   then ns per cell for the number conversions alone, over every cell
//   after the first column held in memory: std::from_chars (libstdc++ 12:
//   the fast_float algorithm), fast_float 3.9 (Debian's libfast-float-dev,
//   where its header is installed), strtod.
// The files are read into memory first (not timed); rates are MB per CPU
// second (clock(): user + sys of this process), best of 5.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>
#if __has_include(<fast_float/fast_float.h>)
#include <fast_float/fast_float.h>
#define FLOORS_HAVE_FAST_FLOAT 1
#endif

#include "../tools/logratio/io/table_csv_scan.hpp"

namespace {

namespace od = simdjson::ondemand;

struct walk_state {
    bool all = true;                  ///< convert every number
    std::vector<std::string> wanted;  ///< else these keys' numbers
    double sum = 0;                   ///< keeps the conversions
    std::size_t numbers = 0;
    bool wants(std::string_view k) const {
        for (const auto& w : wanted)
            if (k == w) return true;
        return false;
    }
};

bool walk(od::value v, walk_state& s, bool convert);

bool walk_object(od::object o, walk_state& s) {
    for (auto f : o) {
        od::field m;
        if (std::move(f).get(m)) return false;
        const char* k = m.key().raw();
        const char* q = std::strchr(k, '"');
        const std::string_view key(k, static_cast<std::size_t>(q - k));
        if (!walk(m.value(), s, s.all || s.wants(key))) return false;
    }
    return true;
}

bool walk(od::value v, walk_state& s, bool convert) {
    od::json_type t;
    if (v.type().get(t)) return false;
    switch (t) {
    case od::json_type::object: {
        od::object o;
        return !v.get_object().get(o) && walk_object(o, s);
    }
    case od::json_type::array: {
        od::array a;
        if (v.get_array().get(a)) return false;
        for (auto e : a) {
            od::value x;
            if (std::move(e).get(x) || !walk(x, s, convert)) return false;
        }
        return true;
    }
    case od::json_type::number: {
        if (!convert) return true;  // left unconsumed: skipped by depth
        double x;
        if (v.get_double().get(x)) return false;
        s.sum += x;
        ++s.numbers;
        return true;
    }
    default: return true;
    }
}

double cpu_seconds(const std::function<void()>& f) {
    double best = 1e300;
    for (int r = 0; r < 5; ++r) {
        const std::clock_t t0 = std::clock();
        f();
        best = std::min(best, static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC);
    }
    return best;
}

/// One document: stage 1 only (mode 0), or the walk (mode 1: every number,
/// 2: the wanted keys').
void json_doc(od::parser& p, std::string_view d, std::size_t cap, int mode, walk_state& s) {
    od::document doc;
    if (auto e = p.iterate(d.data(), d.size(), cap).get(doc)) throw std::runtime_error(std::string("iterate failed: ") + simdjson::error_message(e));
    if (mode == 0) {
        od::json_type t;
        if (doc.type().get(t)) throw std::runtime_error("no value");
        return;
    }
    od::object o;
    if (doc.get_object().get(o) || !walk_object(o, s)) throw std::runtime_error("walk failed");
}

void json_floors(const std::vector<std::string>& texts, bool lines, const std::string& metric, double mb) {
    od::parser p;
    const std::vector<std::string> wanted{metric, "_step", "step", "_timestamp", "train/step"};
    for (int mode = 0; mode < 3; ++mode) {
        walk_state s;
        s.all = mode != 2;
        s.wanted = wanted;
        const double t = cpu_seconds([&] {
            for (const auto& text : texts) {  // padded: SIMDJSON_PADDING spaces after each text
                const std::size_t n = text.size() - simdjson::SIMDJSON_PADDING;
                if (!lines) {
                    json_doc(p, std::string_view(text.data(), n), text.size(), mode, s);
                    continue;
                }
                for (std::size_t pos = 0; pos < n;) {
                    const char* nl = static_cast<const char*>(std::memchr(text.data() + pos, '\n', n - pos));
                    const std::size_t e = nl ? static_cast<std::size_t>(nl - text.data()) : n;
                    if (e > pos) json_doc(p, std::string_view(text.data() + pos, e - pos), text.size() - pos, mode, s);
                    pos = e + 1;
                }
            }
        });
        static const char* names[] = {"stage 1", "walk, all parsed", "walk, keys parsed"};
        std::printf("%-22s %8.0f MB/s  (%zu numbers converted a pass)\n", names[mode], mb / t, s.numbers / 5);
    }
}

/// The cells of one CSV text (no quotes in the benchmark's files): `conv`
/// says which columns are converted (none: the scan alone).
double csv_pass(const std::string& text, const std::vector<char>& conv, std::size_t& cells) {
    const char* p = text.data();
    const char* const end = p + text.size();
    p = static_cast<const char*>(std::memchr(p, '\n', text.size())) + 1;  // the header
    double sum = 0;
    std::size_t col = 0;
    while (p < end) {
        const char* const b = p;
        p = logratio_cli::csv_scan::unquoted_field_end(p, end);
        if (col < conv.size() && conv[col] && p > b) {
            double x = 0;
            std::from_chars(b, p, x);
            sum += x;
        }
        ++cells;
        col = p < end && *p == '\n' ? 0 : col + 1;
        ++p;
    }
    return sum;
}

/// ns per cell of each conversion over `cells` (best of 5).
void number_floors(const std::vector<std::string_view>& cells) {
    const auto per_cell = [&](const char* name, double (*conv)(std::string_view)) {
        double sink = 0;
        const double t = cpu_seconds([&] {
            for (const auto c : cells) sink += conv(c);
        });
        std::printf("%-22s %8.1f ns a cell (%zu cells, %g)\n", name, t * 1e9 / static_cast<double>(cells.size()),
                    cells.size(), sink > 0 ? 1.0 : 0.0);
    };
    per_cell("std::from_chars", [](std::string_view c) {
        double x = 0;
        std::from_chars(c.data(), c.data() + c.size(), x);
        return x;
    });
#ifdef FLOORS_HAVE_FAST_FLOAT
    per_cell("fast_float 3.9", [](std::string_view c) {
        double x = 0;
        fast_float::from_chars(c.data(), c.data() + c.size(), x);
        return x;
    });
#endif
    per_cell("strtod", [](std::string_view c) {
        char buf[64];
        const std::size_t n = std::min(c.size(), sizeof buf - 1);
        std::memcpy(buf, c.data(), n);
        buf[n] = '\0';
        return std::strtod(buf, nullptr);
    });
}

void csv_floors(const std::vector<std::string>& texts, const std::string& metric, double mb) {
    const std::string& h = texts[0];
    std::vector<std::string> header;
    std::stringstream ss(h.substr(0, h.find('\n')));
    for (std::string c; std::getline(ss, c, ',');) header.push_back(c);
    std::vector<char> none(header.size(), 0), all(header.size(), 1), two(header.size(), 0);
    all[0] = 0;
    for (std::size_t i = 0; i < header.size(); ++i) two[i] = header[i] == "_step" || header[i] == metric;
    const std::pair<const char*, const std::vector<char>*> modes[] = {
        {"cell scan", &none}, {"cells + from_chars", &all}, {"cells + 2 columns", &two}};
    for (const auto& [name, conv] : modes) {
        std::size_t cells = 0;
        double sink = 0;
        const double t = cpu_seconds([&] {
            for (const auto& text : texts) sink += csv_pass(text, *conv, cells);
        });
        std::printf("%-22s %8.0f MB/s  (%zu cells a pass, %g)\n", name, mb / t, cells / 5, sink > 0 ? 1.0 : 0.0);
    }
    std::vector<std::string_view> numeric;  // every cell after the first column
    for (const auto& text : texts) {
        const char* p = static_cast<const char*>(std::memchr(text.data(), '\n', text.size())) + 1;
        const char* const end = text.data() + text.size();
        for (std::size_t col = 0; p < end; ++p) {
            const char* const b = p;
            p = logratio_cli::csv_scan::unquoted_field_end(p, end);
            if (col > 0 && p > b) numeric.emplace_back(b, static_cast<std::size_t>(p - b));
            col = p < end && *p == '\n' ? 0 : col + 1;
        }
    }
    number_floors(numeric);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: bench_reader_floors jsonl|trl|csv METRIC FILE...\n");
        return 2;
    }
    const std::string kind = argv[1], metric = argv[2];
    std::vector<std::string> texts;
    double bytes = 0;
    for (int i = 3; i < argc; ++i) {
        std::ifstream f(argv[i], std::ios::binary);
        std::stringstream b;
        b << f.rdbuf();
        texts.push_back(b.str());
        bytes += static_cast<double>(texts.back().size());
        texts.back().append(simdjson::SIMDJSON_PADDING, ' ');
    }
    std::printf("%s: %.0f MB in %zu file(s); simdjson kernel %s\n", kind.c_str(), bytes / 1e6, texts.size(),
                simdjson::get_active_implementation()->name().c_str());
    if (kind == "csv") {
        for (auto& t : texts) t.resize(t.size() - simdjson::SIMDJSON_PADDING);
        csv_floors(texts, metric, bytes / 1e6);
    } else {
        json_floors(texts, kind == "jsonl", metric, bytes / 1e6);
    }
    return 0;
}
