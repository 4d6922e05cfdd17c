// Helper of the options tests: loading case-file text with the full schema (test_helpers.cpp).
#pragma once

#include "karman/config/case_config.hpp"

#include <string>
#include <vector>

namespace karman::test {

/// The smallest valid case file (a mesh file, one wall): options tests add their section to it.
inline const char *kMinimalCase = "mesh: {file: a.geo}\nboundaries: {a: {type: wall}}\n";

/// Loads case-file text (named case.yaml, in /cases/x) with the full schema
/// (optimization::case_schema()) and `overrides` into *cfg; returns "" or the error message.
/// Collective.
std::string load_case(const std::string &text, config::CaseConfig *cfg,
                      const std::vector<std::string> &overrides = {});

} // namespace karman::test
