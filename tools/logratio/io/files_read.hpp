#pragma once
// The input files the readers opened, in order, once each: what the export
// manifest lists (with each file's size and SHA-256). Every reader's file
// access goes through read_text_file, mapped_file, head_bytes or one of the
// tracker readers' streams, each of which notes its path here. Thread-safe
// (dump directories are read on several threads).
#include <cstddef>
#include <string>
#include <vector>

namespace logratio_cli {

/// Records that `path` was read (a second note of the same path is ignored).
void note_file_read(const std::string& path);

/// How many distinct files have been noted so far.
std::size_t files_read_count();

/// The files noted after the first `from` (in the order first noted).
std::vector<std::string> files_read_since(std::size_t from);

}  // namespace logratio_cli
