// mpi_merge: every rank computes the panel accumulator and a KLL sketch of δ
// on its own shard of sequences; the ranks combine them with MPI; rank 0
// prints the global panel and checks it against the single-process panel of
// the same data (SPEC's tolerance: 1e-6 relative, 1e-12 absolute below 1e-6).
//
//   mpirun -np 4 ./mpi_merge
//
// Two ways to combine, both shown:
//  - the panel accumulator has a fixed-size serialized state (~330 bytes), so
//    it reduces with a user-defined MPI_Op over MPI_BYTE: MPI_Reduce runs a
//    tree, O(log P) steps of one ~330-byte message each. The op is declared
//    non-commutative, so MPI merges in rank order and the result does not
//    depend on the process layout.
//  - the sketch's serialized size varies, so its bytes are gathered
//    (MPI_Gather of sizes, MPI_Gatherv of bytes) and merged on rank 0:
//    P messages of O(k log n) bytes (a few KB at k = 200).
// The same bytes travel through torch.distributed (all_gather_object of the
// Python module's serialize()), see examples/python.
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <logratio/panel/panel.hpp>
#include <logratio/quantiles/kll_sketch.hpp>

namespace {

// The global batch, identical on every rank (deterministic): S sequences of
// up to T tokens with a heavy-tailed numeric mismatch.
struct data {
    int S = 96, T = 384;
    std::vector<float> train, rollout;
    std::vector<std::uint8_t> mask;
    data() : train(std::size_t(S) * T), rollout(std::size_t(S) * T), mask(std::size_t(S) * T) {
        std::mt19937_64 g(11);
        std::student_t_distribution<double> heavy(3.0);
        std::uniform_int_distribution<int> len(1, T);
        for (int s = 0; s < S; ++s) {
            const int L = len(g);
            for (int t = 0; t < T; ++t) {
                const std::size_t i = std::size_t(s) * T + t;
                const double lp = -std::fabs(heavy(g)) * 0.4;
                rollout[i] = float(lp);
                train[i] = float(std::min(0.0, lp + 0.01 * heavy(g)));
                mask[i] = t < L;
            }
        }
    }
};

// MPI_Op: inout = merge(in, inout). MPI calls it with `in` from the lower
// ranks (non-commutative op), so in is merged first.
void merge_panels(void* in, void* inout, int* len, MPI_Datatype*) {
    auto a = logratio::panel_accumulator::deserialize(in, std::size_t(*len));
    const auto b = logratio::panel_accumulator::deserialize(inout, std::size_t(*len));
    a.merge(b);
    const auto bytes = a.serialize();
    std::copy(bytes.begin(), bytes.end(), static_cast<std::uint8_t*>(inout));
}

bool close(double got, double want) {
    const double err = std::fabs(got - want);
    return std::fabs(want) < 1e-6 ? err <= 1e-12 : err <= 1e-6 * std::fabs(want);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const data d;
    const auto view = logratio::paired_view<float>::padded(d.train.data(), d.rollout.data(), d.mask.data(), d.S, d.T);
    // this rank's shard: a contiguous range of sequences
    const std::uint64_t first = std::uint64_t(d.S) * rank / size, last = std::uint64_t(d.S) * (rank + 1) / size;
    const logratio::panel_accumulator local = logratio::accumulate_panel_range(view, first, last);
    logratio::kll_sketch<double> sketch(200);
    for (std::uint64_t s = first; s < last; ++s)
        for (std::uint64_t i = view.sequence_begin(s); i < view.sequence_end(s); ++i)
            if (view.counts(i)) sketch.update(double(d.train[i]) - double(d.rollout[i]));

    // 1) the panel: fixed-size bytes, custom MPI_Op, tree reduction to rank 0
    const std::vector<std::uint8_t> mine = local.serialize();
    std::vector<std::uint8_t> reduced(mine.size());
    MPI_Op op;
    MPI_Op_create(&merge_panels, /*commute=*/0, &op);
    MPI_Reduce(mine.data(), reduced.data(), int(mine.size()), MPI_BYTE, op, 0, MPI_COMM_WORLD);
    MPI_Op_free(&op);

    // 2) the sketch: variable-size bytes, gathered and merged on rank 0
    const std::vector<std::uint8_t> sk = sketch.serialize();
    int n = int(sk.size());
    std::vector<int> sizes(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
    MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<std::uint8_t> all;
    if (rank == 0) {
        int off = 0;
        for (int r = 0; r < size; ++r) {
            displs[std::size_t(r)] = off;
            off += sizes[std::size_t(r)];
        }
        all.resize(std::size_t(off));
    }
    MPI_Gatherv(sk.data(), n, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD);

    int status = 0;
    if (rank == 0) {
        const logratio::panel global = logratio::panel_accumulator::deserialize(reduced).finish();
        logratio::kll_sketch<double> merged(200);
        for (int r = 0; r < size; ++r)
            merged.merge(logratio::kll_sketch<double>::deserialize(all.data() + displs[std::size_t(r)],
                                                                  std::size_t(sizes[std::size_t(r)])));
        // the single-process panel of the same data
        const logratio::panel single = logratio::compute_panel(view);
        int bad = 0;
        const auto g = logratio::panel_entries(global), s = logratio::panel_entries(single);
        for (std::size_t k = 0; k < g.size(); ++k)
            if (g[k].second && s[k].second && !close(*g[k].second, *s[k].second)) {
                std::printf("MISMATCH %s: merged %.17g, single %.17g\n", g[k].first.c_str(), *g[k].second,
                            *s[k].second);
                ++bad;
            }
        std::printf("%d ranks: panel state %zu bytes per message, sketch %zu bytes (rank 0)\n", size, mine.size(),
                    sk.size());
        std::printf("global tokens %llu  sequences %llu  delta_abs_mean %.10g  kl_k3 %.6g  delta_abs_max %.6g\n",
                    static_cast<unsigned long long>(global.tokens), static_cast<unsigned long long>(global.sequences),
                    global.delta_abs_mean, global.kl_k3, global.delta_abs_max);
        std::printf("sketch: n %llu  q0.999 %.6g  rank error <= %.4f (99%%)\n",
                    static_cast<unsigned long long>(merged.n()), merged.quantile(0.999),
                    merged.normalized_rank_error());
        if (bad || global.tokens != single.tokens || merged.n() != single.tokens) status = 1;
        std::printf(status ? "mpi_merge FAILED\n" : "mpi_merge ok: merged panel equals the single-process panel\n");
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
