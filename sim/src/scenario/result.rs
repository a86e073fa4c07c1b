//! The expected/observed result file (docs/golden.md, "Result files"): what `golden run`
//! writes from the golden model and `golden from-vcd` writes from a waveform, and what
//! `golden diff` compares.

use super::pktspec::{flits_hex, hex128, parse_flits, parse_hex128, Addr, PacketSpec};
use super::{error_at, GoldenError};
use crate::config::Config;
use crate::packet::{decode, ErrorCode, Flit, Limits, Origin, Packet, PacketError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a result file came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultKind {
    /// The golden model (`golden run`).
    Expected,
    /// A design under test (`golden from-vcd`, or written by the user's own bench).
    Observed,
}

/// A result file. Sections that are absent (`null`) are not compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoldenResult {
    /// Format version, 1.
    pub version: u32,
    /// `"expected"` or `"observed"`.
    pub kind: ResultKind,
    /// The scenario or waveform it was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The switch configuration (decoding limits); written by `golden run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Config>,
    /// Per egress port, the packets that left the switch on that port's downlink, in order.
    pub egress: Vec<PortEgress>,
    /// Per hub, the memory writes in order.
    #[serde(default)]
    pub mem_writes: Option<Vec<HubWrites>>,
    /// Per port, the error counters (only non-zero codes listed).
    #[serde(default)]
    pub error_counters: Option<Vec<PortErrors>>,
    /// Digest of the final state.
    #[serde(default)]
    pub digest: Option<Digest>,
    /// Remarks of the producer (for example x/z bits read from a waveform).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The packets that left one egress port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortEgress {
    /// Port number.
    pub port: usize,
    /// Packets in the order they left.
    pub packets: Vec<EgressEntry>,
}

/// One packet on an egress port. `flits` is authoritative; `packet` is its readable decode
/// (used only when `flits` is absent).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EgressEntry {
    /// The frame, 32 hex digits per flit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flits: Option<Vec<String>>,
    /// Readable decode (egress decoding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<PacketSpec>,
    /// Why the frame does not decode, if it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stream it was seen on (from-vcd: the mapping's stream name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Waveform time of the frame's last flit (from-vcd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<u64>,
    /// Bits read as x or z (from-vcd): one 32-hex-digit mask per flit, present only when a
    /// bit is set. Such bits read as 0 in `flits`; `diff` counts them as mismatches unless
    /// told `--x-as-zero`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xz: Option<Vec<String>>,
}

impl EgressEntry {
    /// An entry for a frame, decoded for egress with `limits`.
    pub fn from_frame(frame: &[Flit], limits: &Limits) -> Self {
        let (packet, error) = match decode(frame, Origin::Egress, limits) {
            Ok(p) => (Some(PacketSpec::from_packet(&p)), None),
            Err(e) => (None, Some(e.to_string())),
        };
        EgressEntry {
            flits: Some(flits_hex(frame)),
            packet,
            error,
            stream: None,
            time: None,
            xz: None,
        }
    }

    /// Checks that the readable fields agree with `flits` (decoded with `limits`): `packet`
    /// must be the frame's decode and `error` present exactly when it does not decode, so an
    /// edited `packet` or `values` cannot go unnoticed; `xz` must have a mask per flit.
    pub fn check(&self, limits: &Limits) -> Result<(), String> {
        let frame = self.frame()?;
        let Some(flits) = &self.flits else {
            return Ok(());
        };
        match (decode(&frame, Origin::Egress, limits), &self.packet) {
            (Ok(d), Some(p)) => {
                let given = p.to_packet().map_err(|e| format!("packet: {e}"))?;
                if given != d {
                    return Err(format!(
                        "`packet` and `flits` disagree: the flits decode to {}; edit `flits` (the authoritative field) or drop `packet`",
                        serde_json::to_string(&PacketSpec::from_packet(&d)).unwrap_or_default()
                    ));
                }
            }
            (Err(e), Some(_)) => {
                return Err(format!("`packet` is given but `flits` do not decode ({e})"))
            }
            (Ok(_), None) | (Err(_), None) => {}
        }
        if let (Ok(_), Some(e)) = (decode(&frame, Origin::Egress, limits), &self.error) {
            if !e.starts_with("incomplete frame") {
                return Err(format!(
                    "`error` says `{e}` but `flits` decode; drop `error`"
                ));
            }
        }
        if let Some(x) = &self.xz {
            if x.len() != flits.len() {
                return Err(format!(
                    "`xz` has {} masks for {} flits",
                    x.len(),
                    flits.len()
                ));
            }
            parse_flits(x).map_err(|e| format!("xz: {e}"))?;
        }
        Ok(())
    }

    /// Per flit, the bits read as x/z (empty when none).
    pub fn xz_masks(&self) -> Vec<u128> {
        let masks = self
            .xz
            .as_deref()
            .map(|x| parse_flits(x).unwrap_or_default())
            .unwrap_or_default();
        if masks.iter().all(|m| *m == 0) {
            Vec::new()
        } else {
            masks
        }
    }

    /// The entry's frame: its flits, or its packet encoded.
    pub fn frame(&self) -> Result<Vec<Flit>, String> {
        match (&self.flits, &self.packet) {
            (Some(f), _) => {
                let v = parse_flits(f)?;
                if v.is_empty() {
                    return Err("`flits` is empty".into());
                }
                Ok(v)
            }
            (None, Some(p)) => Ok(p.to_packet().map_err(|e| format!("packet: {e}"))?.encode()),
            (None, None) => Err("an egress entry needs `flits` or `packet`".into()),
        }
    }
}

/// The memory writes of one hub.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HubWrites {
    /// Hub (port) number.
    pub hub: usize,
    /// Writes in order.
    pub writes: Vec<MemWrite>,
}

/// One 16-byte line write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemWrite {
    /// Line address (16-byte aligned).
    pub addr: Addr,
    /// Line data, 32 hex digits most significant first (byte i = bits 8i+7:8i).
    pub data: String,
    /// Byte strobes, 4 hex digits (bit i enables byte i).
    pub strobe: String,
    /// Waveform time (from-vcd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<u64>,
    /// Data bits read as x or z (from-vcd), 32 hex digits; all ones when the address,
    /// strobes or line count had x/z bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xz: Option<String>,
}

impl MemWrite {
    /// A write record.
    pub fn new(addr: u64, data: u128, strobe: u16) -> Self {
        MemWrite {
            addr: Addr(addr),
            data: hex128(data),
            strobe: format!("{strobe:04x}"),
            time: None,
            xz: None,
        }
    }

    /// The x/z mask (0 when none).
    pub fn xz_mask(&self) -> Result<u128, String> {
        self.xz
            .as_deref()
            .map_or(Ok(0), |x| parse_hex128(x).map_err(|e| format!("xz: {e}")))
    }

    /// (address, data, strobe).
    pub fn parse(&self) -> Result<(u64, u128, u16), String> {
        let data = parse_hex128(&self.data).map_err(|e| format!("data: {e}"))?;
        let s = self.strobe.trim();
        let s = s.strip_prefix("0x").unwrap_or(s);
        let bad = || format!("strobe `{}` is not 1 to 4 hex digits", self.strobe);
        let digits = super::pktspec::hex_digits(s).map_err(|_| bad())?;
        if digits.is_empty() || digits.len() > 4 {
            return Err(bad());
        }
        let strobe = digits.iter().fold(0u16, |v, d| (v << 4) | u16::from(*d));
        Ok((self.addr.0, data, strobe))
    }
}

/// The error counters of one port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortErrors {
    /// Port number.
    pub port: usize,
    /// Count per error-code name (`"ERR_FRAME"`); codes not listed are 0.
    pub counts: BTreeMap<String, u64>,
    /// Counters read with x or z bits (from-vcd), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub xz: Vec<String>,
}

impl PortErrors {
    /// The record of a counter array indexed `code - 1`.
    pub fn new(port: usize, c: &[u64; ErrorCode::COUNT]) -> Self {
        PortErrors {
            port,
            counts: ErrorCode::ALL
                .iter()
                .zip(c)
                .filter(|(_, n)| **n != 0)
                .map(|(code, n)| (code.name().to_string(), *n))
                .collect(),
            xz: Vec::new(),
        }
    }

    /// Indices (`code - 1`) of the counters read with x/z bits.
    pub fn xz_codes(&self) -> Result<Vec<usize>, String> {
        self.xz
            .iter()
            .map(|k| {
                super::pktspec::error_code_by_name(k)
                    .map(|c| c as usize - 1)
                    .ok_or_else(|| format!("xz: unknown error code name `{k}`"))
            })
            .collect()
    }

    /// The counter array, indexed `code - 1`.
    pub fn array(&self) -> Result<[u64; ErrorCode::COUNT], String> {
        let mut a = [0u64; ErrorCode::COUNT];
        for (k, v) in &self.counts {
            let c = super::pktspec::error_code_by_name(k)
                .ok_or_else(|| format!("unknown error code name `{k}`"))?;
            a[c as usize - 1] = *v;
        }
        Ok(a)
    }
}

/// A digest of the final state (docs/golden.md, "Digest").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Digest {
    /// `"sha256"`.
    pub algorithm: String,
    /// Lower-case hex.
    pub value: String,
    /// What the digest covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covers: Option<String>,
}

/// A parsed egress entry: its frame and decode.
#[derive(Clone, Debug)]
pub struct Frame {
    /// The flits.
    pub flits: Vec<Flit>,
    /// Egress decode.
    pub decoded: Result<Packet, PacketError>,
    /// Stream name, if known.
    pub stream: Option<String>,
    /// Waveform time, if known.
    pub time: Option<u64>,
    /// Per flit, the bits read as x/z (empty when none).
    pub xz: Vec<u128>,
}

impl GoldenResult {
    /// Reads a result file (JSON) and checks its version and fields.
    pub fn load(path: &std::path::Path) -> Result<Self, GoldenError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|err| GoldenError::Io {
            file: file.clone(),
            err,
        })?;
        Self::from_json(&file, &text)
    }

    /// Parses a result file's text (`file` names it in errors).
    pub fn from_json(file: &str, text: &str) -> Result<Self, GoldenError> {
        let r: GoldenResult = super::parse_versioned(file, text, "result")?;
        r.check(file)?;
        Ok(r)
    }

    fn check(&self, file: &str) -> Result<(), GoldenError> {
        if let Some(c) = &self.config {
            c.validate()
                .map_err(|e| error_at(file, "config", e.to_string()))?;
        }
        let limits = self.limits();
        let ports = self.config.as_ref().map_or(MAX_PORTS, |c| c.num_ports);
        let port_ok = |what: &str, p: usize, path: String| {
            if p >= ports {
                Err(error_at(
                    file,
                    &path,
                    format!("{what} {p} >= the number of ports {ports}"),
                ))
            } else {
                Ok(())
            }
        };
        for (i, pe) in self.egress.iter().enumerate() {
            port_ok("port", pe.port, format!("egress[{i}].port"))?;
            for (j, e) in pe.packets.iter().enumerate() {
                e.check(&limits)
                    .map_err(|m| error_at(file, &format!("egress[{i}].packets[{j}]"), m))?;
            }
        }
        if let Some(m) = &self.mem_writes {
            for (i, h) in m.iter().enumerate() {
                port_ok("hub", h.hub, format!("mem_writes[{i}].hub"))?;
                for (j, w) in h.writes.iter().enumerate() {
                    let at = format!("mem_writes[{i}].writes[{j}]");
                    w.parse().map_err(|e| error_at(file, &at, e))?;
                    w.xz_mask().map_err(|e| error_at(file, &at, e))?;
                }
            }
        }
        if let Some(m) = &self.error_counters {
            for (i, p) in m.iter().enumerate() {
                port_ok("port", p.port, format!("error_counters[{i}].port"))?;
                p.array()
                    .map_err(|e| error_at(file, &format!("error_counters[{i}].counts"), e))?;
                p.xz_codes()
                    .map_err(|e| error_at(file, &format!("error_counters[{i}].xz"), e))?;
            }
        }
        Ok(())
    }

    /// Checks that `self` (the expected file `file`) and `observed` (`observed_file`) can be
    /// compared: the expected file is of kind `expected` (an observed file in its place means
    /// swapped arguments), and if both give a configuration they give the same one.
    pub fn check_pair(
        &self,
        file: &str,
        observed: &GoldenResult,
        observed_file: &str,
    ) -> Result<(), GoldenError> {
        if self.kind != ResultKind::Expected {
            return Err(error_at(
                file,
                "kind",
                "the first file of `diff` must be an expected result (kind \"expected\", from `golden run`); are the arguments swapped?",
            ));
        }
        if let (Some(a), Some(b)) = (&self.config, &observed.config) {
            if a != b {
                return Err(error_at(
                    observed_file,
                    "config",
                    format!("the configuration differs from the one of {file}; both files must describe the same switch"),
                ));
            }
        }
        Ok(())
    }

    /// Decoding limits: the file's configuration, or the widest legal ones.
    pub fn limits(&self) -> Limits {
        self.config
            .as_ref()
            .map(|c| c.limits())
            .unwrap_or_else(permissive_limits)
    }

    /// Per port, the parsed frames (decoded with `limits`).
    pub fn frames(&self, limits: &Limits) -> BTreeMap<usize, Vec<Frame>> {
        let mut out: BTreeMap<usize, Vec<Frame>> = BTreeMap::new();
        for pe in &self.egress {
            let v = out.entry(pe.port).or_default();
            for e in &pe.packets {
                // Checked at load time.
                let flits = e.frame().unwrap_or_default();
                v.push(Frame {
                    decoded: decode(&flits, Origin::Egress, limits),
                    flits,
                    stream: e.stream.clone(),
                    time: e.time,
                    xz: e.xz_masks(),
                });
            }
        }
        out
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        super::pretty_json(self)
    }
}

/// Most ports a switch has (the 5-bit `src_port` field).
pub const MAX_PORTS: usize = 32;

/// The widest limits a header can express: 32 ports, every expert ID, every target count,
/// every group non-empty. Used to decode frames when no configuration is known.
pub fn permissive_limits() -> Limits {
    Limits {
        num_ports: 32,
        experts_per_port: 2048,
        max_targets: 0x7FFF,
        groups: vec![u32::MAX; 256],
        dynamic_ops: true,
    }
}
