// Tables of numbers in CSV-like text (time functions of boundary parameters,
// observations for probe matching): separators comma, semicolon, tab or space; empty
// lines are skipped and a first line with text is a header.
#pragma once

#include <string>
#include <vector>

namespace karman {

/// Parses `text` into rows of exactly `width` numbers; returns "" or the problem with its
/// line number ("line 4: expected 3 numbers").
std::string parse_numeric_rows(const std::string &text, std::size_t width,
                               std::vector<std::vector<double>> *rows);

} // namespace karman
