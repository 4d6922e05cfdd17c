// The `output` section (see include/karman/driver/output_options.hpp).
#include "karman/driver/output_options.hpp"

namespace karman::driver {

const config::SectionOptions<OutputOptions> &output_options() {
  using namespace config::key;
  using config::KeyType;
  static const auto options =
      config::SectionOptions<OutputOptions>("output", "what is written to the output folder")
          .key(typed("vtk", KeyType::Bool, "true", "write ParaView (.pvd/.pvtu/.vtu) files"),
               &OutputOptions::vtk)
          .key(integer("vtk_every", "10", "unsteady: write ParaView files every N steps", 1),
               &OutputOptions::vtk_every)
          .key(integer("checkpoint_every", "10",
                       "unsteady: write a restart checkpoint every N steps (0: none) to "
                       "OUTDIR/checkpoints/",
                       0),
               &OutputOptions::checkpoint_every)
          .key(typed("surfaces", KeyType::NameList, "[]",
                     "boundaries written as surface files; empty: every wall-type boundary"),
               &OutputOptions::surfaces)
          .key(typed("hdf5", KeyType::Bool, "true", "write mesh and fields to OUTDIR/flow.h5"),
               &OutputOptions::hdf5);
  return options;
}

} // namespace karman::driver
