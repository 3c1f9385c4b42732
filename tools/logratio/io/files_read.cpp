#include "files_read.hpp"

#include <algorithm>
#include <mutex>
#include <set>

namespace logratio_cli {

namespace {

struct registry {
    std::mutex m;
    std::vector<std::string> order;
    std::set<std::string> seen;
};

registry& files() {
    static registry r;
    return r;
}

}  // namespace

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
