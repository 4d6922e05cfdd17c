// Command line of the karman executable:
//   karman <command> CASE.yaml [-o OUTDIR] [--set section.key=value ...] [PETSc options]
// karman's own arguments are taken out here; everything else goes to PETSc's options
// database (so -ksp_type, -pc_type, -log_view ... work as usual).
#pragma once

#include <string>
#include <vector>

namespace karman::cli {

struct CliArgs {
  std::string command;
  std::string case_file;
  std::string output_dir = "out";
  std::vector<std::string> overrides; ///< --set section.key=value
  bool help = false;
  bool restart = false;
  bool accept_case_change = false;     ///< --accept-case-change: a restart may change the problem
  std::vector<std::string> petsc_args; ///< forwarded to PetscInitialize (argv[0] first)
};

/// A karman command: name, one-line description and the extra flags it accepts.
struct CommandInfo {
  const char *name;
  const char *summary;
};

/// The commands this build provides.
const std::vector<CommandInfo> &commands();

/// Parses argv; returns "" on success or the error text.
std::string parse_args(int argc, char **argv, CliArgs *args);

/// `karman --help` text (commands and every case key).
std::string general_help();

/// `karman <command> --help` text.
std::string command_help(const std::string &command);

} // namespace karman::cli
