//! Streaming extraction of the egress flit streams of any switch design from a VCD waveform
//! (docs/golden.md, "Extracting from a waveform"), and fault injection into a VCD for testing
//! the comparison flow.
//!
//! A mapping file (TOML, `version = 1`) names the clock and, per egress port, the `valid`,
//! `ready`, `data` and `last` signals of each stream (full hierarchical names as in the VCD's
//! scopes, with optional bit slices `[msb:lsb]` or `[bit]` for buses shared by ports, and `{p}`
//! placeholders with small arithmetic such as `{128*p+127}` for port templates). Optionally it
//! names hub memory ports (writes are recorded) and error counters (final values).
//!
//! A flit counts on a rising clock edge where `valid` and `ready` are both 1, with the values
//! that held just before the edge (the end of the previous timestamp). Frames end at `last`.
//! The file is read once, as a stream; only the mapped signals' current values are kept.

use crate::packet::{ErrorCode, Flit, Limits};
use crate::scenario::pktspec::flits_hex;
use crate::scenario::{
    error_at, EgressEntry, GoldenError, GoldenResult, HubWrites, MemWrite, PortEgress, PortErrors,
    ResultKind, FORMAT_VERSION,
};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use vcd::{Command, IdCode, ReferenceIndex, ScopeItem, Value};

// ---------------------------------------------------------------------------------------------
// Mapping file
// ---------------------------------------------------------------------------------------------

/// The signal mapping file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalMap {
    /// Format version, 1.
    pub version: u32,
    /// The clock (full hierarchical name).
    pub clock: String,
    /// `"rising"` (default) or `"falling"`.
    #[serde(default)]
    pub edge: Edge,
    /// Optional reset: no flit counts at an edge where it is active.
    #[serde(default)]
    pub reset: Option<String>,
    /// Active level of `reset` (default 0: active low).
    #[serde(default)]
    pub reset_active: u8,
    /// Egress streams.
    #[serde(default)]
    pub stream: Vec<StreamMap>,
    /// Hub memory request ports (writes are recorded).
    #[serde(default)]
    pub mem: Vec<MemMap>,
    /// Error counters (final values).
    #[serde(default)]
    pub errors: Vec<ErrorsMap>,
}

/// Which clock edge samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Edge {
    /// 0 → 1.
    #[default]
    Rising,
    /// 1 → 0.
    Falling,
}

/// Ports an entry applies to: a number, a list, or a range `"0..8"` / `"0..=7"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSel(pub Vec<usize>);

impl<'de> Deserialize<'de> for PortSel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PortSel;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a port number, a list of ports, or a range \"0..8\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PortSel, E> {
                Ok(PortSel(vec![v as usize]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PortSel, E> {
                usize::try_from(v)
                    .map(|p| PortSel(vec![p]))
                    .map_err(|_| E::custom(format!("negative port {v}")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PortSel, E> {
                let bad = || E::custom(format!("`{v}` is not a range like \"0..8\" or \"0..=7\""));
                let (a, b, incl) = if let Some((a, b)) = v.split_once("..=") {
                    (a, b, true)
                } else if let Some((a, b)) = v.split_once("..") {
                    (a, b, false)
                } else {
                    return Err(bad());
                };
                let a: usize = a.trim().parse().map_err(|_| bad())?;
                let b: usize = b.trim().parse().map_err(|_| bad())?;
                let end = if incl { b + 1 } else { b };
                Ok(PortSel((a..end).collect()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<PortSel, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element::<usize>()? {
                    v.push(x);
                }
                Ok(PortSel(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// One egress stream (per port in `port`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamMap {
    /// Label written with each packet (e.g. `"sm_rsp"`).
    #[serde(default)]
    pub name: Option<String>,
    /// Egress port(s).
    #[serde(alias = "ports")]
    pub port: PortSel,
    /// 1-bit valid.
    pub valid: String,
    /// 1-bit ready (absent: always ready, for monitor taps that show accepted flits).
    #[serde(default)]
    pub ready: Option<String>,
    /// 128-bit data.
    pub data: String,
    /// 1-bit last.
    pub last: String,
}

/// One hub memory request port (per port in `port`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemMap {
    /// Hub(s).
    #[serde(alias = "ports")]
    pub port: PortSel,
    /// 1-bit request valid.
    pub valid: String,
    /// 1-bit request ready (absent: always ready).
    #[serde(default)]
    pub ready: Option<String>,
    /// 1-bit write enable (absent: every request is a write).
    #[serde(default)]
    pub we: Option<String>,
    /// Line address (up to 64 bits): of the first line of a multi-line beat.
    pub addr: String,
    /// Write data: 128 bits, or `128 × beat_lines` (line i at bits `[128*i +: 128]`).
    pub wdata: String,
    /// Byte strobes: 16 bits per line (absent: all bytes).
    #[serde(default)]
    pub wstrb: Option<String>,
    /// Number of 16-byte lines in a beat (up to 16 bits; absent: every request is one line).
    /// A beat of n lines is recorded as n line writes at `addr`, `addr + 16`, ...
    #[serde(default)]
    pub lines: Option<String>,
    /// Lines `wdata` holds (default 1; more needs `lines`).
    #[serde(default = "default_beat_lines")]
    pub beat_lines: u32,
}

fn default_beat_lines() -> u32 {
    1
}

/// Error counters of a port: `count` counters of `width` bits, code 1 in the lowest.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorsMap {
    /// Port(s).
    #[serde(alias = "ports")]
    pub port: PortSel,
    /// The counters' bits (a slice of the port's counters).
    pub counters: String,
    /// Bits per counter (default 32).
    #[serde(default = "default_width")]
    pub width: u32,
}

fn default_width() -> u32 {
    32
}

impl SignalMap {
    /// Reads a mapping file.
    pub fn load(path: &Path) -> Result<Self, GoldenError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|err| GoldenError::Io {
            file: file.clone(),
            err,
        })?;
        Self::from_toml(&file, &text)
    }

    /// Parses a mapping file's text (`file` names it in errors).
    pub fn from_toml(file: &str, text: &str) -> Result<Self, GoldenError> {
        let value: toml::Table =
            toml::from_str(text).map_err(|e| error_at(file, "", format!("not valid TOML: {e}")))?;
        match value.get("version") {
            None => {
                return Err(error_at(
                    file,
                    "version",
                    format!(
                    "missing field `version` (this tool reads mapping version {FORMAT_VERSION})"
                ),
                ))
            }
            Some(v) if v.as_integer() != Some(FORMAT_VERSION as i64) => {
                return Err(error_at(
                    file,
                    "version",
                    format!(
                    "unsupported mapping version {v} (this tool reads version {FORMAT_VERSION})"
                ),
                ))
            }
            Some(_) => {}
        }
        let de = toml::Deserializer::parse(text)
            .map_err(|e| error_at(file, "", format!("not valid TOML: {e}")))?;
        let m: SignalMap = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let msg = e.inner().message().to_string();
            error_at(file, if path == "." { "" } else { &path }, msg)
        })?;
        if m.reset_active > 1 {
            return Err(error_at(file, "reset_active", "must be 0 or 1"));
        }
        for (i, e) in m.errors.iter().enumerate() {
            if !(1..=64).contains(&e.width) {
                return Err(error_at(
                    file,
                    &format!("errors[{i}].width"),
                    "must be 1..=64",
                ));
            }
        }
        Ok(m)
    }
}

// ---------------------------------------------------------------------------------------------
// Templates: `{expr}` with `p`, integers, + - * and parentheses
// ---------------------------------------------------------------------------------------------

fn eval(expr: &str, p: i64) -> Result<i64, String> {
    struct P<'a> {
        s: &'a [u8],
        i: usize,
        p: i64,
    }
    impl P<'_> {
        fn ws(&mut self) {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
        }
        fn expr(&mut self) -> Result<i64, String> {
            let mut v = self.term()?;
            loop {
                self.ws();
                match self.s.get(self.i) {
                    Some(b'+') => {
                        self.i += 1;
                        v += self.term()?;
                    }
                    Some(b'-') => {
                        self.i += 1;
                        v -= self.term()?;
                    }
                    _ => return Ok(v),
                }
            }
        }
        fn term(&mut self) -> Result<i64, String> {
            let mut v = self.factor()?;
            loop {
                self.ws();
                if self.s.get(self.i) == Some(&b'*') {
                    self.i += 1;
                    v *= self.factor()?;
                } else {
                    return Ok(v);
                }
            }
        }
        fn factor(&mut self) -> Result<i64, String> {
            self.ws();
            match self.s.get(self.i) {
                Some(b'p') => {
                    self.i += 1;
                    Ok(self.p)
                }
                Some(b'-') => {
                    self.i += 1;
                    Ok(-self.factor()?)
                }
                Some(b'(') => {
                    self.i += 1;
                    let v = self.expr()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b')') {
                        return Err("missing `)`".into());
                    }
                    self.i += 1;
                    Ok(v)
                }
                Some(c) if c.is_ascii_digit() => {
                    let st = self.i;
                    while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                        self.i += 1;
                    }
                    std::str::from_utf8(&self.s[st..self.i])
                        .expect("digits")
                        .parse()
                        .map_err(|_| "number too large".into())
                }
                _ => Err("expected a number, `p` or `(`".into()),
            }
        }
    }
    let mut ps = P {
        s: expr.as_bytes(),
        i: 0,
        p,
    };
    let v = ps.expr()?;
    ps.ws();
    if ps.i != expr.len() {
        return Err(format!("unexpected `{}`", &expr[ps.i..]));
    }
    Ok(v)
}

/// Expands `{expr}` placeholders for port `p`.
pub fn expand(template: &str, p: usize) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let j = rest[i..]
            .find('}')
            .ok_or_else(|| format!("`{template}`: unclosed `{{`"))?;
        let e = &rest[i + 1..i + j];
        let v = eval(e, p as i64).map_err(|m| format!("`{template}`: in `{{{e}}}`: {m}"))?;
        out.push_str(&v.to_string());
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Signals
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct VarInfo {
    code: IdCode,
    size: u32,
    index: Option<ReferenceIndex>,
}

fn collect_vars(items: &[ScopeItem], prefix: &str, out: &mut HashMap<String, Vec<VarInfo>>) {
    for it in items {
        match it {
            ScopeItem::Scope(s) => {
                let p = if prefix.is_empty() {
                    s.identifier.clone()
                } else {
                    format!("{prefix}.{}", s.identifier)
                };
                collect_vars(&s.items, &p, out);
            }
            ScopeItem::Var(v) => {
                let name = if prefix.is_empty() {
                    v.reference.clone()
                } else {
                    format!("{prefix}.{}", v.reference)
                };
                out.entry(name).or_default().push(VarInfo {
                    code: v.code,
                    size: v.size,
                    index: v.index,
                });
            }
            _ => {}
        }
    }
}

/// The signals of a VCD header, by full name, and the slots of the tracked ones.
struct Signals {
    vars: HashMap<String, Vec<VarInfo>>,
    slots: HashMap<IdCode, usize>,
    widths: Vec<u32>,
    codes: Vec<IdCode>,
}

/// A resolved signal (slice): per result bit, LSB first, (slot, bit position in the var).
#[derive(Clone, Debug)]
struct Sig {
    name: String,
    bits: Vec<(usize, u32)>,
}

/// Splits `name[a:b]` / `name[a]` into the name and (first, second) index.
fn split_slice(s: &str) -> Option<(&str, i64, i64)> {
    let body = s.strip_suffix(']')?;
    let i = body.rfind('[')?;
    let (name, idx) = (&body[..i], &body[i + 1..]);
    let (a, b) = match idx.split_once(':') {
        Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
        None => {
            let a = idx.trim().parse().ok()?;
            (a, a)
        }
    };
    Some((name.trim_end(), a, b))
}

impl Signals {
    fn new(header: &vcd::Header) -> Self {
        let mut vars = HashMap::new();
        collect_vars(&header.items, "", &mut vars);
        Signals {
            vars,
            slots: HashMap::new(),
            widths: Vec::new(),
            codes: Vec::new(),
        }
    }

    fn slot(&mut self, v: &VarInfo) -> usize {
        if let Some(s) = self.slots.get(&v.code) {
            return *s;
        }
        let s = self.widths.len();
        self.slots.insert(v.code, s);
        self.widths.push(v.size.max(1));
        self.codes.push(v.code);
        s
    }

    fn similar(&self, name: &str) -> String {
        let leaf = name.rsplit('.').next().unwrap_or(name);
        let leaf = leaf.split('[').next().unwrap_or(leaf);
        let leaf_of = |k: &str| -> String {
            let l = k.rsplit('.').next().unwrap_or(k);
            l.split('[').next().unwrap_or(l).to_ascii_lowercase()
        };
        let want = leaf.to_ascii_lowercase();
        let mut v: Vec<&String> = self
            .vars
            .keys()
            .filter(|k| {
                let l = leaf_of(k);
                l.contains(&want) || (!l.is_empty() && want.contains(&l))
            })
            .collect();
        if v.is_empty() {
            // Same scope.
            let scope = name.rsplit_once('.').map_or("", |(s, _)| s);
            v = self
                .vars
                .keys()
                .filter(|k| k.rsplit_once('.').map_or("", |(s, _)| s) == scope)
                .collect();
        }
        v.sort();
        v.truncate(6);
        if v.is_empty() {
            String::new()
        } else {
            format!(
                "; signals with a similar name: {}",
                v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            )
        }
    }

    /// Resolves `name` or `name[msb:lsb]` (declared indices; the first index is the result's
    /// most significant bit).
    fn resolve(&mut self, spec: &str) -> Result<Sig, String> {
        let spec = spec.trim();
        let (name, slice) = if self.vars.contains_key(spec) {
            (spec, None)
        } else if let Some((n, a, b)) = split_slice(spec) {
            (n, Some((a, b)))
        } else {
            (spec, None)
        };
        let parts =
            self.vars.get(name).cloned().ok_or_else(|| {
                format!("signal `{name}` is not in the VCD{}", self.similar(name))
            })?;
        // Declared index -> (slot, position in the var, LSB first).
        let mut by_index: BTreeMap<i64, (usize, u32)> = BTreeMap::new();
        let mut lsb_first: Vec<(usize, u32)> = Vec::new();
        for v in &parts {
            let slot = self.slot(v);
            let size = v.size.max(1) as i64;
            match v.index {
                None => {
                    for i in 0..size {
                        by_index.insert(i, (slot, i as u32));
                        lsb_first.push((slot, i as u32));
                    }
                }
                Some(ReferenceIndex::BitSelect(i)) => {
                    by_index.insert(i as i64, (slot, 0));
                }
                Some(ReferenceIndex::Range(m, l)) => {
                    let (m, l) = (m as i64, l as i64);
                    for k in 0..size {
                        // Position k (LSB first) holds declared index l + k (descending
                        // declaration) or l - k (ascending).
                        let idx = if m >= l { l + k } else { l - k };
                        by_index.insert(idx, (slot, k as u32));
                        lsb_first.push((slot, k as u32));
                    }
                }
            }
        }
        let bits = match slice {
            None if parts.len() == 1 && !lsb_first.is_empty() => lsb_first,
            None => by_index.values().copied().collect(),
            Some((a, b)) => {
                let n = (a - b).abs() + 1;
                let mut v = Vec::with_capacity(n as usize);
                for k in 0..n {
                    let idx = if a >= b { b + k } else { b - k };
                    let bit = by_index.get(&idx).copied().ok_or_else(|| {
                        let lo = by_index.keys().next().copied().unwrap_or(0);
                        let hi = by_index.keys().last().copied().unwrap_or(0);
                        format!(
                            "`{spec}`: bit {idx} is outside `{name}` (declared bits {hi}..{lo})"
                        )
                    })?;
                    v.push(bit);
                }
                v
            }
        };
        Ok(Sig {
            name: spec.to_string(),
            bits,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/// Current value of a var: value bits and unknown (x/z) bits, LSB first.
#[derive(Clone, Debug)]
struct Bits {
    val: Vec<u64>,
    unk: Vec<u64>,
}

impl Bits {
    fn new(width: u32) -> Self {
        let w = (width as usize).div_ceil(64);
        Bits {
            val: vec![0; w],
            unk: vec![u64::MAX; w],
        }
    }
    fn set(&mut self, i: usize, v: Value) {
        let (w, b) = (i / 64, i % 64);
        let m = 1u64 << b;
        match v {
            Value::V0 => {
                self.val[w] &= !m;
                self.unk[w] &= !m;
            }
            Value::V1 => {
                self.val[w] |= m;
                self.unk[w] &= !m;
            }
            Value::X | Value::Z => {
                self.val[w] &= !m;
                self.unk[w] |= m;
            }
        }
    }
    /// Some(bit) if known.
    fn get(&self, i: usize) -> Option<bool> {
        let (w, b) = (i / 64, i % 64);
        if self.unk[w] >> b & 1 == 1 {
            None
        } else {
            Some(self.val[w] >> b & 1 == 1)
        }
    }
}

enum Change {
    Scalar(Value),
    Vector(vcd::Vector),
}

impl Change {
    /// Value of LSB-first position `i` of a var of `width` bits after this change.
    fn value_at(&self, i: usize) -> Value {
        match self {
            Change::Scalar(v) => {
                if i == 0 {
                    *v
                } else {
                    Value::V0
                }
            }
            Change::Vector(v) => {
                let n = v.len();
                if i < n {
                    v.get(n - 1 - i).unwrap_or(Value::X)
                } else {
                    // VCD left-extension: 0 for a leading 0/1, else the leading x/z.
                    match v.get(0) {
                        Some(Value::X) => Value::X,
                        Some(Value::Z) => Value::Z,
                        _ => Value::V0,
                    }
                }
            }
        }
    }
}

struct State {
    bits: Vec<Bits>,
    widths: Vec<u32>,
}

impl State {
    fn apply(&mut self, slot: usize, c: &Change) {
        let w = self.widths[slot] as usize;
        let b = &mut self.bits[slot];
        for i in 0..w {
            b.set(i, c.value_at(i));
        }
    }
    fn bit(&self, (slot, pos): (usize, u32)) -> Option<bool> {
        self.bits[slot].get(pos as usize)
    }
    fn one(&self, s: &Sig) -> bool {
        self.bit(s.bits[0]) == Some(true)
    }
    /// Up to 128 bits from `sig` starting at result bit `from`; (value, any unknown bit).
    fn gather(&self, s: &Sig, from: usize, width: usize) -> (u128, bool) {
        let mut v = 0u128;
        let mut unk = false;
        for (k, b) in s.bits[from..from + width].iter().enumerate() {
            match self.bit(*b) {
                Some(true) => v |= 1u128 << k,
                Some(false) => {}
                None => unk = true,
            }
        }
        (v, unk)
    }
}

// ---------------------------------------------------------------------------------------------
// Extraction
// ---------------------------------------------------------------------------------------------

/// A frame read from a stream, with the time of the edge of each flit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExFrame {
    /// The flits.
    pub flits: Vec<Flit>,
    /// Edge time of each flit.
    pub times: Vec<u64>,
}

/// The frames of one stream of one port.
#[derive(Clone, Debug)]
pub struct ExStream {
    /// Stream label (mapping `name`, or `stream<i>`).
    pub name: String,
    /// Egress port.
    pub port: usize,
    /// Complete frames, in order.
    pub frames: Vec<ExFrame>,
    /// Flits after the last `last`, if the waveform ends mid-frame.
    pub partial: ExFrame,
}

/// A memory write read from a hub port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExWrite {
    /// Line address.
    pub addr: u64,
    /// Data.
    pub data: u128,
    /// Strobes.
    pub strobe: u16,
    /// Edge time.
    pub time: u64,
}

/// Everything read from a waveform.
#[derive(Clone, Debug, Default)]
pub struct Extraction {
    /// Per (stream entry, port).
    pub streams: Vec<ExStream>,
    /// Per hub, writes in order.
    pub mem: BTreeMap<usize, Vec<ExWrite>>,
    /// Per port, final error counters (indexed `code - 1`).
    pub errors: BTreeMap<usize, [u64; ErrorCode::COUNT]>,
    /// Sampling edges seen.
    pub edges: u64,
    /// Last timestamp of the file.
    pub end_time: u64,
    /// Remarks (x/z bits, incomplete frames, ...).
    pub warnings: Vec<String>,
}

struct StreamSigs {
    valid: Sig,
    ready: Option<Sig>,
    data: Sig,
    last: Sig,
}

struct MemSigs {
    hub: usize,
    valid: Sig,
    ready: Option<Sig>,
    we: Option<Sig>,
    addr: Sig,
    wdata: Sig,
    wstrb: Option<Sig>,
    lines: Option<Sig>,
    beat_lines: usize,
}

struct ErrSigs {
    port: usize,
    counters: Sig,
    width: usize,
}

const MAX_WARNINGS: usize = 20;

fn warn(w: &mut Vec<String>, dropped: &mut usize, m: String) {
    if w.len() < MAX_WARNINGS {
        w.push(m);
    } else {
        *dropped += 1;
    }
}

fn parse_err(file: &str, line: u64, e: std::io::Error) -> GoldenError {
    error_at(
        file,
        &format!("line {line}"),
        format!("VCD parse error: {e}"),
    )
}

/// Reads a VCD file through a mapping.
pub fn extract_file(
    vcd_path: &Path,
    map: &SignalMap,
    map_file: &str,
) -> Result<Extraction, GoldenError> {
    let file = vcd_path.display().to_string();
    let f = std::fs::File::open(vcd_path).map_err(|err| GoldenError::Io {
        file: file.clone(),
        err,
    })?;
    extract(BufReader::with_capacity(1 << 20, f), &file, map, map_file)
}

/// Reads a VCD stream through a mapping (`file` and `map_file` name them in errors).
pub fn extract<R: BufRead>(
    reader: R,
    file: &str,
    map: &SignalMap,
    map_file: &str,
) -> Result<Extraction, GoldenError> {
    let mut parser = vcd::Parser::new(reader);
    let header = parser
        .parse_header()
        .map_err(|e| parse_err(file, parser.line(), e))?;
    let mut sigs = Signals::new(&header);
    let at = |path: String, m: String| error_at(map_file, &path, format!("{m} (in {file})"));
    let width_check = |s: &Sig, want: usize, exact: bool, path: &str| -> Result<(), GoldenError> {
        let n = s.bits.len();
        if (exact && n != want) || n > want || n == 0 {
            let hint = if want == 1 {
                ": add a bit select such as `[0]` for the port's bit"
            } else {
                ""
            };
            return Err(at(
                path.to_string(),
                format!(
                    "`{}` is {n} bits wide, {} {want} bits are needed{hint}",
                    s.name,
                    if exact { "exactly" } else { "at most" }
                ),
            ));
        }
        Ok(())
    };
    let resolve =
        |sigs: &mut Signals, t: &str, p: usize, path: String, want: usize, exact: bool| {
            let name = expand(t, p).map_err(|m| at(path.clone(), m))?;
            let s = sigs
                .resolve(&name)
                .map_err(|m| at(format!("{path} (port {p})"), m))?;
            width_check(&s, want, exact, &format!("{path} (port {p})"))?;
            Ok::<Sig, GoldenError>(s)
        };
    let clock = resolve(&mut sigs, &map.clock, 0, "clock".into(), 1, true)?;
    let reset = match &map.reset {
        Some(r) => Some(resolve(&mut sigs, r, 0, "reset".into(), 1, true)?),
        None => None,
    };
    let mut streams = Vec::new();
    let mut ex = Extraction::default();
    for (i, s) in map.stream.iter().enumerate() {
        if s.port.0.is_empty() {
            return Err(at(format!("stream[{i}].port"), "no ports selected".into()));
        }
        for &p in &s.port.0 {
            let q = |f: &str| format!("stream[{i}].{f}");
            streams.push(StreamSigs {
                valid: resolve(&mut sigs, &s.valid, p, q("valid"), 1, true)?,
                ready: match &s.ready {
                    Some(r) => Some(resolve(&mut sigs, r, p, q("ready"), 1, true)?),
                    None => None,
                },
                data: resolve(&mut sigs, &s.data, p, q("data"), 128, true)?,
                last: resolve(&mut sigs, &s.last, p, q("last"), 1, true)?,
            });
            ex.streams.push(ExStream {
                name: s.name.clone().unwrap_or_else(|| format!("stream{i}")),
                port: p,
                frames: Vec::new(),
                partial: ExFrame::default(),
            });
        }
    }
    let mut mems = Vec::new();
    for (i, m) in map.mem.iter().enumerate() {
        for &p in &m.port.0 {
            let q = |f: &str| format!("mem[{i}].{f}");
            let opt = |sigs: &mut Signals, s: &Option<String>, f: &str, w: usize| match s {
                Some(x) => resolve(sigs, x, p, q(f), w, w == 1).map(Some),
                None => Ok(None),
            };
            let bl = m.beat_lines as usize;
            if bl == 0 || bl > 64 || (bl > 1 && m.lines.is_none()) {
                return Err(at(
                    q("beat_lines"),
                    format!("beat_lines = {bl}: it must be 1 to 64, and above 1 only with `lines`"),
                ));
            }
            mems.push(MemSigs {
                hub: p,
                valid: resolve(&mut sigs, &m.valid, p, q("valid"), 1, true)?,
                ready: opt(&mut sigs, &m.ready, "ready", 1)?,
                we: opt(&mut sigs, &m.we, "we", 1)?,
                addr: resolve(&mut sigs, &m.addr, p, q("addr"), 64, false)?,
                wdata: resolve(&mut sigs, &m.wdata, p, q("wdata"), 128 * bl, true)?,
                wstrb: match &m.wstrb {
                    Some(x) => Some(resolve(&mut sigs, x, p, q("wstrb"), 16 * bl, bl > 1)?),
                    None => None,
                },
                lines: match &m.lines {
                    Some(x) => Some(resolve(&mut sigs, x, p, q("lines"), 16, false)?),
                    None => None,
                },
                beat_lines: bl,
            });
            ex.mem.entry(p).or_default();
        }
    }
    let mut errs = Vec::new();
    for (i, e) in map.errors.iter().enumerate() {
        for &p in &e.port.0 {
            let path = format!("errors[{i}].counters");
            let s = resolve(&mut sigs, &e.counters, p, path.clone(), 64 * 13, false)?;
            let w = e.width as usize;
            if s.bits.len() % w != 0 || s.bits.len() / w > ErrorCode::COUNT {
                return Err(at(
                    format!("{path} (port {p})"),
                    format!(
                        "`{}` is {} bits: it must hold 1 to {} counters of {w} bits",
                        s.name,
                        s.bits.len(),
                        ErrorCode::COUNT
                    ),
                ));
            }
            errs.push(ErrSigs {
                port: p,
                counters: s,
                width: w,
            });
        }
    }

    let mut st = State {
        bits: sigs.widths.iter().map(|w| Bits::new(*w)).collect(),
        widths: sigs.widths.clone(),
    };
    let slots = std::mem::take(&mut sigs.slots);
    let mut pending: Vec<(usize, Change)> = Vec::new();
    let mut time: u64 = 0;
    let mut dropped = 0usize;
    let mut warnings = Vec::new();
    let (clk_slot, clk_pos) = clock.bits[0];
    let rising = map.edge == Edge::Rising;

    let finish = |st: &mut State,
                  pending: &mut Vec<(usize, Change)>,
                  time: u64,
                  ex: &mut Extraction,
                  warnings: &mut Vec<String>,
                  dropped: &mut usize| {
        let old = st.bit((clk_slot, clk_pos));
        let mut new = old;
        for (s, c) in pending.iter() {
            if *s == clk_slot {
                new = match c.value_at(clk_pos as usize) {
                    Value::V0 => Some(false),
                    Value::V1 => Some(true),
                    _ => None,
                };
            }
        }
        let edge = if rising {
            old == Some(false) && new == Some(true)
        } else {
            old == Some(true) && new == Some(false)
        };
        if edge {
            ex.edges += 1;
            let in_reset = reset
                .as_ref()
                .is_some_and(|r| st.bit(r.bits[0]) != Some(map.reset_active == 0));
            if in_reset {
                for s in ex.streams.iter_mut() {
                    if !s.partial.flits.is_empty() {
                        warn(
                            warnings,
                            dropped,
                            format!(
                                "time {time}: reset during a frame on port {} stream {}: {} flits discarded",
                                s.port,
                                s.name,
                                s.partial.flits.len()
                            ),
                        );
                        s.partial = ExFrame::default();
                    }
                }
            } else {
                for (k, s) in streams.iter().enumerate() {
                    if st.one(&s.valid) && s.ready.as_ref().is_none_or(|r| st.one(r)) {
                        let (d, unk) = st.gather(&s.data, 0, 128);
                        let out = &mut ex.streams[k];
                        if unk {
                            warn(
                                warnings,
                                dropped,
                                format!(
                                    "time {time}: x/z bits in `{}` (port {}), read as 0",
                                    s.data.name, out.port
                                ),
                            );
                        }
                        out.partial.flits.push(d);
                        out.partial.times.push(time);
                        if st.one(&s.last) {
                            out.frames.push(std::mem::take(&mut out.partial));
                        }
                    }
                }
                for m in &mems {
                    if st.one(&m.valid)
                        && m.ready.as_ref().is_none_or(|r| st.one(r))
                        && m.we.as_ref().is_none_or(|w| st.one(w))
                    {
                        let (addr, u1) = st.gather(&m.addr, 0, m.addr.bits.len());
                        let (n, u4) = match &m.lines {
                            Some(s) => st.gather(s, 0, s.bits.len()),
                            None => (1, false),
                        };
                        let n = n as usize;
                        if n == 0 || n > m.beat_lines {
                            warn(
                                warnings,
                                dropped,
                                format!(
                                    "time {time}: a memory write of hub {} claims {n} lines (beat_lines = {}); ignored",
                                    m.hub, m.beat_lines
                                ),
                            );
                            continue;
                        }
                        let mut unknown = u1 || u4;
                        for i in 0..n {
                            let (data, u2) = st.gather(&m.wdata, 128 * i, 128);
                            let (strobe, u3) = match &m.wstrb {
                                Some(s) => st.gather(s, 16 * i, 16),
                                None => (0xFFFF, false),
                            };
                            unknown |= u2 || u3;
                            ex.mem.entry(m.hub).or_default().push(ExWrite {
                                addr: addr as u64 + 16 * i as u64,
                                data,
                                strobe: strobe as u16,
                                time,
                            });
                        }
                        if unknown {
                            warn(
                                warnings,
                                dropped,
                                format!(
                                    "time {time}: x/z bits in a memory write of hub {}, read as 0",
                                    m.hub
                                ),
                            );
                        }
                    }
                }
            }
        }
        for (s, c) in pending.drain(..) {
            st.apply(s, &c);
        }
    };

    loop {
        let cmd = match parser.next() {
            None => break,
            Some(Ok(c)) => c,
            Some(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                // A simulation stopped while writing: keep what was complete.
                warn(
                    &mut warnings,
                    &mut dropped,
                    format!(
                        "the waveform ends in the middle of line {}; the incomplete last command is ignored",
                        parser.line()
                    ),
                );
                break;
            }
            Some(Err(e)) => return Err(parse_err(file, parser.line(), e)),
        };
        match cmd {
            Command::Timestamp(t) => {
                finish(
                    &mut st,
                    &mut pending,
                    time,
                    &mut ex,
                    &mut warnings,
                    &mut dropped,
                );
                time = t;
            }
            Command::ChangeScalar(id, v) => {
                if let Some(&s) = slots.get(&id) {
                    pending.push((s, Change::Scalar(v)));
                }
            }
            Command::ChangeVector(id, v) => {
                if let Some(&s) = slots.get(&id) {
                    pending.push((s, Change::Vector(v)));
                }
            }
            _ => {}
        }
    }
    finish(
        &mut st,
        &mut pending,
        time,
        &mut ex,
        &mut warnings,
        &mut dropped,
    );
    ex.end_time = time;
    for e in &errs {
        let mut a = [0u64; ErrorCode::COUNT];
        for (k, slot) in a
            .iter_mut()
            .enumerate()
            .take(e.counters.bits.len() / e.width)
        {
            let (v, unk) = st.gather(&e.counters, k * e.width, e.width);
            if unk {
                warn(
                    &mut warnings,
                    &mut dropped,
                    format!(
                        "x/z bits in error counter {} of port {} at the end, read as 0",
                        k + 1,
                        e.port
                    ),
                );
            }
            *slot = v as u64;
        }
        ex.errors.insert(e.port, a);
    }
    for s in &ex.streams {
        if !s.partial.flits.is_empty() {
            warn(
                &mut warnings,
                &mut dropped,
                format!(
                    "port {} stream {}: the waveform ends {} flit(s) into a frame (no `last`)",
                    s.port,
                    s.name,
                    s.partial.flits.len()
                ),
            );
        }
    }
    if ex.edges == 0 {
        warn(
            &mut warnings,
            &mut dropped,
            format!(
                "no {} edge of `{}` in the waveform",
                if rising { "rising" } else { "falling" },
                clock.name
            ),
        );
    }
    if dropped > 0 {
        warnings.push(format!("... and {dropped} more warnings"));
    }
    ex.warnings = warnings;
    Ok(ex)
}

impl Extraction {
    /// The observed result: per port the frames of all its streams in order of their last
    /// flit, decoded for egress with `limits`; memory writes and error counters if mapped.
    pub fn to_result(
        &self,
        source: Option<String>,
        map: &SignalMap,
        limits: &Limits,
        config: Option<crate::config::Config>,
    ) -> GoldenResult {
        let mut ports: BTreeMap<usize, Vec<(u64, usize, EgressEntry)>> = BTreeMap::new();
        for (k, s) in self.streams.iter().enumerate() {
            let v = ports.entry(s.port).or_default();
            for f in &s.frames {
                let mut e = EgressEntry::from_frame(&f.flits, limits);
                e.stream = Some(s.name.clone());
                let t = f.times.last().copied().unwrap_or(0);
                e.time = Some(t);
                v.push((t, k, e));
            }
            if !s.partial.flits.is_empty() {
                let t = s.partial.times.last().copied().unwrap_or(0);
                v.push((
                    t,
                    k,
                    EgressEntry {
                        flits: Some(flits_hex(&s.partial.flits)),
                        packet: None,
                        error: Some("incomplete frame: the waveform ends before `last`".into()),
                        stream: Some(s.name.clone()),
                        time: Some(t),
                    },
                ));
            }
        }
        let egress = ports
            .into_iter()
            .map(|(port, mut v)| {
                v.sort_by_key(|(t, k, _)| (*t, *k));
                PortEgress {
                    port,
                    packets: v.into_iter().map(|(_, _, e)| e).collect(),
                }
            })
            .collect();
        GoldenResult {
            version: FORMAT_VERSION,
            kind: ResultKind::Observed,
            source,
            config,
            egress,
            mem_writes: (!map.mem.is_empty()).then(|| {
                self.mem
                    .iter()
                    .map(|(hub, w)| HubWrites {
                        hub: *hub,
                        writes: w
                            .iter()
                            .map(|x| {
                                let mut m = MemWrite::new(x.addr, x.data, x.strobe);
                                m.time = Some(x.time);
                                m
                            })
                            .collect(),
                    })
                    .collect()
            }),
            error_counters: (!map.errors.is_empty()).then(|| {
                self.errors
                    .iter()
                    .map(|(p, a)| PortErrors::new(*p, a))
                    .collect()
            }),
            digest: None,
            warnings: self.warnings.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Fault injection
// ---------------------------------------------------------------------------------------------

/// A value forced onto a signal (or slice) for one sampling edge: the rewritten VCD shows
/// `value` during the timestamp before the edge at `edge_time` and the original value again
/// from the edge on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    /// Time of the sampling edge.
    pub edge_time: u64,
    /// Signal name with optional slice, as in a mapping file.
    pub signal: String,
    /// Value (LSB = the slice's LSB).
    pub value: u128,
}

/// Copies a VCD, applying `overrides` (for testing the comparison flow: flip a payload bit,
/// drop a flit by forcing `valid` low, swap packets by exchanging data).
pub fn inject_faults<R: BufRead, W: Write>(
    input: R,
    output: W,
    overrides: &[Override],
) -> Result<(), String> {
    let mut parser = vcd::Parser::new(input);
    let header = parser.parse_header().map_err(|e| e.to_string())?;
    let mut sigs = Signals::new(&header);
    let mut by_time: BTreeMap<u64, Vec<(Sig, u128)>> = BTreeMap::new();
    for o in overrides {
        let s = sigs.resolve(&o.signal)?;
        if s.bits.len() > 128 {
            return Err(format!("`{}` is wider than 128 bits", o.signal));
        }
        by_time.entry(o.edge_time).or_default().push((s, o.value));
    }
    let mut cur: Vec<Vec<Value>> = sigs
        .widths
        .iter()
        .map(|w| vec![Value::X; *w as usize])
        .collect();
    let mut w = vcd::Writer::new(output);
    w.header(&header).map_err(|e| e.to_string())?;
    let mut restore: HashSet<usize> = HashSet::new();
    let emit = |w: &mut vcd::Writer<W>, code: IdCode, v: &[Value]| -> std::io::Result<()> {
        if v.len() == 1 {
            w.change_scalar(code, v[0])
        } else {
            w.change_vector(code, v.iter().rev().copied())
        }
    };
    for cmd in parser.by_ref() {
        let cmd = cmd.map_err(|e| e.to_string())?;
        match &cmd {
            Command::Timestamp(t) => {
                let ovs = by_time.get(t);
                let forced: BTreeSet<usize> = ovs
                    .map(|v| {
                        v.iter()
                            .flat_map(|(s, _)| s.bits.iter().map(|b| b.0))
                            .collect()
                    })
                    .unwrap_or_default();
                for slot in restore.drain() {
                    if !forced.contains(&slot) {
                        emit(&mut w, sigs.codes[slot], &cur[slot]).map_err(|e| e.to_string())?;
                    }
                }
                if let Some(ovs) = ovs {
                    let mut forced_vals: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
                    for (s, val) in ovs {
                        for (k, (slot, pos)) in s.bits.iter().enumerate() {
                            let e = forced_vals
                                .entry(*slot)
                                .or_insert_with(|| cur[*slot].clone());
                            e[*pos as usize] = if val >> k & 1 == 1 {
                                Value::V1
                            } else {
                                Value::V0
                            };
                        }
                    }
                    for (slot, v) in forced_vals {
                        emit(&mut w, sigs.codes[slot], &v).map_err(|e| e.to_string())?;
                        restore.insert(slot);
                    }
                }
                w.command(&cmd).map_err(|e| e.to_string())?;
            }
            Command::ChangeScalar(id, v) => {
                if let Some(&slot) = sigs.slots.get(id) {
                    cur[slot][0] = *v;
                    restore.remove(&slot);
                }
                w.command(&cmd).map_err(|e| e.to_string())?;
            }
            Command::ChangeVector(id, v) => {
                if let Some(&slot) = sigs.slots.get(id) {
                    let c = Change::Vector(v.clone());
                    for (i, x) in cur[slot].iter_mut().enumerate() {
                        *x = c.value_at(i);
                    }
                    restore.remove(&slot);
                }
                w.command(&cmd).map_err(|e| e.to_string())?;
            }
            _ => w.command(&cmd).map_err(|e| e.to_string())?,
        }
    }
    w.flush().map_err(|e| e.to_string())
}
