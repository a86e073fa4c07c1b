//! FPGA targets: Yosys `synth_ecp5` with nextpnr-ecp5 place-and-route, and `synth_xilinx`
//! resource counts.

use super::plan::Config;
use super::{AreaArgs, AreaError, AreaReport};
use std::path::Path;

/// Synthesizes `cfg` for the FPGA target of `args`.
pub fn run(args: &AreaArgs, _cfg: &Config, _root: &Path) -> Result<AreaReport, AreaError> {
    Err(AreaError::Flag {
        flag: "target",
        msg: format!("{:?} is not implemented yet", args.target).to_lowercase(),
    })
}
