//! FST waveforms (GTKWave's compressed format, written by Verilator `--trace-fst`, Icarus,
//! GHDL, nvc, ...) read with `wellen`, the library of the Surfer waveform viewer.
//!
//! The file is held in memory (the reader seeks). `wellen` and its FST decoder can panic on
//! a corrupted file; such a panic is caught and reported as an error naming the file, and the
//! panic message is not printed. They also allocate the sizes the file declares, and a failed
//! allocation aborts the process: [`check_blocks`] bounds every such size first (block
//! headers, value-change block contents, geometry, hierarchy), so a corrupted file is an
//! error naming the byte offset and the field, never an abort or a huge allocation.

use super::reader::{Body, Index, ReadError, Sink, VarDecl, WaveHeader};
use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};
use wellen::stream::{Filter, StreamingWaveform};
use wellen::{LoadOptions, SignalRef, SignalValueRef};

/// Whether `head` starts like an FST file: a header block (type 0) of 329 bytes.
pub fn looks_like_fst(head: &[u8]) -> bool {
    head.first() == Some(&0) && head.get(1..9) == Some(&329u64.to_be_bytes()[..])
}

/// Runs `f`, turning a panic of the FST reader into an error (with the panic hook silenced
/// meanwhile, so nothing is printed).
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, ReadError>) -> Result<T, ReadError> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    r.unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(ReadError::new(
            "",
            format!("the FST reader failed on this file while {what} (corrupted?): {msg}"),
        ))
    })
}

type Wave = StreamingWaveform<Cursor<Vec<u8>>>;

/// Largest size any FST block may declare for its decompressed content.
const MAX_INFLATED: u64 = 1 << 30;

/// Largest ratio of decompressed to compressed size: deflate's bound is 1032:1 (LZ4 and
/// FastLZ stay below it). Every decompressed size the file declares must fit this ratio.
const MAX_RATIO: u64 = 1032;

/// Whether `n` decompressed bytes can come out of `packed` compressed ones.
fn plausible(n: u64, packed: u64) -> bool {
    n <= MAX_INFLATED && n <= packed.saturating_mul(MAX_RATIO) + 64
}

fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    b.get(i..i.checked_add(8)?)
        .and_then(|x| x.try_into().ok())
        .map(u64::from_be_bytes)
}

/// An unsigned LEB128 number of at most `bits` bits (as the FST reader reads them, in at most
/// 5 bytes for 32 bits and 10 for 64), taken from the front of `s`; `None` when it runs off
/// `s`, is longer, or overflows `bits`.
fn uleb(s: &mut &[u8], bits: u32) -> Option<u64> {
    leb(s, bits).ok()
}

/// Why a LEB128 number did not read: `Stop` where the FST reader fails too (it runs off the
/// data or is too long), `Overflow` where the reader drops the bits that do not fit.
enum Leb {
    Stop,
    Overflow,
}

fn leb(s: &mut &[u8], bits: u32) -> Result<u64, Leb> {
    let mut v = 0u64;
    let mut overflow = false;
    for i in 0..bits.div_ceil(7) {
        let (&c, rest) = s.split_first().ok_or(Leb::Stop)?;
        *s = rest;
        let (part, sh) = (u64::from(c & 0x7f), 7 * i);
        overflow |= (part << sh) >> sh != part;
        v |= part << sh;
        if c & 0x80 == 0 {
            overflow |= bits < 64 && v >> bits != 0;
            return if overflow { Err(Leb::Overflow) } else { Ok(v) };
        }
    }
    Err(Leb::Stop)
}

/// A signed LEB128 number (the alias-2 chain table's), with the FST reader's semantics: at
/// most 10 bytes, sign taken from bit 6 of the last byte.
fn sleb(s: &mut &[u8]) -> Option<i64> {
    let mut v = 0u64;
    for i in 0..10u32 {
        let (&c, rest) = s.split_first()?;
        *s = rest;
        let sh = 7 * i;
        v |= u64::from(c & 0x7f) << sh;
        if c & 0x80 == 0 {
            if c & 0x40 != 0 && sh + 7 < 64 {
                v |= u64::MAX << (sh + 7);
            }
            return Some(v as i64);
        }
    }
    None
}

/// Checks the block structure of an FST file before the FST reader sees it: its decoder
/// allocates what the file declares, and a failed allocation aborts the process (no panic to
/// catch). Every block must lie inside the file, and the counts and decompressed sizes that
/// size allocations must be plausible for the block's length; inside value-change blocks,
/// the frame, the signal count, the chain table and every signal's packed data are checked
/// too (see [`check_vc_block`]), and the geometry's signal widths against the frames.
fn check_blocks(b: &[u8]) -> Result<(), ReadError> {
    let bad = |pos: usize, m: String| ReadError::new("", format!("FST block at byte {pos}: {m}"));
    let u64_at = |i: usize| u64_at(b, i);
    let len = b.len() as u64;
    let mut pos = 0usize;
    let mut geometry = None;
    let mut vc_blocks = Vec::new();
    let mut hierarchies = Vec::new();
    while pos < b.len() {
        let kind = b[pos];
        let sec = u64_at(pos + 1).ok_or_else(|| bad(pos, "truncated".into()))?;
        if sec < 8 || sec > len - pos as u64 - 1 {
            return Err(bad(pos, format!("length {sec} runs outside the file")));
        }
        let body = pos + 9;
        let plausible = |n: u64| plausible(n, sec);
        match kind {
            0 => {
                if sec != 329 {
                    return Err(bad(pos, "a header block is 329 bytes".into()));
                }
                // Scope count, var count and max var id follow the length field at 40, 48, 56.
                for off in [40, 48, 56] {
                    let n = u64_at(pos + 1 + off).unwrap_or(u64::MAX);
                    if n > len.saturating_mul(MAX_RATIO) || n > MAX_INFLATED {
                        return Err(bad(pos, format!("implausible count {n}")));
                    }
                }
            }
            3 | 4 | 6 | 7 => {
                // The fixed fields before the packed data: geometry (uncompressed length,
                // signal count), gzip hierarchy (uncompressed length, gzip header), LZ4
                // hierarchy (uncompressed length).
                let fixed = match kind {
                    3 => 24,
                    4 => 26,
                    _ => 16,
                };
                if sec < fixed {
                    return Err(bad(pos, format!("length {sec} is too short for the block")));
                }
                let n = u64_at(body).unwrap_or(u64::MAX);
                if !plausible(n) {
                    return Err(bad(pos, format!("implausible decompressed size {n}")));
                }
                if kind == 3 && u64_at(body + 8).is_none_or(|h| h > n) {
                    return Err(bad(pos, "implausible signal count".into()));
                }
                if kind == 3 {
                    geometry = Some(pos);
                } else {
                    hierarchies.push(pos);
                }
                if kind == 7 {
                    // Two-stage LZ4: the length after the first stage follows, as a varint.
                    let mut s = &b[body + 8..pos + 1 + sec as usize];
                    let before = s.len();
                    let lvl1 = uleb(&mut s, 64);
                    if lvl1.is_none_or(|l| !plausible(l)) || sec < 16 + (before - s.len()) as u64 {
                        return Err(bad(
                            pos,
                            format!("implausible first-stage length at byte {}", body + 8),
                        ));
                    }
                }
            }
            1 | 5 | 8 => {
                let n = u64_at(body + 16).unwrap_or(u64::MAX);
                if !plausible(n) || sec < 56 {
                    return Err(bad(pos, format!("implausible memory requirement {n}")));
                }
                // The time table's trailer: decompressed and compressed length, item count.
                let end = pos + 1 + sec as usize;
                let (ul, cl, items) = (
                    u64_at(end - 24).unwrap_or(u64::MAX),
                    u64_at(end - 16).unwrap_or(u64::MAX),
                    u64_at(end - 8).unwrap_or(u64::MAX),
                );
                if cl > sec - 56
                    || ul > MAX_INFLATED
                    || ul > cl.saturating_mul(MAX_RATIO) + 64
                    || items > ul
                {
                    return Err(bad(pos, "implausible time table".into()));
                }
                vc_blocks.push(pos);
            }
            2 => {
                // Blackouts: a varint count, then at least two bytes per blackout.
                let mut s = &b[body..pos + 1 + sec as usize];
                if uleb(&mut s, 32).is_none_or(|n| n > (sec - 8) / 2) {
                    return Err(bad(pos, "implausible blackout count".into()));
                }
            }
            255 => {}
            254 => {
                return Err(bad(
                    pos,
                    "a gzip-wrapped FST is not read; unwrap it (fst2vcd, or write it without -z)"
                        .into(),
                ))
            }
            k => return Err(bad(pos, format!("unknown block type {k}"))),
        }
        pos += 1 + sec as usize;
    }
    // Without a geometry block the reader stops before the hierarchy and the value changes.
    let Some(g) = geometry else {
        return Ok(());
    };
    let (handles, widths) = geometry_of(b, g).map_err(|m| bad(g, m))?;
    for &h in &hierarchies {
        check_hierarchy(b, h, handles).map_err(|m| bad(h, m))?;
    }
    let mut frames = 0u64;
    for &pos in &vc_blocks {
        frames = frames.max(check_vc_block(b, pos, handles).map_err(|m| bad(pos, m))?);
    }
    // The first block's frame holds every signal's value (its width in bytes; 8 for a real):
    // the reader reads them one by one, allocating the width the geometry gives.
    if !vc_blocks.is_empty() && widths > frames {
        return Err(bad(
            g,
            format!("the signals' widths add up to {widths}, more than a frame holds ({frames})"),
        ));
    }
    Ok(())
}

/// The geometry block at `pos` (the last one, which the reader keeps): its signal count and
/// the sum of the signals' value sizes in a frame.
fn geometry_of(b: &[u8], pos: usize) -> Result<(u64, u64), String> {
    let sec = u64_at(b, pos + 1).unwrap_or(0) as usize;
    let (ul, handles) = (
        u64_at(b, pos + 9).unwrap_or(0),
        u64_at(b, pos + 17).unwrap_or(0),
    );
    let packed = &b[pos + 25..pos + 1 + sec];
    let inflated;
    let mut s = if ul == packed.len() as u64 {
        packed
    } else {
        use std::io::Read;
        let mut out = Vec::new();
        let r = flate2::read::ZlibDecoder::new(packed)
            .take(ul + 1)
            .read_to_end(&mut out);
        if r.is_err() || out.len() as u64 != ul {
            return Err(format!(
                "the geometry does not decompress to its declared {ul} bytes"
            ));
        }
        inflated = out;
        &inflated[..]
    };
    let (mut widths, total) = (0u64, s.len());
    for i in 0..handles {
        let at = total - s.len();
        let v = uleb(&mut s, 32).ok_or_else(|| {
            format!("signal {i}'s width is not a 32-bit varint (byte {at} of the geometry data)")
        })?;
        widths += match v {
            0 => 8,           // a real
            0xffff_ffff => 0, // variable length
            w => w,
        };
    }
    Ok((handles, widths))
}

/// Decompresses an LZ4 block (the format of LZ4's block specification) of at most `cap`
/// bytes; `None` when it is malformed or longer.
fn lz4_block(src: &[u8], cap: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut s = src;
    let mut next = |s: &mut &[u8]| -> Option<usize> {
        let (&c, rest) = s.split_first()?;
        *s = rest;
        Some(usize::from(c))
    };
    let long = |s: &mut &[u8], mut n: usize, next: &mut dyn FnMut(&mut &[u8]) -> Option<usize>| loop {
        let c = next(s)?;
        n += c;
        if c != 255 {
            return Some(n);
        }
    };
    while !s.is_empty() {
        let token = next(&mut s)?;
        let mut lit = token >> 4;
        if lit == 15 {
            lit = long(&mut s, lit, &mut next)?;
        }
        if lit > s.len() || out.len() + lit > cap {
            return None;
        }
        out.extend_from_slice(&s[..lit]);
        s = &s[lit..];
        if s.is_empty() {
            break; // the last sequence has literals only
        }
        let off = next(&mut s)? | next(&mut s)? << 8;
        let mut len = (token & 15) + 4;
        if token & 15 == 15 {
            len = long(&mut s, len, &mut next)?;
        }
        if off == 0 || off > out.len() || out.len() + len > cap {
            return None;
        }
        let from = out.len() - off;
        for k in 0..len {
            out.push(out[from + k]);
        }
    }
    Some(out)
}

/// Checks a hierarchy block (types 4, 6, 7) at `pos`: it decompresses to its declared size,
/// and no variable aliases a signal past the geometry's `handles` (the hierarchy builder
/// sizes a table by the largest).
fn check_hierarchy(b: &[u8], pos: usize, handles: u64) -> Result<(), String> {
    let sec = u64_at(b, pos + 1).unwrap_or(0) as usize;
    let ul = u64_at(b, pos + 9).unwrap_or(0) as usize;
    let packed = &b[pos + 17..pos + 1 + sec];
    let bytes = match b[pos] {
        4 => {
            use std::io::Read;
            let mut out = Vec::new();
            flate2::read::DeflateDecoder::new(&packed[10..])
                .take(ul as u64 + 1)
                .read_to_end(&mut out)
                .ok()
                .map(|_| out)
        }
        6 => lz4_block(packed, ul),
        _ => {
            let mut s = packed;
            let lvl1 = uleb(&mut s, 64).unwrap_or(0) as usize;
            lz4_block(s, lvl1)
                .filter(|l| l.len() == lvl1)
                .and_then(|l| lz4_block(&l, ul))
        }
    }
    .filter(|h| h.len() == ul)
    .ok_or_else(|| format!("the hierarchy does not decompress to its declared {ul} bytes"))?;
    let mut s = &bytes[..];
    let at = |s: &[u8]| bytes.len() - s.len();
    // Walks the entries as the reader does, as long as it would go on.
    let cstr = |s: &mut &[u8]| -> Option<()> {
        let n = s.iter().position(|&c| c == 0)?;
        *s = &s[n + 1..];
        Some(())
    };
    let byte = |s: &mut &[u8]| -> Option<u8> {
        let (&c, rest) = s.split_first()?;
        *s = rest;
        Some(c)
    };
    // A varint: `Err` rejects the file (the reader would take it, dropping bits), `Ok(None)`
    // stops the walk (the reader fails there too).
    let num = |s: &mut &[u8], bits: u32| match leb(s, bits) {
        Ok(v) => Ok(Some(v)),
        Err(Leb::Stop) => Ok(None),
        Err(Leb::Overflow) => Err(format!(
            "a varint at hierarchy byte {} overflows",
            bytes.len() - s.len()
        )),
    };
    while let Some(kind) = byte(&mut s) {
        let go_on = match kind {
            0..=29 => {
                let p = at(s);
                if byte(&mut s).and_then(|_| cstr(&mut s)).is_none() {
                    break;
                }
                let alias = match num(&mut s, 32)? {
                    Some(_) => num(&mut s, 32)?,
                    None => None,
                };
                if let Some(alias) = alias.filter(|&a| a > handles) {
                    return Err(format!(
                        "a variable (hierarchy byte {p}) aliases signal {alias}, past the \
                         geometry's {handles}"
                    ));
                }
                alias.map(|_| ())
            }
            254 => byte(&mut s)
                .and_then(|_| cstr(&mut s))
                .and_then(|_| cstr(&mut s)),
            253 | 255 => Some(()),
            252 => match (byte(&mut s), byte(&mut s)) {
                (Some(0), Some(4 | 5)) => match num(&mut s, 64)? {
                    Some(_) if byte(&mut s).is_some() => num(&mut s, 64)?.map(|_| ()),
                    _ => None,
                },
                (Some(0..=3), Some(_)) if cstr(&mut s).is_some() => num(&mut s, 64)?.map(|_| ()),
                _ => None,
            },
            _ => None,
        };
        if go_on.is_none() {
            break; // the reader stops here too, with an error
        }
    }
    Ok(())
}

/// Checks a value-change block (types 1, 5, 8) at `pos`, whose block header and time table
/// trailer `check_blocks` has checked, against the geometry's signal count `handles`: the
/// frame's sizes, the block's signal count, the chain table (signal count, offsets inside
/// the block) and every signal's packed data (decompressed size). Returns the frame's
/// decompressed size.
fn check_vc_block(b: &[u8], pos: usize, handles: u64) -> Result<u64, String> {
    let s0 = pos + 1;
    let sec = u64_at(b, s0).unwrap_or(0) as usize;
    let tcl = u64_at(b, s0 + sec - 16).unwrap_or(0) as usize;
    // The chain table's length sits right before the time table.
    let chain_len_at = s0 + sec - 24 - tcl - 8;
    let at = |s: &[u8]| chain_len_at - s.len();
    let region = b
        .get(s0 + 32..chain_len_at)
        .ok_or("no room for the frame")?;
    let mut s = region;
    let field = |s: &mut &[u8], what: &str| {
        let p = at(s);
        uleb(s, 64).ok_or_else(|| format!("{what} at byte {p} is not a 64-bit varint"))
    };
    let frame_ul = field(&mut s, "the frame's decompressed length")?;
    let frame_cl = field(&mut s, "the frame's compressed length")?;
    field(&mut s, "the frame's signal count")?;
    if frame_cl > s.len() as u64 || !plausible(frame_ul, frame_cl) {
        return Err(format!(
            "implausible frame (byte {}): {frame_ul} bytes from {frame_cl}",
            at(s)
        ));
    }
    s = &s[frame_cl as usize..];
    let count_at = at(s);
    let max_handle = field(&mut s, "the signal count")?;
    if max_handle > handles {
        return Err(format!(
            "signal count {max_handle} at byte {count_at} exceeds the geometry's {handles}"
        ));
    }
    let vc_start = at(s);
    let chain_len = u64_at(b, chain_len_at).unwrap_or(u64::MAX);
    if s.is_empty() || chain_len > s.len() as u64 - 1 {
        return Err(format!(
            "chain table length {chain_len} at byte {chain_len_at} runs outside the block"
        ));
    }
    let chain_start = chain_len_at - chain_len as usize;
    let last = (chain_start - vc_start) as u64;
    if last > u64::from(u32::MAX) {
        return Err("value-change data over 4 GiB".into());
    }
    let mut chain = &b[chain_start..chain_len_at];
    let chain_at = |c: &[u8]| chain_len_at - c.len();
    // Each signal's packed data: a varint decompressed length (0: stored), then the data.
    let data = |offset: u64, len: u64| -> Result<(), String> {
        let p = vc_start + offset as usize;
        let mut d = &b[p..p + len as usize];
        match uleb(&mut d, 32) {
            Some(n) if n == 0 || plausible(n, len) => Ok(()),
            Some(n) => Err(format!(
                "implausible decompressed length {n} of {len} bytes of signal data at byte {p}"
            )),
            None => Err(format!("bad signal data header at byte {p}")),
        }
    };
    let mut idx = 0u64;
    let mut prev: Option<u64> = None;
    // A new offset (relative to `vc_start`, `delta` past the previous one) for signal `idx`:
    // it ends the previous one's data.
    let offset = |prev: &mut Option<u64>, delta: i64, p: usize| -> Result<(), String> {
        let lo = prev.unwrap_or(0) as i64;
        let new = lo + delta;
        if new <= lo || new as u64 >= last {
            return Err(format!(
                "chain table offset {new} at byte {p} is outside {lo}..{last}"
            ));
        }
        if let Some(o) = *prev {
            data(o, new as u64 - o)?;
        }
        *prev = Some(new as u64);
        Ok(())
    };
    let alias2 = b[pos] == 8;
    while !chain.is_empty() {
        let p = chain_at(chain);
        let badv = || format!("bad varint in the chain table at byte {p}");
        // Alias 2 (type 8): odd first byte, a signed varint (> 0: offset delta, else alias);
        // even, a run of signals without data. Otherwise (types 1, 5): 0 then an alias,
        // odd an offset delta, even a run.
        let entry = if alias2 && chain[0] & 1 == 1 {
            let sh = sleb(&mut chain).ok_or_else(badv)? >> 1;
            if sh > 0 {
                offset(&mut prev, sh, p)?;
            }
            true
        } else if alias2 {
            idx += uleb(&mut chain, 32).ok_or_else(badv)? >> 1;
            false
        } else {
            let raw = uleb(&mut chain, 32).ok_or_else(badv)?;
            if raw == 0 {
                uleb(&mut chain, 32).ok_or_else(badv)?;
            } else if raw & 1 == 1 {
                offset(&mut prev, (raw >> 1) as i64, p)?;
            } else {
                idx += raw >> 1;
            }
            raw == 0 || raw & 1 == 1
        };
        if entry {
            idx += 1;
        }
        if idx > max_handle {
            return Err(format!(
                "chain table entry at byte {p} is past the signal count {max_handle}"
            ));
        }
    }
    if let Some(o) = prev {
        data(o, last - o)?;
    }
    Ok(frame_ul)
}

/// Reads an FST file's header.
pub fn open(bytes: Vec<u8>) -> Result<(WaveHeader, Box<dyn Body>), ReadError> {
    check_blocks(&bytes)?;
    guarded("reading the header", move || {
        let opts = LoadOptions {
            multi_thread: false,
            remove_scopes_with_empty_name: false,
        };
        let wave = wellen::stream::read(Cursor::new(bytes), &opts)
            .map_err(|e| ReadError::new("", format!("not a readable FST file: {e}")))?;
        let h = wave.hierarchy();
        let mut header = WaveHeader::default();
        let mut signals: Vec<SignalRef> = Vec::new();
        for vref in h.all_vars() {
            let vr = &h[vref];
            let width = vr.length(h).unwrap_or(0);
            if width == 0 {
                continue; // reals, strings, events: never mapped
            }
            let sref = vr.signal_ref();
            let signal = match signals.iter().position(|s| *s == sref) {
                Some(i) => i,
                None => {
                    signals.push(sref);
                    header.widths.push(width);
                    signals.len() - 1
                }
            };
            header.vars.push(VarDecl {
                name: vr.full_name(h),
                signal,
                width,
                index: vr.index().map(|i| {
                    if i.msb() == i.lsb() && width == 1 {
                        Index::Bit(i.msb())
                    } else {
                        Index::Range(i.msb(), i.lsb())
                    }
                }),
            });
        }
        Ok((header, Box::new(FstBody { wave, signals }) as Box<dyn Body>))
    })
}

struct FstBody {
    wave: Wave,
    signals: Vec<SignalRef>,
}

impl Body for FstBody {
    fn read_into(&mut self, sink: &mut dyn Sink) -> Result<(), ReadError> {
        let wanted: Vec<SignalRef> = self
            .signals
            .iter()
            .enumerate()
            .filter(|(i, _)| sink.wants(*i))
            .map(|(_, s)| *s)
            .collect();
        let index: std::collections::HashMap<SignalRef, usize> = self
            .signals
            .iter()
            .enumerate()
            .map(|(i, s)| (*s, i))
            .collect();
        let wave = &mut self.wave;
        guarded("reading value changes", move || {
            let mut last: Option<u64> = None;
            let mut buf = Vec::new();
            wave.stream_changes(
                Filter::include_signals(&wanted),
                |t, s, v: SignalValueRef<'_>| -> Result<(), ReadError> {
                    if last.is_some_and(|p| t < p) {
                        return Err(ReadError::new("", format!("time goes backwards to {t}")));
                    }
                    if last != Some(t) {
                        last = Some(t);
                        sink.time(t);
                    }
                    let Some(&sig) = index.get(&s) else {
                        return Ok(());
                    };
                    let bits = v.to_bit_string().ok_or_else(|| {
                        ReadError::new("", "a real or string value on a mapped signal")
                    })?;
                    buf.clear();
                    for c in bits.bytes() {
                        buf.push(match c {
                            b'0' | b'L' | b'l' => b'0',
                            b'1' | b'H' | b'h' => b'1',
                            b'z' | b'Z' => b'z',
                            _ => b'x',
                        });
                    }
                    sink.change(sig, &buf);
                    Ok(())
                },
            )
            .map_err(|e| match e {
                wellen::stream::StreamError::Callback(e) => e,
                wellen::stream::StreamError::Wellen(e) => {
                    ReadError::new("", format!("FST body: {e}"))
                }
            })
        })
    }
}
