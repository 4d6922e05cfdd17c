// karman.Simulation: the parameters of the case (constant, per time step) and the design variables
// of its design: list (the mesh deformed to a design, dJ/d(design) from dJ/dX) (see
// simulation.hpp).
#include "simulation.hpp"

#include "karman/optimization/shape_optimization.hpp"

#include <algorithm>
#include <cmath>

namespace karman::bindings {

py::dict Simulation::parameters() {
  alive();
  discretization::FlowResidual &res = fc_->residual();
  const discretization::ParameterRegistry reg(res);
  py::dict d;
  for (std::size_t i = 0; i < reg.size(); ++i) {
    const auto &s = reg.spec(i);
    if (s.time_dependent) {
      std::vector<double> v;
      check(fc_->parameter_steps(s.name, case_->steps(), &v));
      d[py::str(s.name)] = array1(v);
    } else {
      d[py::str(s.name)] = reg.value(res, i, discretization::kSteady);
    }
  }
  if (chain_)
    for (const auto &b : chain_->design().blocks())
      d[py::str("design." + b.name)] = array1(std::vector<double>(
          design_x_.begin() + b.offset, design_x_.begin() + b.offset + b.count));
  return d;
}

py::dict Simulation::design() const {
  alive();
  if (!chain_) throw Failure(case_->cfg->file() + ": the case has no design: list");
  py::dict d, blocks;
  d["names"] = chain_->design().names();
  d["lower"] = array1(chain_->design().lower()), d["upper"] = array1(chain_->design().upper());
  d["values"] = array1(design_x_);
  for (const auto &b : chain_->design().blocks())
    blocks[py::str("design." + b.name)] = py::make_tuple(b.offset, b.count);
  d["entries"] = blocks;
  return d;
}

void Simulation::set_parameters(const py::dict &values) {
  alive();
  discretization::FlowResidual &res = fc_->residual();
  // check everything first: a bad entry changes nothing
  const discretization::ParameterRegistry reg(res);
  std::vector<std::pair<std::string, double>> scalars;
  std::vector<std::pair<std::string, std::vector<double>>> series;
  std::vector<double> x = design_x_;
  bool new_design = false;
  for (const auto &[k, v] : values) {
    const std::string name = py::str(k);
    if (const design::DesignBlock *b = design_block(name)) {
      set_design_entry(*b, v, &x);
      new_design = true;
      continue;
    }
    if (reg.find(name) < 0) {
      std::string known = reg.names(true);
      if (chain_)
        for (const auto &b : chain_->design().blocks()) known += ", design." + b.name;
      throw py::key_error("unknown parameter '" + name + "' (the case has: " + known + ")");
    }
    if (py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v) ||
        (py::hasattr(v, "ndim") && v.attr("ndim").cast<int>() == 0)) {
      scalars.emplace_back(name, v.cast<double>());
      continue;
    }
    const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(v);
    if (!a || a.ndim() != 1)
      throw py::type_error("parameter '" + name +
                           "': expected a number or a 1-D array of one value per time step");
    if (!case_->unsteady())
      throw py::value_error("parameter '" + name +
                            "': values per time step need an unsteady case (time.mode: "
                            "unsteady)");
    if (case_->steps() == 0)
      throw py::value_error("parameter '" + name +
                            "': values per time step need a fixed time.dt (with time.dt: auto "
                            "the steps are known only after the run)");
    if (a.size() != case_->steps())
      throw py::value_error("parameter '" + name + "': expected " + std::to_string(case_->steps()) +
                            " values (one per time step), got " + std::to_string(a.size()));
    series.emplace_back(name, std::vector<double>(a.data(), a.data() + a.size()));
  }
  for (const auto &[name, v] : series) {
    std::vector<double> dummy;
    check(fc_->parameter_steps(name, 1, &dummy)); // a parameter with a time function?
  }
  if (new_design) apply_design(x); // a failed deformation changes nothing
  for (const auto &[name, v] : scalars) check(reg.set(res, name, v));
  for (const auto &[name, v] : series) check(fc_->set_parameter_steps(name, v));
  if (!values.empty()) solved_ = false;
}

void Simulation::setup_design() {
  auto space = std::make_unique<design::DesignSpace>();
  check(space->setup(fc_->mesh(), fc_->residual().coordinates(), *case_->cfg));
  chain_ = std::make_unique<driver::DesignChain>();
  check(chain_->setup(*fc_, std::move(space), optimization::deformation_options(*case_->cfg)));
  design_x_.assign(chain_->design().size(), 0.0);
  const std::vector<double> &a0 = chain_->design().initial();
  if (std::any_of(a0.begin(), a0.end(), [](double v) { return v != 0; })) apply_design(a0);
}

const design::DesignBlock *Simulation::design_block(const std::string &name) const {
  if (!chain_ || name.rfind("design.", 0) != 0) return nullptr;
  for (const auto &b : chain_->design().blocks())
    if ("design." + b.name == name) return &b;
  return nullptr;
}

void Simulation::set_design_entry(const design::DesignBlock &b, const py::handle &v,
                                  std::vector<double> *x) const {
  const std::string name = "design." + b.name;
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(v);
  if (!a || a.ndim() > 1 || static_cast<std::size_t>(a.size()) != b.count)
    throw py::value_error("parameter '" + name + "': expected " + std::to_string(b.count) +
                          " values (the entry's design variables), got " +
                          (a ? std::to_string(a.size()) : std::string("no array")));
  for (std::size_t i = 0; i < b.count; ++i) {
    const std::size_t k = b.offset + i;
    const double value = a.data()[i];
    if (!std::isfinite(value) || value < chain_->design().lower()[k] ||
        value > chain_->design().upper()[k])
      throw py::value_error("design variable '" + chain_->design().names()[k] +
                            "' = " + std::to_string(value) + " is outside its bounds [" +
                            std::to_string(chain_->design().lower()[k]) + ", " +
                            std::to_string(chain_->design().upper()[k]) + "] (" +
                            case_->cfg->file() + ", design: " + b.name + ")");
    (*x)[k] = value;
  }
}

void Simulation::apply_design(const std::vector<double> &x) {
  design::DeformationResult dr;
  check(chain_->move_to_design(x, "design", &dr));
  if (!dr.valid)
    throw Failure(case_->cfg->file() + ": design: the mesh deformation failed (" + dr.message +
                  "); the design and the mesh are unchanged");
  design_x_ = x;
  solved_ = false;
}

void Simulation::add_design_gradient(const std::vector<Vec3<double>> &Xbar, py::dict *grads) const {
  if (!chain_) return;
  std::vector<double> abar;
  check(chain_->reverse(design_x_, Xbar, &abar));
  for (const auto &b : chain_->design().blocks())
    (*grads)[py::str("design." + b.name)] =
        array1(std::vector<double>(abar.begin() + b.offset, abar.begin() + b.offset + b.count));
}

} // namespace karman::bindings
