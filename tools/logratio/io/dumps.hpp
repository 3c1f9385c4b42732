#pragma once
// A directory of token dumps (one safetensors file per run and update) to
// the long panel table: every file's panel, computed in parallel, with the
// run, group and update taken from the file's __metadata__ (keys run, group,
// update) or from a path pattern such as "{group}/{run}/update_{update}.safetensors".
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <logratio/panel/mismatch_split.hpp>
#include <logratio/panel/panel_accumulator.hpp>

#include "mapped_file.hpp"
#include "panel_input.hpp"
#include "safetensors.hpp"
#include "tensor_names.hpp"

namespace logratio_cli {

struct dump_panel {
    std::string path, run, group;
    double update = 0;
    /// The dump's __metadata__ but run, group and update (the run's
    /// attributes: commit, mode, ... as the writer recorded them).
    std::map<std::string, std::string> attributes;
    logratio::panel panel;
    std::optional<logratio::mismatch_split> split;  ///< when the dump has old_logprobs
};

/// Every *.safetensors file under dir (recursively), sorted by path.
std::vector<std::string> list_dumps(const std::string& dir);

/// A path pattern with {run}, {group} and {update} fields, as a regex over
/// the path relative to the dump directory.
class path_pattern {
public:
    explicit path_pattern(const std::string& p);
    /// Fills run/group/update from rel; false when it does not match.
    bool match(const std::string& rel, dump_panel& d) const;
    const std::string& text() const { return text_; }

private:
    struct compiled;
    std::string text_;
    std::vector<std::string> fields_;
    std::shared_ptr<const compiled> re_;
};

/// Calls work(i) for every i in [0, n) on up to `threads` threads (this one
/// among them), each index once; finished(k), when given, after the k-th
/// item, one call at a time. After the first exception no new item starts;
/// once every thread has stopped its message is rethrown as logratio::error.
void for_each_item(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& work,
                   const std::function<void(std::size_t)>& finished = {});

/// The panel (with quantiles) of one dump, and its identity.
dump_panel panel_of_dump(const std::string& path, const std::string& rel, const path_pattern* pattern,
                         const logratio::panel_options& opt);

/// Panels of every dump under dir, `threads` files at a time; a progress bar
/// on stderr when it is a terminal. The first error stops the work and is
/// rethrown (naming its file).
std::vector<dump_panel> panels_of_directory(const std::string& dir, const std::string& pattern,
                                            const logratio::panel_options& opt, unsigned threads);

/// One dump's panel as named values: SPEC's keys, then with `split` the
/// numeric-vs-lag parts as <total|numeric|lag>_<metric> (absent when the
/// dump has no old_logprobs). The one list of these names: the metrics
/// `logratio runs` reads from dumps, the columns after run/group/update/file
/// of `panel --each`'s table (output/panel_table.hpp).
std::vector<std::pair<std::string, std::optional<double>>> dump_columns(const dump_panel& d, bool split);

}  // namespace logratio_cli
