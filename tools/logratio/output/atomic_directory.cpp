#include "atomic_directory.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <logratio/core/error.hpp>

namespace logratio_cli {

namespace fs = std::filesystem;

std::string directory_target_problem(const std::string& target, bool (*replaceable)(const std::string& dir)) {
    std::error_code ec;
    const auto st = fs::status(target, ec);
    if (ec || !fs::exists(st)) return "";
    if (!fs::is_directory(st)) return target + ": exists and is not a directory: refusing to replace it";
    if (fs::is_empty(target, ec) || replaceable(target)) return "";
    return target + ": an existing directory that is not a logratio export (no manifest.json of one): refusing to "
                    "write into it; give a new or empty directory";
}

atomic_directory::atomic_directory(std::string target, bool (*replaceable)(const std::string& dir))
    : target_(std::move(target)) {
    const auto problem = directory_target_problem(target_, replaceable);
    if (!problem.empty()) throw logratio::error(problem);
    fs::path t(target_);
    if (t.filename().empty()) t = t.parent_path();  // "out/" is "out"
    const auto parent = t.has_parent_path() ? t.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(parent, ec)) throw logratio::error(target_ + ": its directory " + parent.string() + " does not exist");
    tmp_ = (parent / ("." + t.filename().string() + ".tmp." + std::to_string(::getpid()))).string();
    target_ = t.string();
    fs::remove_all(tmp_, ec);
    if (!fs::create_directory(tmp_, ec)) throw logratio::error(target_ + ": cannot create a temporary directory next to it: " + ec.message());
}

atomic_directory::~atomic_directory() {
    if (committed_) return;
    std::error_code ec;
    fs::remove_all(tmp_, ec);
}

std::string atomic_directory::staged(const std::string& relative) const { return (fs::path(tmp_) / relative).string(); }

void atomic_directory::write(const std::string& relative, const std::string& bytes) {
    const fs::path p = fs::path(tmp_) / relative;
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    std::ofstream f(p, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) throw logratio::error(target_ + "/" + relative + ": cannot write (" + p.string() + ")");
}

void atomic_directory::commit() {
    std::error_code ec;
    const std::string old = tmp_ + ".old";
    const bool existed = fs::exists(target_, ec);
    if (existed) {
        fs::remove_all(old, ec);
        fs::rename(target_, old, ec);
        if (ec) throw logratio::error(target_ + ": cannot move the previous version aside: " + ec.message());
    }
    fs::rename(tmp_, target_, ec);
    if (ec) {
        std::error_code back;
        if (existed) fs::rename(old, target_, back);
        throw logratio::error(target_ + ": cannot rename the finished directory into place: " + ec.message());
    }
    committed_ = true;
    if (existed) fs::remove_all(old, ec);
}

}  // namespace logratio_cli
