#pragma once
// --threads of every command: by default the CPUs this process may run on.
// The library's threaded results are bit-identical at any thread count
// (detail/parallel.hpp: blocks of the data, merged in order), so the default
// changes the time a command takes, never what it prints.
#include <string>

#include <CLI/CLI.hpp>

#include "thread_count.hpp"

namespace logratio_cli {

/// Adds --threads to c, bound to threads.given.
inline void add_threads_option(CLI::App& c, thread_count& threads, const std::string& what) {
    c.add_option("--threads", threads.given, what + " (default: the CPUs this process may use)")
        ->check(CLI::Range(1u, 1024u));
}

}  // namespace logratio_cli
