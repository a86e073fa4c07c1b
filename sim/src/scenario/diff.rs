//! Comparison of an expected and an observed result (docs/golden.md, "What is compared").
//!
//! Egress packets are compared per egress port and, within a port, per *flow*, in order:
//!
//! * requests (opcodes 0x1–0x6): one flow per `src_port`;
//! * `RSP_REDUCE` and `RSP_ERROR`: one flow per (opcode, `src_port`, `tag`), because
//!   load-reduces of different requests may complete in any order;
//! * other responses (`RSP_READ`, and anything else): one flow per `src_port`.
//!
//! The interleaving of different flows on one port, and of different ports, is not compared.
//! The flow of a frame comes from its flit0 bits, so undecodable frames have one too.
//! Memory writes are compared per hub in order (unstrobed data bytes are don't-care), error
//! counters per port and code, and the digests as strings; a section absent from either file
//! is not compared.

use super::align::{align, Alignment, Pair};
use super::pktspec::hex128;
use super::result::{Frame, GoldenResult};
use crate::numerics::{lane, to_f32, DType};
use crate::packet::fields::{self, TARGETS_PER_FLIT};
use crate::packet::{ErrorCode, Flit, Opcode, Packet, Stage};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// What `golden diff` compares and how much it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffOptions {
    /// Do not compare memory writes.
    pub ignore_mem: bool,
    /// Do not compare error counters.
    pub ignore_errors: bool,
    /// Do not compare the digest.
    pub ignore_digest: bool,
    /// Divergences to report in full (at least 1; the counts cover all of them).
    pub max_diffs: usize,
    /// Compare x/z bits of an observed file as the 0 they were read as (default: any x/z bit
    /// on a compared bit is a mismatch).
    pub x_as_zero: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            ignore_mem: false,
            ignore_errors: false,
            ignore_digest: false,
            max_diffs: 1,
            x_as_zero: false,
        }
    }
}

/// One divergence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// `"egress"`, `"mem_writes"`, `"error_counters"` or `"digest"`.
    pub section: String,
    /// `"differs"`, `"missing"` (expected, not observed) or `"extra"` (observed, not expected).
    pub kind: String,
    /// Egress port or hub.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<usize>,
    /// The flow (egress) compared in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// Index of the packet within its flow (egress), or of the write within the hub's writes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// Position among all expected packets of the port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_position: Option<usize>,
    /// Position among all observed packets of the port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_position: Option<usize>,
    /// One-line summary of the expected item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// One-line summary of the observed item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    /// What differs, field by field.
    pub details: Vec<String>,
}

impl Divergence {
    fn new(section: &str, kind: &str) -> Self {
        Divergence {
            section: section.into(),
            kind: kind.into(),
            port: None,
            flow: None,
            index: None,
            expected_position: None,
            observed_position: None,
            expected: None,
            observed: None,
            details: Vec::new(),
        }
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (place, unit) = match self.section.as_str() {
            "egress" => ("egress port", "packet"),
            "mem_writes" => ("memory writes of hub", "write"),
            "error_counters" => ("error counters of port", "counter"),
            _ => ("final-state digest", "digest"),
        };
        match self.port {
            Some(p) => write!(f, "{place} {p}: ")?,
            None => write!(f, "{place}: ")?,
        }
        let kind = match self.kind.as_str() {
            "missing" => "missing (expected, not observed)",
            "extra" => "extra (observed, not expected)",
            _ => "differs",
        };
        write!(f, "{unit} {kind}")?;
        if let Some(fl) = &self.flow {
            write!(f, "; flow: {fl}")?;
        }
        if let Some(i) = self.index {
            if self.flow.is_some() {
                write!(f, "; index {i} within the flow")?;
            } else {
                write!(f, "; index {i}")?;
            }
        }
        let pos = |p: Option<usize>| p.map_or("-".to_string(), |x| x.to_string());
        if self.expected_position.is_some() || self.observed_position.is_some() {
            write!(
                f,
                " (position on the port: expected {}, observed {})",
                pos(self.expected_position),
                pos(self.observed_position)
            )?;
        }
        writeln!(f)?;
        for d in &self.details {
            writeln!(f, "  {d}")?;
        }
        if let Some(e) = &self.expected {
            writeln!(f, "  expected: {e}")?;
        }
        if let Some(o) = &self.observed {
            writeln!(f, "  observed: {o}")?;
        }
        Ok(())
    }
}

/// Counts of divergences per section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DiffCounts {
    /// Egress packets that differ.
    pub egress_differ: usize,
    /// Expected egress packets not observed.
    pub egress_missing: usize,
    /// Observed egress packets not expected.
    pub egress_extra: usize,
    /// Egress packets compared equal.
    pub egress_equal: usize,
    /// Memory writes that differ, are missing or extra.
    pub mem_writes: usize,
    /// Error counters that differ.
    pub error_counters: usize,
    /// Whether the digests differ.
    pub digest: bool,
}

/// The result of a comparison.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DiffReport {
    /// No divergence in the compared sections.
    pub equal: bool,
    /// The first divergence (egress by port, then memory writes by hub, then error counters,
    /// then the digest).
    pub first: Option<Divergence>,
    /// The first [`DiffOptions::max_diffs`] divergences in the same order (`first` is the
    /// first of them).
    pub divergences: Vec<Divergence>,
    /// All divergences, reported in full or not.
    pub total: usize,
    /// Counts over all sections.
    pub counts: DiffCounts,
    /// Sections not compared, and why.
    pub not_compared: Vec<String>,
}

impl fmt::Display for DiffReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.counts;
        if self.equal {
            writeln!(
                f,
                "equal: {} egress packets match{}",
                c.egress_equal,
                if self.not_compared.is_empty() {
                    String::new()
                } else {
                    format!(" (not compared: {})", self.not_compared.join("; "))
                }
            )?;
            return Ok(());
        }
        for (k, d) in self.divergences.iter().enumerate() {
            if k == 0 {
                write!(f, "first divergence: {d}")?;
            } else {
                write!(f, "divergence {}: {d}", k + 1)?;
            }
        }
        if self.total > self.divergences.len() {
            writeln!(
                f,
                "{} more divergence(s) not shown (--max-diffs N shows N)",
                self.total - self.divergences.len()
            )?;
        }
        writeln!(
            f,
            "summary: egress {} equal, {} differ, {} missing, {} extra; memory writes {} divergent; error counters {} divergent; digest {}",
            c.egress_equal,
            c.egress_differ,
            c.egress_missing,
            c.egress_extra,
            c.mem_writes,
            c.error_counters,
            if c.digest { "differs" } else { "equal or not compared" }
        )?;
        if !self.not_compared.is_empty() {
            writeln!(f, "not compared: {}", self.not_compared.join("; "))?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Flows
// ---------------------------------------------------------------------------------------------

/// The ordering class of an egress packet (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flow {
    /// Requests from a source port.
    Requests(u8),
    /// `RSP_REDUCE`/`RSP_ERROR` of one (opcode, source, tag).
    Tagged(u8, u8, u16),
    /// Other responses from a source port.
    Responses(u8),
}

impl Flow {
    /// The flow of a frame, from its flit0 bits.
    pub fn of(flit0: Flit) -> Flow {
        let b = fields::to_bits(flit0);
        let op = fields::get(&b, fields::OPCODE) as u8;
        let src = fields::get(&b, fields::SRC_PORT) as u8;
        let tag = fields::get(&b, fields::TAG) as u16;
        match op {
            0x1..=0x6 => Flow::Requests(src),
            0xA | 0xB => Flow::Tagged(op, src, tag),
            _ => Flow::Responses(src),
        }
    }
}

impl fmt::Display for Flow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Flow::Requests(s) => write!(f, "requests with src_port {s}"),
            Flow::Tagged(op, s, t) => write!(
                f,
                "{} with src_port {s}, tag {t:#x}",
                Opcode::from_code(op).map_or("?", |o| o.name())
            ),
            Flow::Responses(s) => write!(f, "untagged responses with src_port {s}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Packet descriptions
// ---------------------------------------------------------------------------------------------

/// One-line description of a frame.
pub fn summary(fr: &Frame) -> String {
    let mut s = match &fr.decoded {
        Ok(p) => {
            let mut s = format!(
                "{} stage={} maddr={:#x} src_port={} tag={:#x} len={} dtype={} rop={} acc={} route={} ecode={}",
                p.opcode,
                stage_name(p.stage),
                p.maddr,
                p.src_port,
                p.tag,
                p.len,
                p.dtype,
                p.rop,
                p.acc,
                p.route,
                ErrorCode::from_code(p.ecode).map_or(p.ecode.to_string(), |c| c.name().to_string())
            );
            if !p.targets.is_empty() {
                s += &format!(" targets={:?}", p.targets);
            }
            s
        }
        Err(e) => format!("undecodable ({e})"),
    };
    s += &format!(", {} flits", fr.flits.len());
    if let Some(st) = &fr.stream {
        s += &format!(", stream {st}");
    }
    if let Some(t) = fr.time {
        s += &format!(", time {t}");
    }
    s
}

fn stage_name(s: Stage) -> &'static str {
    match s {
        Stage::Dispatch => "dispatch",
        Stage::Combine => "combine",
    }
}

fn bits_str(v: u32, width: usize) -> String {
    let s = format!("{v:0width$b}");
    // Group in nibbles for reading.
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (width - i).is_multiple_of(4) {
            out.push('_');
        }
        out.push(c);
    }
    out
}

fn lane_str(dt: DType, v: u32) -> String {
    let w = 8 * dt.bytes();
    format!(
        "{} (0x{v:0hw$x} = 0b{})",
        to_f32(dt, v),
        bits_str(v, w),
        hw = w / 4
    )
}

/// Field-by-field differences of two decoded packets; for payloads, the first differing
/// lane as numbers and bits.
pub fn packet_field_diffs(w: &Packet, g: &Packet) -> Vec<String> {
    let mut d = Vec::new();
    macro_rules! field {
        ($f:ident) => {
            if w.$f != g.$f {
                d.push(format!(
                    "{}: expected {:?}, observed {:?}",
                    stringify!($f),
                    w.$f,
                    g.$f
                ));
            }
        };
    }
    let named = |d: &mut Vec<String>, name: &str, a: String, b: String| {
        if a != b {
            d.push(format!("{name}: expected {a}, observed {b}"));
        }
    };
    named(&mut d, "opcode", w.opcode.to_string(), g.opcode.to_string());
    named(
        &mut d,
        "stage",
        stage_name(w.stage).into(),
        stage_name(g.stage).into(),
    );
    if w.maddr != g.maddr {
        d.push(format!(
            "maddr: expected {:#x}, observed {:#x} (bits differing {:#x})",
            w.maddr,
            g.maddr,
            w.maddr ^ g.maddr
        ));
    }
    if w.targets.len() != g.targets.len() {
        d.push(format!(
            "tcount: expected {}, observed {}",
            w.targets.len(),
            g.targets.len()
        ));
    }
    field!(src_port);
    if w.tag != g.tag {
        d.push(format!("tag: expected {:#x}, observed {:#x}", w.tag, g.tag));
    }
    field!(len);
    named(&mut d, "dtype", w.dtype.to_string(), g.dtype.to_string());
    named(&mut d, "rop", w.rop.to_string(), g.rop.to_string());
    named(&mut d, "acc", w.acc.to_string(), g.acc.to_string());
    field!(route);
    let ec = |c: u8| match ErrorCode::from_code(c) {
        Some(e) => e.to_string(),
        None => c.to_string(),
    };
    named(&mut d, "ecode", ec(w.ecode), ec(g.ecode));
    if w.targets != g.targets {
        if let Some(i) =
            (0..w.targets.len().min(g.targets.len())).find(|&i| w.targets[i] != g.targets[i])
        {
            d.push(format!(
                "targets[{i}] (target flit {}, lane {}): expected expert {}, observed expert {}",
                i / TARGETS_PER_FLIT,
                i % TARGETS_PER_FLIT,
                w.targets[i],
                g.targets[i]
            ));
        } else {
            d.push(format!(
                "targets: expected {:?}, observed {:?}",
                w.targets, g.targets
            ));
        }
    }
    if w.be != g.be {
        match (w.be, g.be) {
            (Some(a), Some(b)) => {
                let x = a ^ b;
                let bit = x.trailing_zeros();
                d.push(format!(
                    "be: expected {}, observed {} (first differing bit {bit}: payload bytes {} and {})",
                    hex128(a),
                    hex128(b),
                    2 * bit,
                    2 * bit + 1
                ));
            }
            _ => d.push(format!(
                "be: expected {}, observed {}",
                w.be.map_or("none".into(), hex128),
                g.be.map_or("none".into(), hex128)
            )),
        }
    }
    if w.payload != g.payload {
        d.push(payload_diff(w.dtype, &w.payload, &g.payload));
    }
    d
}

/// The first differing lane of two payloads of type `dt` (numbers and bits), and how many
/// lanes differ.
pub fn payload_diff(dt: DType, w: &[u8], g: &[u8]) -> String {
    if w.len() != g.len() {
        return format!(
            "payload: expected {} bytes, observed {} bytes",
            w.len(),
            g.len()
        );
    }
    let lanes = w.len() / dt.bytes();
    let differing: Vec<usize> = (0..lanes)
        .filter(|&i| lane(dt, w, i).ok() != lane(dt, g, i).ok())
        .collect();
    let Some(&i) = differing.first() else {
        return "payload differs".into();
    };
    let (a, b) = (lane(dt, w, i).unwrap_or(0), lane(dt, g, i).unwrap_or(0));
    let byte = i * dt.bytes();
    let bitpos = (a ^ b).trailing_zeros() as usize;
    format!(
        "payload lane {i} ({dt}; payload flit {}, bytes {}..{}): expected {}, observed {}; differing bits {:#x} (lowest: lane bit {bitpos}, payload bit {}); {} of {lanes} lanes differ",
        byte / 16,
        byte,
        byte + dt.bytes() - 1,
        lane_str(dt, a),
        lane_str(dt, b),
        a ^ b,
        8 * byte + bitpos,
        differing.len()
    )
}

/// Raw differences of two frames: flit0 fields from the bits, flit count, first differing
/// flit.
pub fn raw_frame_diffs(w: &[Flit], g: &[Flit]) -> Vec<String> {
    let mut d = Vec::new();
    if let (Some(a), Some(b)) = (w.first(), g.first()) {
        let (ba, bb) = (fields::to_bits(*a), fields::to_bits(*b));
        for f in fields::ALL {
            let (x, y) = (fields::get(&ba, *f), fields::get(&bb, *f));
            if x != y {
                d.push(format!(
                    "flit0 field {} [{}:{}]: expected {x:#x}, observed {y:#x}",
                    f.name,
                    f.msb(),
                    f.lsb
                ));
            }
        }
    }
    if w.len() != g.len() {
        d.push(format!(
            "frame length: expected {} flits, observed {}",
            w.len(),
            g.len()
        ));
    }
    if let Some(k) = (0..w.len().min(g.len())).find(|&k| w[k] != g[k]) {
        let x = w[k] ^ g[k];
        d.push(format!(
            "first differing flit {k}: expected {}, observed {} (differing bits {}; lowest bit {})",
            hex128(w[k]),
            hex128(g[k]),
            hex128(x),
            x.trailing_zeros()
        ));
    }
    d
}

/// Differences of two frames, or `None` if they are identical.
pub fn frame_diffs(w: &Frame, g: &Frame) -> Option<Vec<String>> {
    if w.flits == g.flits {
        return None;
    }
    let mut d = Vec::new();
    match (&w.decoded, &g.decoded) {
        (Ok(a), Ok(b)) => {
            d = packet_field_diffs(a, b);
            if d.is_empty() {
                d.push("the decoded packets are equal; bits the decoder ignores differ".into());
                d.extend(raw_frame_diffs(&w.flits, &g.flits));
            }
        }
        _ => {
            if let Err(e) = &w.decoded {
                d.push(format!("the expected frame does not decode: {e}"));
            }
            if let Err(e) = &g.decoded {
                d.push(format!("the observed frame does not decode: {e}"));
            }
            d.extend(raw_frame_diffs(&w.flits, &g.flits));
        }
    }
    Some(d)
}

// ---------------------------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------------------------

/// Per hub, (address, data, strobe, time, x/z mask) of each write.
type WritesByHub = BTreeMap<usize, Vec<(u64, u128, u16, Option<u64>, u128)>>;

fn strobe_mask(s: u16) -> u128 {
    (0..16).fold(0u128, |m, i| {
        if s >> i & 1 == 1 {
            m | (0xFFu128 << (8 * i))
        } else {
            m
        }
    })
}

/// The x/z bits of `fr`, described (empty when it has none).
fn xz_details(which: &str, fr: &Frame) -> Vec<String> {
    fr.xz
        .iter()
        .enumerate()
        .filter(|(_, m)| **m != 0)
        .map(|(k, m)| {
            format!(
                "{which} flit {k} has x/z bits {} (lowest bit {}; read as 0; `--x-as-zero` compares them as 0)",
                hex128(*m),
                m.trailing_zeros()
            )
        })
        .collect()
}

/// Differences of two frames under `opt`, or `None` if they compare equal: the bits, and (unless
/// `x_as_zero`) any x/z bit of either.
fn frame_diffs_xz(w: &Frame, g: &Frame, opt: &DiffOptions) -> Option<Vec<String>> {
    let mut xz = Vec::new();
    if !opt.x_as_zero {
        xz.extend(xz_details("expected", w));
        xz.extend(xz_details("observed", g));
    }
    match frame_diffs(w, g) {
        None if xz.is_empty() => None,
        None => Some(xz),
        Some(mut d) => {
            d.extend(xz);
            Some(d)
        }
    }
}

/// Collects divergences in report order: the first `max` in full, all of them counted.
struct Collector {
    max: usize,
    shown: Vec<Divergence>,
    total: usize,
}

impl Collector {
    fn note(&mut self, d: Divergence) {
        self.total += 1;
        if self.shown.len() < self.max {
            self.shown.push(d);
        }
    }
}

/// Whether the packets an alignment leaves missing are exactly (as a multiset) those it
/// leaves extra: the flow was reordered, not thinned or padded.
fn is_reordering<'a>(
    a: &Alignment,
    want: impl Fn(usize) -> &'a Vec<Flit>,
    got: impl Fn(usize) -> &'a Vec<Flit>,
) -> bool {
    let mut missing: Vec<&Vec<Flit>> = a
        .expected
        .iter()
        .enumerate()
        .filter(|(_, p)| **p == Pair::Missing)
        .map(|(i, _)| want(i))
        .collect();
    let mut extra: Vec<&Vec<Flit>> = a.extra.iter().map(|&j| got(j)).collect();
    missing.sort();
    extra.sort();
    !missing.is_empty() && missing == extra
}

/// Pairs expected item k with observed item k.
fn by_index(n: usize, m: usize, eq: impl Fn(usize, usize) -> bool) -> Alignment {
    Alignment {
        expected: (0..n)
            .map(|k| match k < m {
                true if eq(k, k) => Pair::Equal(k),
                true => Pair::Differs(k),
                false => Pair::Missing,
            })
            .collect(),
        extra: (n..m).collect(),
    }
}

/// Compares one egress port: per flow, the expected and observed packets aligned by their
/// longest common subsequence (see [`super::align`]).
fn diff_port(
    port: usize,
    want: &[Frame],
    got: &[Frame],
    opt: &DiffOptions,
    counts: &mut DiffCounts,
    out: &mut Collector,
) {
    let flow_of = |fr: &Frame| {
        fr.flits
            .first()
            .map_or(Flow::Responses(0), |f| Flow::of(*f))
    };
    let mut want_flows: BTreeMap<Flow, Vec<usize>> = BTreeMap::new();
    for (i, fr) in want.iter().enumerate() {
        want_flows.entry(flow_of(fr)).or_default().push(i);
    }
    let mut got_flows: BTreeMap<Flow, Vec<usize>> = BTreeMap::new();
    for (j, fr) in got.iter().enumerate() {
        got_flows.entry(flow_of(fr)).or_default().push(j);
    }
    // Per expected position: (flow, index in flow, pairing as an observed position).
    let mut per_want: Vec<Option<(Flow, usize, Pair)>> = vec![None; want.len()];
    // Observed packets paired with nothing: (position, flow, index in flow).
    let mut extras: Vec<(usize, Flow, usize)> = Vec::new();
    let none = Vec::new();
    let flows: BTreeSet<Flow> = want_flows.keys().chain(got_flows.keys()).copied().collect();
    for flow in flows {
        let w = want_flows.get(&flow).unwrap_or(&none);
        let g = got_flows.get(&flow).unwrap_or(&none);
        let eq = |i: usize, j: usize| frame_diffs_xz(&want[w[i]], &got[g[j]], opt).is_none();
        let mut a = align(w.len(), g.len(), eq);
        if is_reordering(&a, |i| &want[w[i]].flits, |j| &got[g[j]].flits) {
            // Everything missing was observed elsewhere in the flow: a reordering, reported
            // pairwise by index (each moved packet differs, with a hint).
            a = by_index(w.len(), g.len(), eq);
        }
        for (k, (&pos, pair)) in w.iter().zip(&a.expected).enumerate() {
            let pair = match *pair {
                Pair::Equal(j) => Pair::Equal(g[j]),
                Pair::Differs(j) => Pair::Differs(g[j]),
                Pair::Missing => Pair::Missing,
            };
            if let Some(slot) = per_want.get_mut(pos) {
                *slot = Some((flow, k, pair));
            }
        }
        extras.extend(a.extra.iter().map(|&j| (g[j], flow, j)));
    }
    extras.sort_unstable();
    for (i, fr) in want.iter().enumerate() {
        let Some(Some((flow, idx, pair))) = per_want.get(i).copied() else {
            continue;
        };
        let mut d = Divergence::new("egress", "differs");
        d.port = Some(port);
        d.flow = Some(flow.to_string());
        d.index = Some(idx);
        d.expected_position = Some(i);
        d.expected = Some(summary(fr));
        match pair {
            Pair::Equal(_) => counts.egress_equal += 1,
            Pair::Missing => {
                counts.egress_missing += 1;
                d.kind = "missing".into();
                let n = got_flows.get(&flow).map_or(0, |v| v.len());
                d.details.push(format!(
                    "the observed flow has {n} packet(s); aligned by sequence, no observed packet stands in for this one"
                ));
                // The nearest observed packet that matched nothing: often this one with a
                // corrupted src_port, tag or opcode.
                if let Some(&(j, jflow, _)) = extras.iter().min_by_key(|(j, _, _)| j.abs_diff(i)) {
                    if let Some(g) = got.get(j) {
                        d.observed_position = Some(j);
                        d.observed = Some(summary(g));
                        d.details.push(format!(
                            "nearest observed packet that matches no expected one: position {j}, flow: {jflow}; compared with it:"
                        ));
                        if let Some(x) = frame_diffs_xz(fr, g, opt) {
                            d.details.extend(x.into_iter().map(|l| format!("  {l}")));
                        }
                    }
                }
                out.note(d);
            }
            Pair::Differs(j) => {
                let Some(g) = got.get(j) else { continue };
                counts.egress_differ += 1;
                let mut details = frame_diffs_xz(fr, g, opt).unwrap_or_default();
                let same_flow = want_flows.get(&flow).unwrap_or(&none);
                if let Some((n, &k)) = same_flow
                    .iter()
                    .enumerate()
                    .find(|(_, &k)| want.get(k).is_some_and(|x| x.flits == g.flits))
                {
                    details.push(format!(
                        "hint: the observed packet equals expected packet {n} of this flow (position {k} on the port): reordered within the flow?"
                    ));
                }
                d.observed_position = Some(j);
                d.observed = Some(summary(g));
                d.details = details;
                out.note(d);
            }
        }
    }
    for (j, flow, idx) in extras {
        let Some(fr) = got.get(j) else { continue };
        counts.egress_extra += 1;
        let mut d = Divergence::new("egress", "extra");
        d.port = Some(port);
        d.flow = Some(flow.to_string());
        d.index = Some(idx);
        d.observed_position = Some(j);
        d.observed = Some(summary(fr));
        d.details.push(format!(
            "the expected flow has {} packet(s); aligned by sequence, this one stands for none of them",
            want_flows.get(&flow).map_or(0, |v| v.len())
        ));
        if !opt.x_as_zero {
            d.details.extend(xz_details("observed", fr));
        }
        out.note(d);
    }
}

/// Compares an observed result with an expected one.
pub fn diff(expected: &GoldenResult, observed: &GoldenResult, opt: DiffOptions) -> DiffReport {
    let limits = expected.limits();
    let mut counts = DiffCounts::default();
    let mut out = Collector {
        max: opt.max_diffs.max(1),
        shown: Vec::new(),
        total: 0,
    };
    let mut not_compared = Vec::new();

    // Egress.
    let ew = expected.frames(&limits);
    let eg = observed.frames(&limits);
    let ports: BTreeSet<usize> = ew.keys().chain(eg.keys()).copied().collect();
    let empty = Vec::new();
    for port in ports {
        let want = ew.get(&port).unwrap_or(&empty);
        let got = eg.get(&port).unwrap_or(&empty);
        diff_port(port, want, got, &opt, &mut counts, &mut out);
    }

    // Memory writes.
    match (&expected.mem_writes, &observed.mem_writes) {
        _ if opt.ignore_mem => not_compared.push("memory writes (--ignore mem)".into()),
        (Some(a), Some(b)) => {
            let parse = |v: &Vec<super::result::HubWrites>| -> WritesByHub {
                let mut m: BTreeMap<usize, Vec<_>> = BTreeMap::new();
                for h in v {
                    let e = m.entry(h.hub).or_default();
                    for w in &h.writes {
                        let (a, d, s) = w.parse().unwrap_or_default();
                        e.push((a, d, s, w.time, w.xz_mask().unwrap_or(u128::MAX)));
                    }
                }
                m
            };
            let (wa, wb) = (parse(a), parse(b));
            let hubs: BTreeSet<usize> = wb.keys().copied().collect();
            let skipped: Vec<usize> = wa.keys().filter(|h| !hubs.contains(h)).copied().collect();
            if !skipped.is_empty() {
                not_compared.push(format!(
                    "memory writes of hubs {skipped:?} (absent from the observed file)"
                ));
            }
            for hub in hubs {
                let empty = Vec::new();
                let x = wa.get(&hub).unwrap_or(&empty);
                let y = wb.get(&hub).unwrap_or(&empty);
                let desc = |w: &(u64, u128, u16, Option<u64>, u128)| {
                    format!(
                        "addr {:#x} data {} strobe {:04x}{}",
                        w.0,
                        hex128(w.1),
                        w.2,
                        w.3.map_or(String::new(), |t| format!(", time {t}"))
                    )
                };
                for i in 0..x.len().max(y.len()) {
                    let mut d = Divergence::new("mem_writes", "differs");
                    d.port = Some(hub);
                    d.index = Some(i);
                    match (x.get(i), y.get(i)) {
                        (Some(p), Some(q)) => {
                            let m = strobe_mask(p.2);
                            let xz = if opt.x_as_zero { 0 } else { (p.4 | q.4) & m };
                            if p.0 == q.0 && p.2 == q.2 && p.1 & m == q.1 & m && xz == 0 {
                                continue;
                            }
                            if xz != 0 {
                                d.details.push(format!(
                                    "x/z bits {} in the strobed data, address or strobes (read as 0; `--x-as-zero` compares them as 0)",
                                    hex128(xz)
                                ));
                            }
                            if p.0 != q.0 {
                                d.details.push(format!(
                                    "addr: expected {:#x}, observed {:#x}",
                                    p.0, q.0
                                ));
                            }
                            if p.2 != q.2 {
                                d.details.push(format!(
                                    "strobe: expected {:04x}, observed {:04x}",
                                    p.2, q.2
                                ));
                            }
                            let diff = (p.1 ^ q.1) & m;
                            if diff != 0 {
                                let byte = diff.trailing_zeros() / 8;
                                d.details.push(format!(
                                    "data byte {byte} (strobed): expected {:#04x}, observed {:#04x}",
                                    (p.1 >> (8 * byte)) as u8,
                                    (q.1 >> (8 * byte)) as u8
                                ));
                            }
                            d.expected = Some(desc(p));
                            d.observed = Some(desc(q));
                        }
                        (Some(p), None) => {
                            d.kind = "missing".into();
                            d.expected = Some(desc(p));
                        }
                        (None, Some(q)) => {
                            d.kind = "extra".into();
                            d.observed = Some(desc(q));
                        }
                        (None, None) => continue,
                    }
                    counts.mem_writes += 1;
                    out.note(d);
                }
            }
        }
        (None, _) => not_compared.push("memory writes (absent from the expected file)".into()),
        (_, None) => not_compared.push("memory writes (absent from the observed file)".into()),
    }

    // Error counters.
    match (&expected.error_counters, &observed.error_counters) {
        _ if opt.ignore_errors => not_compared.push("error counters (--ignore errors)".into()),
        (Some(a), Some(b)) => {
            let arr =
                |v: &Vec<super::result::PortErrors>| -> BTreeMap<usize, [u64; ErrorCode::COUNT]> {
                    v.iter()
                        .map(|p| (p.port, p.array().unwrap_or_default()))
                        .collect()
                };
            let unknown = |v: &Vec<super::result::PortErrors>| -> BTreeSet<(usize, usize)> {
                v.iter()
                    .flat_map(|p| {
                        p.xz_codes()
                            .unwrap_or_default()
                            .into_iter()
                            .map(move |k| (p.port, k))
                    })
                    .collect()
            };
            let (xa, xb) = (arr(a), arr(b));
            let xz: BTreeSet<(usize, usize)> = if opt.x_as_zero {
                BTreeSet::new()
            } else {
                unknown(a).union(&unknown(b)).copied().collect()
            };
            let ports: BTreeSet<usize> = xa.keys().chain(xb.keys()).copied().collect();
            for port in ports {
                let z = [0u64; ErrorCode::COUNT];
                let (p, q) = (xa.get(&port).unwrap_or(&z), xb.get(&port).unwrap_or(&z));
                for c in ErrorCode::ALL {
                    let k = c as usize - 1;
                    let unknown = xz.contains(&(port, k));
                    if p[k] != q[k] || unknown {
                        counts.error_counters += 1;
                        let mut d = Divergence::new("error_counters", "differs");
                        d.port = Some(port);
                        d.details.push(format!(
                            "{}: expected {}, observed {}{}",
                            c,
                            p[k],
                            q[k],
                            if unknown {
                                " (x/z bits, read as 0; `--x-as-zero` compares them as 0)"
                            } else {
                                ""
                            }
                        ));
                        out.note(d);
                    }
                }
            }
        }
        (None, _) => not_compared.push("error counters (absent from the expected file)".into()),
        (_, None) => not_compared.push("error counters (absent from the observed file)".into()),
    }

    // Digest.
    match (&expected.digest, &observed.digest) {
        _ if opt.ignore_digest => not_compared.push("digest (--ignore digest)".into()),
        (Some(a), Some(b)) => {
            if a.algorithm != b.algorithm || a.value != b.value {
                counts.digest = true;
                let mut d = Divergence::new("digest", "differs");
                d.details.push(format!(
                    "final-state digest: expected {} {}, observed {} {}",
                    a.algorithm, a.value, b.algorithm, b.value
                ));
                out.note(d);
            }
        }
        (None, _) => not_compared.push("digest (absent from the expected file)".into()),
        (_, None) => not_compared.push("digest (absent from the observed file)".into()),
    }

    DiffReport {
        equal: out.total == 0,
        first: out.shown.first().cloned(),
        divergences: out.shown,
        total: out.total,
        counts,
        not_compared,
    }
}
