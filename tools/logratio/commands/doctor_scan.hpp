#pragma once
// `logratio doctor`'s scans, shared with `logratio report`'s Doctor section:
// the diagnosis of validated tensors, of one dump file, of every dump of a
// directory (--each) or of the dumps a report read (the per-check summary
// over dumps: output/doctor_summary.hpp). Exit code 0 when no check fails, 3 when one does (a
// pipeline can gate on it), 1 on an input error.
#include <string>
#include <vector>

#include <logratio/doctor/diagnose.hpp>

#include "../io/dumps.hpp"
#include "../io/panel_input.hpp"
#include "../io/tensor.hpp"
#include "../output/doctor_summary.hpp"

namespace logratio_cli {

constexpr int doctor_fail_exit = 3;

inline int doctor_exit(logratio::doctor::severity s) {
    return s == logratio::doctor::severity::fail ? doctor_fail_exit : 0;
}

/// Diagnoses validated tensors; `old` (may be null) must match train's dtype and shape.
logratio::doctor::diagnosis diagnose_tensors(const panel_tensors& in, const tensor* old, unsigned threads);

/// The diagnosis of one safetensors dump (old_name: tensor for policy_lag,
/// empty = old_logprobs when present). Errors name the file.
logratio::doctor::diagnosis diagnose_file(const std::string& path, const std::string& old_name, unsigned threads = 1);

/// Diagnoses every dump under dir, `threads` files at a time; the first
/// error stops the work and is rethrown (naming its file). Each dump's
/// identity: --pattern, else __metadata__ run/update, else its path.
std::vector<dump_diagnosis> diagnose_directory(const std::string& dir, const std::string& pattern,
                                               const std::string& old, unsigned threads);

/// Diagnoses the dumps the report read (labels run@update), `threads` at a time.
std::vector<dump_diagnosis> diagnose_dumps(const std::vector<dump_panel>& dumps, unsigned threads);

}  // namespace logratio_cli
