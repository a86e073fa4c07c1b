//! `dysharp golden`: compare any switch implementation with the golden model
//! (docs/golden.md): `run` a scenario, extract a design's egress `from-vcd`, `diff` the two.
//!
//! Exit codes: 0 success (and, for `diff`, equal), 1 `diff` found a difference, 2 error
//! (unreadable or invalid file, bad arguments).

use crate::output;
use clap::Subcommand;
use dysharp_sim::scenario::{diff, DiffOptions, GoldenError, GoldenResult, Scenario};
use dysharp_sim::vcd_extract::{extract_file, SignalMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The `golden` subcommands.
#[derive(Subcommand, Debug)]
pub enum GoldenCmd {
    /// Run a scenario through the golden model and write the expected result (JSON).
    Run {
        /// Scenario file (JSON, "version": 1).
        scenario: PathBuf,
        /// Output file (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also write the stimulus and initial memory as plain text for a testbench
        /// (stimulus.txt, port<P>.memh, hub<P>_init.txt) into this folder.
        #[arg(long)]
        stimulus_dir: Option<PathBuf>,
    },
    /// Compare an observed result with the expected one and report the first divergence.
    /// Exit 0 when equal, 1 on any difference, 2 on errors.
    Diff {
        /// Expected result (from `golden run`).
        expected: PathBuf,
        /// Observed result (from `golden from-vcd` or your own bench).
        observed: PathBuf,
        /// Sections not to compare (comma separated): mem, errors, digest.
        #[arg(long, value_delimiter = ',')]
        ignore: Vec<Section>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Report up to N divergences in full (default 1: the first); all are counted.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        max_diffs: u32,
        /// Compare bits an observed file marks x/z as the 0 they were read as (default: any
        /// x/z bit on a compared bit is a mismatch).
        #[arg(long)]
        x_as_zero: bool,
    },
    /// Read a design's egress flit streams out of a waveform (VCD, .vcd.gz, FST) and write the
    /// observed result (JSON).
    FromVcd {
        /// Waveform: VCD, gzip'd VCD or FST (recognised by content); `-` reads standard input.
        vcd: PathBuf,
        /// Signal mapping (TOML): clock, and per port valid/ready/data/last.
        #[arg(long)]
        map: PathBuf,
        /// Output file (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Decode packets with this scenario's configuration (default: the widest limits).
        #[arg(long)]
        scenario: Option<PathBuf>,
    },
}

/// A result section `golden diff` can skip.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// Memory writes.
    Mem,
    /// Error counters.
    Errors,
    /// Final-state digest.
    Digest,
}

fn stdout_err(err: std::io::Error) -> GoldenError {
    GoldenError::Io {
        file: "standard output".into(),
        err,
    }
}

fn print(text: &str) -> Result<(), GoldenError> {
    output::print(text).map_err(stdout_err)
}

fn println(text: &str) -> Result<(), GoldenError> {
    output::println(text).map_err(stdout_err)
}

fn write_out(out: Option<&Path>, text: &str) -> Result<(), GoldenError> {
    match out {
        Some(p) => std::fs::write(p, text).map_err(|err| GoldenError::Io {
            file: p.display().to_string(),
            err,
        }),
        None => print(text),
    }
}

fn summary(r: &GoldenResult) -> String {
    let pkts: usize = r.egress.iter().map(|p| p.packets.len()).sum();
    let writes: usize = r
        .mem_writes
        .as_ref()
        .map_or(0, |m| m.iter().map(|h| h.writes.len()).sum());
    let undecodable: usize = r
        .egress
        .iter()
        .flat_map(|p| &p.packets)
        .filter(|e| e.error.is_some())
        .count();
    let mut s = format!(
        "{pkts} egress packets on {} ports ({undecodable} undecodable), {writes} memory writes",
        r.egress.len()
    );
    if let Some(d) = &r.digest {
        s += &format!(", digest {} {}", d.algorithm, d.value);
    }
    s
}

fn run(cmd: GoldenCmd) -> Result<ExitCode, GoldenError> {
    match cmd {
        GoldenCmd::Run {
            scenario,
            out,
            stimulus_dir,
        } => {
            let prep = Scenario::load(&scenario)?;
            let r = prep.run();
            write_out(out.as_deref(), &r.to_json())?;
            if let Some(dir) = stimulus_dir {
                let files = prep.write_stimulus_dir(&dir)?;
                output::eprintln(&format!("wrote {} in {}", files.join(", "), dir.display()));
            }
            if let Some(o) = &out {
                println(&format!("wrote {}: {}", o.display(), summary(&r)))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        GoldenCmd::Diff {
            expected,
            observed,
            ignore,
            json,
            max_diffs,
            x_as_zero,
        } => {
            let e = GoldenResult::load(&expected)?;
            let o = GoldenResult::load(&observed)?;
            e.check_pair(
                &expected.display().to_string(),
                &o,
                &observed.display().to_string(),
            )?;
            let opt = DiffOptions {
                ignore_mem: ignore.contains(&Section::Mem),
                ignore_errors: ignore.contains(&Section::Errors),
                ignore_digest: ignore.contains(&Section::Digest),
                max_diffs: max_diffs as usize,
                x_as_zero,
            };
            let rep = diff(&e, &o, opt);
            if json {
                let text = serde_json::to_string_pretty(&rep)
                    .map_err(|e| stdout_err(std::io::Error::other(e)))?;
                println(&text)?;
            } else {
                print(&rep.to_string())?;
            }
            Ok(if rep.equal {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        GoldenCmd::FromVcd {
            vcd,
            map,
            out,
            scenario,
        } => {
            let m = SignalMap::load(&map)?;
            let config = match &scenario {
                Some(s) => Some(Scenario::load(s)?.config().clone()),
                None => None,
            };
            let limits = config
                .as_ref()
                .map(|c| c.limits())
                .unwrap_or_else(dysharp_sim::scenario::permissive_limits);
            let ex = extract_file(&vcd, &m, &map.display().to_string())?;
            let source = if vcd.as_os_str() == "-" {
                "standard input".to_string()
            } else {
                vcd.display().to_string()
            };
            let r = ex.to_result(Some(source), &m, &limits, config);
            write_out(out.as_deref(), &r.to_json())?;
            for w in &r.warnings {
                output::eprintln(&format!("warning: {w}"));
            }
            if let Some(o) = &out {
                println(&format!(
                    "wrote {}: {} ({} clock edges)",
                    o.display(),
                    summary(&r),
                    ex.edges
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Runs a `golden` subcommand; prints errors; returns the exit code.
pub fn main(cmd: GoldenCmd) -> ExitCode {
    match run(cmd) {
        Ok(c) => c,
        Err(e) => {
            output::eprintln(&format!("error: {e}"));
            ExitCode::from(2)
        }
    }
}
