// A study, not a test (ctest does not run it: hidden, and no unit_ entry for this file):
// scripts/study-remesh-failures.sh runs it on the output of a shape-min-drag campaign.
#include "karman/core/error.hpp"
#include "karman/driver/flow_case.hpp"
#include "karman/driver/remeshing.hpp"
#include "karman/driver/shape_evaluation.hpp"
#include "karman/optimization/case_schema.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace karman;

namespace {

/// The rows of a campaign's CSV file (header skipped), split at commas.
std::vector<std::vector<std::string>> csv_rows(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> row;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) row.push_back(cell);
    rows.push_back(row);
  }
  return rows;
}

} // namespace

// Not run by ctest: scripts/study-remesh-failures.sh runs it on a shape-min-drag campaign
// (KARMAN_REMESH_STUDY: its output directory; KARMAN_REMESH_LEVEL: its mesh level): the mesh of
// the last good design before the campaign's first failed evaluation is remeshed (walls kept,
// then re-sampled), and every failed design of the campaign is evaluated on it.  One line per
// evaluation, "study: ...".
TEST_CASE("remeshing study: the failed designs of a campaign on a remeshed mesh", "[.study]") {
  const char *given = std::getenv("KARMAN_REMESH_STUDY");
  const char *level = std::getenv("KARMAN_REMESH_LEVEL");
  REQUIRE(given);
  const std::string absolute = std::filesystem::absolute(given).string();
  const char *dir = absolute.c_str(); // (the case resolves mesh.file from its own directory)
  std::map<long, bool> ok;
  std::map<long, std::vector<double>> designs;
  for (const auto &row : csv_rows(std::string(dir) + "/optimization.csv"))
    ok[std::stol(row[0])] = row[2] == "1";
  for (const auto &row : csv_rows(std::string(dir) + "/designs.csv"))
    for (std::size_t i = 1; i < row.size(); ++i)
      designs[std::stol(row[0])].push_back(std::stod(row[i]));
  std::vector<long> failed;
  for (const auto &[k, good] : ok)
    if (!good) failed.push_back(k);
  REQUIRE(!failed.empty());
  long g = failed[0] - 1;
  while (g > 0 && !ok[g]) --g;
  const std::string yaml = std::string(KARMAN_SOURCE_DIR) + "/cases/shape-min-drag/re40.yaml";
  config::CaseConfig cfg;
  REQUIRE(config::CaseConfig::load(PETSC_COMM_WORLD, yaml,
                                   {std::string("mesh.level=") + (level ? level : "0"),
                                    std::string("mesh.cache_dir=") + dir + "/cache"},
                                   optimization::case_schema(), cfg) == 0);
  driver::FlowCase fc;
  REQUIRE(fc.load(PETSC_COMM_WORLD, cfg) == 0);
  auto space = std::make_unique<design::DesignSpace>();
  REQUIRE(space->setup(fc.mesh(), fc.mesh().coordinates, cfg) == 0);
  driver::ShapeEvaluator ev;
  REQUIRE(ev.setup(fc, {}, nullptr, {}, std::move(space)) == 0);
  auto evaluate = [](driver::ShapeEvaluator &s, const std::vector<double> &a, const char *mesh,
                     long k) {
    std::vector<Vec3<double>> d;
    REQUIRE(s.chain().displacement(a, &d) == 0);
    driver::ShapeEvaluation e;
    REQUIRE(s.evaluate(d, &e) == 0);
    std::printf("study: %s evaluation %ld ok %d J %.8f min_volume_ratio %.3f newton %d %s\n", mesh,
                k, e.ok, e.J, e.min_volume_ratio, e.newton_iterations,
                e.failure.substr(0, 90).c_str());
  };
  for (long k : failed) evaluate(ev, designs[k], "original", k);
  evaluate(ev, designs[g], "original", g);
  const std::vector<Vec3<double>> X0 = ev.reference_coordinates();
  for (bool resample : {false, true}) {
    driver::RemeshResult r;
    driver::RemeshOptions o;
    o.resample = resample;
    REQUIRE(driver::remesh(fc.residual(), {fc.mesh().patch_index("cylinder")}, X0, o,
                           std::string(dir) + "/remesh-" + std::to_string(resample), &r) == 0);
    REQUIRE(r.ok);
    config::CaseConfig cfg2;
    REQUIRE(config::CaseConfig::load(PETSC_COMM_WORLD, yaml, {"mesh.file=" + r.msh},
                                     optimization::case_schema(), cfg2) == 0);
    driver::FlowCase fc2;
    REQUIRE(fc2.load(PETSC_COMM_WORLD, cfg2) == 0);
    const char *name = resample ? "resampled" : "kept";
    std::printf("study: remesh (walls %s) at evaluation %ld: %.2f s, cells %ld -> %ld, wall "
                "layers %ld\n",
                name, g, r.time, static_cast<long>(fc.mesh().n_global_cells),
                static_cast<long>(fc2.mesh().n_global_cells), r.layer.layers);
    std::vector<Vec3<double>> X0n;
    REQUIRE(driver::embedded_coordinates(fc2.mesh(), fc2.mesh().coordinates, r.embedding, &X0n) ==
            0);
    auto space2 = std::make_unique<design::DesignSpace>();
    REQUIRE(space2->setup(fc2.mesh(), X0n, cfg2) == 0);
    REQUIRE(space2->set_reference_design(designs[g]) == 0);
    driver::ShapeEvaluator ev2;
    REQUIRE(ev2.setup(fc2, {}, nullptr, {}, std::move(space2)) == 0);
    evaluate(ev2, designs[g], name, g);
    for (long k : failed) evaluate(ev2, designs[k], name, k);
  }
}
