// `logratio reconcile A B`: the options (reconcile.hpp has the semantics).
// Exit 0 when every overlapping field agrees, 4 when some differ, 1 on an
// error (main.cpp).
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "../io/trackers/detect.hpp"
#include "command.hpp"
#include "reconcile.hpp"
#include "threads_option.hpp"

namespace logratio_cli {
namespace {

struct reconcile_args {
    std::string a, b;
    std::vector<std::string> map;
    reconcile_options o;
    thread_count threads;
    bool json = false;
};

int run_reconcile(reconcile_args& args) {
    args.o.map = parse_metric_map(args.map);
    args.o.threads = args.threads;
    const reconcile_result r = reconcile_sources({args.a}, args.b, args.o);
    for (const auto& n : r.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    const std::string out = args.json ? reconcile_json(r) : reconcile_text(r);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return r.differ.empty() ? 0 : 4;
}

}  // namespace

command_runner setup_reconcile(CLI::App& c) {
    auto args = std::make_shared<reconcile_args>();
    const char* what = "anything `logratio runs` reads: a tracker history (every metric), a long table, a dump directory";
    c.add_option("A", args->a, std::string("side A, e.g. the tracker: ") + what)->required();
    c.add_option("B", args->b, std::string("side B, e.g. the local log: ") + what)->required();
    c.add_option("--rtol", args->o.rtol,
                 "agree when |a - b| <= R * max(|a|, |b|) (default 0: the same bits; NaN equals NaN, an infinity "
                 "only itself)")
        ->check(CLI::NonNegativeNumber);
    c.add_option("--map", args->map, "A_NAME=B_NAME: a metric B logs under another name (repeatable)")
        ->allow_extra_args(false);
    c.add_flag("--json", args->json,
               "one JSON object {overlapping, agree, differ, only_a, only_b, ..., notes}; NaN and infinite values "
               "as the strings \"NaN\", \"Infinity\", \"-Infinity\"");
    for (auto [opt, f] : {std::pair{"--format-a", &args->o.format_a}, std::pair{"--format-b", &args->o.format_b}})
        c.add_option(opt, *f, "the reader of this side (default auto: sniffed), as `logratio runs --format`")
            ->check(CLI::IsMember(trackers::format_names()));
    c.add_option("--pattern", args->o.pattern,
                 "dump directories: path pattern such as '{group}/{run}/update_{update}.safetensors'");
    add_threads_option(c, args->threads, "dumps computed in parallel");
    return [args] { return run_reconcile(*args); };
}

}  // namespace logratio_cli
