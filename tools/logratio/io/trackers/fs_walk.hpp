#pragma once
// Small file-system helpers shared by the readers of tracker directories
// (MLflow file store, TRL checkpoints, detection): sorted listings, so the
// runs come out in the same order on every file system, and a file's head.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace logratio_cli::trackers {

namespace fs = std::filesystem;

bool is_dir(const fs::path& p);
bool is_file(const fs::path& p);

/// Entries of a directory, sorted by name (nothing if it cannot be listed).
std::vector<fs::path> sorted_entries(const fs::path& dir);

/// Which files find_files keeps.
using path_filter = bool (*)(const fs::path&);

/// Every regular file under `dir` (recursively, at most `depth` levels),
/// sorted, for which `keep(path)` holds.
void find_files(const fs::path& dir, int depth, path_filter keep, std::vector<fs::path>& out);

/// The first `n` bytes of a file (all of a shorter one); an error naming it
/// if it cannot be opened.
std::string head_bytes(const std::string& path, std::size_t n = 4096);

/// `p` relative to `base` as a generic string ("a/b"); `p` itself if not under it.
std::string relative_name(const fs::path& p, const fs::path& base);

}  // namespace logratio_cli::trackers
