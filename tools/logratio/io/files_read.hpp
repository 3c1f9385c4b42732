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

/// The files noted from the `from`-th up to (not including) the `to`-th, in
/// the order first noted (files_read_count() before and after a read).
std::vector<std::string> files_read_between(std::size_t from, std::size_t to);

}  // namespace logratio_cli
