#include "files_read.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include <logratio/core/error.hpp>

namespace logratio_cli {

namespace {

struct registry {
    std::mutex m;
    std::vector<std::string> order;
    std::set<std::string> seen;
    std::map<std::string, std::string> kept;  // stream input -> its memfd's /proc/self/fd path
};

registry& files() {
    static registry r;
    return r;
}

void write_all(int fd, const char* p, std::size_t n, const std::string& path) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw logratio::error(path + ": cannot keep its bytes in memory: " + std::strerror(errno));
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

/// The memfd holding every byte read from `path` until its end (left open
/// for the process's life: its /proc/self/fd path is what readers open).
int copy_stream_to_memory(const std::string& path) {
    unique_fd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.get() < 0) throw logratio::error(path + ": cannot open: " + std::strerror(errno));
    unique_fd out(::memfd_create("logratio-input", MFD_CLOEXEC));
    if (out.get() < 0) throw logratio::error(path + ": cannot keep its bytes in memory: " + std::strerror(errno));
    char buf[1 << 16];
    for (;;) {
        const ssize_t got = ::read(in.get(), buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw logratio::error(path + ": read error: " + std::strerror(errno));
        if (got == 0) break;
        write_all(out.get(), buf, static_cast<std::size_t>(got), path);
    }
    return out.release();
}

}  // namespace

unique_fd::~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
}

void keep_stream_input(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return;
    auto& r = files();
    std::lock_guard<std::mutex> lock(r.m);
    if (r.kept.count(path)) return;
    r.kept[path] = "/proc/self/fd/" + std::to_string(copy_stream_to_memory(path));
}

std::string openable_path(const std::string& path) {
    auto& r = files();
    std::lock_guard<std::mutex> lock(r.m);
    const auto it = r.kept.find(path);
    return it == r.kept.end() ? path : it->second;
}

void note_file_read(const std::string& path) {
    auto& r = files();
    std::lock_guard<std::mutex> lock(r.m);
    if (r.seen.insert(path).second) r.order.push_back(path);
}

std::size_t files_read_count() {
    auto& r = files();
    std::lock_guard<std::mutex> lock(r.m);
    return r.order.size();
}

std::vector<std::string> files_read_between(std::size_t from, std::size_t to) {
    auto& r = files();
    std::lock_guard<std::mutex> lock(r.m);
    to = std::min(to, r.order.size());
    from = std::min(from, to);
    return {r.order.begin() + static_cast<std::ptrdiff_t>(from), r.order.begin() + static_cast<std::ptrdiff_t>(to)};
}

}  // namespace logratio_cli
