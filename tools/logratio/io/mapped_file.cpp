#include "mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <logratio/core/error.hpp>
#include "files_read.hpp"

namespace logratio_cli {

mapped_file::mapped_file(const std::string& path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw logratio::error(path + ": cannot open: " + std::strerror(errno));
    note_file_read(path);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        throw logratio::error(path + ": cannot stat: " + std::strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw logratio::error(path + ": not a regular file");
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) {
        ::close(fd);
        throw logratio::format_error(path + ": empty file");
    }
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    const int e = errno;
    ::close(fd);
    if (p == MAP_FAILED) throw logratio::error(path + ": cannot map: " + std::strerror(e));
    data_ = static_cast<const unsigned char*>(p);
}

mapped_file::~mapped_file() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

}  // namespace logratio_cli
