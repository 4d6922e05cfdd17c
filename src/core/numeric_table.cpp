// CSV-like number tables (see include/karman/core/numeric_table.hpp).
#include "karman/core/numeric_table.hpp"

#include <cstdlib>
#include <sstream>

namespace karman {

std::string parse_numeric_rows(const std::string &text, std::size_t width,
                               std::vector<std::vector<double>> *rows) {
  rows->clear();
  std::stringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    for (char &c : line)
      if (c == ',' || c == ';' || c == '\t' || c == '\r') c = ' ';
    std::stringstream ls(line);
    std::vector<double> row;
    std::string tok;
    bool words = false;
    while (ls >> tok) {
      char *end = nullptr;
      const double v = std::strtod(tok.c_str(), &end);
      if (end == tok.c_str() || *end) words = true;
      row.push_back(v);
    }
    if (row.empty() || (words && lineno == 1)) continue;
    if (words || row.size() != width)
      return "line " + std::to_string(lineno) + ": expected " + std::to_string(width) +
             " number(s)";
    rows->push_back(row);
  }
  return "";
}

} // namespace karman
