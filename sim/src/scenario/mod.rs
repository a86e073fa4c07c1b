//! Golden-model comparison for any switch implementation (docs/golden.md).
//!
//! * A [`Scenario`] (JSON, `"version": 1`) gives the configuration ([`Config`]'s own serde
//!   form), the initial state (AL tables, allocation counters and memory contents per hub; the
//!   static group table is part of the configuration) and the stimulus: per ingress port, the
//!   packets in order, each as hex flits or in the readable [`PacketSpec`] form.
//! * [`Scenario::run`] feeds the packets through the golden [`Fabric`] (packet *i* of port 0,
//!   then packet *i* of port 1, ..., each run to completion) and returns the expected
//!   [`GoldenResult`]: egress packets per port, memory writes per hub, error counters and a
//!   digest of the final state.
//! * [`diff::diff`] compares an expected and an observed result and reports the first
//!   divergence; [`crate::vcd_extract`] makes an observed result from a waveform.

pub mod align;
pub mod diff;
pub mod pktspec;
pub mod result;

pub use diff::{diff, DiffOptions, DiffReport, Divergence};
pub use pktspec::{Addr, Hex128, LaneValue, PacketSpec, Payload};
pub use result::{
    permissive_limits, Digest, EgressEntry, GoldenResult, HubWrites, MemWrite, PortEgress,
    PortErrors, ResultKind,
};

use crate::config::Config;
use crate::fabric::Fabric;
use crate::hub::MemAccess;
use crate::numerics::DType;
use crate::packet::Flit;
use pktspec::{flits_hex, hex128, lanes_to_bytes, parse_flits, parse_hex_bytes};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

/// The scenario and result format version this code reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Errors reading scenario, result and mapping files.
#[derive(Debug, thiserror::Error)]
pub enum GoldenError {
    /// A file cannot be read or written.
    #[error("{file}: {err}")]
    Io {
        /// File.
        file: String,
        /// Cause.
        err: std::io::Error,
    },
    /// A file's content is wrong at a JSON/TOML path.
    #[error("{file}: at `{path}`: {msg}")]
    Format {
        /// File.
        file: String,
        /// Path inside the document (`stimulus[0].packets[2].packet.opcode`).
        path: String,
        /// What is wrong.
        msg: String,
    },
}

/// A [`GoldenError::Format`].
pub(crate) fn error_at(file: &str, path: &str, msg: impl Into<String>) -> GoldenError {
    GoldenError::Format {
        file: file.to_string(),
        path: if path.is_empty() {
            "(top level)".into()
        } else {
            path.to_string()
        },
        msg: msg.into(),
    }
}

/// Parses a JSON document whose top-level `version` must be [`FORMAT_VERSION`], reporting
/// errors with the file name and the JSON path.
pub(crate) fn parse_versioned<T: DeserializeOwned>(
    file: &str,
    text: &str,
    what: &str,
) -> Result<T, GoldenError> {
    let mut v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| error_at(file, "", format!("not valid JSON: {e}")))?;
    let Some(obj) = v.as_object_mut() else {
        return Err(error_at(
            file,
            "",
            format!("a {what} file is a JSON object"),
        ));
    };
    match obj.get("version") {
        None => {
            return Err(error_at(
                file,
                "version",
                format!(
                    "missing field `version` (this tool reads {what} version {FORMAT_VERSION})"
                ),
            ))
        }
        Some(x) if x.as_u64() != Some(FORMAT_VERSION as u64) => {
            return Err(error_at(
                file,
                "version",
                format!(
                    "unsupported {what} version {x} (this tool reads version {FORMAT_VERSION})"
                ),
            ))
        }
        Some(_) => {}
    }
    // Convenience: the hub's addresses may be "0x..." strings.
    if let Some(hub) = obj
        .get_mut("config")
        .and_then(|c| c.get_mut("hub"))
        .and_then(|h| h.as_object_mut())
    {
        for k in ["mbase", "al_base", "data_base"] {
            if let Some(x) = hub.get_mut(k) {
                if let Some(n) = x.as_str().and_then(|s| pktspec::parse_uint(s).ok()) {
                    *x = serde_json::Value::from(n);
                }
            }
        }
    }
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        error_at(file, &path, e.into_inner().to_string())
    })
}

// ---------------------------------------------------------------------------------------------
// Scenario format
// ---------------------------------------------------------------------------------------------

/// A scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Format version, 1.
    pub version: u32,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Switch and hub configuration ([`Config`]'s serde form, including the static group
    /// table and the hub's AL/TLB parameters).
    pub config: Config,
    /// Initial state of the hubs.
    #[serde(default)]
    pub initial: Initial,
    /// Packets per ingress port, in order.
    pub stimulus: Vec<PortStimulus>,
}

/// Initial state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Initial {
    /// Per hub.
    #[serde(default)]
    pub hubs: Vec<HubInit>,
}

/// Initial state of one hub: memory contents first, then AL entries, then counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HubInit {
    /// Hub (port) number.
    pub port: usize,
    /// Memory contents.
    #[serde(default)]
    pub memory: Vec<MemInit>,
    /// Valid AL entries written into the AL table.
    #[serde(default)]
    pub al: Vec<AlInit>,
    /// AL allocation counter per local expert (default all 0, as after reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Vec<u32>>,
}

/// One valid AL entry: expert (global ID, on this hub's port), algebraic index (given as
/// `aidx` or as the multimem address `maddr` it covers) and layout index.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlInit {
    /// Global expert ID.
    pub expert: u16,
    /// Algebraic index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aidx: Option<u32>,
    /// Or a multimem address in the row block: `aidx = (maddr - mbase) >> log2_bsize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maddr: Option<Addr>,
    /// Layout index (slot) the entry maps to.
    pub lidx: u32,
}

/// A block of memory contents at `addr`, or in an expert's data slot (`slot`); the bytes as
/// `hex` (address order) or as `values` of a `dtype`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemInit {
    /// Byte address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<Addr>,
    /// Or a data slot: `DataBase + ((local << log2_slots) + lidx) << log2_bsize + offset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<SlotRef>,
    /// Bytes, hex in address order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
    /// Element type of `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<DType>,
    /// Lane values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<LaneValue>>,
}

/// An expert's data slot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlotRef {
    /// Global expert ID (on this hub's port).
    pub expert: u16,
    /// Layout index.
    pub lidx: u32,
    /// Byte offset in the row block.
    #[serde(default)]
    pub offset: u64,
}

/// The packets one SM sends, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortStimulus {
    /// Ingress port.
    pub port: usize,
    /// Packets in order.
    pub packets: Vec<StimPacket>,
}

/// One packet of the stimulus: raw `flits` (any frame, malformed ones included) or a
/// structured `packet` (encoded with the codec). Both may be given if they agree.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StimPacket {
    /// Hex flits, 32 digits each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flits: Option<Vec<String>>,
    /// Readable packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<PacketSpec>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One memory block of the initial state, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemBlock {
    /// Hub.
    pub hub: usize,
    /// Byte address.
    pub addr: u64,
    /// Bytes.
    pub bytes: Vec<u8>,
}

/// A checked scenario: configuration, resolved initial state and frames per port.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The scenario as read.
    pub scenario: Scenario,
    /// The file it came from (for messages).
    pub source: String,
    /// Memory blocks, AL entries included, in application order.
    pub memory: Vec<MemBlock>,
    /// Per hub, the initial allocation counters.
    pub counters: Vec<Vec<u32>>,
    /// Per ingress port, the frames in order.
    pub frames: Vec<Vec<Vec<Flit>>>,
}

impl Scenario {
    /// Reads and checks a scenario file.
    pub fn load(path: &Path) -> Result<Prepared, GoldenError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|err| GoldenError::Io {
            file: file.clone(),
            err,
        })?;
        Self::from_json(&file, &text)
    }

    /// Parses and checks a scenario's text (`file` names it in errors).
    pub fn from_json(file: &str, text: &str) -> Result<Prepared, GoldenError> {
        Self::parse(file, text)?.prepare(file)
    }

    /// Parses a scenario's text without the semantic checks of [`Scenario::prepare`].
    pub fn parse(file: &str, text: &str) -> Result<Scenario, GoldenError> {
        parse_versioned(file, text, "scenario")
    }

    /// Checks the scenario and resolves its initial state and frames.
    pub fn prepare(self, file: &str) -> Result<Prepared, GoldenError> {
        let cfg = &self.config;
        cfg.validate()
            .map_err(|e| error_at(file, "config", e.to_string()))?;
        let n = cfg.num_ports;
        let h = &cfg.hub;
        let epp = cfg.experts_per_port;
        let mut memory = Vec::new();
        let mut counters = vec![vec![0u32; epp]; n];
        let mut seen = BTreeSet::new();
        for (i, hi) in self.initial.hubs.iter().enumerate() {
            let at = |p: &str| format!("initial.hubs[{i}]{p}");
            if hi.port >= n {
                return Err(error_at(
                    file,
                    &at(".port"),
                    format!("port {} >= num_ports {n}", hi.port),
                ));
            }
            if !seen.insert(hi.port) {
                return Err(error_at(
                    file,
                    &at(".port"),
                    format!("hub {} is listed twice", hi.port),
                ));
            }
            let local = |e: u16, p: &str| -> Result<u32, GoldenError> {
                let e = e as usize;
                if e >= cfg.experts() || e / epp != hi.port {
                    return Err(error_at(
                        file,
                        &at(p),
                        format!(
                            "expert {e} is not on port {} (experts {}..{} are)",
                            hi.port,
                            hi.port * epp,
                            (hi.port + 1) * epp
                        ),
                    ));
                }
                Ok((e % epp) as u32)
            };
            for (j, m) in hi.memory.iter().enumerate() {
                let p = format!(".memory[{j}]");
                let addr = match (&m.addr, &m.slot) {
                    (Some(a), None) => a.0,
                    (None, Some(s)) => {
                        let l = local(s.expert, &format!("{p}.slot.expert"))?;
                        if (s.lidx as u64) >> h.log2_slots != 0 {
                            return Err(error_at(
                                file,
                                &at(&format!("{p}.slot.lidx")),
                                format!("lidx {} >= 2^log2_slots", s.lidx),
                            ));
                        }
                        // Fits: the configuration keeps every data slot below 2^48.
                        let slot = ((l as u64) << h.log2_slots) + s.lidx as u64;
                        let base = h.data_base + (slot << h.log2_bsize);
                        base.checked_add(s.offset).ok_or_else(|| {
                            error_at(
                                file,
                                &at(&format!("{p}.slot.offset")),
                                format!("offset {:#x} runs past 2^64", s.offset),
                            )
                        })?
                    }
                    _ => {
                        return Err(error_at(
                            file,
                            &at(&p),
                            "give exactly one of `addr` and `slot`",
                        ))
                    }
                };
                let bytes = match (&m.hex, &m.values) {
                    (Some(x), None) => {
                        if m.dtype.is_some() {
                            return Err(error_at(
                                file,
                                &at(&format!("{p}.dtype")),
                                "`dtype` goes with `values`, not `hex`",
                            ));
                        }
                        parse_hex_bytes(x)
                            .map_err(|e| error_at(file, &at(&format!("{p}.hex")), e))?
                    }
                    (None, Some(v)) => {
                        let dt = m
                            .dtype
                            .ok_or_else(|| error_at(file, &at(&p), "`values` needs a `dtype`"))?;
                        lanes_to_bytes(dt, v)
                            .map_err(|e| error_at(file, &at(&format!("{p}.values")), e))?
                    }
                    _ => {
                        return Err(error_at(
                            file,
                            &at(&p),
                            "give exactly one of `hex` and `values`",
                        ))
                    }
                };
                if addr
                    .checked_add(bytes.len() as u64)
                    .is_none_or(|end| end > 1 << 48)
                {
                    return Err(error_at(
                        file,
                        &at(&p),
                        format!("block at {addr:#x} runs past the 48-bit address space"),
                    ));
                }
                memory.push(MemBlock {
                    hub: hi.port,
                    addr,
                    bytes,
                });
            }
            for (j, a) in hi.al.iter().enumerate() {
                let p = format!(".al[{j}]");
                let l = local(a.expert, &format!("{p}.expert"))?;
                let aidx = match (a.aidx, a.maddr) {
                    (Some(x), None) => x as u64,
                    (None, Some(m)) => {
                        if m.0 < h.mbase {
                            return Err(error_at(
                                file,
                                &at(&format!("{p}.maddr")),
                                format!("maddr {:#x} is below mbase {:#x}", m.0, h.mbase),
                            ));
                        }
                        (m.0 - h.mbase) >> h.log2_bsize
                    }
                    _ => {
                        return Err(error_at(
                            file,
                            &at(&p),
                            "give exactly one of `aidx` and `maddr`",
                        ))
                    }
                };
                if aidx >> h.log2_al_entries != 0 {
                    return Err(error_at(
                        file,
                        &at(&p),
                        format!("aidx {aidx} >= 2^log2_al_entries"),
                    ));
                }
                if a.lidx >> 31 != 0 {
                    return Err(error_at(
                        file,
                        &at(&format!("{p}.lidx")),
                        "lidx must fit 31 bits",
                    ));
                }
                let ea = h.al_base + 4 * (((l as u64) << h.log2_al_entries) + aidx);
                memory.push(MemBlock {
                    hub: hi.port,
                    addr: ea,
                    bytes: (a.lidx | 0x8000_0000).to_le_bytes().to_vec(),
                });
            }
            if let Some(c) = &hi.counters {
                if c.len() != epp {
                    return Err(error_at(
                        file,
                        &at(".counters"),
                        format!(
                            "{} counters given, there are {epp} experts per port",
                            c.len()
                        ),
                    ));
                }
                counters[hi.port] = c.clone();
            }
        }
        let mut frames = vec![Vec::new(); n];
        let mut seen = BTreeSet::new();
        for (i, ps) in self.stimulus.iter().enumerate() {
            if ps.port >= n {
                return Err(error_at(
                    file,
                    &format!("stimulus[{i}].port"),
                    format!("port {} >= num_ports {n}", ps.port),
                ));
            }
            if !seen.insert(ps.port) {
                return Err(error_at(
                    file,
                    &format!("stimulus[{i}].port"),
                    format!(
                        "port {} is listed twice; put all its packets in one list",
                        ps.port
                    ),
                ));
            }
            for (j, sp) in ps.packets.iter().enumerate() {
                let at = format!("stimulus[{i}].packets[{j}]");
                frames[ps.port]
                    .push(stim_frame(sp).map_err(|(p, m)| error_at(file, &format!("{at}{p}"), m))?);
            }
        }
        Ok(Prepared {
            scenario: self,
            source: file.to_string(),
            memory,
            counters,
            frames,
        })
    }
}

fn stim_frame(sp: &StimPacket) -> Result<Vec<Flit>, (String, String)> {
    let from_flits = match &sp.flits {
        Some(f) => {
            let v = parse_flits(f).map_err(|e| (".flits".to_string(), e))?;
            if v.is_empty() {
                return Err((".flits".into(), "a frame has at least one flit".into()));
            }
            Some(v)
        }
        None => None,
    };
    let from_packet = match &sp.packet {
        Some(p) => Some(
            p.to_packet()
                .map_err(|e| (".packet".to_string(), e))?
                .encode(),
        ),
        None => None,
    };
    match (from_flits, from_packet) {
        (Some(a), Some(b)) => {
            if a != b {
                return Err((
                    String::new(),
                    format!(
                        "`flits` and `packet` disagree: the packet encodes to {:?}",
                        flits_hex(&b)
                    ),
                ));
            }
            Ok(a)
        }
        (Some(a), None) | (None, Some(a)) => Ok(a),
        (None, None) => Err((String::new(), "give `flits` or `packet`".into())),
    }
}

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

impl Prepared {
    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.scenario.config
    }

    /// Injection order: (port, index) — packet *i* of port 0, then of port 1, ..., then
    /// packet *i + 1* of port 0, ...; ports that have run out are skipped.
    pub fn order(&self) -> Vec<(usize, usize)> {
        let most = self.frames.iter().map(|f| f.len()).max().unwrap_or(0);
        let mut v = Vec::new();
        for i in 0..most {
            for (p, f) in self.frames.iter().enumerate() {
                if i < f.len() {
                    v.push((p, i));
                }
            }
        }
        v
    }

    /// A fabric in the initial state, logs on.
    pub fn fabric(&self) -> Fabric {
        let mut f = Fabric::new(self.config()).expect("configuration validated at load");
        for b in &self.memory {
            f.hubs[b.hub].mem.write(b.addr, &b.bytes);
        }
        for (h, c) in f.hubs.iter_mut().zip(&self.counters) {
            h.counters = c.clone();
        }
        f.enable_logs();
        f
    }

    /// Runs the stimulus through the golden model and returns the expected result.
    pub fn run(&self) -> GoldenResult {
        let mut f = self.fabric();
        for (p, i) in self.order() {
            f.inject_frame(p, &self.frames[p][i]);
        }
        let cfg = self.config();
        let limits = cfg.limits();
        let egress = f
            .egress
            .as_ref()
            .expect("logs on")
            .iter()
            .enumerate()
            .map(|(port, pkts)| PortEgress {
                port,
                packets: pkts
                    .iter()
                    .map(|p| EgressEntry::from_frame(&p.encode(), &limits))
                    .collect(),
            })
            .collect();
        let mem_writes = f
            .hubs
            .iter()
            .map(|h| HubWrites {
                hub: h.port,
                writes: h
                    .log
                    .as_ref()
                    .expect("logs on")
                    .iter()
                    .filter_map(|a| match a {
                        MemAccess::Write { addr, data, strobe } => {
                            Some(MemWrite::new(*addr, *data, *strobe))
                        }
                        MemAccess::Read { .. } => None,
                    })
                    .collect(),
            })
            .collect();
        let errors = f
            .error_counters()
            .iter()
            .enumerate()
            .map(|(p, c)| PortErrors::new(p, c))
            .collect();
        GoldenResult {
            version: FORMAT_VERSION,
            kind: ResultKind::Expected,
            source: Some(self.source.clone()),
            config: Some(cfg.clone()),
            egress,
            mem_writes: Some(mem_writes),
            error_counters: Some(errors),
            digest: Some(state_digest(&f)),
            warnings: Vec::new(),
        }
    }

    /// Writes the stimulus and initial memory in plain-text forms a testbench can read
    /// (docs/golden.md, "Driving your design"): `stimulus.txt`, `port<P>.memh`,
    /// `hub<P>_init.txt`.
    pub fn write_stimulus_dir(&self, dir: &Path) -> Result<Vec<String>, GoldenError> {
        let io = |file: &Path, err| GoldenError::Io {
            file: file.display().to_string(),
            err,
        };
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let mut written = Vec::new();
        let mut put = |name: String, text: String| -> Result<(), GoldenError> {
            let p = dir.join(&name);
            std::fs::write(&p, text).map_err(|e| io(&p, e))?;
            written.push(name);
            Ok(())
        };
        let mut all = String::from(
            "# dysharp golden stimulus: one frame per line in injection order: PORT FLIT0 FLIT1 ...\n",
        );
        for (p, i) in self.order() {
            let _ = write!(all, "{p}");
            for fl in &self.frames[p][i] {
                let _ = write!(all, " {}", hex128(*fl));
            }
            all.push('\n');
        }
        put("stimulus.txt".into(), all)?;
        for (p, frames) in self.frames.iter().enumerate() {
            if frames.is_empty() {
                continue;
            }
            let mut s = String::new();
            for fr in frames {
                for (k, fl) in fr.iter().enumerate() {
                    let last = (k + 1 == fr.len()) as u8;
                    let _ = writeln!(s, "{last}{}", hex128(*fl));
                }
            }
            put(format!("port{p}.memh"), s)?;
        }
        let f = self.fabric();
        for h in &f.hubs {
            let lines = nonzero_lines(&h.mem);
            if lines.is_empty() {
                continue;
            }
            let mut s = String::from(
                "# ADDR (48-bit, hex) LINE (16 bytes, 32 hex digits, byte 15 first)\n",
            );
            for (a, l) in lines {
                let _ = writeln!(s, "{a:012x} {}", hex128(l));
            }
            put(format!("hub{}_init.txt", h.port), s)?;
        }
        Ok(written)
    }
}

/// The 16-byte lines of a memory with a non-zero byte, in address order, as (address,
/// little-endian value).
pub fn nonzero_lines(m: &crate::memory::SparseMemory) -> Vec<(u64, u128)> {
    let mut out = Vec::new();
    for (base, bytes) in m.pages() {
        for (i, c) in bytes.chunks_exact(16).enumerate() {
            let v = u128::from_le_bytes(c.try_into().expect("16 bytes"));
            if v != 0 {
                out.push((base + 16 * i as u64, v));
            }
        }
    }
    out
}

/// What the digest covers (docs/golden.md, "Digest").
pub const DIGEST_COVERS: &str =
    "sha256 of: 'dysharp-state-v1\\n', then per hub 'hub P\\n', 'counters C0,C1,...\\n' and one 'ADDR LINE\\n' per non-zero 16-byte line in address order (ADDR 12 hex digits, LINE 32 hex digits most significant first)";

/// The canonical text the digest is computed over.
pub fn state_text(f: &Fabric) -> String {
    let mut s = String::from("dysharp-state-v1\n");
    for h in &f.hubs {
        let _ = writeln!(s, "hub {}", h.port);
        let c: Vec<String> = h.counters.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(s, "counters {}", c.join(","));
        for (a, l) in nonzero_lines(&h.mem) {
            let _ = writeln!(s, "{a:012x} {}", hex128(l));
        }
    }
    s
}

/// SHA-256 digest of the final state: hub memories and AL allocation counters.
pub fn state_digest(f: &Fabric) -> Digest {
    let h = Sha256::digest(state_text(f).as_bytes());
    Digest {
        algorithm: "sha256".into(),
        value: h.iter().map(|b| format!("{b:02x}")).collect(),
        covers: Some(DIGEST_COVERS.into()),
    }
}

/// Pretty JSON that keeps short arrays and objects of scalars on one line (flit lists, lane
/// values and memory writes stay readable). Field order is the structs' order.
pub fn pretty_json<T: Serialize>(v: &T) -> String {
    let text = serde_json::to_string_pretty(v).expect("serializable");
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let opens = |l: &str| l.ends_with('[') || l.ends_with('{');
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if opens(l) {
            let ind = indent(l);
            let close = if l.ends_with('[') { ']' } else { '}' };
            let j = (i + 1..lines.len())
                .find(|&j| indent(lines[j]) == ind && lines[j].trim_start().starts_with(close));
            if let Some(j) = j {
                let inner = &lines[i + 1..j];
                if !inner.iter().any(|x| opens(x)) {
                    let body: Vec<&str> = inner.iter().map(|x| x.trim()).collect();
                    let joined = if close == ']' {
                        format!("{}{}{}", l, body.join(" "), lines[j].trim_start())
                    } else {
                        format!("{} {} {}", l, body.join(" "), lines[j].trim_start())
                    };
                    if joined.len() - ind <= INLINE_MAX {
                        out.push_str(&joined);
                        out.push('\n');
                        i = j + 1;
                        continue;
                    }
                }
            }
        }
        out.push_str(l);
        out.push('\n');
        i += 1;
    }
    out
}

const INLINE_MAX: usize = 110;
