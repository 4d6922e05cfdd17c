// Command-line parsing (see include/karman/cli/cli_args.hpp).
#include "karman/cli/cli_args.hpp"

#include "karman/optimization/case_schema.hpp"

#include <cctype>

namespace karman::cli {

const std::vector<CommandInfo> &commands() {
  static const std::vector<CommandInfo> list = {
      {"mesh",
       "mesh the case geometry, distribute it, check it and write it with cell-quality fields"},
      {"run",
       "solve the case (steady: Newton with pseudo-transient continuation; unsteady: BDF2) and "
       "write forces and fields; --restart continues an unsteady run from its last checkpoint "
       "(--accept-case-change: also one written with other fluid, reference, boundaries, "
       "solver.upwind or solver.stabilization values)"},
      {"adjoint",
       "discrete adjoint of the objective (steady, or unsteady backwards in time): gradients of "
       "every parameter, of time-dependent controls, of the mesh coordinates and the initial "
       "state, "
       "surface sensitivities; --restart resumes a killed unsteady adjoint"},
      {"adapt", "goal-oriented mesh adaptation of a steady case to its objective: solve, "
                "estimate the objective's error by the adjoint on the nested refinement, mesh "
                "the case's .geo again with the indicator's size field, warm-start, repeat "
                "(the `adapt` section); adapt.csv per cycle"},
      {"verify", "check the adjoint gradients against finite differences and Taylor tests (steady: "
                 "parameters and shape; with a `design` list: its variables, steady or unsteady)"},
      {"optimize",
       "shape optimization of a steady case, or flow-control optimization / system "
       "identification of a steady or unsteady case: the `design` variables minimize the "
       "objective subject to the `constraints` (NLopt SLSQP by default, L-BFGS for large "
       "control vectors; shapes deformed by linear elasticity with its exact adjoint); "
       "--restart continues a killed campaign from its journal without redoing finished "
       "evaluations"},
  };
  return list;
}

std::string parse_args(int argc, char **argv, CliArgs *args) {
  args->petsc_args.assign(1, argc > 0 ? argv[0] : "karman");
  int i = 1;
  if (i < argc && argv[i][0] != '-') args->command = argv[i++];
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char *flag) -> std::string {
      if (i + 1 >= argc) return {};
      (void)flag;
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      args->help = true;
    } else if (a == "-o" || a == "--output") {
      args->output_dir = value("-o");
      if (args->output_dir.empty()) return a + " needs a folder name";
    } else if (a.rfind("--output=", 0) == 0) {
      args->output_dir = a.substr(9);
    } else if (a == "--set") {
      const std::string v = value("--set");
      if (v.empty()) return "--set needs section.key=value";
      args->overrides.push_back(v);
    } else if (a.rfind("--set=", 0) == 0) {
      args->overrides.push_back(a.substr(6));
    } else if (a == "--restart") {
      args->restart = true;
    } else if (a == "--accept-case-change") {
      args->accept_case_change = true;
    } else if (a.rfind("--", 0) == 0) {
      return "unknown option '" + a + "' (see karman --help)";
    } else if (a[0] == '-') {
      args->petsc_args.push_back(a); // a PETSc option and, if present, its value
      if (i + 1 < argc &&
          (argv[i + 1][0] != '-' || std::isdigit(static_cast<unsigned char>(argv[i + 1][1]))))
        args->petsc_args.push_back(argv[++i]);
    } else if (args->case_file.empty()) {
      args->case_file = a;
    } else {
      return "unexpected argument '" + a + "' (one case file per run)";
    }
  }
  if (args->help) return "";
  if (args->command.empty()) return "no command given (see karman --help)";
  bool known = false;
  for (const auto &c : commands()) known = known || args->command == c.name;
  if (!known) return "unknown command '" + args->command + "' (see karman --help)";
  if (args->case_file.empty())
    return "karman " + args->command + " needs a case file: karman " + args->command + " CASE.yaml";
  return "";
}

std::string general_help() {
  std::string s =
      "karman - differentiable incompressible flow solver (finite volumes on PETSc DMPlex)\n\n"
      "usage: mpirun -n P karman <command> CASE.yaml [-o OUTDIR] [--set section.key=value ...] "
      "[PETSc options]\n\n"
      "commands:\n";
  for (const auto &c : commands())
    s += "  " + std::string(c.name) + std::string(10 - std::string(c.name).size(), ' ') +
         c.summary + "\n";
  s += "\noptions:\n"
       "  -o, --output DIR   output folder (default: out)\n"
       "  --set KEY=VALUE    override a case key, e.g. --set fluid.viscosity=0.01 --set "
       "mesh.level=2\n"
       "  --restart          unsteady run: continue from the last checkpoint in "
       "OUTDIR/checkpoints;\n"
       "                     unsteady adjoint: resume the backward sweep from "
       "OUTDIR/adjoint-state.h5\n"
       "  --accept-case-change\n"
       "                     with --restart: continue from checkpoints written with other values\n"
       "                     of the keys that define the problem (fluid, reference, boundaries,\n"
       "                     solver.upwind, solver.stabilization) with a warning naming them,\n"
       "                     instead of refusing (a deliberate switch, e.g. of the scheme)\n"
       "  -h, --help         this text; karman <command> --help for one command\n"
       "  -OPTION [VALUE]    any PETSc option (e.g. -ksp_type gmres -pc_type asm -log_view)\n\n";
  s += optimization::case_schema().help();
  return s;
}

std::string command_help(const std::string &command) {
  for (const auto &c : commands())
    if (command == c.name)
      return "usage: mpirun -n P karman " + command +
             " CASE.yaml [-o OUTDIR] [--set KEY=VALUE ...] [PETSc options]\n\n" + c.summary +
             "\n\n" + optimization::case_schema().help();
  return general_help();
}

} // namespace karman::cli
