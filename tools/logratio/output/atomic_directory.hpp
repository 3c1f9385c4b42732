#pragma once
// Writing a directory of output files atomically: every file goes into a
// temporary sibling directory, which is renamed to the target only when all
// of them are written. A failure leaves the target as it was (absent, or the
// previous version); the temporary directory is removed.
#include <string>

namespace logratio_cli {

class atomic_directory {
public:
    /// `replaceable`: whether an existing directory at `target` may be
    /// replaced (e.g. it is an earlier export); an empty directory always
    /// may. Otherwise logratio::error naming the target, before anything is written.
    atomic_directory(std::string target, bool (*replaceable)(const std::string& dir));
    atomic_directory(const atomic_directory&) = delete;
    atomic_directory& operator=(const atomic_directory&) = delete;
    ~atomic_directory();

    /// `bytes` as the file `relative` (subdirectories made as needed).
    void write(const std::string& relative, const std::string& bytes);
    /// Where a file written by write() is until commit() (for hashing it).
    std::string staged(const std::string& relative) const;
    /// The temporary directory renamed to the target (the old one removed).
    void commit();

private:
    std::string target_, tmp_;
    bool committed_ = false;
};

/// Whether `target` may be written as a new directory: absent, empty, or
/// `replaceable`; the message of the error it would be otherwise ("" if fine).
std::string directory_target_problem(const std::string& target, bool (*replaceable)(const std::string& dir));

}  // namespace logratio_cli
