//! dysharp verification: the Verilator-compiled RTL driven cycle by cycle from
//! Rust through a thin C++ shim (one FFI call per cycle), and checked against the
//! golden model of `dysharp-sim`.

pub mod bench_sim;
pub mod coverage;
pub mod diff;
mod ffi;
pub mod regress;
pub mod replay_rtl;
pub mod scoreboard;
pub mod sim;
pub mod stimulus;
pub mod switch_tb;
pub mod tb;

pub use sim::{ModelInfo, Port, PortInfo, Profile, Sim, SimError};
pub use switch_tb::{Faults, SwitchBench, SwitchBenchConfig, SwitchStats};
pub use tb::{Bench, BenchConfig, RtlCounters, RunStats, TbError, BENCH_TOP};
