#pragma once
// Fixture loading for the tests that read tests/data: paths, JSON expected
// values, and the CLI's own readers (safetensors, .npy, the dtype -> view
// dispatch) from logratio_cli, so a fixture is read as the tool reads it.
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "mapped_file.hpp"
#include "panel_input.hpp"
#include "safetensors.hpp"
#include "test_util.hpp"

#ifndef LOGRATIO_TEST_DATA
#error "LOGRATIO_TEST_DATA must name the tests/data directory"
#endif

namespace test {

inline std::string data_path(const std::string& rel) { return std::string(LOGRATIO_TEST_DATA) + "/" + rel; }

inline nlohmann::json load_json(const std::string& path) {
    std::ifstream f(path);
    REQUIRE_MESSAGE(f.good(), "cannot open " << path);
    return nlohmann::json::parse(f);
}

}  // namespace test
