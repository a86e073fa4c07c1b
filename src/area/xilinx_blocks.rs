//! `--target xilinx` for a whole configuration: every block mapped to AMD/Xilinx 7-series cells
//! on its own (`synth/xilinx_block.ys`, its sub-blocks black boxes), then summed over the
//! instances, as the sky130 flow does with area. A configuration as large as `default` does not
//! fit one WebAssembly Yosys flat; block by block it does, and each distinct block is mapped once.
//! `--blocks NAME` (one block, `top` included) still maps that block flat (`fpga::run`).
//!
//! What block by block leaves out: optimisation across a block boundary (constants that a parent
//! ties to a sub-block's input, logic a parent leaves unread). The sky130 cross-check of the
//! same method (`--flat`, docs/area.md) found the flat design 13 % smaller.

use super::flow::{self, fnv, Flow};
use super::fpga::XILINX_FAMILY;
use super::fpga::{parse_stat, xilinx_bram_kbits, xilinx_resources, FpgaReport, Resources};
use super::plan::{self, Block, Config};
use super::{AreaArgs, AreaError, AreaReport};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// One block of a block-by-block Xilinx run, per instance.
#[derive(Clone, Debug, Serialize)]
pub struct FpgaBlock {
    /// Display name (`top`, `switch.req_parser`, ...).
    pub name: String,
    /// Module definition.
    pub module: String,
    /// Instances in the design.
    pub instances: usize,
    /// Parent block's name.
    pub parent: Option<String>,
    /// Resources of one instance, its sub-blocks included.
    pub total: Resources,
    /// Kbit of block RAM of one instance, sub-blocks included.
    pub total_bram_kbits: u64,
    /// Resources of the block's own logic (sub-blocks excluded), per instance.
    pub own: Resources,
    /// LUT mapper: `abc9` (synth_xilinx's own), or `abc` (classic, where ABC9 ran out of
    /// WebAssembly call stack).
    pub lut_mapper: String,
    /// Why this block could not be mapped (its resources then count nothing of it).
    pub error: Option<String>,
}

/// Xilinx primitive cell types only (`LUT6`, `FDRE`, `RAMB36E1`, ...): a block's statistics also
/// list its black-box sub-blocks as cells, under their module names.
fn primitives(cells: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    cells
        .into_iter()
        .filter(|(t, _)| {
            !t.is_empty()
                && t.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .collect()
}

fn add_scaled(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>, n: u64) {
    for (t, k) in from {
        *into.entry(t.clone()).or_default() += k * n;
    }
}

/// Per-instance totals, bottom-up: a block's own cells plus its sub-blocks' totals times the
/// sub-block's instances per instance of the block (children come after their parent).
pub fn totals(blocks: &[Block], own: &[BTreeMap<String, u64>]) -> Vec<BTreeMap<String, u64>> {
    let mut t = own.to_vec();
    for i in (0..blocks.len()).rev() {
        if let Some(p) = blocks[i].parent {
            let per_parent = (blocks[i].instances / blocks[p].instances.max(1)) as u64;
            let child = t[i].clone();
            add_scaled(&mut t[p], &child, per_parent);
        }
    }
    t
}

/// Maps every block of `cfg` to 7-series cells and reports the whole design's resources.
pub fn run(args: &AreaArgs, cfg: &Config, root: &Path) -> Result<AreaReport, AreaError> {
    let start = Instant::now();
    let progress = !args.quiet && !args.json;
    let files = plan::sources(root, cfg)?;
    let flow = Flow {
        root: root.to_path_buf(),
        yosys: flow::find_yosys(root)?,
        liberty: None,
        macros: true,
        netlists: false,
        for_timing: false,
        clock_mhz: cfg.clock_mhz,
        progress,
        xilinx: Some(flow::scripts::XILINX_BLOCK),
    };
    let h = fnv(flow::scripts::XILINX_BLOCK.as_bytes(), 0xcbf29ce484222325);
    let h = fnv(flow::scripts::XILINX_BLOCK_ABC.as_bytes(), h);
    let out = format!(
        "{}-xilinx-blocks-{:08x}",
        flow.out_dir(cfg, &files)?,
        h as u32
    );
    let _run_dir = flow.hold_run_dir(&out)?;
    let modules = flow.elaborate(cfg, &files, &out)?;
    let all = plan::blocks(&modules, &cfg.top);
    let split = flow.needs_split(&out);
    if split {
        flow.split(cfg, &files, &out, &all)?;
    }
    let jobs = super::jobs(args);
    let mut failed = flow.synthesize(&all, &out, jobs, split)?;
    // A block ABC9 could not map (its XAIGER writer ran out of WebAssembly call stack on a
    // deep netlist; the only failure seen) is mapped again with classic ABC.
    if !failed.is_empty() {
        let retry: Vec<Block> = all
            .iter()
            .filter(|b| failed.contains_key(&b.id))
            .cloned()
            .collect();
        let abc = Flow {
            xilinx: Some(flow::scripts::XILINX_BLOCK_ABC),
            ..flow.clone()
        };
        let still = abc.synthesize(&retry, &out, jobs, split)?;
        for b in &retry {
            match still.get(&b.id) {
                Some(e) => {
                    let first = failed.remove(&b.id).unwrap_or_default();
                    failed.insert(b.id.clone(), format!("ABC9: {first}; classic ABC: {e}"));
                }
                None => {
                    failed.remove(&b.id);
                }
            }
        }
    }
    // The blocks mapped with classic ABC (in this run or an earlier one).
    let classic_ids: Vec<String> = all
        .iter()
        .filter(|b| root.join(format!("{out}/{}.classic.txt", b.id)).is_file())
        .map(|b| b.id.clone())
        .collect();
    let mut own = Vec::with_capacity(all.len());
    for b in &all {
        own.push(if failed.contains_key(&b.id) {
            BTreeMap::new()
        } else {
            let p = format!("{out}/{}.xilinx.stat.json", b.id);
            let text = std::fs::read_to_string(root.join(&p)).map_err(|e| AreaError::Io {
                path: p.clone(),
                err: e,
            })?;
            primitives(parse_stat(&p, &text)?)
        });
    }
    let tot = totals(&all, &own);
    let blocks: Vec<FpgaBlock> = all
        .iter()
        .enumerate()
        .map(|(i, b)| FpgaBlock {
            name: b.name.clone(),
            module: b.module.clone(),
            instances: b.instances,
            parent: b.parent.map(|p| all[p].name.clone()),
            total: xilinx_resources(&tot[i]),
            total_bram_kbits: xilinx_bram_kbits(&tot[i]),
            own: xilinx_resources(&own[i]),
            lut_mapper: if classic_ids.contains(&b.id) {
                "abc"
            } else {
                "abc9"
            }
            .into(),
            error: failed.get(&b.id).cloned(),
        })
        .collect();
    let whole = tot.first().cloned().unwrap_or_default();
    let y = xilinx_resources(&whole);
    let top = all.first().ok_or_else(|| AreaError::Parse {
        path: format!("{out}/elab.il"),
        msg: "no modules in the elaborated design".into(),
    })?;
    let fr = FpgaReport {
        device: XILINX_FAMILY.to_string(),
        block: top.name.clone(),
        module: top.module.clone(),
        luts: y.luts,
        ffs: y.ffs,
        brams: y.brams,
        bram_kbits: xilinx_bram_kbits(&whole),
        dsps: y.dsps,
        fmax_mhz: None,
        fmax_note: "none: synth_xilinx gives resource counts only; the pinned open tools have \
                    no 7-series place-and-route"
            .into(),
        placed: false,
        available: None,
        yosys: y,
        cells: whole,
        error: None,
        flow: {
            let mut f = vec![format!(
                "yosys -s {out}/blocks*.ys (synth_xilinx -family xc7 -noiopad -noclkbuf per block, \
                 {} blocks, sub-blocks as black boxes; summed over the instances)",
                all.len()
            )];
            if !classic_ids.is_empty() {
                let names: Vec<&str> = all
                    .iter()
                    .filter(|b| classic_ids.contains(&b.id))
                    .map(|b| b.name.as_str())
                    .collect();
                f.push(format!(
                    "LUT mapping with classic abc -luts (synth/xilinx_block_abc.ys) for {}: \
                     ABC9 ran out of WebAssembly call stack",
                    names.join(", ")
                ));
            }
            f
        },
        blocks,
    };
    Ok(AreaReport {
        top: cfg.top.clone(),
        config: cfg.name.clone(),
        params: cfg.params.clone(),
        target: args.target,
        cell_model: fr.device.clone(),
        memories: args.memories,
        sram_model: super::sram_model(),
        blocks: Vec::new(),
        timing: None,
        power: None,
        fpga: Some(fr),
        flat: None,
        out_dir: out,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(list: &[(&str, u64)]) -> BTreeMap<String, u64> {
        list.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn sub_blocks_are_not_cells() {
        let c = primitives(cells(&[
            ("LUT6", 3),
            ("FDRE", 2),
            ("dysharp_parser$dysharp_top.u_switch.gen_port[0].u_p", 1),
            ("$paramod\\x", 1),
        ]));
        assert_eq!(c, cells(&[("LUT6", 3), ("FDRE", 2)]));
    }

    #[test]
    fn totals_multiply_instances() {
        let ls = "\n4 modules:\n  dysharp_top\n  dysharp_switch$dysharp_top.u_switch\n  dysharp_fifo$dysharp_top.u_switch.gen_port[0].u_q\n  dysharp_fifo$dysharp_top.u_switch.gen_port[1].u_q\n\n";
        let b = plan::blocks(&plan::parse_ls(ls), "dysharp_top");
        let own: Vec<_> = b
            .iter()
            .map(|x| match x.name.as_str() {
                "top" => cells(&[("LUT6", 1)]),
                "switch" => cells(&[("LUT6", 10), ("FDRE", 4)]),
                _ => cells(&[("RAMB18E1", 1), ("LUT6", 2)]),
            })
            .collect();
        let t = totals(&b, &own);
        assert_eq!(t[0], cells(&[("LUT6", 15), ("FDRE", 4), ("RAMB18E1", 2)]));
        let r = xilinx_resources(&t[0]);
        assert_eq!((r.luts, r.ffs, r.brams), (15, 4, 2));
    }
}
