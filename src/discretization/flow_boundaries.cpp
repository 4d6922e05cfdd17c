// The flow's boundary types (see include/karman/discretization/flow_boundaries.hpp).
#include "karman/discretization/flow_boundaries.hpp"

#include "karman/config/section_options.hpp"
#include "karman/physics/boundary_kernels.hpp"

namespace karman::discretization {
namespace {

using namespace config::key;
using config::KeyType;
using config::SectionOptions;

const char *kAxis[3] = {"x", "y", "z"};

// The value of a time function at (t, n), and whether level n is beyond its values.
double value_at(const physics::TimeFunction &f, double t, long n, bool *ok) {
  bool beyond = false;
  const double v = f.value(t, n, &beyond);
  if (beyond) *ok = false;
  return v;
}

// ------------------------------------------------------------------------------- profiles

// The keys of a velocity profile across the patch (inlets, jets).
struct ProfileKeys {
  std::string profile, axis, axis2;
  std::vector<double> range, range2;
};

int axis_index(const std::string &a) {
  return a == "x" ? 0 : a == "y" ? 1 : a == "z" ? 2 : -1;
}

// The profile of `k`, checked: ranges [lo, hi] with hi > lo, axes within the dimension.
PetscErrorCode make_profile(const ProfileKeys &k, const BoundaryContext &c,
                            physics::VelocityProfile *pr) {
  PetscFunctionBeginUser;
  pr->parabolic = k.profile == "parabolic";
  pr->axis[0] = axis_index(k.axis);
  pr->axis[1] = axis_index(k.axis2);
  PetscCheck(k.range.size() == 2 && k.range[1] > k.range[0], c.comm, PETSC_ERR_USER_INPUT,
             "%s: %s.profile_range must be [lo, hi] with hi > lo", c.file.c_str(), c.label.c_str());
  PetscCheck(k.range2.size() == 2 && k.range2[1] > k.range2[0], c.comm, PETSC_ERR_USER_INPUT,
             "%s: %s.profile_range2 must be [lo, hi] with hi > lo", c.file.c_str(),
             c.label.c_str());
  pr->lo[0] = k.range[0], pr->hi[0] = k.range[1], pr->lo[1] = k.range2[0], pr->hi[1] = k.range2[1];
  PetscCheck(pr->axis[0] < c.dim && pr->axis[1] < c.dim, c.comm, PETSC_ERR_USER_INPUT,
             "%s: %s: profile axis beyond the mesh dimension %d", c.file.c_str(), c.label.c_str(),
             c.dim);
  PetscFunctionReturn(0);
}

// Binds the profile keys of an options struct with members profile, profile_axis, ...
template <typename O> SectionOptions<O> profile_keys(SectionOptions<O> o) {
  return o
      .key(choice("profile", "uniform",
                  "shape across the patch: uniform, or parabolic (product of 4 s (1 - s) over the "
                  "profile axes, s in [0,1] across profile_range; peak value at the centre)",
                  {"uniform", "parabolic"}),
           &O::profile)
      .key(choice("profile_axis", "y", "coordinate across which a parabolic profile varies",
                  {"x", "y", "z"}),
           &O::profile_axis)
      .key(typed("profile_range", KeyType::RealList, "[0, 1]",
                 "[lo, hi] of profile_axis where the parabolic profile vanishes"),
           &O::profile_range)
      .key(choice("profile_axis2", "none", "second profile coordinate (3D ducts); none in 2D",
                  {"none", "x", "y", "z"}),
           &O::profile_axis2)
      .key(typed("profile_range2", KeyType::RealList, "[0, 1]", "[lo, hi] of profile_axis2"),
           &O::profile_range2);
}

template <typename O> ProfileKeys profile_of(const O &o) {
  return {o.profile, o.profile_axis, o.profile_axis2, o.profile_range, o.profile_range2};
}

// ----------------------------------------------------------------------------------- wall

struct WallOptions {
  Vec3<double> velocity;
  physics::TimeFunction omega;
  Vec3<double> center;
};

class Wall : public FlowBoundary {
public:
  Wall(const WallOptions &o, int dim) : o_(o), dim_(dim) {}
  FaceKind face_kind(const Vec3<double> &) const override { return FaceKind::VelocityDirichlet; }
  bool evaluate(double t, long n) override {
    bool ok = true;
    omega_ = value_at(o_.omega, t, n, &ok);
    return ok;
  }
  Vec3<double> velocity(const Vec3<double> &xf, const Vec3<double> &) const override {
    return physics::wall_velocity(o_.velocity, omega_, o_.center, xf);
  }
  double rotation() const override { return omega_; }
  bool time_dependent() const override { return !o_.omega.is_constant(); }
  std::vector<TermParameter> parameters(const std::string &prefix) override {
    std::vector<TermParameter> p;
    if (dim_ == 2) p.push_back({prefix + "omega", nullptr, &o_.omega});
    for (int d = 0; d < dim_; ++d)
      p.push_back({prefix + "velocity." + kAxis[d], &o_.velocity[d], nullptr});
    return p;
  }
  void velocity_reverse(const Vec3<double> &xf, const Vec3<double> &, const Vec3<double> &ubar,
                        double rotation_bar, double *parameter_bar, Vec3<double> *xf_bar,
                        Vec3<double> *) const override {
    Vec3<double> Ubar;
    double omega_bar = 0;
    physics::wall_velocity_reverse(omega_, o_.center, xf, ubar, &Ubar, &omega_bar, xf_bar);
    omega_bar += rotation_bar; // the rotating-wall traction's dependence on omega (objectives)
    const int first = dim_ == 2 ? 1 : 0;
    for (int d = 0; d < dim_; ++d) parameter_bar[first + d] += Ubar[d];
    if (dim_ == 2) parameter_bar[0] += omega_bar;
  }

private:
  WallOptions o_;
  int dim_;
  double omega_ = 0;
};

const SectionOptions<WallOptions> &wall_options() {
  static const auto options =
      SectionOptions<WallOptions>(
          "wall",
          "no-slip wall; may translate with `velocity` and rotate about `center` with "
          "`omega`",
          true)
          .key(typed("velocity", KeyType::RealVector, "[0, 0, 0]", "translation velocity [m/s]"),
               &WallOptions::velocity)
          .key(typed("omega", KeyType::TimeFunction, "0.0",
                     "rotation rate [rad/s], counter-clockwise about +z (2D); may depend on time"),
               &WallOptions::omega)
          .key(typed("center", KeyType::RealVector, "[0, 0, 0]", "centre of rotation"),
               &WallOptions::center);
  return options;
}

PetscErrorCode create_wall(const config::Section &keys, const BoundaryContext &c,
                           std::unique_ptr<FlowBoundary> *unit) {
  PetscFunctionBeginUser;
  WallOptions o;
  PetscCall(wall_options().read(keys, c.comm, c.directory, &o));
  PetscCheck(c.dim == 2 || (o.omega.is_constant() && o.omega.offset == 0), c.comm, PETSC_ERR_SUP,
             "%s: %s.omega: rotating walls are supported in 2D (rotation about e_z)",
             c.file.c_str(), c.label.c_str());
  *unit = std::make_unique<Wall>(o, c.dim);
  PetscFunctionReturn(0);
}

// ------------------------------------------------------------------------- velocity inlet

struct InletOptions {
  physics::TimeFunction velocity;
  Vec3<double> direction;
  std::string profile, profile_axis, profile_axis2;
  std::vector<double> profile_range, profile_range2;
};

class VelocityInlet : public FlowBoundary {
public:
  VelocityInlet(const InletOptions &o, const physics::VelocityProfile &pr) : o_(o), profile_(pr) {
    const double n = norm(o_.direction);
    if (n > 0) o_.direction = (1.0 / n) * o_.direction;
  }
  FaceKind face_kind(const Vec3<double> &) const override { return FaceKind::VelocityDirichlet; }
  bool evaluate(double t, long n) override {
    bool ok = true;
    speed_ = value_at(o_.velocity, t, n, &ok);
    return ok;
  }
  Vec3<double> velocity(const Vec3<double> &xf, const Vec3<double> &S) const override {
    return physics::inlet_velocity(speed_, o_.direction, profile_, xf, S);
  }
  bool time_dependent() const override { return !o_.velocity.is_constant(); }
  std::vector<TermParameter> parameters(const std::string &prefix) override {
    return {{prefix + "velocity", nullptr, &o_.velocity}};
  }
  void velocity_reverse(const Vec3<double> &xf, const Vec3<double> &S, const Vec3<double> &ubar,
                        double, double *parameter_bar, Vec3<double> *xf_bar,
                        Vec3<double> *S_bar) const override {
    physics::inlet_velocity_reverse(speed_, o_.direction, profile_, xf, S, ubar, &parameter_bar[0],
                                    xf_bar, S_bar);
  }

private:
  InletOptions o_;
  physics::VelocityProfile profile_;
  double speed_ = 0;
};

const SectionOptions<InletOptions> &inlet_options() {
  static const auto options = profile_keys(
      SectionOptions<InletOptions>("velocity-inlet", "prescribed inflow velocity", true)
          .key(typed("velocity", KeyType::TimeFunction, "",
                     "inflow speed U: the uniform value, or the peak of a parabolic profile; may "
                     "depend on time"),
               &InletOptions::velocity)
          .key(typed("direction", KeyType::RealVector, "[0, 0, 0]",
                     "flow direction; [0, 0, 0] means the inward normal of each face"),
               &InletOptions::direction));
  return options;
}

PetscErrorCode create_inlet(const config::Section &keys, const BoundaryContext &c,
                            std::unique_ptr<FlowBoundary> *unit) {
  PetscFunctionBeginUser;
  InletOptions o;
  PetscCall(inlet_options().read(keys, c.comm, c.directory, &o));
  physics::VelocityProfile pr;
  PetscCall(make_profile(profile_of(o), c, &pr));
  *unit = std::make_unique<VelocityInlet>(o, pr);
  PetscFunctionReturn(0);
}

// ------------------------------------------------------------------------ blowing/suction

struct JetOptions {
  physics::TimeFunction amplitude;
  std::string profile, profile_axis, profile_axis2;
  std::vector<double> profile_range, profile_range2;
};

class BlowingSuction : public FlowBoundary {
public:
  BlowingSuction(const JetOptions &o, const physics::VelocityProfile &pr) : o_(o), profile_(pr) {}
  FaceKind face_kind(const Vec3<double> &) const override { return FaceKind::VelocityDirichlet; }
  bool evaluate(double t, long n) override {
    bool ok = true;
    amplitude_ = value_at(o_.amplitude, t, n, &ok);
    return ok;
  }
  Vec3<double> velocity(const Vec3<double> &xf, const Vec3<double> &S) const override {
    return physics::jet_velocity(amplitude_, profile_, xf, S);
  }
  bool time_dependent() const override { return !o_.amplitude.is_constant(); }
  std::vector<TermParameter> parameters(const std::string &prefix) override {
    return {{prefix + "amplitude", nullptr, &o_.amplitude}};
  }
  void velocity_reverse(const Vec3<double> &xf, const Vec3<double> &S, const Vec3<double> &ubar,
                        double, double *parameter_bar, Vec3<double> *xf_bar,
                        Vec3<double> *S_bar) const override {
    physics::jet_velocity_reverse(amplitude_, profile_, xf, S, ubar, &parameter_bar[0], xf_bar,
                                  S_bar);
  }

private:
  JetOptions o_;
  physics::VelocityProfile profile_;
  double amplitude_ = 0;
};

const SectionOptions<JetOptions> &jet_options() {
  static const auto options = profile_keys(
      SectionOptions<JetOptions>("blowing-suction",
                                 "wall patch with a prescribed normal velocity (a jet)", true)
          .key(typed("amplitude", KeyType::TimeFunction, "",
                     "normal velocity into the fluid (blowing > 0, suction < 0) [m/s]; may depend "
                     "on time"),
               &JetOptions::amplitude));
  return options;
}

PetscErrorCode create_jet(const config::Section &keys, const BoundaryContext &c,
                          std::unique_ptr<FlowBoundary> *unit) {
  PetscFunctionBeginUser;
  JetOptions o;
  PetscCall(jet_options().read(keys, c.comm, c.directory, &o));
  physics::VelocityProfile pr;
  PetscCall(make_profile(profile_of(o), c, &pr));
  *unit = std::make_unique<BlowingSuction>(o, pr);
  PetscFunctionReturn(0);
}

// ------------------------------------------------------------------ pressure outlet, symmetry

struct OutletOptions {
  double pressure = 0;
};

class PressureOutlet : public FlowBoundary {
public:
  explicit PressureOutlet(const OutletOptions &o) : o_(o) {}
  FaceKind face_kind(const Vec3<double> &) const override { return FaceKind::PressureOutlet; }
  double pressure() const override { return o_.pressure; }
  std::vector<TermParameter> parameters(const std::string &prefix) override {
    return {{prefix + "pressure", &o_.pressure, nullptr}};
  }
  void pressure_reverse(double pbar, double *parameter_bar) const override {
    parameter_bar[0] += pbar;
  }

private:
  OutletOptions o_;
};

const SectionOptions<OutletOptions> &outlet_options() {
  static const auto options =
      SectionOptions<OutletOptions>("pressure-outlet",
                                    "outlet: prescribed pressure, zero normal velocity gradient "
                                    "(do-nothing)",
                                    true)
          .key(real("pressure", "0.0", "outlet pressure p [Pa]"), &OutletOptions::pressure);
  return options;
}

struct NoOptions {};

class Symmetry : public FlowBoundary {
public:
  FaceKind face_kind(const Vec3<double> &) const override { return FaceKind::Slip; }
  std::vector<TermParameter> parameters(const std::string &) override { return {}; }
};

const SectionOptions<NoOptions> &symmetry_options() {
  static const auto options = SectionOptions<NoOptions>(
      "symmetry", "slip wall / symmetry plane: zero normal velocity, zero shear", true);
  return options;
}

// ---------------------------------------------------------------------------- far field

struct FarFieldOptions {
  Vec3<double> velocity;
  double pressure = 0;
  double angle_of_attack = 0; ///< degrees
};

class FarField : public FlowBoundary {
public:
  FarField(const FarFieldOptions &o, int dim) : o_(o), dim_(dim) {}
  // decided once from the geometry, so that the residual stays smooth in the state
  FaceKind face_kind(const Vec3<double> &S) const override {
    return dot(stream(), S) >= 0 ? FaceKind::PressureOutlet : FaceKind::VelocityDirichlet;
  }
  Vec3<double> velocity(const Vec3<double> &, const Vec3<double> &) const override {
    return stream();
  }
  double pressure() const override { return o_.pressure; }
  const double *angle_of_attack() const override { return &o_.angle_of_attack; }
  std::vector<TermParameter> parameters(const std::string &prefix) override {
    std::vector<TermParameter> p;
    for (int d = 0; d < dim_; ++d)
      p.push_back({prefix + "velocity." + kAxis[d], &o_.velocity[d], nullptr});
    p.push_back({prefix + "pressure", &o_.pressure, nullptr});
    p.push_back({prefix + "angle_of_attack", &o_.angle_of_attack, nullptr});
    return p;
  }
  void velocity_reverse(const Vec3<double> &, const Vec3<double> &, const Vec3<double> &ubar,
                        double, double *parameter_bar, Vec3<double> *,
                        Vec3<double> *) const override {
    Vec3<double> Ubar;
    physics::turned_reverse(o_.velocity, o_.angle_of_attack, ubar, &Ubar, &parameter_bar[dim_ + 1]);
    for (int d = 0; d < dim_; ++d) parameter_bar[d] += Ubar[d];
  }
  void pressure_reverse(double pbar, double *parameter_bar) const override {
    parameter_bar[dim_] += pbar;
  }

private:
  Vec3<double> stream() const { return physics::turned(o_.velocity, o_.angle_of_attack); }
  FarFieldOptions o_;
  int dim_;
};

const SectionOptions<FarFieldOptions> &far_field_options() {
  static const auto options =
      SectionOptions<FarFieldOptions>(
          "far-field", "uniform stream: velocity imposed where it enters, pressure where it leaves",
          true)
          .key(typed("velocity", KeyType::RealVector, "",
                     "free-stream velocity [m/s] at zero angle of attack"),
               &FarFieldOptions::velocity)
          .key(real("pressure", "0.0", "free-stream pressure"), &FarFieldOptions::pressure)
          .key(real("angle_of_attack", "0.0",
                    "angle of attack [degrees]: turns `velocity` about the z axis (x toward y), "
                    "and with it initial.velocity and the drag and lift directions of the force "
                    "objectives, constraints and monitors (given at zero angle); a "
                    "differentiable parameter"),
               &FarFieldOptions::angle_of_attack);
  return options;
}

PetscErrorCode create_far_field(const config::Section &keys, const BoundaryContext &c,
                                std::unique_ptr<FlowBoundary> *unit) {
  PetscFunctionBeginUser;
  const FarFieldOptions o = far_field_options().get(keys);
  PetscCheck(norm(o.velocity) > 0, c.comm, PETSC_ERR_USER_INPUT,
             "%s: %s.velocity: the far-field velocity must not be zero", c.file.c_str(),
             c.label.c_str());
  *unit = std::make_unique<FarField>(o, c.dim);
  PetscFunctionReturn(0);
}

template <typename O> config::VariantSpec variant(const SectionOptions<O> &o, bool wall) {
  return {o.spec(), wall ? "wall" : "open", "", nullptr};
}

} // namespace

const std::vector<FlowBoundaryType> &flow_boundary_types() {
  static const std::vector<FlowBoundaryType> types = {
      {variant(wall_options(), true), create_wall},
      {variant(inlet_options(), false), create_inlet},
      {variant(outlet_options(), false),
       [](const config::Section &keys, const BoundaryContext &,
          std::unique_ptr<FlowBoundary> *unit) -> PetscErrorCode {
         *unit = std::make_unique<PressureOutlet>(outlet_options().get(keys));
         return 0;
       }},
      {variant(symmetry_options(), false),
       [](const config::Section &, const BoundaryContext &,
          std::unique_ptr<FlowBoundary> *unit) -> PetscErrorCode {
         *unit = std::make_unique<Symmetry>();
         return 0;
       }},
      {variant(far_field_options(), false), create_far_field},
      {variant(jet_options(), true), create_jet},
  };
  return types;
}

const FlowBoundaryType *find_flow_boundary_type(const std::string &name) {
  for (const auto &t : flow_boundary_types())
    if (t.variant.spec.name == name) return &t;
  return nullptr;
}

} // namespace karman::discretization
