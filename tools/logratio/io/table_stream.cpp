#include "table_stream.hpp"

#include <sys/mman.h>
#include <unistd.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <map>
#include <exception>
#include <system_error>
#include <thread>

#include <logratio/core/error.hpp>

#include "files_read.hpp"
#include "mapped_file.hpp"
#include "table_csv_scan.hpp"

namespace logratio_cli {

void line_list::push(std::size_t line) {
    ++size_;
    if (!parts_.empty()) {
        auto& p = parts_.back();
        if (p.count == 1 && line > p.first) {  // a second line fixes the stride
            p.stride = line - p.first;
            p.count = 2;
            return;
        }
        if (p.count > 1 && line == p.first + p.stride * p.count) {
            ++p.count;
            return;
        }
    }
    parts_.push_back({line, 0, 1});
}

void line_list::append(const line_list& later) {
    for (const auto& q : later.parts_) {
        // its first two lines through push (they may extend our last progression), the rest in one step
        // when they continue the progression push left last
        push(q.first);
        if (q.count < 2) continue;
        push(q.first + q.stride);
        auto& p = parts_.back();
        if (q.count > 2 && p.stride == q.stride && p.first + p.stride * (p.count - 1) == q.first + q.stride) {
            p.count += q.count - 2;
            size_ += q.count - 2;
        } else {
            for (std::size_t k = 2; k < q.count; ++k) push(q.first + q.stride * k);
        }
    }
}

std::size_t line_list::at(std::size_t k) const {
    for (const auto& p : parts_) {
        if (k < p.count) return p.first + p.stride * k;
        k -= p.count;
    }
    return 0;  // (k >= size(): not asked)
}

std::optional<std::size_t> long_table::column(const std::string& name) const {
    auto it = std::find(columns.begin(), columns.end(), name);
    if (it == columns.end()) return std::nullopt;
    return static_cast<std::size_t>(it - columns.begin());
}

std::string long_table::column_list() const {
    std::string s;
    for (const auto& c : columns) s += (s.empty() ? "" : ", ") + c;
    return s;
}

namespace {

std::string_view trimmed_view(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    return b == std::string_view::npos ? std::string_view() : s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// parse_cell's message for a cell that is not a number.
std::string not_a_number(const std::string& path, std::size_t line, const std::string& column, std::string_view cell) {
    return logratio::detail::concat(path, ": line ", line, ", column '", column, "': '", trimmed_view(cell),
                                    "' is not a number");
}

std::string group_error(const std::string& path, std::size_t line, std::string_view run, std::string_view group,
                        const std::string& before) {
    return logratio::detail::concat(path, ": line ", line, ": run '", run, "' is in group '", group, "' here but in '",
                                    before, "' before");
}

}  // namespace

long_table_builder::long_table_builder(std::string path, std::vector<std::string> columns) {
    t_.path = std::move(path);
    t_.columns = std::move(columns);
    rc_ = t_.column("run");
    gc_ = t_.column("group");
    uc_ = t_.column("update");
    const std::size_t n = t_.columns.size();
    t_.non_number.resize(n);
    t_.changes.resize(n);
    text_done_.assign(n, 0);
    for (std::size_t c = 0; c < n; ++c) {
        const auto& name = t_.columns[c];
        text_done_[c] = name == "run" || name == "group" || name == "update";  // never attributes
    }
}

double blank_cell_value() {
    const std::uint64_t bits = 0x7FF8000000B1A4C5ull;  // a quiet NaN, payload "blank"
    double x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

bool is_blank_cell_value(double x) {
    std::uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits == 0x7FF8000000B1A4C5ull;
}

void long_table_builder::first_error(std::string message, std::size_t line) {
    t_.first_error = long_table::row_error{line, std::move(message)};
}

std::size_t long_table_builder::run_index(std::string_view name, std::string_view group) {
    if (!names_.empty() && names_[last_] == name) return last_;
    if (const auto it = where_.find(name); it != where_.end()) return last_ = it->second;
    const std::size_t k = t_.runs.size();
    names_.emplace_back(name);
    where_.emplace(names_.back(), k);
    long_table::run r;
    r.name = std::string(name);
    r.group = std::string(group);
    const std::size_t n = t_.columns.size();
    r.values.resize(n);
    r.first_text.resize(n);
    r.first_line.assign(n, 0);
    // rows grouped by run: the run before is whole, and runs are mostly of
    // one length (room for as many rows: no growth, no copies)
    const std::size_t room = k ? t_.runs[k - 1].update.size() : 0;
    r.update.reserve(room);
    for (std::size_t c = 0; c < n; ++c)
        if (!t_.non_number[c] && c != uc_) r.values[c].reserve(room);
    t_.runs.push_back(std::move(r));
    return last_ = k;
}

void long_table_builder::add_row(const std::string_view* cells, std::size_t line) {
    using logratio::detail::concat;
    ++t_.rows;
    static constexpr std::string_view all = "all";
    const std::string_view name = rc_ ? cells[*rc_] : std::string_view();
    const std::string_view group = gc_ ? cells[*gc_] : all;
    double u = std::nan("");
    const bool number = !uc_ || cell_double(cells[*uc_], u);
    if (!t_.first_error) {  // the long table's checks of a row, in their order
        if (rc_ && name.empty()) first_error(concat(t_.path, ": line ", line, ": empty 'run' cell"), line);
        else if (uc_ && !number) first_error(not_a_number(t_.path, line, "update", cells[*uc_]), line);
        else if (uc_ && !std::isfinite(u))  // an empty cell is missing; "nan" or "inf" is a value, said as one
            first_error(cells[*uc_].empty() ? concat(t_.path, ": line ", line, ": missing 'update' cell")
                                            : concat(t_.path, ": line ", line, ": 'update' is ", u,
                                                     " (the update column needs a finite number)"),
                        line);
    }
    if (!number) u = std::nan("");
    const std::size_t k = run_index(name, group);
    long_table::run& r = t_.runs[k];
    if (!t_.first_error && r.group != group)
        first_error(group_error(t_.path, line, name, group, r.group), line);
    r.update.push_back(u);
    r.lines.push(line);
    add_cells(r, k, cells, line);
}

void long_table_builder::add_cells(long_table::run& r, std::size_t run, const std::string_view* cells, std::size_t line) {
    for (std::size_t c = 0; c < t_.columns.size(); ++c) {
        if (c == uc_) continue;  // the update is r.update
        if (!t_.non_number[c]) {
            double x = 0;
            if (cell_double(cells[c], x)) {
                if (std::isnan(x) && trimmed_view(cells[c]).empty()) x = blank_cell_value();  // nothing logged
                r.values[c].push_back(x);
            } else {  // a text column: its numbers are no metric (long_table_runs throws this if asked for it)
                t_.non_number[c] = long_table::row_error{line, not_a_number(t_.path, line, t_.columns[c], cells[c])};
                for (auto& other : t_.runs) std::vector<double>().swap(other.values[c]);
            }
        }
        if (text_done_[c]) continue;
        const std::string_view v = trimmed_view(cells[c]);
        if (v.empty()) continue;
        if (!r.first_line[c]) {
            r.first_text[c] = std::string(v);
            r.first_line[c] = line;
        } else if (r.first_text[c] != v) {
            t_.changes[c] = long_table::text_change{line, run, std::string(v)};
            text_done_[c] = 1;
        }
    }
}

void long_table_builder::append(long_table&& later) {
    const std::size_t n = t_.columns.size();
    for (std::size_t c = 0; c < n; ++c)
        if (!t_.non_number[c] && later.non_number[c]) {  // a text column after all: no numbers kept
            t_.non_number[c] = std::move(later.non_number[c]);
            for (auto& r : t_.runs) std::vector<double>().swap(r.values[c]);
        }
    // the earliest of later's own first error and a run of ours in another group there (ours come first)
    std::optional<long_table::row_error> error = std::move(later.first_error);
    std::vector<std::optional<long_table::text_change>> change = std::move(later.changes);
    const auto earlier = [](const auto& a, std::size_t line) { return !a || line < a->line; };
    std::vector<std::size_t> ours(later.runs.size());  // later's runs' indices here (new ones after ours, in order)
    for (std::size_t k = 0, fresh = t_.runs.size(); k < later.runs.size(); ++k) {
        const auto it = where_.find(later.runs[k].name);
        ours[k] = it == where_.end() ? fresh++ : it->second;
    }
    for (auto& ch : change)
        if (ch) ch->run = ours[ch->run];
    for (std::size_t k = 0; k < later.runs.size(); ++k) {
        auto& lr = later.runs[k];
        const std::size_t at = ours[k];
        if (at == t_.runs.size()) {
            names_.emplace_back(lr.name);
            where_.emplace(names_.back(), at);
            t_.runs.push_back(std::move(lr));
            continue;
        }
        auto& r = t_.runs[at];
        const std::size_t first = lr.lines.at(0);
        if (r.group != lr.group && earlier(error, first))
            error = long_table::row_error{first, group_error(t_.path, first, r.name, lr.group, r.group)};
        r.update.insert(r.update.end(), lr.update.begin(), lr.update.end());
        r.lines.append(lr.lines);
        for (std::size_t c = 0; c < n; ++c) {
            if (!t_.non_number[c] && c != uc_) r.values[c].insert(r.values[c].end(), lr.values[c].begin(), lr.values[c].end());
            if (!lr.first_line[c]) continue;
            if (!r.first_line[c]) {
                r.first_text[c] = std::move(lr.first_text[c]);
                r.first_line[c] = lr.first_line[c];
            } else if (r.first_text[c] != lr.first_text[c] && earlier(change[c], lr.first_line[c])) {
                change[c] = long_table::text_change{lr.first_line[c], at, std::move(lr.first_text[c])};
            }
        }
    }
    if (!t_.first_error) t_.first_error = std::move(error);
    for (std::size_t c = 0; c < n; ++c)
        if (!t_.changes[c]) t_.changes[c] = std::move(change[c]);
    t_.rows += later.rows;
    last_ = 0;
}

long_table long_table_of(const text_table& t) {
    long_table_builder b(t.path, t.columns);
    const std::size_t n = t.columns.size();
    for (std::size_t i = 0; i < t.row_count(); ++i) b.add_row(t.cells.data() + i * n, t.line[i]);
    return b.finish();
}

namespace {

/// One CSV field at `p`, as table.cpp's csv_field reads it, from bytes it
/// may not write (a mapped file): a quoted field holding "" is unescaped
/// into `scratch`, any other is a view of the bytes. `p` is left on the
/// delimiter after the field (',' '\n' "\r\n") or at `end`; `line` counts
/// the newlines inside.
std::string_view mapped_field(const char*& p, const char* end, std::size_t& line, bool& quoted, const std::string& path,
                              std::string& scratch) {
    using logratio::format_error;
    using logratio::detail::concat;
    quoted = p < end && *p == '"';
    if (!quoted) return csv_scan::unquoted_field(p, end, line, path);
    const std::size_t first_line = line;
    const char* const body = ++p;
    bool unescaped = false;
    for (;; ++p) {
        if (p == end)
            throw format_error(concat(path, ": line ", first_line, ": unterminated quoted field at end of file"));
        if (*p == '"') {
            if (p + 1 < end && p[1] == '"') {
                if (!unescaped) scratch.assign(body, static_cast<std::size_t>(p - body));
                unescaped = true;
                scratch += '"';
                ++p;
                continue;
            }
            break;
        }
        if (*p == '\n') ++line;
        if (unescaped) scratch += *p;
    }
    const std::string_view v = unescaped ? std::string_view(scratch) : std::string_view(body, static_cast<std::size_t>(p - body));
    csv_scan::close_quoted_field(p, end, line, path);
    return v;
}

/// The records of a CSV's bytes, one at a time (blank lines skipped, as
/// parse_csv skips them).
struct csv_records {
    csv_records(const char* from, const char* to, const std::string& file) : p(from), end(to), path(file) {}
    const char* p;
    const char* end;
    const std::string& path;
    std::size_t line = 1;
    std::vector<std::string_view> fields;  ///< the record's (views of the bytes or of `scratch`)
    std::deque<std::string> scratch;       ///< per field (a deque: the views stay valid as it grows)

    /// The next record into `fields`, its first line into `at`; false at the end.
    bool next(std::size_t& at) {
        while (p < end) {
            at = line;
            if (plain_record()) {
                if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
                return true;
            }
            fields.clear();
            bool any_quoted = false;
            for (;;) {
                if (scratch.size() <= fields.size()) scratch.emplace_back();
                bool quoted = false;
                fields.push_back(mapped_field(p, end, line, quoted, path, scratch[fields.size()]));
                any_quoted = any_quoted || quoted;
                if (p == end || *p == '\n') break;
                ++p;  // ','
            }
            if (p < end) {  // the '\n' ending the record
                ++p;
                ++line;
            }
            if (fields.size() == 1 && fields[0].empty() && !any_quoted) continue;  // a blank line
            return true;
        }
        return false;
    }

    /// The record at `p` split 16 bytes at a time (SSE2: a mask of its
    /// commas and newline; a field is ~8 bytes, a scan per field was a
    /// fifth of the read) if it ends with a newline and holds no quote;
    /// else false, nothing consumed (mapped_field reads it, and its errors).
    bool plain_record() {
#ifdef __SSE2__
        const __m128i comma = _mm_set1_epi8(','), nl = _mm_set1_epi8('\n'), quote = _mm_set1_epi8('"');
        fields.clear();
        const char* field = p;
        for (const char* q = p; end - q >= 16; q += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
            const auto newline = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)));
            const unsigned before = newline ? (newline & -newline) - 1 : 0xFFFFu;  // the bytes before the newline
            if (static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote))) & before) return false;
            for (unsigned commas = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma))) & before; commas;
                 commas &= commas - 1) {
                const char* c = q + __builtin_ctz(commas);
                fields.emplace_back(field, static_cast<std::size_t>(c - field));
                field = c + 1;
            }
            if (newline) {
                const char* n = q + __builtin_ctz(newline);
                const char* e = n > field && n[-1] == '\r' ? n - 1 : n;  // CRLF
                fields.emplace_back(field, static_cast<std::size_t>(e - field));
                p = n + 1;
                ++line;
                return true;
            }
        }
#endif
        return false;
    }
};

const char* after_bom(const mapped_file& f) {
    const char* p = reinterpret_cast<const char*>(f.data());
    return p + utf8_bom_size(std::string_view(p, f.size()));
}

/// The text path: the whole file parsed as text (parse_csv).
text_table csv_text(const std::string& path) { return parse_csv(read_text_file_without_bom(path), path); }

/// Hands a mapped file's pages back to the kernel as the parse passes them
/// (each byte is read once): the file does not stay in the process's
/// resident memory (it stays in the page cache, not counted against it).
/// A chunk's releaser starts at the first whole page of its bytes (the page
/// it shares with the chunk before is that one's).
class page_release {
public:
    page_release(const char* from, const char* to) {
        const auto a = reinterpret_cast<std::uintptr_t>(from), e = reinterpret_cast<std::uintptr_t>(to);
        base_ = (a + page - 1) & ~(page - 1);
        done_ = base_;
        if (e > base_) ::madvise(reinterpret_cast<void*>(base_), e - base_, MADV_SEQUENTIAL);
    }
    void upto(const char* p) {
        const auto at = reinterpret_cast<std::uintptr_t>(p) & ~(page - 1);
        if (at < done_ + step) return;
        ::madvise(reinterpret_cast<void*>(done_), at - done_, MADV_DONTNEED);
        done_ = at;
    }

private:
    static constexpr std::uintptr_t page = 4096, step = std::uintptr_t{64} << 20;
    std::uintptr_t base_ = 0, done_ = 0;
};

void check_unique_columns(const std::vector<std::string>& columns, const std::string& path) {
    for (std::size_t i = 0; i < columns.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (columns[i] == columns[j] && !columns[i].empty())
                throw logratio::format_error(
                    logratio::detail::concat(path, ": duplicate column '", columns[i], "' in the header"));
}

}  // namespace

std::optional<std::vector<std::string>> csv_header(const std::string& path) {
    if (!mappable(path)) return std::nullopt;
    const mapped_file f(path);
    csv_records in{after_bom(f), reinterpret_cast<const char*>(f.data()) + f.size(), path};
    std::size_t at = 0;
    if (!in.next(at)) return std::nullopt;  // blank lines only: parse_csv's error
    return std::vector<std::string>(in.fields.begin(), in.fields.end());
}

namespace {

/// The quotes and newlines in [p, end): 64 bytes a step, each byte lane of
/// two SSE2 registers counting its matches (a compare gives -1, subtracted)
/// for up to 63 steps (at most 4 a step: no lane passes 255), then summed
/// by _mm_sad_epu8 -- a movemask and popcount per 16 bytes was 2.5x slower.
void count_quotes_newlines(const char* p, const char* end, std::size_t& quotes, std::size_t& newlines) {
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (end - p >= 64) {
        const char* const stop = p + std::min<std::ptrdiff_t>((end - p) / 64, 63) * 64;
        __m128i q = zero, n = zero;
        for (; p < stop; p += 64)
            for (int k = 0; k < 4; ++k) {
                const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
                q = _mm_sub_epi8(q, _mm_cmpeq_epi8(v, quote));
                n = _mm_sub_epi8(n, _mm_cmpeq_epi8(v, nl));
            }
        const __m128i qs = _mm_sad_epu8(q, zero), ns = _mm_sad_epu8(n, zero);
        quotes += static_cast<std::size_t>(_mm_cvtsi128_si32(qs) + _mm_cvtsi128_si32(_mm_srli_si128(qs, 8)));
        newlines += static_cast<std::size_t>(_mm_cvtsi128_si32(ns) + _mm_cvtsi128_si32(_mm_srli_si128(ns, 8)));
    }
#endif
    for (; p < end; ++p) {
        quotes += *p == '"';
        newlines += *p == '\n';
    }
}

/// Where a CSV's data [data, end) is cut for `parts` chunks: after a newline
/// near each even share, where the quotes before are even in number (a
/// quoted field holds quotes in pairs, "" included: an odd count means the
/// newline is inside one); each chunk's first line in `lines`. Fewer
/// chunks when no such newline is found (quotes odd to the end: one).
std::vector<const char*> chunk_starts(const char* data, const char* end, std::size_t line, unsigned parts,
                                      std::vector<std::size_t>& lines) {
    std::vector<const char*> starts{data};
    lines = {line};
    std::size_t quotes = 0;
    const char* p = data;
    const auto size = static_cast<std::size_t>(end - data);
    for (unsigned k = 1; k < parts; ++k) {
        const char* target = data + size / parts * k;
        if (target <= p) continue;
        count_quotes_newlines(p, target, quotes, line);
        p = target;
        for (;;) {
            const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
            if (!nl) return starts;
            count_quotes_newlines(p, nl + 1, quotes, line);
            p = nl + 1;
            if (quotes % 2 == 0) break;
        }
        if (p == end) return starts;
        starts.push_back(p);
        lines.push_back(line);
    }
    return starts;
}

/// The records of [from, to) (its first at `line`) into `b`.
void read_chunk(const char* from, const char* to, std::size_t line, const std::string& path, long_table_builder& b,
                std::size_t n) {
    using logratio::detail::concat;
    page_release pages(from, to);
    csv_records in{from, to, path};
    in.line = line;
    std::size_t at = 0;
    while (in.next(at)) {
        if (in.fields.size() != n)
            throw logratio::format_error(concat(path, ": line ", at, " has ", in.fields.size(), " fields, the header has ", n));
        b.add_row(in.fields.data(), at);
        pages.upto(in.p);
    }
}

}  // namespace

std::vector<std::size_t> long_csv_chunk_lines(const std::string& path, unsigned parts) {
    const mapped_file f(path);
    csv_records in{after_bom(f), reinterpret_cast<const char*>(f.data()) + f.size(), path};
    std::size_t at = 0;
    std::vector<std::size_t> lines;
    if (in.next(at)) chunk_starts(in.p, in.end, in.line, parts, lines);
    return lines;
}

long_table read_long_csv(const std::string& path, unsigned threads, std::size_t min_chunk) {
    if (!mappable(path)) return long_table_of(csv_text(path));
    const mapped_file f(path);
    const char* const end = reinterpret_cast<const char*>(f.data()) + f.size();
    csv_records in{after_bom(f), end, path};
    std::size_t at = 0;
    if (!in.next(at)) throw logratio::format_error(path + ": empty table (no header line)");
    const std::vector<std::string> columns(in.fields.begin(), in.fields.end());
    const auto data_size = static_cast<std::size_t>(end - in.p);
    const unsigned parts = static_cast<unsigned>(
        std::max<std::size_t>(1, std::min<std::size_t>(std::max(threads, 1u), data_size / std::max<std::size_t>(min_chunk, 1))));
    std::vector<std::size_t> lines;
    const auto starts = chunk_starts(in.p, end, in.line, parts, lines);
    std::vector<long_table_builder> builders;
    builders.reserve(starts.size());  // (the builders never move: where_'s keys view names_)
    for (std::size_t k = 0; k < starts.size(); ++k) builders.emplace_back(path, columns);
    std::vector<std::exception_ptr> failed(starts.size());
    const auto run = [&](std::size_t k) {
        try {
            read_chunk(starts[k], k + 1 < starts.size() ? starts[k + 1] : end, lines[k], path, builders[k], columns.size());
        } catch (...) {
            failed[k] = std::current_exception();
        }
    };
    std::vector<std::thread> workers;
    for (std::size_t k = 1; k < starts.size(); ++k) workers.emplace_back(run, k);
    run(0);
    for (auto& w : workers) w.join();
    for (const auto& e : failed)  // the first chunk's error: the one a single pass meets first
        if (e) std::rethrow_exception(e);
    for (std::size_t k = 1; k < builders.size(); ++k) builders[0].append(builders[k].finish());
    check_unique_columns(columns, path);
    return builders[0].finish();
}

}  // namespace logratio_cli
