//! Running the Yosys flows of `synth/`: elaboration once per configuration, then the blocks in
//! up to `--jobs` Yosys processes at a time, each running a group of them (a failed block is
//! reported and the rest continue in a new process); `--flat`: the whole configuration in one.
//! Outputs go under `target/area/<config>-<hash>/`; a block whose outputs exist is not re-run.

use super::plan::{module_glob, Block, Config};
use super::sram;
use super::AreaError;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// An elaborated design larger than this (bytes of RTLIL) is not read back whole by every Yosys
/// process but split into a file per block ([`Flow::split`]). Measured: `default`'s 293 MB read
/// in about 16 s within 2.2 GB; `default` at 16 ports, 929 MB, did not fit the WebAssembly
/// Yosys' 4 GiB heap.
pub const SPLIT_BYTES: u64 = 400_000_000;

/// Cells the Liberty mapping does not use: sky130's low-power cells (`lpflow`, which need
/// other supplies) and flip-flops with an enable pin (`edf*`: their enable nets would bypass
/// ABC's buffering; an enable becomes a multiplexer in front of a plain flip-flop, about the
/// same area).
pub const MAP_DONT_USE: &str = "-dont_use *lpflow* -dont_use *__edf*";

/// The cell ABC assumes drives each input of the logic it maps (a flip-flop's output or a
/// block input): sky130's smallest buffer, the drive of a `dfxtp_1`'s output.
pub const ABC_DRIVING_CELL: &str = "sky130_fd_sc_hd__buf_1";

/// The load ABC assumes on each output of the logic it maps, fF (ABC's unit): about two
/// flip-flop data pins (`dfxtp_1` D: 1.7 fF) and their wire.
pub const ABC_LOAD_FF: f64 = 5.0;

/// The flow scripts (`synth/*.ys`), built into the binary.
pub mod scripts {
    /// Elaboration of one configuration.
    pub const ELAB: &str = include_str!("../../synth/elab.ys");
    /// Start of the per-block script.
    pub const PRELUDE: &str = include_str!("../../synth/prelude.ys");
    /// One block: generic synthesis and the memory decision.
    pub const BLOCK: &str = include_str!("../../synth/block.ys");
    /// Mapping to a Liberty file.
    pub const MAP_LIBERTY: &str = include_str!("../../synth/map_liberty.ys");
    /// ABC's script of `MAP_LIBERTY` (`{D}`: the delay target in ps).
    pub const ABC_DELAY: &str = include_str!("../../synth/abc_delay.abc");
    /// Mapping to Yosys' gates for the built-in cell table.
    pub const MAP_BUILTIN: &str = include_str!("../../synth/map_builtin.ys");
    /// One block mapped to AMD/Xilinx 7-series cells (`--target xilinx`, whole design).
    pub const XILINX_BLOCK: &str = include_str!("../../synth/xilinx_block.ys");
    /// ... with classic ABC for the LUTs, where ABC9 ran out of WebAssembly call stack.
    pub const XILINX_BLOCK_ABC: &str = include_str!("../../synth/xilinx_block_abc.ys");
    /// `--flat`: the whole configuration elaborated and synthesized in one piece.
    pub const FLAT: &str = include_str!("../../synth/flat.ys");
    /// The elaboration that `ELAB` and `SPLIT` share (hierarchy kept: a module per instance).
    pub const READ: &str = "read_slang --threads 1 --keep-hierarchy --top {top} {params} {files}\n\
                            hierarchy -top {top}";
    /// A design too large to read back whole: elaborated again and written per block.
    pub const SPLIT: &str = include_str!("../../synth/split.ys");
    /// A block's module and its direct sub-blocks, from the elaborated design read whole.
    pub const LOAD_COPY: &str = "design -copy-from elab {module_glob} {module_glob} %M %u";
    /// ... from the block's own file of a split design.
    pub const LOAD_SPLIT: &str = "read_rtlil {out}/{id}.il";
    /// One block's file of a split design.
    pub const WRITE_SPLIT: &str =
        "select {module_glob} {module_glob} %M %u\nwrite_rtlil -selected {out}/{id}.il\nselect -clear";
    /// The start of a process's script on a split design: nothing to read.
    pub const PRELUDE_SPLIT: &str = "tee -q -o {out}/{name}.loaded.txt log loaded\n";
    /// A block's netlist for static timing: each memory kept as a macro an instance of the
    /// cell `dysharp_sram` (src/area/sram_timing.rs gives it a timing model); simple left-hand
    /// sides, which OpenSTA's Verilog reader needs.
    pub const NETLIST: &str =
        "chtype -set dysharp_sram t:$mem_v2\nwrite_verilog -noattr -noexpr -simple-lhs {out}/{id}.v\n\
                               write_verilog -noattr -blackboxes {out}/{id}.bb.v";
}

/// Fills `{name}` placeholders.
pub fn render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut s = template.to_string();
    for (k, v) in vars {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s
}

/// How blocks are mapped.
#[derive(Clone, Debug)]
pub struct Flow {
    /// Repository root (Yosys runs there and reads only below it).
    pub root: PathBuf,
    /// Yosys executable.
    pub yosys: PathBuf,
    /// Liberty file for mapping, relative to `root` (none: the built-in cell table).
    pub liberty: Option<String>,
    /// Keep SRAM-shaped memories as macros (else every memory becomes flip-flops).
    pub macros: bool,
    /// Write each block's mapped netlist (for static timing).
    pub netlists: bool,
    /// Clock target of the Liberty mapping, MHz (its delay target: [`Flow::delay_ps`]).
    pub clock_mhz: f64,
    /// Map for the clock target with fan-out buffering and sizing (`liberty` has timing
    /// tables); else for area only.
    pub for_timing: bool,
    /// Show a progress bar.
    pub progress: bool,
    /// Map each block to AMD/Xilinx 7-series cells with this script
    /// ([`scripts::XILINX_BLOCK`] or [`scripts::XILINX_BLOCK_ABC`]) instead of standard cells
    /// (then `liberty`, `macros` and `netlists` are not used).
    pub xilinx: Option<&'static str>,
}

/// FNV-1a, for stable cache keys.
pub fn fnv(data: &[u8], mut h: u64) -> u64 {
    for b in data {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// The Yosys of the project's set-up (`.tools/bin/yosys`), or `$DYSHARP_YOSYS`.
pub fn find_yosys(root: &Path) -> Result<PathBuf, AreaError> {
    if let Some(p) = std::env::var_os("DYSHARP_YOSYS") {
        return Ok(PathBuf::from(p));
    }
    let p = root.join(".tools/bin/yosys");
    if p.is_file() {
        Ok(p)
    } else {
        Err(AreaError::Tool {
            tool: "yosys".into(),
            msg: format!(
                "{} not found: run tools/setup.sh (it installs the pinned Yosys)",
                p.display()
            ),
        })
    }
}

impl Flow {
    /// The output folder of a configuration (relative to the root) for these RTL files.
    pub fn out_dir(&self, cfg: &Config, files: &[String]) -> Result<String, AreaError> {
        let mut h = 0xcbf29ce484222325u64;
        for f in files {
            let text = std::fs::read(self.root.join(f)).map_err(|e| AreaError::Io {
                path: f.clone(),
                err: e,
            })?;
            h = fnv(f.as_bytes(), h);
            h = fnv(&text, h);
        }
        h = fnv(cfg.top.as_bytes(), h);
        for (k, v) in &cfg.params {
            h = fnv(format!("{k}={v};").as_bytes(), h);
        }
        // the mapping scripts of this run's mode only
        let mapping: &[&str] = match (&self.liberty, self.for_timing) {
            (Some(_), true) => &[scripts::MAP_LIBERTY, scripts::ABC_DELAY],
            (Some(_), false) => &[scripts::MAP_LIBERTY],
            (None, _) => &[scripts::MAP_BUILTIN],
        };
        for s in mapping {
            h = fnv(s.as_bytes(), h);
        }
        for s in [
            scripts::ELAB,
            scripts::PRELUDE,
            scripts::BLOCK,
            scripts::FLAT,
            scripts::NETLIST,
            scripts::SPLIT,
            scripts::READ,
            scripts::LOAD_COPY,
            scripts::LOAD_SPLIT,
            scripts::WRITE_SPLIT,
            scripts::PRELUDE_SPLIT,
        ] {
            h = fnv(s.as_bytes(), h);
        }
        h = fnv(self.liberty.as_deref().unwrap_or("builtin").as_bytes(), h);
        if let Some(l) = &self.liberty {
            let len = std::fs::metadata(self.root.join(l))
                .map(|m| m.len())
                .unwrap_or(0);
            h = fnv(&len.to_le_bytes(), h);
        }
        h = fnv(&[u8::from(self.macros), u8::from(self.netlists)], h);
        if self.liberty.is_some() && self.for_timing {
            h = fnv(&self.delay_ps().to_le_bytes(), h);
        }
        Ok(format!("target/area/{}-{h:016x}", cfg.name))
    }

    /// Holds the run folder `out` for this process until the returned lock is dropped. Runs of
    /// one design share its folder (e.g. two `--blocks` selections of one configuration) and the
    /// job files in it, so a second run waits for the first instead of writing over its files.
    pub fn hold_run_dir(&self, out: &str) -> Result<RunDirLock, AreaError> {
        hold_dir(&self.root.join(out), || {
            eprintln!("dysharp area: {out} is in use by another run of this design; waiting for it")
        })
    }

    /// Starts Yosys on `script` (written to `{out}/{name}.ys`) in the root, its log in
    /// `{out}/{name}.log` and its output in `{out}/{name}.stdout`.
    pub fn run_script(
        &self,
        script: &str,
        out: &str,
        name: &str,
    ) -> Result<std::process::Child, AreaError> {
        let ys = format!("{out}/{name}.ys");
        write(&self.root.join(&ys), script)?;
        let log =
            std::fs::File::create(self.root.join(format!("{out}/{name}.stdout"))).map_err(|e| {
                AreaError::Io {
                    path: format!("{out}/{name}.stdout"),
                    err: e,
                }
            })?;
        let err = log.try_clone().map_err(|e| AreaError::Io {
            path: format!("{out}/{name}.stdout"),
            err: e,
        })?;
        Command::new(&self.yosys)
            .current_dir(&self.root)
            .args(["-q", "-l", &format!("{out}/{name}.log"), "-s", &ys])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| AreaError::Tool {
                tool: "yosys".into(),
                msg: format!("cannot start {}: {e}", self.yosys.display()),
            })
    }

    /// Runs `script` as `run_script` does and waits for it, with a spinner saying `msg`.
    fn run_waiting(
        &self,
        script: &str,
        out: &str,
        name: &str,
        msg: &str,
    ) -> Result<std::process::ExitStatus, AreaError> {
        let pb = self.spinner(msg);
        let status = self
            .run_script(script, out, name)?
            .wait()
            .map_err(|e| AreaError::Tool {
                tool: "yosys".into(),
                msg: e.to_string(),
            });
        pb.finish_and_clear();
        status
    }

    /// The last error lines of a Yosys log.
    pub fn log_error(&self, out: &str, name: &str) -> String {
        let text = std::fs::read_to_string(self.root.join(format!("{out}/{name}.log")))
            .unwrap_or_default()
            + &std::fs::read_to_string(self.root.join(format!("{out}/{name}.stdout")))
                .unwrap_or_default();
        let errs: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("ERROR") || l.contains("error:") || l.contains("rror"))
            .collect();
        let pick: Vec<&str> = if errs.is_empty() {
            text.lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect()
        } else {
            errs.into_iter().take(5).collect()
        };
        let s = pick.join(" | ");
        if s.is_empty() {
            "no log output (killed, e.g. out of memory?)".into()
        } else {
            s
        }
    }

    /// Elaborates `cfg` (unless done before) and returns the module names of the design.
    pub fn elaborate(
        &self,
        cfg: &Config,
        files: &[String],
        out: &str,
    ) -> Result<Vec<String>, AreaError> {
        let modules = self.root.join(format!("{out}/modules.txt"));
        let il = self.root.join(format!("{out}/elab.il"));
        if !(modules.is_file() && il.is_file()) {
            std::fs::create_dir_all(self.root.join(out)).map_err(|e| AreaError::Io {
                path: out.to_string(),
                err: e,
            })?;
            let script = render(
                scripts::ELAB,
                &[
                    ("read", scripts::READ),
                    ("top", &cfg.top),
                    ("params", &slang_params(cfg)),
                    ("files", &files.join(" ")),
                    ("out", out),
                ],
            );
            let status =
                self.run_waiting(&script, out, "elab", &format!("elaborating {}", cfg.name))?;
            if !status.success() || !il.is_file() {
                let _ = std::fs::remove_file(&modules);
                return Err(AreaError::Synthesis {
                    block: format!("elaboration of {}", cfg.name),
                    msg: self.log_error(out, "elab"),
                });
            }
        }
        let text = std::fs::read_to_string(&modules).map_err(|e| AreaError::Io {
            path: modules.display().to_string(),
            err: e,
        })?;
        let m = super::plan::parse_ls(&text);
        if m.is_empty() {
            return Err(AreaError::Parse {
                path: modules.display().to_string(),
                msg: "no modules listed".into(),
            });
        }
        Ok(m)
    }

    fn spinner(&self, msg: &str) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new_spinner();
        pb.set_message(msg.to_string());
        pb.enable_steady_tick(Duration::from_millis(200));
        pb
    }

    fn sram_select(&self) -> String {
        if self.macros {
            sram::select_macros()
        } else {
            sram::select_none()
        }
    }

    /// ABC's delay target, ps: the clock period less the clock uncertainty and a flip-flop's
    /// clock-to-output and setup time ([`super::timing::FLOP_OVERHEAD_NS`]), at least 100 ps.
    pub fn delay_ps(&self) -> u64 {
        let period = 1000.0 / self.clock_mhz;
        let comb = period - super::timing::UNCERTAINTY_NS - super::timing::FLOP_OVERHEAD_NS;
        (comb * 1000.0).round().max(100.0) as u64
    }

    /// Writes the ABC script and constraints of the Liberty mapping into `out` (the Yosys
    /// scripts read them there): [`scripts::ABC_DELAY`] with the delay target, and the drive
    /// of the inputs and load of the outputs of ABC's logic ([`ABC_DRIVING_CELL`] when the
    /// Liberty file has it, [`ABC_LOAD_FF`]).
    pub fn write_abc_files(&self, out: &str) -> Result<(), AreaError> {
        let (Some(lib), true) = (&self.liberty, self.for_timing) else {
            return Ok(());
        };
        let d = self.delay_ps().to_string();
        write(
            &self.root.join(format!("{out}/abc_delay.abc")),
            &render(scripts::ABC_DELAY, &[("D", &d)]),
        )?;
        let has_cell = std::fs::read_to_string(self.root.join(lib))
            .map(|t| t.contains(&format!("cell (\"{ABC_DRIVING_CELL}\")")))
            .unwrap_or(false);
        let mut constr = String::new();
        if has_cell {
            constr += &format!("set_driving_cell {ABC_DRIVING_CELL}\n");
        }
        constr += &format!("set_load {ABC_LOAD_FF}\n");
        write(&self.root.join(format!("{out}/abc.constr")), &constr)
    }

    /// The mapping steps for block (or run) `id`: to the Liberty file, else to Yosys' gates.
    fn map_script(&self, id: &str, out: &str, netlist: &str) -> String {
        match &self.liberty {
            Some(l) => render(
                scripts::MAP_LIBERTY,
                &[
                    (
                        "abc",
                        &if self.for_timing {
                            format!(
                                "abc -liberty {l} {MAP_DONT_USE} -D {} -constr {out}/abc.constr \
                                 -script {out}/abc_delay.abc",
                                self.delay_ps()
                            )
                        } else {
                            format!("abc -liberty {l} {MAP_DONT_USE}")
                        },
                    ),
                    ("liberty", l),
                    ("dont_use", MAP_DONT_USE),
                    ("id", id),
                    ("out", out),
                    ("write_netlist", netlist),
                ],
            ),
            None => render(scripts::MAP_BUILTIN, &[("id", id), ("out", out)]),
        }
    }

    fn block_script(&self, b: &Block, out: &str, split: bool) -> String {
        let sel = self.sram_select();
        let glob = module_glob(&b.rep);
        let vars = [
            ("id", b.id.as_str()),
            ("module", b.rep.as_str()),
            ("module_glob", glob.as_str()),
            ("sram_select", sel.as_str()),
            ("out", out),
        ];
        let load = render(
            if split {
                scripts::LOAD_SPLIT
            } else {
                scripts::LOAD_COPY
            },
            &vars,
        );
        let mut vars = vars.to_vec();
        vars.push(("load", &load));
        if let Some(x) = self.xilinx {
            return render(x, &vars);
        }
        let mut s = render(scripts::BLOCK, &vars);
        let netlist = if self.netlists {
            render(scripts::NETLIST, &[("id", &b.id), ("out", out)])
        } else {
            String::new()
        };
        s.push_str(&self.map_script(&b.id, out, &netlist));
        s
    }

    /// `--flat`: elaborates `cfg` flat and synthesizes it in one piece (unless done before);
    /// its outputs are the block files of id `flat`.
    pub fn flat(&self, cfg: &Config, files: &[String], out: &str) -> Result<(), AreaError> {
        if self.root.join(format!("{out}/flat.done.txt")).is_file() {
            return Ok(());
        }
        self.write_abc_files(out)?;
        let mut script = render(
            scripts::FLAT,
            &[
                ("top", &cfg.top),
                ("params", &slang_params(cfg)),
                ("files", &files.join(" ")),
                ("out", out),
                ("sram_select", &self.sram_select()),
            ],
        );
        script.push_str(&self.map_script("flat", out, ""));
        let msg = format!("synthesizing {} flat (--flat)", cfg.name);
        let status = self.run_waiting(&script, out, "flat", &msg)?;
        if !status.success() || !self.root.join(format!("{out}/flat.done.txt")).is_file() {
            return Err(AreaError::Synthesis {
                block: format!("{} flat (--flat)", cfg.name),
                msg: self.log_error(out, "flat"),
            });
        }
        Ok(())
    }

    /// Whether a block's outputs are complete.
    pub fn done(&self, out: &str, b: &Block) -> bool {
        self.root.join(format!("{out}/{}.done.txt", b.id)).is_file()
    }

    /// Whether the elaborated design of `out` is too large for a Yosys process to read back
    /// whole ([`SPLIT_BYTES`]): its blocks then read files of their own ([`Flow::split`]).
    /// `DYSHARP_AREA_SPLIT_BYTES` overrides the threshold (the tests split a small design).
    pub fn needs_split(&self, out: &str) -> bool {
        let limit = std::env::var("DYSHARP_AREA_SPLIT_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(SPLIT_BYTES);
        std::fs::metadata(self.root.join(format!("{out}/elab.il"))).is_ok_and(|m| m.len() > limit)
    }

    /// Elaborates `cfg` again and writes each block's module with its direct sub-blocks to
    /// `<out>/<id>.il` (for the blocks without one yet): for designs too large to read back whole.
    pub fn split(
        &self,
        cfg: &Config,
        files: &[String],
        out: &str,
        blocks: &[Block],
    ) -> Result<(), AreaError> {
        // Only the blocks without a file yet (an earlier run may have split a --blocks subset).
        let missing: Vec<&Block> = blocks
            .iter()
            .filter(|b| !self.root.join(format!("{out}/{}.il", b.id)).is_file())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let _ = std::fs::remove_file(self.root.join(format!("{out}/split.done.txt")));
        let writes: Vec<String> = missing
            .iter()
            .map(|b| {
                render(
                    scripts::WRITE_SPLIT,
                    &[
                        ("module_glob", &module_glob(&b.rep)),
                        ("id", &b.id),
                        ("out", out),
                    ],
                )
            })
            .collect();
        let script = render(
            scripts::SPLIT,
            &[
                ("read", scripts::READ),
                ("top", &cfg.top),
                ("params", &slang_params(cfg)),
                ("files", &files.join(" ")),
                ("writes", &writes.join("\n")),
                ("out", out),
            ],
        );
        let status = self.run_waiting(
            &script,
            out,
            "split",
            &format!("elaborating {} again, one file per block", cfg.name),
        )?;
        if !status.success() || !self.root.join(format!("{out}/split.done.txt")).is_file() {
            return Err(AreaError::Synthesis {
                block: format!("per-block split of {}", cfg.name),
                msg: self.log_error(out, "split"),
            });
        }
        Ok(())
    }

    /// Synthesizes every block not done yet in up to `jobs` Yosys processes at a time; returns
    /// the blocks that failed, with the error.
    ///
    /// Each round splits the blocks left into `jobs` groups of about equal cost (estimated from
    /// the widths of each block's cells in the elaborated design, `module_costs`, plus a fixed
    /// cost per block; largest first onto the lightest group) and runs one process per group.
    /// A block that failed after other blocks of its process is retried in a process of its
    /// own, since the WebAssembly heap (at most 4 GiB) never shrinks and the blocks before it
    /// may have left too little of it; a block that fails alone is reported and the rest go on.
    ///
    /// With `split` each block reads its own file ([`Flow::split`]) instead of the whole design.
    pub fn synthesize(
        &self,
        blocks: &[Block],
        out: &str,
        jobs: usize,
        split: bool,
    ) -> Result<BTreeMap<String, String>, AreaError> {
        let jobs = jobs.max(1);
        self.write_abc_files(out)?;
        let mut failed = BTreeMap::new();
        let pb = if self.progress {
            let pb = ProgressBar::new(blocks.len() as u64);
            pb.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:30}] {pos}/{len} blocks {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            pb
        } else {
            ProgressBar::hidden()
        };
        let costs = if jobs > 1 {
            module_costs(&self.root.join(format!("{out}/elab.il")))
        } else {
            BTreeMap::new()
        };
        let mut round = 0;
        let mut alone: Vec<String> = Vec::new();
        loop {
            let todo: Vec<&Block> = blocks
                .iter()
                .filter(|b| !self.done(out, b) && !failed.contains_key(&b.id))
                .collect();
            pb.set_position((blocks.len() - todo.len()) as u64);
            if todo.is_empty() {
                break;
            }
            let groups: Vec<Vec<&Block>> = if alone.is_empty() {
                // a block's fixed cost (reading it, ABC's start, the reports): about 5 s, as
                // much as 10,000 units
                balance(&todo, jobs, |b| {
                    costs.get(&b.rep).copied().unwrap_or(0) + 10_000
                })
            } else {
                let take = alone.len().min(jobs);
                alone
                    .drain(..take)
                    .filter_map(|id| todo.iter().find(|b| b.id == id).map(|b| vec![*b]))
                    .collect()
            };
            let mut running = Vec::new();
            for (k, g) in groups.iter().enumerate() {
                let name = if groups.len() == 1 {
                    format!("blocks{round}")
                } else {
                    format!("blocks{round}_{k}")
                };
                let prelude = if split {
                    scripts::PRELUDE_SPLIT
                } else {
                    scripts::PRELUDE
                };
                let mut script = render(prelude, &[("out", out), ("name", &name)]);
                for b in g {
                    script.push_str(&self.block_script(b, out, split));
                }
                running.push((self.run_script(&script, out, &name)?, name, None));
            }
            round += 1;
            loop {
                let mut busy = false;
                for (child, _, status) in running.iter_mut() {
                    if status.is_none() {
                        *status = child.try_wait().map_err(|e| AreaError::Tool {
                            tool: "yosys".into(),
                            msg: e.to_string(),
                        })?;
                        busy |= status.is_none();
                    }
                }
                let left: Vec<&&Block> = groups
                    .iter()
                    .flatten()
                    .filter(|b| !self.done(out, b))
                    .collect();
                pb.set_position(
                    (blocks.len() - todo.len() + groups.iter().flatten().count() - left.len())
                        as u64,
                );
                if let Some(b) = left.first() {
                    pb.set_message(b.name.clone());
                }
                if !busy {
                    break;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
            let mut unreadable = None;
            for (g, (_, name, status)) in groups.iter().zip(&running) {
                let Some(bad) = g.iter().find(|b| !self.done(out, b)) else {
                    continue;
                };
                let loaded = self.root.join(format!("{out}/{name}.loaded.txt")).is_file();
                if !loaded && !status.is_some_and(|s| s.success()) {
                    // The elaborated design itself did not fit: every block would fail the same.
                    let size = std::fs::metadata(self.root.join(format!("{out}/elab.il")))
                        .map(|m| m.len())
                        .unwrap_or(0);
                    unreadable = Some(format!(
                        "the elaborated design ({out}/elab.il, {} MB) could not be read into the \
                         WebAssembly Yosys (at most 4 GiB): {}",
                        size / 1_000_000,
                        self.log_error(out, name)
                    ));
                    break;
                }
                if status.is_some_and(|s| s.success()) {
                    failed.insert(bad.id.clone(), "no outputs written".into());
                } else if bad.id != g[0].id {
                    alone.push(bad.id.clone());
                } else {
                    failed.insert(bad.id.clone(), self.log_error(out, name));
                }
            }
            if let Some(msg) = unreadable {
                for b in blocks.iter().filter(|b| !self.done(out, b)) {
                    failed.entry(b.id.clone()).or_insert_with(|| msg.clone());
                }
                break;
            }
        }
        pb.finish_and_clear();
        Ok(failed)
    }
}

/// A configuration's parameters as `read_slang` options (`-G K=V ...`).
fn slang_params(cfg: &Config) -> String {
    cfg.params
        .iter()
        .map(|(k, v)| format!("-G {k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cost estimate of synthesizing each module of an RTLIL file, by module name without the
/// leading backslash: the sum over its cells of their width in bits (`WIDTH` or `Y_WIDTH`, else
/// `A_WIDTH`) times their select inputs (`S_WIDTH` of a `$pmux`, else 1). Empty if the file
/// cannot be read. A rough estimate: against the synthesis times of the five largest blocks of
/// the `default` run it is 0.25 to 1.2 ms per unit (RTLIL lines: 0.46 to 1.8 ms per line), and
/// up to 3 ms on a small block full of multipliers (the request forwarder).
pub fn module_costs(il: &Path) -> BTreeMap<String, u64> {
    use std::io::BufRead;
    let mut costs = BTreeMap::new();
    let Ok(f) = std::fs::File::open(il) else {
        return costs;
    };
    let param = |line: &[u8], name: &[u8]| -> Option<u64> {
        let rest = line.strip_prefix(b"    parameter \\")?.strip_prefix(name)?;
        let v = rest.strip_prefix(b" ")?;
        std::str::from_utf8(v).ok()?.trim().parse().ok()
    };
    let mut module: Option<(String, u64)> = None;
    // width, A width, select width of the cell being read
    let mut cell: Option<(u64, u64, u64)> = None;
    for line in std::io::BufReader::new(f)
        .split(b'\n')
        .map_while(Result::ok)
    {
        if let Some(name) = line.strip_prefix(b"module ") {
            let name = String::from_utf8_lossy(name);
            module = Some((name.trim().trim_start_matches('\\').to_string(), 0));
        } else if line == b"end" {
            if let Some((name, c)) = module.take() {
                costs.insert(name, c);
            }
        } else if line.starts_with(b"  cell ") {
            cell = Some((0, 0, 1));
        } else if line == b"  end" {
            if let (Some((w, a, sel)), Some((_, c))) = (cell.take(), module.as_mut()) {
                *c += if w > 0 { w } else { a } * sel.max(1);
            }
        } else if let Some((w, a, sel)) = cell.as_mut() {
            if let Some(v) = param(&line, b"WIDTH").or_else(|| param(&line, b"Y_WIDTH")) {
                *w = v;
            } else if let Some(v) = param(&line, b"A_WIDTH") {
                *a = v;
            } else if let Some(v) = param(&line, b"S_WIDTH") {
                *sel = v;
            }
        }
    }
    costs
}

/// Splits `items` into at most `n` groups of about equal total cost: largest first, each onto
/// the group with the least so far (a group keeps the items' order among themselves).
pub fn balance<'a, T>(items: &[&'a T], n: usize, cost: impl Fn(&T) -> u64) -> Vec<Vec<&'a T>> {
    let n = n.clamp(1, items.len().max(1));
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cost(items[i])));
    let mut load = vec![0u64; n];
    let mut member = vec![0usize; items.len()];
    for i in order {
        let g = (0..n).min_by_key(|&g| load[g]).unwrap_or(0);
        load[g] += cost(items[i]);
        member[i] = g;
    }
    (0..n)
        .map(|g| {
            (0..items.len())
                .filter(|&i| member[i] == g)
                .map(|i| items[i])
                .collect::<Vec<_>>()
        })
        .filter(|g| !g.is_empty())
        .collect()
}

/// Writes a file, naming it in the error.
pub fn write(path: &Path, text: &str) -> Result<(), AreaError> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| AreaError::Io {
            path: d.display().to_string(),
            err: e,
        })?;
    }
    std::fs::write(path, text).map_err(|e| AreaError::Io {
        path: path.display().to_string(),
        err: e,
    })
}

/// An exclusive hold on a run folder (a lock on its `.lock` file), released when dropped.
#[derive(Debug)]
pub struct RunDirLock {
    _file: std::fs::File,
}

/// Locks `dir/.lock` (the folder is created if needed); calls `waiting` once and blocks when
/// another process or handle holds it.
fn hold_dir(dir: &Path, waiting: impl FnOnce()) -> Result<RunDirLock, AreaError> {
    let io = |err: std::io::Error| AreaError::Io {
        path: dir.join(".lock").display().to_string(),
        err,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".lock"))
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            waiting();
            file.lock().map_err(io)?;
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    Ok(RunDirLock { _file: file })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_held_run_dir_makes_a_second_holder_wait_until_it_is_released() {
        let dir = std::env::temp_dir().join(format!("dysharp-run-lock-{}", std::process::id()));
        let first = super::hold_dir(&dir, || panic!("the first holder must not wait")).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let d = dir.clone();
        let second = std::thread::spawn(move || {
            let mut waited = false;
            let lock = super::hold_dir(&d, || waited = true).unwrap();
            tx.send(()).unwrap();
            drop(lock);
            waited
        });
        // The second holder is still waiting while the first holds the folder.
        assert!(rx
            .recv_timeout(std::time::Duration::from_millis(300))
            .is_err());
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert!(
            second.join().unwrap(),
            "the second holder did not report waiting"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    use super::*;

    #[test]
    fn render_fills_placeholders() {
        assert_eq!(
            render("a {x} {y} {x}", &[("x", "1"), ("y", "2")]),
            "a 1 2 1"
        );
        assert!(scripts::BLOCK.contains("{sram_select}"));
        assert_ne!(fnv(b"a", 1), fnv(b"b", 1));
    }

    #[test]
    fn balance_spreads_the_cost() {
        let items = [9u64, 1, 5, 4, 3, 2];
        let refs: Vec<&u64> = items.iter().collect();
        let g = balance(&refs, 2, |c| *c);
        assert_eq!(g.len(), 2);
        let sums: Vec<u64> = g.iter().map(|g| g.iter().copied().sum()).collect();
        assert_eq!(sums.iter().sum::<u64>(), 24);
        assert!(sums.iter().all(|&s| s == 12), "{sums:?}");
        // one group per item at most, and the original order inside a group
        assert_eq!(balance(&refs[..1], 4, |c| *c).len(), 1);
        assert!(g.iter().all(|g| g.windows(2).all(|w| {
            let p = |x: &u64| items.iter().position(|y| std::ptr::eq(x, y));
            p(w[0]) < p(w[1])
        })));
        assert!(balance::<u64>(&[], 2, |c| *c).is_empty());
    }

    #[test]
    fn module_costs_weigh_cell_widths() {
        let dir = std::env::temp_dir().join(format!("dysharp-il-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let il = dir.join("x.il");
        std::fs::write(
            &il,
            "attribute \\top 1\nmodule \\a$top.u_a\n  wire width 8 \\x\n\
             \x20 cell $and $1\n    parameter \\A_WIDTH 8\n    parameter \\Y_WIDTH 8\n  end\n\
             \x20 cell $pmux $2\n    parameter \\S_WIDTH 4\n    parameter \\WIDTH 16\n  end\n\
             \x20 cell $not $3\n    parameter \\A_WIDTH 3\n  end\nend\nmodule \\b\nend\n",
        )
        .unwrap();
        let m = module_costs(&il);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(m.get("a$top.u_a"), Some(&(8 + 16 * 4 + 3)));
        assert_eq!(m.get("b"), Some(&0));
        assert!(module_costs(Path::new("/nonexistent.il")).is_empty());
    }
}
