#include "atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <logratio/core/error.hpp>

namespace logratio_cli {

atomic_file::atomic_file(std::string path) : path_(std::move(path)) {
    tmp_ = path_ + ".tmp.XXXXXX";
    fd_ = ::mkstemp(&tmp_[0]);
    if (fd_ < 0) fail("cannot create a temporary file next to it");
    ::fchmod(fd_, 0644);
}

void atomic_file::write(const void* data, std::size_t n) {
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

void atomic_file::commit() {
    if (::fsync(fd_) != 0) fail("cannot flush to disk");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("cannot close");
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot rename the temporary file over it");
    tmp_.clear();
}

void atomic_file::fail(const char* what) {
    const int e = errno;
    abandon();
    throw logratio::error(path_ + ": " + what + ": " + std::strerror(e) + " (nothing was written)");
}

void atomic_file::abandon() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
}

void write_atomically(const std::string& path, const std::string& bytes) {
    atomic_file f(path);
    f.write(bytes);
    f.commit();
}

}  // namespace logratio_cli
