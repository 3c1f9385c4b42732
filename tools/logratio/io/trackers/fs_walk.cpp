#include "fs_walk.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include <logratio/core/error.hpp>
#include "../files_read.hpp"

namespace logratio_cli::trackers {

bool is_dir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(openable_path(p.string()), ec);
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
    std::sort(out.begin(), out.end());
    return out;
}

void find_files(const fs::path& dir, int depth, path_filter keep, std::vector<fs::path>& out) {
    for (const auto& e : sorted_entries(dir)) {
        if (is_dir(e)) {
            if (depth > 0) find_files(e, depth - 1, keep, out);
        } else if (keep(e)) {
            out.push_back(e);
        }
    }
}

std::string relative_name(const fs::path& p, const fs::path& base) {
    std::error_code ec;
    auto r = fs::relative(p, base, ec);
    return ec || r.empty() ? p.generic_string() : r.generic_string();
}

std::string head_bytes(const std::string& path, std::size_t n) {
    std::ifstream f(openable_path(path), std::ios::binary);
    if (!f) throw logratio::error(path + ": cannot open: " + std::strerror(errno));
    note_file_read(path);
    std::string s(n, '\0');
    f.read(&s[0], static_cast<std::streamsize>(n));
    s.resize(static_cast<std::size_t>(f.gcount()));
    return s;
}

}  // namespace logratio_cli::trackers
