#pragma once
// Writing an output file atomically: the bytes go to a temporary file in
// the target's directory, are flushed to disk, and only then renamed over
// the target. A failure at any point (unwritable directory, full disk)
// removes the temporary file and throws an error naming the path and the
// cause; the target is then either absent or its previous version, never
// a partial file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <logratio/core/error.hpp>

namespace logratio_cli {

class atomic_file {
public:
    explicit atomic_file(std::string path) : path_(std::move(path)) {
        tmp_ = path_ + ".tmp.XXXXXX";
        fd_ = ::mkstemp(&tmp_[0]);
        if (fd_ < 0) fail("cannot create a temporary file next to it");
        ::fchmod(fd_, 0644);
    }
    atomic_file(const atomic_file&) = delete;
    atomic_file& operator=(const atomic_file&) = delete;
    ~atomic_file() { abandon(); }

    void write(const void* data, std::size_t n) {
        const char* p = static_cast<const char*>(data);
        while (n > 0) {
            const ssize_t k = ::write(fd_, p, n);
            if (k < 0) {
                if (errno == EINTR) continue;
                fail("write failed");
            }
            p += k;
            n -= static_cast<std::size_t>(k);
        }
    }
    void write(const std::string& s) { write(s.data(), s.size()); }

    /// Flushes, closes and renames over the target.
    void commit() {
        if (::fsync(fd_) != 0) fail("cannot flush to disk");
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) fail("cannot close");
        if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot rename the temporary file over it");
        tmp_.clear();
    }

private:
    [[noreturn]] void fail(const char* what) {
        const int e = errno;
        abandon();
        throw logratio::error(path_ + ": " + what + ": " + std::strerror(e) + " (nothing was written)");
    }
    void abandon() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
        if (!tmp_.empty()) ::unlink(tmp_.c_str());
        tmp_.clear();
    }
    std::string path_, tmp_;
    int fd_ = -1;
};

}  // namespace logratio_cli
