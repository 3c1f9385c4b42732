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

/// For an input named on the command line that is a pipe or a socket
/// (`/dev/stdin` piped, `<(zcat run.csv.gz)`; not a terminal or device:
/// /dev/zero has no end): reads it once, whole,
/// into an anonymous in-memory file (memfd), because such a file can be
/// read only once and the format sniff, the read and the manifest's
/// SHA-256 each open it. Any other path (a regular file, a directory,
/// nothing) is left alone, and so is a second call for the same path.
void keep_stream_input(const std::string& path);

/// The path to open for `path`: the in-memory copy of a kept stream input
/// (/proc/self/fd/N), else `path` itself. Messages keep naming `path`.
std::string openable_path(const std::string& path);

/// A file descriptor closed when the guard goes out of scope; release()
/// hands it over instead (-1: none). The readers' one descriptor guard.
class unique_fd {
public:
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd();
    int get() const noexcept { return fd_; }
    int release() noexcept {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }

private:
    int fd_;
};

/// How many distinct files have been noted so far.
std::size_t files_read_count();

/// The files noted from the `from`-th up to (not including) the `to`-th, in
/// the order first noted (files_read_count() before and after a read).
std::vector<std::string> files_read_between(std::size_t from, std::size_t to);

}  // namespace logratio_cli
