#include "to_runs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <tuple>

#include <logratio/core/error.hpp>

namespace logratio_cli::trackers {

const std::vector<known_metric>& mismatch_metrics() {
    static const std::vector<known_metric> m{
        {"train/train_rollout_logprob_abs_diff", "slime: mean |l_T - l_E| (loss.py)"},
        {"train/sampling/sampling_logp_difference/mean", "TRL GRPO via transformers' W&B/TensorBoard callbacks"},
        {"sampling/sampling_logp_difference/mean", "TRL GRPO (trainer_state.json log_history)"},
        {"rollout_corr/log_ppl_abs_diff", "verl rollout correction"},
        {"rollout_corr/kl", "verl rollout correction"},
        {"train/vllm_kl", "OpenRLHF"},
        {"delta_abs_mean", "logratio SPEC.md"},
        {"training/rollout_probs_diff_mean", "verl debug metrics: |exp(l_T) - exp(l_E)|, a PROBABILITY difference, not delta"},
    };
    return m;
}

/// Training-step metrics of W&B histories, and whose they are.
const std::vector<known_metric>& step_metrics() {
    static const std::vector<known_metric> m{
        {"train/step", "slime's train/step"},
        {"rollout/step", "slime's rollout/step"},
        {"training/global_step", "verl's training/global_step"},
        {"train/global_step", "TRL/OpenRLHF train/global_step"},
        // W&B sync_tensorboard logs the TensorBoard step as global_step (CleanRL, Stable-Baselines3)
        {"global_step", "sync_tensorboard's global_step"},
    };
    return m;
}

/// `_step` (or a stand-in for it) counts W&B logging events, not training steps.
bool counts_logging_events(const std::string& step_name) { return step_name.rfind("_step", 0) == 0; }

/// The run's metrics, read or not (key_filter), sorted, at most `at_most`.
std::string metric_list(const run_history& r, std::size_t at_most) {
    std::vector<std::string> all;
    for (const auto& [k, v] : r.metrics) all.push_back(k);
    all.insert(all.end(), r.unread.begin(), r.unread.end());
    std::sort(all.begin(), all.end());
    std::string s;
    for (std::size_t n = 0; n < all.size(); ++n) {
        if (n == at_most) return s + ", ...";
        s += (n ? ", " : "") + all[n];
    }
    return s;
}

/// What `logratio runs` reads of a history: --metric (else every documented
/// mismatch metric, one of which it picks), the framework step metrics,
/// --step-column and --grad-norm-column.
key_filter keys_to_read(const std::string& metric, const std::string& step_column,
                        const std::string& grad_norm_column) {
    std::vector<std::string> k;
    if (!metric.empty()) k.push_back(metric);
    else
        for (const auto& m : mismatch_metrics()) k.push_back(m.name);
    for (const auto& m : step_metrics()) k.push_back(m.name);
    for (const auto* c : {&step_column, &grad_norm_column})
        if (!c->empty()) k.push_back(*c);
    return key_filter(std::move(k));
}

/// --metric, or the first documented mismatch metric some run logged.
std::string choose_metric(const std::vector<const history_set*>& sets, const std::string& given,
                          std::vector<std::string>& notes) {
    if (!given.empty()) return given;
    for (const auto& m : mismatch_metrics())
        for (const auto* s : sets)
            for (const auto& r : s->runs)
                if (r.metrics.count(m.name)) {
                    notes.push_back(std::string("metric: ") + m.name + " (" + m.from + "; --metric picks another)");
                    return m.name;
                }
    std::string known;
    for (const auto& m : mismatch_metrics()) known += (known.empty() ? "" : ", ") + std::string(m.name);
    const run_history* first = sets.empty() || sets[0]->runs.empty() ? nullptr : &sets[0]->runs[0];
    throw logratio::error("no known mismatch metric in the runs (looked for " + known +
                          "); name one with --metric" + (!first ? std::string()
                                                        : first->metrics.empty() && first->unread.empty()
                                                            ? " (run '" + first->name + "' logged no history)"
                                                            : " (run '" + first->name + "' has: " + metric_list(*first) + ")"));
}

namespace {

/// How one run's points get their training step.
struct step_choice {
    const std::vector<point>* mapping = nullptr;  ///< step metric (W&B): _step -> training step
    std::string description;
};

step_choice choose_step(const run_history& r, const std::string& metric, const std::string& step_column) {
    step_choice c;
    if (!step_column.empty()) {
        if (step_column == r.step_name || (counts_logging_events(r.step_name) && (step_column == "_step" || step_column == "Step"))) {
            c.description = step_column + " (--step-column)";
            return c;
        }
        auto it = r.metrics.find(step_column);
        if (it == r.metrics.end())
            throw logratio::format_error(r.source + ": run '" + r.name + "': no step column '" + step_column +
                                         "' (its own steps are '" + r.step_name + "'; metrics: " + metric_list(r) + ")");
        c.mapping = &it->second;
        c.description = step_column + " (--step-column)";
        return c;
    }
    if (!counts_logging_events(r.step_name)) {
        c.description = r.step_name;
        return c;
    }
    // W&B: the framework's step metric logged with the most of this metric's events.
    const auto m = r.metrics.find(metric);
    std::size_t best = 0;
    for (const auto& s : step_metrics()) {
        auto it = r.metrics.find(s.name);
        if (it == r.metrics.end() || m == r.metrics.end()) continue;
        std::size_t k = 0, j = 0;
        for (const auto& p : m->second) {
            while (j < it->second.size() && it->second[j].step < p.step) ++j;
            if (j < it->second.size() && it->second[j].step == p.step) ++k;
        }
        if (k > best) {
            best = k;
            c.mapping = &it->second;
            c.description = std::string(s.name) + " (" + s.from + ")";
        }
    }
    if (c.mapping) return c;
    throw logratio::format_error(r.source + ": run '" + r.name + "': this looks like a logging-history export ('" +
                                 r.step_name + "' counts logging events, not training steps): name the training-step "
                                 "column with --step-column (columns: " + metric_list(r) + ")");
}

}  // namespace

/// A step metric's training step at each W&B event (step_choice::mapping),
/// its NaN values left out: the points themselves, searched by step, when
/// they are sorted with unique steps (run_history's promise), else a map
/// built as before (the last value of a step wins).
class training_steps {
public:
    explicit training_steps(const std::vector<point>* mapping) : pts_(mapping) {
        if (!pts_) return;
        const auto not_increasing = [](const point& a, const point& b) { return a.step >= b.step; };
        if (std::adjacent_find(pts_->begin(), pts_->end(), not_increasing) == pts_->end()) return;
        for (const auto& p : *pts_)
            if (!std::isnan(p.value)) map_[p.step] = p.value;
        pts_ = nullptr;
    }
    /// The training step of event `step`, null for none.
    const double* find(std::int64_t step) const {
        if (!pts_) {
            const auto t = map_.find(step);
            return t == map_.end() ? nullptr : &t->second;
        }
        const auto it = std::lower_bound(pts_->begin(), pts_->end(), step,
                                         [](const point& p, std::int64_t s) { return p.step < s; });
        return it == pts_->end() || it->step != step || std::isnan(it->value) ? nullptr : &it->value;
    }

private:
    const std::vector<point>* pts_ = nullptr;
    std::map<std::int64_t, double> map_;
};

/// One run's series: updates = training steps (+ offset), values = the
/// metric there (NaN where the step exists but the metric is missing).
run_input run_from_history(const run_history& r, const std::string& metric, const history_options& o,
                           std::string& step_description) {
    using logratio::detail::concat;
    if (o.steps_per_batch < 1) throw logratio::format_error("--steps-per-batch must be at least 1");
    const step_choice sc = choose_step(r, metric, o.step_column);
    step_description = sc.description;
    const std::vector<point>* grad = nullptr;
    if (!o.grad_norm_column.empty()) {
        auto g = r.metrics.find(o.grad_norm_column);
        if (g == r.metrics.end())
            throw logratio::format_error(r.source + ": run '" + r.name + "': no gradient-norm column '" +
                                         o.grad_norm_column + "' (metrics: " + metric_list(r) + ")");
        grad = &g->second;
    }
    struct cells {
        double value = std::nan(""), grad = std::nan("");
    };
    const training_steps train_step(sc.mapping);  // W&B event -> training step
    // what a std::map<double, cells> keyed by training step did (its nodes
    // were a sixth of a `runs --metric` of W&B CSV exports): each value
    // noted in reading order, sorted stably by step, then folded per step
    struct noted {
        double step;
        double value;
        char field;  ///< 0: a mapped training step (no value), 1: the metric, 2: the gradient norm
    };
    std::vector<noted> at;
    if (sc.mapping)
        for (const auto& p : *sc.mapping)
            if (!std::isnan(p.value)) at.push_back({p.value, 0, 0});
    std::size_t no_step = 0;
    auto place = [&](const std::vector<point>& pts, char field, bool count) {
        for (const auto& p : pts) {
            double s = static_cast<double>(p.step);
            if (sc.mapping) {
                const double* t = train_step.find(p.step);
                if (!t) {
                    if (count && !std::isnan(p.value)) ++no_step;
                    continue;
                }
                s = *t;
            }
            at.push_back({s, p.value, field});
        }
    };
    const auto m = r.metrics.find(metric);
    if (m != r.metrics.end()) place(m->second, 1, true);
    if (grad) place(*grad, 2, false);
    std::stable_sort(at.begin(), at.end(), [](const noted& a, const noted& b) { return a.step < b.step; });
    std::size_t relogged = 0;
    run_input out;
    out.series.run = r.name;
    out.series.group = r.group;
    out.attributes = r.attributes;
    for (std::size_t i = 0; i < at.size();) {
        const double step = at[i].step;  // the first noted of equal steps (as the map's key)
        cells c;
        for (; i < at.size() && at[i].step == step; ++i) {
            if (at[i].field == 0) continue;
            double& f = at[i].field == 1 ? c.value : c.grad;
            const double v = at[i].value;
            // last non-missing wins: a training step logged at two events (a
            // resumed run that rewound its step) is counted for a note
            if (at[i].field == 1 && !std::isnan(v) && !std::isnan(f)) ++relogged;
            if (!std::isnan(v) || std::isnan(f)) f = v;
        }
        if (!is_integer_step(step))
            throw logratio::format_error(concat(r.source, ": run '", r.name, "': step ", step,
                                                " is not an integer within +-2^53"));
        const auto st = static_cast<std::int64_t>(step);
        if (!sc.mapping && m != r.metrics.end() &&
            !std::binary_search(m->second.begin(), m->second.end(), point{st},
                                [](const point& a, const point& b) { return a.step < b.step; }))
            continue;  // a grad-norm-only step of a native history: not an update of this metric
        const double u = step + o.update_offset;
        out.series.update.push_back(u);
        out.series.value.push_back(c.value);
        // the position of the update (after --update-offset, as documented): 1-based TRL steps
        // with --update-offset -1 put step 1 at position 0
        const auto su = static_cast<std::int64_t>(std::floor(u));
        out.position.push_back(static_cast<long>(((su % o.steps_per_batch) + o.steps_per_batch) % o.steps_per_batch));
        if (c.grad == 0.0) out.zero_grad_norm.push_back(u);
    }
    if (no_step)
        out.notes.push_back(concat(r.source, ": run '", r.name, "': ", no_step, " logged value(s) of '", metric,
                                   "' without '", sc.description.substr(0, sc.description.find(' ')), "' skipped"));
    if (relogged)
        out.notes.push_back(concat(r.source, ": run '", r.name, "': ", relogged, " training step(s) of '", metric,
                                   "' logged at more than one '", r.step_name, "' (a resumed run that rewound its step?): the last value kept"));
    if (!out.zero_grad_norm.empty())
        out.notes.push_back(concat("run '", r.name, "': ", out.zero_grad_norm.size(),
                                   " update(s) with zero gradient norm (kept, listed)"));
    return out;
}

/// One metric of a run by training step, only the points logged (to_runs.hpp).
std::map<double, double> logged_by_training_step(const run_history& r, const std::string& metric,
                                                 const history_options& o, std::string& step_description,
                                                 std::vector<std::string>* notes) {
    using logratio::detail::concat;
    std::map<double, double> out;
    const auto m = r.metrics.find(metric);
    if (m == r.metrics.end() || m->second.empty()) return out;  // (a multi-run table's column another run logs)
    const step_choice sc = choose_step(r, metric, o.step_column);
    step_description = sc.description;
    std::map<std::int64_t, double> train_step;  // W&B event -> training step
    if (sc.mapping)
        for (const auto& p : *sc.mapping)
            if (!std::isnan(p.value)) train_step[p.step] = p.value;
    std::size_t no_step = 0, relogged = 0;
    for (const auto& p : m->second) {
        double s = static_cast<double>(p.step);
        if (sc.mapping) {
            const auto t = train_step.find(p.step);
            if (t == train_step.end()) {
                if (!std::isnan(p.value)) ++no_step;
                continue;
            }
            s = t->second;
        }
        const auto [it, fresh] = out.emplace(s + o.update_offset, p.value);
        if (fresh) continue;
        if (!std::isnan(p.value) && !std::isnan(it->second)) ++relogged;
        if (!std::isnan(p.value)) it->second = p.value;  // last non-missing wins, as in run_from_history
    }
    if (notes && no_step)
        notes->push_back(concat(r.source, ": run '", r.name, "': ", no_step, " logged value(s) of '", metric,
                                "' without '", sc.description.substr(0, sc.description.find(' ')), "' skipped"));
    if (notes && relogged)
        notes->push_back(concat(r.source, ": run '", r.name, "': ", relogged, " training step(s) of '", metric,
                                "' logged at more than one '", r.step_name, "': the last value kept"));
    return out;
}

namespace {

/// NaN values a history logged for the metrics analysed (a diverged step, a
/// tracker's "NaN"): they are no value, left out of every statistic -- and
/// counted here, per metric, so that none is dropped without a word.
void nan_value_notes(const history_set& set, const std::vector<std::string>& metrics, std::vector<std::string>& notes) {
    for (const auto& metric : metrics) {
        std::size_t nans = 0, runs = 0;
        for (const auto& h : set.runs) {
            const auto m = h.metrics.find(metric);
            if (m == h.metrics.end()) continue;
            const auto n = static_cast<std::size_t>(
                std::count_if(m->second.begin(), m->second.end(), [](const point& p) { return std::isnan(p.value); }));
            nans += n;
            runs += n > 0;
        }
        if (nans)
            notes.push_back(logratio::detail::concat(set.input, ": ", nans, " logged value(s) of '", metric, "' in ", runs,
                                                     " run(s) are NaN: left out of the statistics"));
    }
}

}  // namespace

std::pair<std::string, std::string> run_name_and_group(const history_set& set, const run_history& h,
                                                       const history_options& o) {
    const bool one = set.runs.size() == 1;
    return {one && !o.run.empty() ? o.run : h.name, one && !o.group.empty() ? o.group : h.group};
}

/// Every run of a history for every metric, in one pass (to_runs.hpp).
history_runs to_runs(const history_set& set, const std::vector<std::string>& metrics, const history_options& given) {
    history_runs out;
    out.per_metric.resize(metrics.size());
    for (const auto& h : set.runs) {
        if (!h.metrics.count(metrics[0])) {
            out.notes.push_back(set.input + ": run '" + h.name + "' has no '" + metrics[0] + "': left out");
            out.left_out.push_back({h.name, "no '" + metrics[0] + "'"});
            continue;
        }
        // every metric on the mismatch metric's step axis: a W&B metric logged
        // at other events (validation) would otherwise pick no step of its own
        history_options o = given;
        for (std::size_t m = 0; m < metrics.size(); ++m) {
            run_input r;
            if (m == 0 || h.metrics.count(metrics[m])) {
                std::string step;
                r = run_from_history(h, metrics[m], o, step);
                if (m == 0) {
                    ++out.steps_used[step];
                    if (o.step_column.empty() && counts_logging_events(h.step_name))
                        o.step_column = step.substr(0, step.find(" ("));
                }
            } else {
                r.series.run = h.name;
                r.series.group = h.group;
                r.attributes = h.attributes;
            }
            if (set.runs.size() == 1) std::tie(r.series.run, r.series.group) = run_name_and_group(set, h, given);
            out.per_metric[m].push_back(std::move(r));
        }
    }
    nan_value_notes(set, metrics, out.notes);
    return out;
}

/// --group-pattern: the first capture group of REGEX (searched in the run
/// name) is the run's group; a run it does not match is an error listing
/// every such run.
void apply_group_pattern(std::vector<run_input>& runs, const std::string& pattern) {
    std::regex re;
    try {
        re = std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        throw logratio::error("--group-pattern '" + pattern + "': not a valid regular expression: " + e.what());
    }
    if (re.mark_count() < 1)
        throw logratio::error("--group-pattern '" + pattern + "': needs a capture group, e.g. '^(sync|async)'");
    std::string unmatched;
    for (auto& r : runs) {
        std::smatch m;
        if (std::regex_search(r.series.run, m, re) && m[1].matched && m[1].length() > 0) r.series.group = m[1].str();
        else unmatched += (unmatched.empty() ? "'" : ", '") + r.series.run + "'";
    }
    if (!unmatched.empty())
        throw logratio::error("--group-pattern '" + pattern + "' does not match (or captures nothing in) run(s) " + unmatched);
}

}  // namespace logratio_cli::trackers
