#pragma once
// `logratio doctor --each DIR`: every dump's findings, and per check which
// runs and updates it touches (run/update from __metadata__ or --pattern,
// else the dump's path). Also used by `logratio report`'s Doctor section.
// Included by doctor_cmd.hpp (needs diagnose_file and the JSON helpers).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace logratio_cli {

struct dump_diagnosis {
    std::string path, label, run;  ///< label: "run@update", or the relative path
    double update = 0;
    logratio::doctor::diagnosis d;
};

/// Identity of a dump: --pattern, else __metadata__ run/update, else its path.
inline void identify_dump(dump_diagnosis& x, const std::string& rel, const path_pattern* pattern) {
    dump_panel id;
    bool have = false;
    if (pattern) {
        if (!pattern->match(rel, id))
            throw logratio::error(x.path + ": path '" + rel + "' does not match --pattern '" + pattern->text() + "'");
        have = true;
    } else {
        mapped_file f(x.path);
        const auto st = parse_safetensors(f);
        const auto r = st.metadata.find("run"), u = st.metadata.find("update");
        if (r != st.metadata.end() && u != st.metadata.end()) {
            char* end = nullptr;
            id.run = r->second;
            id.update = std::strtod(u->second.c_str(), &end);
            have = end == u->second.c_str() + u->second.size() && !u->second.empty();
        }
    }
    if (have) {
        x.run = id.run;
        x.update = id.update;
        x.label = id.run + "@" + fmt(id.update, "%g");
    } else {
        x.label = rel;
    }
}

/// Diagnoses every dump under dir, `threads` files at a time; the first
/// error stops the work and is rethrown (naming its file).
inline std::vector<dump_diagnosis> diagnose_directory(const std::string& dir, const std::string& pattern,
                                                      const std::string& old, unsigned threads) {
    const auto files = list_dumps(dir);
    std::optional<path_pattern> pat;
    if (!pattern.empty()) pat.emplace(pattern);
    const std::string base = std::filesystem::path(dir).lexically_normal().string();
    std::vector<dump_diagnosis> out(files.size());
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::string first_error;
    std::mutex mu;
    auto work = [&] {
        for (std::size_t i; (i = next++) < files.size() && !failed;) {
            try {
                out[i].path = files[i];
                identify_dump(out[i], std::filesystem::path(files[i]).lexically_relative(base).string(), pat ? &*pat : nullptr);
                out[i].d = diagnose_file(files[i], old);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> g(mu);
                if (!failed.exchange(true)) first_error = e.what();
            }
        }
    };
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(files.size())));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    if (failed) throw logratio::error(first_error);
    return out;
}

/// Per check: dumps where it warns / fails, and the runs and dumps it touches.
struct check_summary {
    std::string check;
    std::size_t warn = 0, fail = 0;
    std::set<std::string> runs;
    std::vector<std::string> dumps;  ///< labels, in dump order
};

inline std::vector<check_summary> summarize_checks(const std::vector<dump_diagnosis>& ds) {
    std::vector<check_summary> out;
    for (const auto& x : ds)
        for (const auto& f : x.d.findings) {
            auto it = std::find_if(out.begin(), out.end(), [&](const check_summary& c) { return c.check == f.check; });
            if (it == out.end()) {
                out.push_back({f.check, 0, 0, {}, {}});
                it = out.end() - 1;
            }
            if (f.level == logratio::doctor::severity::ok) continue;
            (f.level == logratio::doctor::severity::fail ? it->fail : it->warn)++;
            if (!x.run.empty()) it->runs.insert(x.run);
            it->dumps.push_back(x.label);
        }
    return out;
}

inline nlohmann::ordered_json each_json(const std::vector<dump_diagnosis>& ds) {
    nlohmann::ordered_json dumps = nlohmann::ordered_json::array(), summary = nlohmann::ordered_json::array();
    for (const auto& x : ds) {
        nlohmann::ordered_json fs = nlohmann::ordered_json::array();
        for (const auto& f : x.d.findings) fs.push_back(finding_json(f));
        nlohmann::ordered_json j{{"path", x.path}, {"label", x.label}};
        if (!x.run.empty()) {
            j["run"] = x.run;
            j["update"] = x.update;
        }
        j["findings"] = fs;
        dumps.push_back(j);
    }
    for (const auto& c : summarize_checks(ds))
        summary.push_back({{"check", c.check}, {"warn", c.warn}, {"fail", c.fail},
                           {"runs", std::vector<std::string>(c.runs.begin(), c.runs.end())}, {"dumps", c.dumps}});
    return {{"dumps", dumps}, {"summary", summary}};
}

/// "name@3, name@4, ... (N more)": at most `limit` labels.
inline std::string label_list(const std::vector<std::string>& xs, std::size_t limit = 8) {
    std::string s;
    for (std::size_t i = 0; i < xs.size() && i < limit; ++i) s += (i ? ", " : "") + xs[i];
    if (xs.size() > limit) s += ", ... (" + std::to_string(xs.size() - limit) + " more)";
    return s;
}

inline int run_doctor_each(const std::string& dir, const std::string& pattern, const std::string& old, bool json,
                           unsigned threads) {
    const auto ds = diagnose_directory(dir, pattern, old, threads);
    logratio::doctor::severity w = logratio::doctor::severity::ok;
    for (const auto& x : ds) w = std::max(w, x.d.worst());
    if (json) {
        std::cout << dump_json_text(each_json(ds)) << "\n";
        return doctor_exit(w);
    }
    std::printf("logratio doctor: %zu dumps under %s\n", ds.size(), dir.c_str());
    for (const auto& x : ds) {
        std::string raised;
        for (const auto& f : x.d.findings)
            if (f.level != logratio::doctor::severity::ok)
                raised += (raised.empty() ? "" : ", ") + f.check + " (" + logratio::doctor::severity_name(f.level) + ")";
        std::printf("  %-40s %-5s %s\n", x.label.c_str(), logratio::doctor::severity_name(x.d.worst()),
                    raised.empty() ? "-" : raised.c_str());
    }
    std::printf("summary by check:\n");
    for (const auto& c : summarize_checks(ds)) {
        if (!c.warn && !c.fail) {
            std::printf("  %-19s ok in every dump\n", c.check.c_str());
            continue;
        }
        std::printf("  %-19s fail in %zu, warn in %zu dump(s); runs: %s; dumps: %s\n", c.check.c_str(), c.fail,
                    c.warn, c.runs.empty() ? "-" : label_list({c.runs.begin(), c.runs.end()}).c_str(),
                    label_list(c.dumps).c_str());
    }
    return doctor_exit(w);
}

}  // namespace logratio_cli
