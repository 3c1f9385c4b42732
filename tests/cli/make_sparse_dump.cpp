// Writes a packed safetensors dump of N tokens that is mostly holes (a sparse
// file: log-probs 0 read as zero pages, no disk used), with cu_seqlens
// (sequences of 2^24 tokens) and three non-zero tokens near the end:
//   make_sparse_dump PATH N
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
bool put(int fd, const void* p, std::size_t n, std::uint64_t off) {
    return ::pwrite(fd, p, n, static_cast<off_t>(off)) == static_cast<ssize_t>(n);
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    const std::uint64_t N = std::strtoull(argv[2], nullptr, 10), S = (N + (1u << 24) - 1) >> 24;
    const std::string n = std::to_string(N), s1 = std::to_string(S + 1);
    std::string h = "{\"train_logprobs\":{\"dtype\":\"F32\",\"shape\":[" + n + "],\"data_offsets\":[0," +
                    std::to_string(4 * N) + "]},\"rollout_logprobs\":{\"dtype\":\"F32\",\"shape\":[" + n +
                    "],\"data_offsets\":[" + std::to_string(4 * N) + "," + std::to_string(8 * N) +
                    "]},\"cu_seqlens\":{\"dtype\":\"I64\",\"shape\":[" + s1 + "],\"data_offsets\":[" +
                    std::to_string(8 * N) + "," + std::to_string(8 * N + 8 * (S + 1)) + "]}}";
    while (h.size() % 8) h += ' ';
    const std::uint64_t base = 8 + h.size();
    const int fd = ::open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 1;
    std::uint64_t len = h.size();
    std::vector<std::int64_t> cu(S + 1);
    for (std::uint64_t i = 0; i <= S; ++i) cu[i] = static_cast<std::int64_t>(std::min<std::uint64_t>(i << 24, N));
    const float t1 = -0.5f, r1 = -0.25f, t2 = -1.0f, r2 = -1.5f;
    bool ok = put(fd, &len, 8, 0) && put(fd, h.data(), h.size(), 8) &&
              put(fd, cu.data(), cu.size() * 8, base + 8 * N) &&        // also sets the file size
              put(fd, &t1, 4, base + 4 * (N - 3)) && put(fd, &r1, 4, base + 4 * N + 4 * (N - 3)) &&
              put(fd, &t2, 4, base + 4 * (N / 2)) && put(fd, &r2, 4, base + 4 * N + 4 * (N / 2));
    ok = ::close(fd) == 0 && ok;
    std::printf("%s: %llu tokens, %llu sequences, %.1f GB (sparse)\n", argv[1], static_cast<unsigned long long>(N),
                static_cast<unsigned long long>(S), double(base + 8 * N + 8 * (S + 1)) / 1e9);
    return ok ? 0 : 1;
}
