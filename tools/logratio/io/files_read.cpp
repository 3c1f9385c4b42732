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

std::vector<std::string> files_read_since(std::size_t from) {
    auto& r = files();
    std::lock_guard<std::mutex> lock(r.m);
    return {r.order.begin() + static_cast<std::ptrdiff_t>(std::min(from, r.order.size())), r.order.end()};
}

}  // namespace logratio_cli
