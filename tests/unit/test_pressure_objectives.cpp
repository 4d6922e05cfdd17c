// The pressure objectives (src/adjoint/pressure_objectives.cpp) on the DFG 2D-1 channel (level 0)
// at rest with p = a + b x + c y, whose reconstructions are exact away from the outlet:
//  - pressure-difference: p(x_1) - p(x_2) = b (x_1 - x_2) + c (y_1 - y_2);
//  - pressure-drop: the area average of a linear p over the cylinder's faces is p at their
//    area-weighted centroid; on the pressure outlet it is the prescribed 0;
//  - the reverse mode (dJ/dw) equals central differences of the value at a state with flow;
//  - bad input (patches, points) is refused naming the key.
#include "objective_check.hpp"

using namespace karman;

TEST_CASE("pressure objectives: exact values at a linear pressure", "[adjoint][mpi]") {
  const double a = 0.5, b = -2.0, c = 3.0;
  {
    test::FlowFixture f;
    test::load_dfg_with(
        "objective: {type: pressure-difference, points: [[0.1, 0.2], [0.3, 0.25]]}\n", &f);
    test::set_linear_pressure(f.res(), f.w, a, b, c);
    CHECK(test::objective_value(f, test::case_objective(f), f.w) ==
          Approx(b * (0.1 - 0.3) + c * (0.2 - 0.25)).epsilon(1e-11));
  }
  test::FlowFixture f;
  test::load_dfg_with("objective: {type: pressure-drop, patches: [cylinder, outlet]}\n", &f);
  test::set_linear_pressure(f.res(), f.w, a, b, c);
  const discretization::FlowResidual &res = f.res();
  const mesh::Mesh &m = res.mesh();
  double local[3] = {0, 0, 0}, sum[3];
  for (PetscInt face : m.boundary_faces(m.patch_index("cylinder"))) {
    const double area = norm(res.geometry().face_area[face]);
    local[0] += area;
    local[1] += area * res.geometry().face_centroid[face][0];
    local[2] += area * res.geometry().face_centroid[face][1];
  }
  MPI_Allreduce(local, sum, 3, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  CHECK(sum[1] / sum[0] == Approx(0.2).epsilon(1e-3)); // the centre of the cylinder
  CHECK(test::objective_value(f, test::case_objective(f), f.w) ==
        Approx(a + b * sum[1] / sum[0] + c * sum[2] / sum[0]).epsilon(1e-11));
}

TEST_CASE("pressure objectives: reverse mode equals differences of the value", "[adjoint]") {
  for (const char *objective : {"{type: pressure-difference, points: [[0.1, 0.2], [0.3, 0.25]]}",
                                "{type: pressure-drop, patches: [inlet, outlet]}",
                                "{type: pressure-drop, patches: [cylinder, walls]}"}) {
    CAPTURE(objective);
    test::FlowFixture f;
    test::load_dfg_with(std::string("objective: ") + objective + "\n", &f);
    test::set_smooth_state(f.res(), f.w);
    test::check_reverse(f, test::case_objective(f));
  }
}

TEST_CASE("pressure objectives: bad input is refused naming the key", "[adjoint]") {
  for (const auto &[objective, expected] : std::vector<std::pair<const char *, const char *>>{
           {"{type: pressure-drop, patches: [inlet]}", "patches"},
           {"{type: pressure-drop, patches: [inlet, outflow]}", "outflow"},
           {"{type: pressure-difference, points: [[0.1, 0.2]]}", "points"},
           {"{type: pressure-difference, points: [[0.2, 0.2], [0.3, 0.25]]}",
            "outside the mesh"}}) {
    CAPTURE(objective);
    CHECK_THAT(test::objective_error(std::string("objective: ") + objective + "\n"),
               Catch::Contains(expected));
  }
}
