// .geo -> .msh through the gmsh executable, with a content-addressed cache
// (see include/karman/mesh/gmsh_mesher.hpp).
#include "karman/mesh/gmsh_mesher.hpp"
#include "karman/mesh/mesh_options.hpp"

#include "karman/core/parallel.hpp"

#include "karman/core/hash.hpp"
#include "karman/core/logger.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

extern char **environ;

namespace karman::mesh {
namespace fs = std::filesystem;
namespace {

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text of a .geo file followed by the texts of the files it includes (`Include "name";`,
// relative to the including file, recursively; a file that cannot be read adds nothing, gmsh
// reports it), so that the cache key changes when an included file does
// (cases/tmr-flat-plate/flat-plate-thin-wall.geo includes flat-plate.geo)
std::string text_with_includes(const fs::path &file, int depth = 0) {
  std::string text = read_file(file.string());
  if (depth >= 16) return text; // an include cycle: gmsh reports it
  const std::string body = text;
  std::string::size_type at = 0;
  while ((at = body.find("Include", at)) != std::string::npos) {
    const auto open = body.find('"', at);
    at += 7;
    if (open == std::string::npos || body.find_first_not_of(" \t", at) != open) continue;
    const auto close = body.find('"', open + 1);
    if (close == std::string::npos) break;
    const fs::path included = file.parent_path() / body.substr(open + 1, close - open - 1);
    text += text_with_includes(included, depth + 1);
    at = close + 1;
  }
  return text;
}

// Last lines of gmsh's log that carry an error or warning, for the user's message.
std::string gmsh_errors(const std::string &log) {
  std::stringstream in(log);
  std::string line, errors;
  while (std::getline(in, line))
    if (line.find("Error") != std::string::npos) errors += (errors.empty() ? "" : " | ") + line;
  return errors;
}

} // namespace

std::string gmsh_parameters(const std::vector<std::string> &items, const std::string &geo_text,
                            const std::string &where,
                            std::vector<std::pair<std::string, std::string>> *numbers) {
  numbers->clear();
  const auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  for (const std::string &item : items) {
    const std::size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    const std::string bad = where + ": mesh.parameters item '" + item + "': ";
    bool name_ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) name_ok = name_ok && (word_char(c) || c == '.');
    if (eq == std::string::npos || !name_ok)
      return bad + "expected NAME=VALUE (a Gmsh constant or option name, a number)";
    char *end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(v))
      return bad + "the value '" + value + "' is not a finite number";
    if (name == "level") return bad + "the level is mesh.level's";
    if (name.find('.') == std::string::npos) {
      // a whole word of the .geo text (DefineConstant[ name = ... ] or a plain assignment)
      bool found = false;
      for (std::size_t at = geo_text.find(name); at != std::string::npos && !found;
           at = geo_text.find(name, at + 1))
        found = (at == 0 || !word_char(geo_text[at - 1])) &&
                (at + name.size() == geo_text.size() || !word_char(geo_text[at + name.size()]));
      if (!found)
        return bad + "'" + name + "' does not occur in the .geo (nor in a file it includes): " +
               "gmsh would ignore it";
    }
    for (const auto &n : *numbers)
      if (n.first == name) return bad + "'" + name + "' is given twice";
    numbers->emplace_back(name, value);
  }
  std::sort(numbers->begin(), numbers->end());
  return "";
}

std::string run_gmsh(const std::string &geo_file, long level, long dimension,
                     const std::string &msh_file, long refine, bool refine_on_geometry,
                     const std::vector<std::pair<std::string, std::string>> &numbers) {
  const char *exe_env = std::getenv("KARMAN_GMSH");
  const std::string exe = exe_env && exe_env[0] ? exe_env : KARMAN_GMSH_EXECUTABLE;
  const std::string log_file = msh_file + ".log";
  std::string input = geo_file, stage = "-" + std::to_string(dimension);
  if (refine > 0) {
    // gmsh's -refine acts before the meshing of -2/-3: a script that includes the .geo (its own
    // includes stay relative to it), meshes and refines; -0 then writes the refined mesh
    input = msh_file + ".refine.geo";
    std::ofstream script(input);
    script << "Include \"" << fs::absolute(geo_file).string() << "\";\nMesh " << dimension << ";\n";
    if (!refine_on_geometry) script << "Mesh.SecondOrderLinear = 1;\n";
    for (long k = 0; k < refine; ++k) script << "RefineMesh;\n";
    if (!script) return "cannot write " + input;
    stage = "-0"; // (-0 takes the output format from the file name: output ends in .msh)
  }
  const std::string output = refine > 0 ? msh_file + ".msh" : msh_file;
  std::vector<std::string> args = {
      exe,       input,   stage,  "-setnumber", "level", std::to_string(level),
      "-format", "msh41", "-bin", "-nt",        "1",     "-v",
      "4",       "-o",    output};
  for (const auto &[name, value] : numbers) // after the level's -setnumber (args[3..5])
    args.insert(args.begin() + 6, {"-setnumber", name, value});
  std::vector<char *> argv;
  for (auto &a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid;
  const int spawn_status = posix_spawnp(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_status != 0)
    return "cannot run '" + exe + "' (" + std::strerror(spawn_status) +
           "); install gmsh (scripts/install-deps.sh) or set KARMAN_GMSH";
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string log = read_file(log_file);
  const std::string errors = gmsh_errors(log);
  std::error_code ec;
  if (refine > 0) {
    fs::remove(input, ec);
    fs::rename(output, msh_file, ec);
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && errors.empty() &&
                  fs::exists(msh_file) && fs::file_size(msh_file) > 0;
  if (!ok) {
    fs::remove(msh_file, ec);
    return "gmsh failed on " + geo_file + " (level " + std::to_string(level) +
           (refine > 0 ? ", refined " + std::to_string(refine) + " times" : std::string()) + "): " +
           (errors.empty() ? "exit status " + std::to_string(WEXITSTATUS(status)) : errors) +
           " (log: " + log_file + ")";
  }
  return "";
}

PetscErrorCode prepare_mesh_file(MPI_Comm comm, const config::CaseConfig &cfg,
                                 std::string *msh_path) {
  PetscFunctionBeginUser;
  const MeshOptions mesh = mesh_options().get(cfg);
  const std::string file = cfg.resolve_path(mesh.file);
  const std::string ext = fs::path(file).extension().string();
  PetscCheck(ext == ".geo" || ext == ".msh", comm, PETSC_ERR_USER_INPUT,
             "%s: mesh.file '%s' must be a Gmsh .geo or .msh file", cfg.file().c_str(),
             mesh.file.c_str());
  PetscCheck(mesh.parameters.empty() || ext == ".geo", comm, PETSC_ERR_USER_INPUT,
             "%s: mesh.parameters (gmsh -setnumber) need a Gmsh .geo as mesh.file, got '%s'",
             cfg.file().c_str(), mesh.file.c_str());
  PetscCheck(mesh.refine == 0 || ext == ".geo", comm, PETSC_ERR_USER_INPUT,
             "%s: mesh.refine %ld needs a Gmsh .geo as mesh.file (the new boundary vertices are "
             "placed on its geometry), got '%s'",
             cfg.file().c_str(), mesh.refine, mesh.file.c_str());
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  std::string error, result;
  if (rank == 0) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
      error = cfg.file() + ": mesh.file '" + mesh.file + "' not found (looked for " + file + ")";
    } else if (ext == ".msh") {
      result = file;
    } else {
      const long level = mesh.level, dim = mesh.dimension, refine = mesh.refine;
      const std::string text = text_with_includes(file);
      std::vector<std::pair<std::string, std::string>> numbers;
      error = gmsh_parameters(mesh.parameters, text, cfg.file(), &numbers);
      std::uint64_t h = hash_bytes(text.data(), text.size());
      std::string key = std::to_string(level) + "/" + std::to_string(dim) +
                        (refine > 0 ? "/r" + std::to_string(refine) : std::string()) +
                        (refine > 0 && !mesh.refine_on_geometry ? "/linear" : std::string());
      for (const auto &[name, value] : numbers) key += "/" + name + "=" + value;
      h = hash_bytes(key.data(), key.size(), h);
      const std::string &cache = mesh.cache_dir;
      fs::path dir = cache.empty() ? fs::path(file).parent_path() / ".karman-cache"
                                   : fs::path(cfg.resolve_path(cache));
      if (error.empty()) {
        fs::create_directories(dir, ec);
        if (ec)
          error = cfg.file() + ": cannot create mesh cache folder " + dir.string() + ": " +
                  ec.message();
      }
      if (error.empty()) {
        const fs::path target =
            dir / (fs::path(file).stem().string() + "-L" + std::to_string(level) +
                   (refine > 0 ? "r" + std::to_string(refine) : std::string()) + "-" + hash_hex(h) +
                   ".msh");
        if (fs::exists(target, ec) && fs::file_size(target, ec) > 0) {
          result = target.string();
        } else {
          const std::string tmp = target.string() + ".tmp" + std::to_string(getpid());
          error = run_gmsh(file, level, dim, tmp, refine, mesh.refine_on_geometry, numbers);
          if (error.empty()) {
            fs::rename(tmp, target, ec);
            if (ec) error = "cannot move " + tmp + " to " + target.string() + ": " + ec.message();
            fs::remove(tmp + ".log", ec);
            result = target.string();
          }
        }
      }
    }
  }
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_USER_INPUT, "%s", error.c_str());
  PetscCall(broadcast_string(comm, &result));
  *msh_path = result;
  PetscFunctionReturn(0);
}

} // namespace karman::mesh
