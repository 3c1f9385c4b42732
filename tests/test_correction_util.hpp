#pragma once
// Shared by the correction tests: a result's metrics by name.
#include <map>
#include <string>

#include <doctest/doctest.h>
#include <logratio/correction/correction_accumulator.hpp>

namespace test {

/// correction_entries(r) as a map (each name once).
inline std::map<std::string, double> as_map(const logratio::correction_result& r) {
    std::map<std::string, double> m;
    for (const auto& e : logratio::correction_entries(r)) {
        CHECK_MESSAGE(m.count(e.first) == 0, "duplicate key " << e.first);
        m[e.first] = e.second;
    }
    return m;
}

}  // namespace test
