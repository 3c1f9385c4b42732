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
    explicit mapped_file(const std::string& path) : mapped_file(path, false) {}
    /// `copy_on_write`: the pages may be written, privately (MAP_PRIVATE:
    /// a written page is copied, the file never changes): a parser that
    /// unescapes in place (parse_csv) reads the page cache's pages instead
    /// of a copy of the file (mutable_data()).
    mapped_file(const std::string& path, bool copy_on_write);
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;
    ~mapped_file();
    const unsigned char* data() const noexcept { return data_; }
    /// The bytes, writable: only for a copy_on_write mapping.
    char* mutable_data() const noexcept { return writable_ ? reinterpret_cast<char*>(data_) : nullptr; }
    std::size_t size() const noexcept { return size_; }
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
    bool writable_ = false;
};

/// Whether `path` is a regular file with bytes, which mapped_file maps;
/// the readers read anything else (a pipe; an empty file, whose error the
/// text path words) as text.
bool mappable(const std::string& path);

}  // namespace logratio_cli
