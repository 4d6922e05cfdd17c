// The case file's `output` section, owned by the driver (the solver declares output.probes):
// ParaView and HDF5 files, their frequency, checkpoints, surface output.
#pragma once

#include "karman/config/section_options.hpp"

#include <string>
#include <vector>

namespace karman::driver {

struct OutputOptions {
  bool vtk = true;
  long vtk_every = 10;
  long checkpoint_every = 10;
  std::vector<std::string> surfaces; ///< empty: every wall-type boundary
  bool hdf5 = true;
};

const config::SectionOptions<OutputOptions> &output_options();

} // namespace karman::driver
