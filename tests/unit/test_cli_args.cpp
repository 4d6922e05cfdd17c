// The command line (src/cli/cli_args.cpp): karman's own arguments taken out, PETSc options with
// their values forwarded, and one message for each kind of bad command line.
#include "karman/cli/cli_args.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace karman;

namespace {

std::string parse(std::vector<std::string> words, cli::CliArgs *args) {
  words.insert(words.begin(), "karman");
  std::vector<char *> argv;
  for (auto &w : words) argv.push_back(w.data());
  *args = cli::CliArgs{};
  return cli::parse_args(static_cast<int>(argv.size()), argv.data(), args);
}

} // namespace

TEST_CASE("cli arguments: own options, overrides and PETSc options", "[cli]") {
  cli::CliArgs a;
  REQUIRE(parse({"run", "case.yaml", "-o", "results", "--set", "fluid.viscosity=0.01",
                 "--set=mesh.level=2", "-ksp_type", "gmres", "-snes_monitor", "-ksp_rtol", "-1e-3",
                 "--restart", "--accept-case-change"},
                &a) == "");
  CHECK(a.command == "run");
  CHECK(a.case_file == "case.yaml");
  CHECK(a.output_dir == "results");
  CHECK(a.overrides == std::vector<std::string>{"fluid.viscosity=0.01", "mesh.level=2"});
  CHECK(a.petsc_args == std::vector<std::string>{"karman", "-ksp_type", "gmres", "-snes_monitor",
                                                 "-ksp_rtol", "-1e-3"});
  CHECK(a.restart);
  CHECK(a.accept_case_change);
  CHECK(!a.help);
  REQUIRE(parse({"adjoint", "--output=o2", "c.yaml"}, &a) == "");
  CHECK(a.output_dir == "o2");
  CHECK(a.petsc_args == std::vector<std::string>{"karman"});
  REQUIRE(parse({"mesh", "c.yaml"}, &a) == "");
  CHECK(a.output_dir == "out"); // default
  // --help needs neither a command nor a case file
  REQUIRE(parse({"--help"}, &a) == "");
  CHECK(a.help);
  REQUIRE(parse({"verify", "-h"}, &a) == "");
  CHECK((a.help && a.command == "verify"));
}

TEST_CASE("cli arguments: bad command lines", "[cli]") {
  cli::CliArgs a;
  CHECK(parse({}, &a) == "no command given (see karman --help)");
  CHECK(parse({"solve", "c.yaml"}, &a) == "unknown command 'solve' (see karman --help)");
  CHECK(parse({"run"}, &a) == "karman run needs a case file: karman run CASE.yaml");
  CHECK(parse({"run", "a.yaml", "b.yaml"}, &a) ==
        "unexpected argument 'b.yaml' (one case file per run)");
  CHECK(parse({"run", "a.yaml", "--restrat"}, &a) ==
        "unknown option '--restrat' (see karman --help)");
  CHECK(parse({"run", "a.yaml", "-o"}, &a) == "-o needs a folder name");
  CHECK(parse({"run", "a.yaml", "--set"}, &a) == "--set needs section.key=value");
}

TEST_CASE("cli help: every command listed, one command's usage", "[cli]") {
  const std::string help = cli::general_help();
  for (const auto &c : cli::commands()) {
    CAPTURE(c.name);
    CHECK(help.find("  " + std::string(c.name) + " ") != std::string::npos);
    const std::string one = cli::command_help(c.name);
    CHECK(one.rfind("usage: mpirun -n P karman " + std::string(c.name) + " CASE.yaml", 0) == 0);
    CHECK(one.find(c.summary) != std::string::npos);
  }
  CHECK(cli::command_help("nonsense") == help);
  // the case keys follow (the schema's help)
  CHECK(help.find("viscosity") != std::string::npos);
}
