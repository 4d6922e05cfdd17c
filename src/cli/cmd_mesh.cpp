// `karman mesh` and the start-up shared by all commands (see include/karman/cli/commands.hpp).
//
// The mesh summary gives, on any number of ranks, the global cell count, the total
// volume (area in 2D) sum_c V_c and the size (length in 2D) of each boundary
// sum_f |S_f|, plus cell-quality extremes; it is printed and written to
// OUTDIR/summary.json.  ParaView files hold the partition (rank), the serial cell
// index and the quality fields; OUTDIR/mesh.h5 the same in serial order.
#include "karman/cli/commands.hpp"
#include "karman/driver/output_options.hpp"
#include "karman/optimization/case_schema.hpp"

#include "karman/core/logger.hpp"
#include "karman/core/parallel.hpp"
#include "karman/geometry/mesh_geometry.hpp"
#include "karman/geometry/mesh_quality.hpp"
#include "karman/io/hdf5_fields.hpp"
#include "karman/io/vtk_writer.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace karman::cli {
namespace fs = std::filesystem;

PetscErrorCode start_command(MPI_Comm comm, const CliArgs &args, config::CaseConfig *cfg) {
  PetscFunctionBeginUser;
  PetscCall(config::CaseConfig::load(comm, args.case_file, args.overrides,
                                     optimization::case_schema(), *cfg));
  PetscCall(cfg->apply_petsc_options());
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  std::string error;
  if (rank == 0) {
    std::error_code ec;
    fs::create_directories(args.output_dir, ec);
    if (ec)
      error = "cannot create output folder '" + args.output_dir + "': " + ec.message();
    else {
      std::ofstream out(fs::path(args.output_dir) / "case.resolved.yaml");
      out << cfg->resolved_yaml();
      if (!out.good())
        error = "cannot write " + (fs::path(args.output_dir) / "case.resolved.yaml").string();
    }
  }
  PetscCall(broadcast_string(comm, &error));
  PetscCheck(error.empty(), comm, PETSC_ERR_FILE_OPEN, "%s", error.c_str());
  PetscCall(log_info(comm, "%s %s on %d rank%s, output in %s", args.command.c_str(),
                     args.case_file.c_str(), size, size > 1 ? "s" : "", args.output_dir.c_str()));
  PetscCall(log_info(comm, "resolved configuration:\n%s", cfg->resolved_yaml().c_str()));
  PetscFunctionReturn(0);
}

namespace {

/// The global measures of a mesh: total volume (area in 2D), each boundary's size (length in 2D)
/// and face count, the owned cells per rank, the mesh hash.
struct MeshSummary {
  double volume = 0;
  std::vector<double> patch_size;
  std::vector<PetscInt> patch_count, per_rank;
  std::string hash;
};

/// The summary of the mesh with geometry g.  Collective.
PetscErrorCode summarize_mesh(const mesh::Mesh &mesh, const geometry::Geometry<double> &g,
                              MeshSummary *s) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = mesh.comm;
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  double volume = 0;
  for (PetscInt c = 0; c < mesh.n_owned_cells; ++c) volume += g.cell_volume[c];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &volume, 1, MPI_DOUBLE, MPI_SUM, comm));
  s->volume = volume;
  std::vector<double> &patch_size = s->patch_size;
  std::vector<PetscInt> &patch_count = s->patch_count;
  patch_size.assign(mesh.patch_names.size(), 0.0);
  patch_count.assign(mesh.patch_names.size(), 0);
  for (std::size_t b = 0; b < mesh.patch_names.size(); ++b)
    for (PetscInt f : mesh.boundary_faces(static_cast<int>(b))) {
      patch_size[b] += norm(g.face_area[f]);
      ++patch_count[b];
    }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, patch_size.data(), static_cast<int>(patch_size.size()),
                             MPI_DOUBLE, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, patch_count.data(), static_cast<int>(patch_count.size()),
                             MPIU_INT, MPI_SUM, comm));
  s->per_rank.assign(size, 0);
  PetscCallMPI(
      MPI_Allgather(&mesh.n_owned_cells, 1, MPIU_INT, s->per_rank.data(), 1, MPIU_INT, comm));
  PetscCall(io::mesh_hash(mesh, mesh.coordinates, &s->hash));
  PetscFunctionReturn(0);
}

/// Logs the summary and writes it to OUTDIR/summary.json.  Collective.
PetscErrorCode report_mesh_summary(const CliArgs &args, const config::CaseConfig &cfg,
                                   const mesh::Mesh &mesh, const MeshSummary &s,
                                   const geometry::QualitySummary &qs) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = mesh.comm;
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  const char *measure = mesh.dim == 2 ? "area" : "volume";
  const char *boundary_measure = mesh.dim == 2 ? "length" : "area";
  PetscCall(log_info(comm, "mesh %s: %dD, %d cells, %d vertices, %d rank%s", mesh.source.c_str(),
                     mesh.dim, (int)mesh.n_global_cells, (int)mesh.n_global_vertices, size,
                     size > 1 ? "s" : ""));
  PetscCall(log_info(comm, "  total %s %.15g", measure, s.volume));
  for (std::size_t b = 0; b < mesh.patch_names.size(); ++b)
    PetscCall(log_info(comm, "  boundary %-12s %6d faces, %s %.15g", mesh.patch_names[b].c_str(),
                       (int)s.patch_count[b], boundary_measure, s.patch_size[b]));
  PetscCall(log_info(
      comm,
      "  quality: max non-orthogonality %.2f deg, max skewness %.3f, max aspect ratio %.2f, "
      "cell %s in [%.3g, %.3g]",
      qs.max_non_orthogonality, qs.max_skewness, qs.max_aspect_ratio, measure, qs.min_volume,
      qs.max_volume));

  nlohmann::json j;
  j["case"] = cfg.file();
  j["mesh_file"] = mesh.source;
  j["mesh_hash"] = s.hash;
  j["ranks"] = size;
  j["dimension"] = mesh.dim;
  j["cells"] = mesh.n_global_cells;
  j["vertices"] = mesh.n_global_vertices;
  j["cells_per_rank"] = s.per_rank;
  j[std::string("total_") + measure] = s.volume;
  for (std::size_t b = 0; b < mesh.patch_names.size(); ++b)
    j["boundaries"][mesh.patch_names[b]] = {{"type", cfg.boundaries()[b].type},
                                            {"faces", s.patch_count[b]},
                                            {boundary_measure, s.patch_size[b]}};
  j["quality"] = {{"max_non_orthogonality_deg", qs.max_non_orthogonality},
                  {"max_skewness", qs.max_skewness},
                  {"max_aspect_ratio", qs.max_aspect_ratio},
                  {std::string("min_cell_") + measure, qs.min_volume},
                  {std::string("max_cell_") + measure, qs.max_volume}};
  if (rank == 0) {
    std::ofstream out(fs::path(args.output_dir) / "summary.json");
    out << j.dump(2) << "\n";
  }
  PetscFunctionReturn(0);
}

/// ParaView and HDF5 output of the mesh: partition, serial cell index, cell size and quality;
/// per boundary its faces' sizes and normals.  Collective.
PetscErrorCode write_mesh_fields(const CliArgs &args, const config::CaseConfig &cfg,
                                 const mesh::Mesh &mesh, const geometry::Geometry<double> &g,
                                 const geometry::CellQuality &q) {
  PetscFunctionBeginUser;
  const MPI_Comm comm = mesh.comm;
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  const char *measure = mesh.dim == 2 ? "area" : "volume";
  const char *boundary_measure = mesh.dim == 2 ? "length" : "area";
  const PetscInt n = mesh.n_owned_cells;
  std::vector<io::Field> fields = {{"rank", 1, std::vector<double>(n, rank)},
                                   {"cell_id", 1, {}},
                                   {measure, 1, {}},
                                   {"non_orthogonality", 1, q.non_orthogonality},
                                   {"skewness", 1, q.skewness},
                                   {"aspect_ratio", 1, q.aspect_ratio}};
  for (PetscInt c = 0; c < n; ++c) {
    fields[1].values.push_back(static_cast<double>(mesh.cell_gid[c]));
    fields[2].values.push_back(g.cell_volume[c]);
  }
  const driver::OutputOptions output = driver::output_options().get(cfg);
  if (output.vtk) {
    io::VtkSeries volume_series(comm, args.output_dir, "mesh");
    PetscCall(volume_series.write_volume(mesh, mesh.coordinates, 0.0, fields));
    for (std::size_t b = 0; b < mesh.patch_names.size(); ++b) {
      const std::vector<PetscInt> faces = mesh.boundary_faces(static_cast<int>(b));
      io::Field size_field{boundary_measure, 1, {}}, normal{"normal", 3, {}};
      for (PetscInt f : faces) {
        const double a = norm(g.face_area[f]);
        size_field.values.push_back(a);
        for (int d = 0; d < 3; ++d) normal.values.push_back(g.face_area[f][d] / a);
      }
      io::VtkSeries surface(comm, args.output_dir, "boundary_" + mesh.patch_names[b]);
      PetscCall(surface.write_surface(mesh, mesh.coordinates, static_cast<int>(b), 0.0,
                                      {size_field, normal}));
    }
    PetscCall(log_info(comm, "ParaView: %s (and boundary_<name>.pvd per boundary)",
                       volume_series.pvd_path().c_str()));
  }
  if (output.hdf5) {
    const std::string h5 = (fs::path(args.output_dir) / "mesh.h5").string();
    PetscCall(io::write_fields_h5(mesh, mesh.coordinates, h5, fields, {}));
    PetscCall(log_info(comm, "HDF5: %s", h5.c_str()));
  }
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode run_mesh_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  config::CaseConfig cfg;
  PetscCall(start_command(comm, args, &cfg));
  mesh::Mesh mesh;
  PetscCall(driver::load_case_mesh(comm, cfg, &mesh));
  geometry::Geometry<double> g;
  geometry::compute_geometry(mesh, mesh.coordinates, g);
  PetscCall(geometry::check_geometry(mesh, mesh.coordinates, g, mesh.source.c_str()));
  const geometry::CellQuality q = geometry::compute_quality(mesh, g);
  geometry::QualitySummary qs;
  PetscCall(geometry::summarize_quality(mesh, g, q, &qs));
  MeshSummary summary;
  PetscCall(summarize_mesh(mesh, g, &summary));
  PetscCall(report_mesh_summary(args, cfg, mesh, summary, qs));
  PetscCall(write_mesh_fields(args, cfg, mesh, g, q));
  PetscFunctionReturn(0);
}

PetscErrorCode run_command(MPI_Comm comm, const CliArgs &args) {
  PetscFunctionBeginUser;
  if (args.command == "mesh")
    PetscCall(run_mesh_command(comm, args));
  else if (args.command == "run")
    PetscCall(run_run_command(comm, args));
  else if (args.command == "adjoint")
    PetscCall(run_adjoint_command(comm, args));
  else if (args.command == "adapt")
    PetscCall(run_adapt_command(comm, args));
  else if (args.command == "verify")
    PetscCall(run_verify_command(comm, args));
  else if (args.command == "optimize")
    PetscCall(run_optimize_command(comm, args));
  else
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "unknown command '%s'", args.command.c_str());
  PetscFunctionReturn(0);
}

} // namespace karman::cli
