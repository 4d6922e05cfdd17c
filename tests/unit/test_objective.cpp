// The objective as a weighted sum of registered terms (src/adjoint/objective.cpp) on the DFG 2D-1
// channel (level 0):
//  - a sum's value is its weight times the weighted sum of its terms' values (each term loaded
//    alone as the case's objective), at a state with flow; its reverse mode equals differences;
//  - least_squares() only when every term is a fit to data, data_count() their sum;
//  - a sum without terms and a sum inside a sum are refused naming the file and the key.
#include "objective_check.hpp"

using namespace karman;

namespace {

const char *kDrag = "{type: drag, walls: [cylinder]}";
const char *kDp = "{type: pressure-difference, points: [[0.1, 0.2], [0.3, 0.25]]}";
const char *kProbe = "{type: probe-match, probes: [[0.1, 0.2]], observed: [[1, 0.5, 0]]}";

double value_of(const std::string &objective) {
  test::FlowFixture f;
  test::load_dfg_with("objective: " + objective + "\n", &f);
  test::set_smooth_state(f.res(), f.w);
  return test::objective_value(f, test::case_objective(f), f.w);
}

} // namespace

TEST_CASE("objective: a weighted sum of terms", "[adjoint]") {
  const double drag = value_of(kDrag), dp = value_of(kDp), probe = value_of(kProbe);
  test::FlowFixture f;
  test::load_dfg_with(std::string("objective: {type: sum, weight: 3, terms: [") +
                          "{type: drag, walls: [cylinder], weight: 2}, " +
                          "{type: pressure-difference, points: [[0.1, 0.2], [0.3, 0.25]], weight: "
                          "-1}, {type: probe-match, probes: [[0.1, 0.2]], observed: [[1, 0.5, 0]], "
                          "weight: 0.5}]}\n",
                      &f);
  test::set_smooth_state(f.res(), f.w);
  const adjoint::Objective &objective = test::case_objective(f);
  CHECK(test::objective_value(f, objective, f.w) ==
        Approx(3 * (2 * drag - dp + 0.5 * probe)).epsilon(1e-12));
  CHECK(!objective.least_squares()); // one term is a fit, the others are not
  CHECK(objective.data_count(f.res()) == 3);
  CHECK(objective.description() == "2 * drag + -1 * pressure-difference + 0.5 * probe-match");
  CHECK_THAT(objective.description(), Catch::Contains("drag") &&
                                          Catch::Contains("pressure-difference") &&
                                          Catch::Contains("probe-match"));
  test::check_reverse(f, objective);
}

TEST_CASE("objective: a single objective of weight 1 is described by its type", "[adjoint]") {
  for (const auto &[objective, expected] : std::vector<std::pair<std::string, std::string>>{
           {kDrag, "drag"}, {"{type: drag, walls: [cylinder], weight: 2}", "2 * drag"}}) {
    test::FlowFixture f;
    test::load_dfg_with("objective: " + objective + "\n", &f);
    CHECK(test::case_objective(f).description() == expected);
  }
}

TEST_CASE("objective: sums without terms or of sums are refused", "[adjoint]") {
  for (const auto &[objective, expected] : std::vector<std::pair<std::string, std::string>>{
           {"{type: sum}", "case.yaml: objective.type sum needs objective.terms"},
           {"{type: sum, terms: [{type: sum}]}", "terms cannot be sums"}}) {
    CAPTURE(objective);
    CHECK_THAT(test::objective_error(std::string("objective: ") + objective + "\n"),
               Catch::Contains(expected));
  }
}
