#pragma once
// Writing an output file atomically: the bytes go to a temporary file in
// the target's directory, are flushed to disk, and only then renamed over
// the target. A failure at any point (unwritable directory, full disk)
// removes the temporary file and throws an error naming the path and the
// cause; the target is then either absent or its previous version, never
// a partial file.
#include <cstddef>
#include <string>

#include <logratio/core/error.hpp>

namespace logratio_cli {

class atomic_file {
public:
    explicit atomic_file(std::string path);
    atomic_file(const atomic_file&) = delete;
    atomic_file& operator=(const atomic_file&) = delete;
    ~atomic_file() { abandon(); }

    void write(const void* data, std::size_t n);
    void write(const std::string& s) { write(s.data(), s.size()); }

    /// Flushes, closes and renames over the target.
    void commit();

private:
    [[noreturn]] void fail(const char* what);
    void abandon() noexcept;
    std::string path_, tmp_;
    int fd_ = -1;
};

/// `bytes` as the whole content of `path`, atomically.
void write_atomically(const std::string& path, const std::string& bytes);

}  // namespace logratio_cli
