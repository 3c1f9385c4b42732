#pragma once
// SHA-256 (FIPS 180-4) of a file or a byte string, as lowercase hex: the
// export manifest's record of every input file read and every file written
// (`sha256sum` prints the same digest).
#include <cstddef>
#include <cstdint>
#include <string>

namespace logratio_cli {

/// An incremental SHA-256: update() any number of times, then hex_digest().
class sha256 {
public:
    sha256();
    void update(const void* data, std::size_t n);
    /// The digest of everything given so far (64 hex digits); ends the hash.
    std::string hex_digest();

private:
    void block(const unsigned char* p);
    std::uint32_t h_[8];
    unsigned char buf_[64];
    std::size_t used_ = 0;
    std::uint64_t bytes_ = 0;
};

std::string sha256_hex(const std::string& bytes);

/// The file's digest and size, read in 1 MiB chunks; logratio::error naming
/// the file when it cannot be read.
struct file_digest {
    std::uint64_t bytes = 0;
    std::string sha256;
};
file_digest digest_file(const std::string& path);

}  // namespace logratio_cli
