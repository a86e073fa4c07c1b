//! `dysharp`: command-line tool over the dysharp golden model, traces and reports.

#[macro_use]
mod output;
mod area;
#[cfg(feature = "rtl")]
mod bench_sim_cmd;
mod chart;
mod commands;
#[cfg(feature = "rtl")]
mod coverage_cmd;
mod golden_cmd;
#[cfg(feature = "rtl")]
mod junit;
#[cfg(feature = "rtl")]
mod regress_cmd;
mod study_cmd;

use clap::{Parser, Subcommand};

/// With the RTL engine, mimalloc instead of the system allocator: the benches hand frames over
/// between threads (the stimulus thread allocates them, the scoreboard's thread frees them), which
/// glibc's allocator serves through locked arenas (`dysharp bench-sim`, docs/perf.md). It needs a
/// C compiler, as the RTL engine does, so the golden-only build keeps the system allocator.
#[cfg(feature = "rtl")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::PathBuf;
use std::process::ExitCode;

/// dysharp: reference model of a DySHARP dynamic in-switch-computing switch for MoE.
#[derive(Parser, Debug)]
#[command(name = "dysharp", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The trace a command reads, and which (step, layer) group of it.
#[derive(clap::Args, Debug, Clone)]
pub struct TraceArgs {
    /// Trace file: JSON Lines (Megatron-core layout), or a vLLM routed-experts array
    /// (`.npy`, int [tokens, moe_layers, top_k]; tokens split over the EP ranks in blocks).
    #[arg(long)]
    trace: PathBuf,
    /// Step to use (default: the first record's, or the first that has --layer).
    #[arg(long)]
    step: Option<u64>,
    /// MoE layer to use (default: the first record's, or the first of --step).
    #[arg(long)]
    layer: Option<u64>,
}

/// Arguments shared by the commands that build a workload.
#[derive(clap::Args, Debug, Clone)]
pub struct ShapeArgs {
    /// Number of experts E.
    #[arg(long, default_value_t = 256)]
    experts: usize,
    /// Expert-parallel ranks P (switch ports).
    #[arg(long, default_value_t = 8)]
    ep: usize,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate a seeded synthetic routing trace (JSON Lines, Megatron-core layout).
    Gen {
        /// Number of tokens (split evenly across the EP ranks).
        #[arg(long, default_value_t = 4096)]
        tokens: usize,
        #[command(flatten)]
        shape: ShapeArgs,
        /// Experts per token.
        #[arg(long, default_value_t = 8)]
        topk: usize,
        /// Distribution: uniform | zipf:A | dirichlet:A | normal:S | counts:FILE:MODEL:CORPUS:LAYER.
        #[arg(long, default_value = "uniform")]
        dist: String,
        /// Random seed (non-zero recommended; the same seed gives the same trace).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output file.
        #[arg(long)]
        out: PathBuf,
    },
    /// Routing statistics of a trace: send matrix, per-rank receive counts, Gini, fan-out.
    Stats {
        #[command(flatten)]
        trace: TraceArgs,
        #[command(flatten)]
        shape: ShapeArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also write the Dispatch send matrix in bytes, as nccl-tests' alltoallv_perf reads
        /// it (NCCL_TESTS_ALLTOALLV_MATRIX_FILE): cell [i][j] = bytes from rank i to j.
        #[arg(long, value_name = "FILE")]
        alltoallv_matrix: Option<PathBuf>,
        /// What a matrix cell counts: tokens (one row per distinct destination rank, as
        /// DeepEP) or assignments (one row per token-expert pair, as Megatron-core).
        #[arg(long, default_value = "tokens", requires = "alltoallv_matrix")]
        count: String,
        /// Hidden size of a token row, for the matrix's bytes.
        #[arg(long, default_value_t = 7168, requires = "alltoallv_matrix")]
        hidden: usize,
        /// Element type of a token row, for the matrix's bytes: bf16 | f16 | f32.
        #[arg(long, default_value = "bf16", requires = "alltoallv_matrix")]
        dtype: String,
    },
    /// Replay a trace's Dispatch and Combine through a switch engine and count traffic.
    Replay {
        #[command(flatten)]
        trace: TraceArgs,
        #[command(flatten)]
        shape: ShapeArgs,
        /// Hidden size (elements per token row).
        #[arg(long, default_value_t = 7168)]
        hidden: usize,
        /// Element type: bf16 | f16 | f32.
        #[arg(long, default_value = "bf16")]
        dtype: String,
        /// Engine: golden (transaction-level model) or rtl (the Verilator model of rtl/,
        /// checked against the golden model; EP 4, 8 or 16; not in a golden-only build).
        #[arg(long, default_value = "golden")]
        engine: String,
        /// Order in which each GPU injects its packets (rtl engine): interleave:W (W tokens'
        /// rows in flight, chunk 0 of each, then chunk 1, ..., then the next W tokens; as W SMs
        /// sending different tokens would), token (all chunks of a token, then the next) or
        /// chunk (chunk 0 of every token, then chunk 1, ...) [default: interleave:32].
        #[arg(long)]
        inject: Option<String>,
        /// Fused schedule (rtl engine): Dispatch of tile i beside Combine of tile i - 1, each
        /// step drained before the next; reports cycles over the fused lower bound (fill and
        /// drain included).
        #[arg(long)]
        fused: bool,
        /// Tokens per GPU per tile of --fused.
        #[arg(long, default_value_t = 32, requires = "fused")]
        tile: usize,
        /// Seed of the token data.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Keep the rtl engine's scoreboard between the simulation's cycles, on one core
        /// (default: on a thread of its own where the machine has two cores or more; the same
        /// checks either way).
        #[arg(long)]
        inline_scoreboard: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the default workload end to end and write report.json and report.svg.
    Demo {
        /// Folder for report.json and report.svg.
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
        /// Distributions to run (comma separated).
        #[arg(long, default_value = "uniform,zipf:1.5")]
        dists: String,
        /// Seed of the traces and data.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Write the SystemVerilog package generated from the Rust packet codec.
    GenPkg {
        /// Output file (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Write the verification wrapper of dysharp_top (verif/harness/dysharp_top_tb.sv), generated
    /// from the top's header: its parameters, its ports as flat vectors, the hub request taps.
    GenWrapper {
        /// Output file (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Compare any switch implementation with the golden model: run a scenario, extract
    /// egress packets from a VCD, diff (docs/golden.md).
    Golden {
        #[command(subcommand)]
        cmd: golden_cmd::GoldenCmd,
    },
    /// Area and timing per block with the pinned Yosys (sky130, ECP5, Xilinx); docs/area.md.
    Area(area::AreaArgs),
    #[cfg(feature = "rtl")]
    /// Run the RTL-versus-golden regression (property-based streams and sequences, bad
    /// input, reset, trace replays) over the built configurations; see docs/verification.md.
    Regress(regress_cmd::RegressArgs),
    #[cfg(feature = "rtl")]
    /// Simulation speed of one RTL model: the bench with its full scoreboard, a bare Rust loop
    /// and a bare C++ loop over the same recorded inputs (docs/perf.md).
    BenchSim(bench_sim_cmd::BenchSimArgs),
    #[cfg(feature = "rtl")]
    /// Line and toggle coverage of the RTL under the regression: lcov file, HTML report and
    /// JSON summary (needs a build with `--features coverage`; `make coverage`).
    Coverage(coverage_cmd::CoverageArgs),
    /// Hold the DySHARP paper's claims against this model: traffic of DySHARP, unicast and the
    /// NVLS workaround, lower bounds with and without fusion, AL-TLB sweeps (docs/paper.md).
    Study(study_cmd::StudyArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Gen {
            tokens,
            shape,
            topk,
            dist,
            seed,
            out,
        } => commands::gen(tokens, &shape, topk, &dist, seed, &out),
        Command::Stats {
            trace,
            shape,
            json,
            alltoallv_matrix,
            count,
            hidden,
            dtype,
        } => commands::stats(
            &trace,
            &shape,
            json,
            alltoallv_matrix
                .as_deref()
                .map(|f| (f, count.as_str(), hidden, dtype.as_str())),
        ),
        Command::Replay {
            trace,
            shape,
            hidden,
            dtype,
            engine,
            inject,
            fused,
            tile,
            seed,
            inline_scoreboard,
            json,
        } => commands::replay(
            &trace,
            &shape,
            hidden,
            &dtype,
            &engine,
            inject.as_deref(),
            fused.then_some(tile),
            seed,
            inline_scoreboard,
            json,
        ),
        Command::Demo {
            out_dir,
            dists,
            seed,
        } => commands::demo(&out_dir, &dists, seed),
        Command::GenPkg { out } => commands::gen_pkg(out.as_deref()),
        Command::GenWrapper { out } => commands::gen_wrapper(out.as_deref()),
        Command::Study(args) => {
            study_cmd::run_study(&args).map_err(|e| commands::CliError::Message(e.to_string()))
        }
        Command::Golden { cmd } => return golden_cmd::main(cmd),
        Command::Area(args) => return area::main(args),
        #[cfg(feature = "rtl")]
        Command::BenchSim(args) => bench_sim_cmd::run(&args),
        #[cfg(feature = "rtl")]
        Command::Coverage(args) => coverage_cmd::run(&args, &regress_cmd::coverage_workload)
            .map_err(commands::CliError::Message),
        #[cfg(feature = "rtl")]
        Command::Regress(args) => {
            return match regress_cmd::run(args) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
