#include "table_stream.hpp"

#include <sys/mman.h>
#include <unistd.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <map>
#include <system_error>

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

void long_table_builder::first_error(std::string message) {
    t_.first_error = long_table::row_error{t_.rows - 1, std::move(message)};
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
    if (!t_.first_error) {  // long_format_runs's checks of a row, in its order
        if (rc_ && name.empty()) first_error(concat(t_.path, ": line ", line, ": empty 'run' cell"));
        else if (uc_ && !number) first_error(not_a_number(t_.path, line, "update", cells[*uc_]));
        else if (uc_ && !std::isfinite(u))  // an empty cell is missing; "nan" or "inf" is a value, said as one
            first_error(cells[*uc_].empty() ? concat(t_.path, ": line ", line, ": missing 'update' cell")
                                            : concat(t_.path, ": line ", line, ": 'update' is ", u,
                                                     " (the update column needs a finite number)"));
    }
    if (!number) u = std::nan("");
    const std::size_t k = run_index(name, group);
    long_table::run& r = t_.runs[k];
    if (!t_.first_error && r.group != group)
        first_error(concat(t_.path, ": line ", line, ": run '", name, "' is in group '", group, "' here but in '",
                           r.group, "' before"));
    r.update.push_back(u);
    r.lines.push(line);
    add_cells(r, k, cells, line);
}

void long_table_builder::add_cells(long_table::run& r, std::size_t run, const std::string_view* cells, std::size_t line) {
    for (std::size_t c = 0; c < t_.columns.size(); ++c) {
        if (c == uc_) continue;  // the update is r.update
        if (!t_.non_number[c]) {
            double x = 0;
            if (cell_double(cells[c], x)) r.values[c].push_back(x);
            else {  // a text column: its numbers are no metric (long_table_runs throws this if asked for it)
                t_.non_number[c] = long_table::row_error{t_.rows - 1, not_a_number(t_.path, line, t_.columns[c], cells[c])};
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
            t_.changes[c] = long_table::text_change{t_.rows - 1, line, run, std::string(v)};
            text_done_[c] = 1;
        }
    }
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

/// Whether `path` is a regular file with bytes (else the text path reads
/// it: a pipe, or an empty file's error as parse_csv words it).
bool mappable(const std::string& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) > 0 && !ec;
}

const char* after_bom(const mapped_file& f) {
    const char* p = reinterpret_cast<const char*>(f.data());
    return f.size() >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0 ? p + 3 : p;
}

/// The text path: the whole file parsed as text (parse_csv).
text_table csv_text(const std::string& path) {
    std::string text = read_text_file(path);
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    return parse_csv(std::move(text), path);
}

/// Hands a mapped file's pages back to the kernel as the parse passes them
/// (each byte is read once): the file does not stay in the process's
/// resident memory (it stays in the page cache, not counted against it).
class page_release {
public:
    explicit page_release(const mapped_file& f) : base_(const_cast<unsigned char*>(f.data())) {
        ::madvise(base_, f.size(), MADV_SEQUENTIAL);
    }
    void upto(const char* p) {
        const auto at = static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(p) - base_) & ~(page - 1);
        if (at < done_ + step) return;
        ::madvise(base_ + done_, at - done_, MADV_DONTNEED);
        done_ = at;
    }

private:
    static constexpr std::size_t page = 4096, step = std::size_t{64} << 20;
    unsigned char* base_;
    std::size_t done_ = 0;
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

long_table read_long_csv(const std::string& path) {
    using logratio::detail::concat;
    if (!mappable(path)) return long_table_of(csv_text(path));
    const mapped_file f(path);
    page_release pages(f);
    csv_records in{after_bom(f), reinterpret_cast<const char*>(f.data()) + f.size(), path};
    std::size_t at = 0;
    if (!in.next(at)) throw logratio::format_error(path + ": empty table (no header line)");
    long_table_builder b(path, std::vector<std::string>(in.fields.begin(), in.fields.end()));
    const std::size_t n = in.fields.size();
    std::vector<std::string> columns(in.fields.begin(), in.fields.end());
    while (in.next(at)) {
        if (in.fields.size() != n)
            throw logratio::format_error(concat(path, ": line ", at, " has ", in.fields.size(), " fields, the header has ", n));
        b.add_row(in.fields.data(), at);
        pages.upto(in.p);
    }
    check_unique_columns(columns, path);
    return b.finish();
}

}  // namespace logratio_cli
