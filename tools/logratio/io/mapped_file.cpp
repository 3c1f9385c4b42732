#include "mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <logratio/core/error.hpp>
#include "files_read.hpp"

namespace logratio_cli {

mapped_file::mapped_file(const std::string& path, bool copy_on_write) : path_(path), writable_(copy_on_write) {
    const unique_fd fd(::open(openable_path(path).c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) throw logratio::error(path + ": cannot open: " + std::strerror(errno));
    note_file_read(path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) throw logratio::error(path + ": cannot stat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw logratio::error(path + ": not a regular file");
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) throw logratio::format_error(path + ": empty file");
    void* p = ::mmap(nullptr, size_, copy_on_write ? PROT_READ | PROT_WRITE : PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (p == MAP_FAILED) throw logratio::error(path + ": cannot map: " + std::strerror(errno));
    data_ = static_cast<unsigned char*>(p);  // the mapping outlives the descriptor
}

bool mappable(const std::string& path) {
    std::error_code ec;
    const std::string p = openable_path(path);
    return std::filesystem::is_regular_file(p, ec) && std::filesystem::file_size(p, ec) > 0 && !ec;
}

mapped_file::~mapped_file() {
    if (data_) ::munmap(data_, size_);
}

}  // namespace logratio_cli
