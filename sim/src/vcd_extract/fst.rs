//! FST waveforms (GTKWave's compressed format, written by Verilator `--trace-fst`, Icarus,
//! GHDL, nvc, ...) read with `wellen`, the library of the Surfer waveform viewer.
//!
//! The file is held in memory (the reader seeks). `wellen` and its FST decoder can panic on
//! a corrupted file; such a panic is caught and reported as an error naming the file, and the
//! panic message is not printed.

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

/// Checks the block structure of an FST file before the FST reader sees it: its decoder
/// allocates what the file declares, and a failed allocation aborts the process (no panic to
/// catch). Every block must lie inside the file, and the counts and decompressed sizes that
/// size allocations must be plausible for the block's length.
fn check_blocks(b: &[u8]) -> Result<(), ReadError> {
    let bad = |pos: usize, m: String| ReadError::new("", format!("FST block at byte {pos}: {m}"));
    let u64_at = |i: usize| -> Option<u64> {
        b.get(i..i + 8)
            .and_then(|x| x.try_into().ok())
            .map(u64::from_be_bytes)
    };
    let len = b.len() as u64;
    let mut pos = 0usize;
    while pos < b.len() {
        let kind = b[pos];
        let sec = u64_at(pos + 1).ok_or_else(|| bad(pos, "truncated".into()))?;
        if sec < 8 || sec > len - pos as u64 - 1 {
            return Err(bad(pos, format!("length {sec} runs outside the file")));
        }
        let body = pos + 9;
        let plausible = |n: u64| n <= MAX_INFLATED && n <= sec.saturating_mul(1032) + 64;
        match kind {
            0 => {
                if sec != 329 {
                    return Err(bad(pos, "a header block is 329 bytes".into()));
                }
                // Scope count, var count and max var id follow the length field at 40, 48, 56.
                for off in [40, 48, 56] {
                    let n = u64_at(pos + 1 + off).unwrap_or(u64::MAX);
                    if n > len.saturating_mul(1032) || n > MAX_INFLATED {
                        return Err(bad(pos, format!("implausible count {n}")));
                    }
                }
            }
            3 | 4 | 6 | 7 => {
                let n = u64_at(body).unwrap_or(u64::MAX);
                if !plausible(n) {
                    return Err(bad(pos, format!("implausible decompressed size {n}")));
                }
                if kind == 3 && u64_at(body + 8).is_none_or(|h| h > n) {
                    return Err(bad(pos, "implausible signal count".into()));
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
                    || ul > cl.saturating_mul(1032) + 64
                    || items > ul
                {
                    return Err(bad(pos, "implausible time table".into()));
                }
            }
            2 | 255 => {}
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
    Ok(())
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
