#pragma once
// Small directory helpers shared by the readers of tracker directories
// (MLflow file store, TRL checkpoints, detection): sorted listings, so the
// runs come out in the same order on every file system.
#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace logratio_cli::trackers {

namespace fs = std::filesystem;

inline bool is_dir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}
inline bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

/// Entries of a directory, sorted by name (nothing if it cannot be listed).
inline std::vector<fs::path> sorted_entries(const fs::path& dir) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
    std::sort(out.begin(), out.end());
    return out;
}

/// Every regular file under `dir` (recursively, at most `depth` levels),
/// sorted, for which `keep(path)` holds.
template <class Keep>
void find_files(const fs::path& dir, int depth, Keep keep, std::vector<fs::path>& out) {
    for (const auto& e : sorted_entries(dir)) {
        if (is_dir(e)) {
            if (depth > 0) find_files(e, depth - 1, keep, out);
        } else if (keep(e)) {
            out.push_back(e);
        }
    }
}

/// `p` relative to `base` as a generic string ("a/b"); `p` itself if not under it.
inline std::string relative_name(const fs::path& p, const fs::path& base) {
    std::error_code ec;
    auto r = fs::relative(p, base, ec);
    return ec || r.empty() ? p.generic_string() : r.generic_string();
}

}  // namespace logratio_cli::trackers
