//! Extraction of the egress flit streams of any switch design from a waveform (VCD, gzip'd
//! VCD or FST; docs/golden.md, "from-vcd"), and fault injection into a VCD for testing the
//! comparison flow.
//!
//! A mapping file ([`SignalMap`], TOML) names the clock and, per egress port, the `valid`,
//! `ready`, `data` and `last` signals of each stream (full hierarchical names, with optional
//! bit slices and `{p}` port templates), and optionally hub memory ports and error counters.
//!
//! A flit counts on a rising clock edge where `valid` and `ready` are both 1, with the values
//! that held just before the edge (the end of the previous timestamp). Frames end at `last`.
//! The file is read once, as a stream; only the mapped signals' current values are kept.
//! x/z bits of data, addresses, strobes and counters are recorded (the `xz` fields of the
//! result) so that `diff` can count them as mismatches.

mod faults;
mod fst;
mod map;
pub mod reader;
mod signals;
mod vcd;

pub use faults::{inject_faults, Override};
pub use map::{
    expand, Edge, ErrorsMap, MemMap, PortSel, SignalMap, StreamMap, MAX_EXPR_DEPTH, MAX_PORT,
};
pub use signals::{MAX_MAPPED_BITS, MAX_TRACKED_VAR_BITS};
pub use vcd::{MAX_SCOPE_DEPTH, MAX_TOKEN};

use crate::packet::{ErrorCode, Flit, Limits};
use crate::scenario::pktspec::{flits_hex, hex128};
use crate::scenario::{
    error_at, EgressEntry, GoldenError, GoldenResult, HubWrites, MemWrite, PortEgress, PortErrors,
    ResultKind, FORMAT_VERSION,
};
use reader::{Body, ReadError, Sink, WaveHeader};
use signals::{value_at, Sig, Signals, State};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

/// A frame read from a stream, with the time of the edge of each flit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExFrame {
    /// The flits.
    pub flits: Vec<Flit>,
    /// Edge time of each flit.
    pub times: Vec<u64>,
    /// Per flit, the data bits that were x or z (read as 0); empty when none were.
    pub xz: Vec<u128>,
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
    /// Data bits that were x or z (all ones when the address, strobes or line count were).
    pub xz: u128,
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
    /// Per port, the counters (indexed `code - 1`) read with x/z bits.
    pub errors_xz: BTreeMap<usize, Vec<usize>>,
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

fn xz_field(masks: &[u128]) -> Option<Vec<String>> {
    masks.iter().any(|m| *m != 0).then(|| flits_hex(masks))
}

fn read_err(file: &str, e: ReadError) -> GoldenError {
    error_at(file, &e.place, format!("waveform: {}", e.msg))
}

/// Reads a waveform file (`-`: standard input) through a mapping: VCD, gzip'd VCD or FST,
/// recognised by content.
pub fn extract_file(
    path: &Path,
    map: &SignalMap,
    map_file: &str,
) -> Result<Extraction, GoldenError> {
    let file = if path == Path::new("-") {
        "standard input".to_string()
    } else {
        path.display().to_string()
    };
    let (header, body) = reader::open(path).map_err(|e| match e {
        reader::OpenError::Io(err) => GoldenError::Io {
            file: file.clone(),
            err,
        },
        reader::OpenError::Read(e) => read_err(&file, e),
    })?;
    run(header, body, &file, map, map_file)
}

/// Reads a waveform stream (VCD, gzip'd VCD or FST) through a mapping (`file` and
/// `map_file` name them in errors).
pub fn extract<R: BufRead>(
    input: R,
    file: &str,
    map: &SignalMap,
    map_file: &str,
) -> Result<Extraction, GoldenError> {
    let (header, body) = reader::open_reader(Box::new(input)).map_err(|e| read_err(file, e))?;
    run(header, body, file, map, map_file)
}

/// The mapped signals of one run.
struct Mapped {
    clock: Sig,
    reset: Option<Sig>,
    streams: Vec<StreamSigs>,
    mems: Vec<MemSigs>,
    errs: Vec<ErrSigs>,
}

fn resolve_map(
    sigs: &mut Signals,
    map: &SignalMap,
    file: &str,
    map_file: &str,
    ex: &mut Extraction,
) -> Result<Mapped, GoldenError> {
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
    let clock = resolve(sigs, &map.clock, 0, "clock".into(), 1, true)?;
    let reset = match &map.reset {
        Some(r) => Some(resolve(sigs, r, 0, "reset".into(), 1, true)?),
        None => None,
    };
    let mut streams = Vec::new();
    for (i, s) in map.stream.iter().enumerate() {
        if s.port.0.is_empty() {
            return Err(at(format!("stream[{i}].port"), "no ports selected".into()));
        }
        for &p in &s.port.0 {
            let q = |f: &str| format!("stream[{i}].{f}");
            streams.push(StreamSigs {
                valid: resolve(sigs, &s.valid, p, q("valid"), 1, true)?,
                ready: match &s.ready {
                    Some(r) => Some(resolve(sigs, r, p, q("ready"), 1, true)?),
                    None => None,
                },
                data: resolve(sigs, &s.data, p, q("data"), 128, true)?,
                last: resolve(sigs, &s.last, p, q("last"), 1, true)?,
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
        let bl = m.beat_lines as usize;
        if bl == 0 || bl > 64 || (bl > 1 && m.lines.is_none()) {
            return Err(at(
                format!("mem[{i}].beat_lines"),
                format!("beat_lines = {bl}: it must be 1 to 64, and above 1 only with `lines`"),
            ));
        }
        for &p in &m.port.0 {
            let q = |f: &str| format!("mem[{i}].{f}");
            let opt =
                |sigs: &mut Signals, s: &Option<String>, f: &str, w: usize, exact: bool| match s {
                    Some(x) => resolve(sigs, x, p, q(f), w, exact).map(Some),
                    None => Ok(None),
                };
            mems.push(MemSigs {
                hub: p,
                valid: resolve(sigs, &m.valid, p, q("valid"), 1, true)?,
                ready: opt(sigs, &m.ready, "ready", 1, true)?,
                we: opt(sigs, &m.we, "we", 1, true)?,
                addr: resolve(sigs, &m.addr, p, q("addr"), 64, false)?,
                wdata: resolve(sigs, &m.wdata, p, q("wdata"), 128 * bl, true)?,
                wstrb: opt(sigs, &m.wstrb, "wstrb", 16 * bl, bl > 1)?,
                lines: opt(sigs, &m.lines, "lines", 16, false)?,
                beat_lines: bl,
            });
            ex.mem.entry(p).or_default();
        }
    }
    let mut errs = Vec::new();
    for (i, e) in map.errors.iter().enumerate() {
        for &p in &e.port.0 {
            let path = format!("errors[{i}].counters");
            let s = resolve(sigs, &e.counters, p, path.clone(), 64 * 13, false)?;
            let w = e.width as usize;
            if w == 0 || s.bits.len() % w != 0 || s.bits.len() / w > ErrorCode::COUNT {
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
    Ok(Mapped {
        clock,
        reset,
        streams,
        mems,
        errs,
    })
}

/// The sampling state while a body is read.
struct Sampler<'m> {
    m: &'m Mapped,
    map: &'m SignalMap,
    slots: std::collections::HashMap<usize, usize>,
    st: State,
    pending: Vec<(usize, Vec<u8>)>,
    time: u64,
    ex: Extraction,
    dropped: usize,
}

impl Sampler<'_> {
    fn warn(&mut self, m: String) {
        if self.ex.warnings.len() < MAX_WARNINGS {
            self.ex.warnings.push(m);
        } else {
            self.dropped += 1;
        }
    }

    /// Ends the current timestamp: samples at a clock edge, then applies its changes.
    fn finish(&mut self) {
        let (clk_slot, clk_pos) = self.m.clock.bits.first().copied().unwrap_or((0, 0));
        let old = self.st.bit((clk_slot, clk_pos));
        let mut new = old;
        for (s, v) in &self.pending {
            if *s == clk_slot {
                new = match value_at(v, clk_pos as usize) {
                    b'0' => Some(false),
                    b'1' => Some(true),
                    _ => None,
                };
            }
        }
        let edge = if self.map.edge == Edge::Rising {
            old == Some(false) && new == Some(true)
        } else {
            old == Some(true) && new == Some(false)
        };
        if edge {
            self.ex.edges += 1;
            self.sample();
        }
        for (s, v) in std::mem::take(&mut self.pending) {
            self.st.apply(s, &v);
        }
    }

    fn sample(&mut self) {
        let (m, time) = (self.m, self.time);
        let reset_bit = m.reset.as_ref().and_then(|r| r.bits.first().copied());
        if let Some(b) = reset_bit {
            if self.st.bit(b) != Some(self.map.reset_active == 0) {
                for k in 0..self.ex.streams.len() {
                    let s = &mut self.ex.streams[k];
                    if !s.partial.flits.is_empty() {
                        let msg = format!(
                            "time {time}: reset during a frame on port {} stream {}: {} flits discarded",
                            s.port,
                            s.name,
                            s.partial.flits.len()
                        );
                        s.partial = ExFrame::default();
                        self.warn(msg);
                    }
                }
                return;
            }
        }
        for (k, s) in m.streams.iter().enumerate() {
            if self.st.one(&s.valid) && s.ready.as_ref().is_none_or(|r| self.st.one(r)) {
                let (d, unk) = self.st.gather(&s.data, 0, 128);
                let last = self.st.one(&s.last);
                let Some(out) = self.ex.streams.get_mut(k) else {
                    continue;
                };
                out.partial.flits.push(d);
                out.partial.times.push(time);
                out.partial.xz.push(unk);
                let port = out.port;
                if last {
                    let mut f = std::mem::take(&mut out.partial);
                    if f.xz.iter().all(|x| *x == 0) {
                        f.xz.clear();
                    }
                    out.frames.push(f);
                }
                if unk != 0 {
                    self.warn(format!(
                        "time {time}: x/z bits in `{}` (port {port}), recorded as x/z",
                        s.data.name
                    ));
                }
            }
        }
        for mm in &m.mems {
            if !(self.st.one(&mm.valid)
                && mm.ready.as_ref().is_none_or(|r| self.st.one(r))
                && mm.we.as_ref().is_none_or(|w| self.st.one(w)))
            {
                continue;
            }
            let (addr, u1) = self.st.gather(&mm.addr, 0, mm.addr.bits.len());
            let (n, u4) = match &mm.lines {
                Some(s) => self.st.gather(s, 0, s.bits.len()),
                None => (1, 0),
            };
            if n == 0 || n > mm.beat_lines as u128 {
                self.warn(format!(
                    "time {time}: a memory write of hub {} claims {n} lines (beat_lines = {}); ignored",
                    mm.hub, mm.beat_lines
                ));
                continue;
            }
            let mut any = u1 | u4;
            for i in 0..n as usize {
                let (data, u2) = self.st.gather(&mm.wdata, 128 * i, 128);
                let (strobe, u3) = match &mm.wstrb {
                    Some(s) => self.st.gather(s, 16 * i, 16),
                    None => (0xFFFF, 0),
                };
                any |= u2 | u3;
                let xz = if u1 | u3 | u4 != 0 { u128::MAX } else { u2 };
                let Some(a) = (addr as u64).checked_add(16 * i as u64) else {
                    continue;
                };
                self.ex.mem.entry(mm.hub).or_default().push(ExWrite {
                    addr: a,
                    data,
                    strobe: strobe as u16,
                    time,
                    xz,
                });
            }
            if any != 0 {
                self.warn(format!(
                    "time {time}: x/z bits in a memory write of hub {}, recorded as x/z",
                    mm.hub
                ));
            }
        }
    }
}

impl Sink for Sampler<'_> {
    fn wants(&self, signal: usize) -> bool {
        self.slots.contains_key(&signal)
    }
    fn time(&mut self, t: u64) {
        self.finish();
        self.time = t;
    }
    fn change(&mut self, signal: usize, value: &[u8]) {
        if let Some(&s) = self.slots.get(&signal) {
            self.pending.push((s, value.to_vec()));
        }
    }
    fn warn(&mut self, msg: String) {
        Sampler::warn(self, msg);
    }
}

fn run(
    header: WaveHeader,
    mut body: Box<dyn Body + '_>,
    file: &str,
    map: &SignalMap,
    map_file: &str,
) -> Result<Extraction, GoldenError> {
    let mut sigs = Signals::new(&header);
    let mut ex = Extraction::default();
    let m = resolve_map(&mut sigs, map, file, map_file, &mut ex)?;
    let mut s = Sampler {
        m: &m,
        map,
        slots: std::mem::take(&mut sigs.slots),
        st: State::new(&sigs.widths),
        pending: Vec::new(),
        time: 0,
        ex,
        dropped: 0,
    };
    body.read_into(&mut s).map_err(|e| read_err(file, e))?;
    s.finish();
    s.ex.end_time = s.time;
    for e in &m.errs {
        let mut a = [0u64; ErrorCode::COUNT];
        let mut unknown = Vec::new();
        for (k, slot) in a
            .iter_mut()
            .enumerate()
            .take(e.counters.bits.len() / e.width)
        {
            let (v, unk) = s.st.gather(&e.counters, k * e.width, e.width);
            if unk != 0 {
                unknown.push(k);
                s.warn(format!(
                    "x/z bits in error counter {} of port {} at the end, recorded as x/z",
                    k + 1,
                    e.port
                ));
            }
            *slot = v as u64;
        }
        s.ex.errors.insert(e.port, a);
        if !unknown.is_empty() {
            s.ex.errors_xz.insert(e.port, unknown);
        }
    }
    let partial: Vec<String> =
        s.ex.streams
            .iter()
            .filter(|st| !st.partial.flits.is_empty())
            .map(|st| {
                format!(
                    "port {} stream {}: the waveform ends {} flit(s) into a frame (no `last`)",
                    st.port,
                    st.name,
                    st.partial.flits.len()
                )
            })
            .collect();
    for w in partial {
        s.warn(w);
    }
    if s.ex.edges == 0 {
        s.warn(format!(
            "no {} edge of `{}` in the waveform",
            if map.edge == Edge::Rising {
                "rising"
            } else {
                "falling"
            },
            m.clock.name
        ));
    }
    if s.dropped > 0 {
        let d = s.dropped;
        s.ex.warnings.push(format!("... and {d} more warnings"));
    }
    Ok(s.ex)
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
                e.xz = xz_field(&f.xz);
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
                        xz: xz_field(&s.partial.xz),
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
                                m.xz = (x.xz != 0).then(|| hex128(x.xz));
                                m
                            })
                            .collect(),
                    })
                    .collect()
            }),
            error_counters: (!map.errors.is_empty()).then(|| {
                self.errors
                    .iter()
                    .map(|(p, a)| {
                        let mut e = PortErrors::new(*p, a);
                        e.xz = self
                            .errors_xz
                            .get(p)
                            .into_iter()
                            .flatten()
                            .filter_map(|k| ErrorCode::ALL.get(*k))
                            .map(|c| c.name().to_string())
                            .collect();
                        e
                    })
                    .collect()
            }),
            digest: None,
            warnings: self.warnings.clone(),
        }
    }
}
