#pragma once
// A read-only memory map of a whole file (no copy into memory).
#include <cstddef>
#include <string>

#include <logratio/core/error.hpp>

namespace logratio_cli {

class mapped_file {
public:
    /// Maps `path`; logratio::error when it cannot be opened, is not a
    /// regular file or cannot be mapped, format_error when it is empty.
    explicit mapped_file(const std::string& path);
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;
    ~mapped_file();
    const unsigned char* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace logratio_cli
