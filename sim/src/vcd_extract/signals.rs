//! Mapped signals: names (with slices) resolved against a waveform header, and the current
//! values of the tracked ones.

use super::reader::{Index, WaveHeader};
use std::collections::HashMap;

/// Widest variable whose values are tracked (a mapped name or slice may use any part of it).
pub const MAX_TRACKED_VAR_BITS: u32 = 1 << 16;

/// Widest mapped signal or slice (`wdata` of 64 lines).
pub const MAX_MAPPED_BITS: usize = 128 * 64;

/// The variables of a header by full name, and the slots of the tracked signals.
pub struct Signals {
    vars: HashMap<String, Vec<(usize, u32, Option<Index>)>>,
    /// Header signal → slot.
    pub slots: HashMap<usize, usize>,
    /// Width of each slot.
    pub widths: Vec<u32>,
    /// Header signal of each slot.
    pub codes: Vec<usize>,
}

/// A resolved signal (slice): per result bit, LSB first, (slot, bit position in the var).
#[derive(Clone, Debug)]
pub struct Sig {
    /// As written in the mapping (expanded).
    pub name: String,
    /// Bits, LSB first.
    pub bits: Vec<(usize, u32)>,
}

/// Splits `name[a:b]` / `name[a]` into the name and (first, second) index.
fn split_slice(s: &str) -> Option<(&str, i64, i64)> {
    let body = s.strip_suffix(']')?;
    let i = body.rfind('[')?;
    let (name, idx) = (body.get(..i)?, body.get(i + 1..)?);
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
    /// The variables of `header`.
    pub fn new(header: &WaveHeader) -> Self {
        let mut vars: HashMap<String, Vec<(usize, u32, Option<Index>)>> = HashMap::new();
        for v in &header.vars {
            vars.entry(v.name.clone())
                .or_default()
                .push((v.signal, v.width, v.index));
        }
        Signals {
            vars,
            slots: HashMap::new(),
            widths: Vec::new(),
            codes: Vec::new(),
        }
    }

    fn slot(&mut self, signal: usize, width: u32) -> usize {
        if let Some(s) = self.slots.get(&signal) {
            return *s;
        }
        let s = self.widths.len();
        self.slots.insert(signal, s);
        self.widths.push(width.max(1));
        self.codes.push(signal);
        s
    }

    fn similar(&self, name: &str) -> String {
        let leaf_of = |k: &str| -> String {
            let l = k.rsplit('.').next().unwrap_or(k);
            l.split('[').next().unwrap_or(l).to_ascii_lowercase()
        };
        let want = leaf_of(name);
        let mut v: Vec<&String> = self
            .vars
            .keys()
            .filter(|k| {
                let l = leaf_of(k);
                l.contains(&want) || (!l.is_empty() && want.contains(&l))
            })
            .collect();
        if v.is_empty() {
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
    /// most significant bit). At most [`MAX_MAPPED_BITS`] bits.
    pub fn resolve(&mut self, spec: &str) -> Result<Sig, String> {
        let spec = spec.trim();
        let (name, slice) = if self.vars.contains_key(spec) {
            (spec, None)
        } else if let Some((n, a, b)) = split_slice(spec) {
            (n, Some((a, b)))
        } else {
            (spec, None)
        };
        let parts = self.vars.get(name).cloned().ok_or_else(|| {
            format!(
                "signal `{name}` is not in the waveform{}",
                self.similar(name)
            )
        })?;
        if let Some((_, w, _)) = parts.iter().find(|(_, w, _)| *w > MAX_TRACKED_VAR_BITS) {
            return Err(format!(
                "`{name}` is {w} bits wide; variables over {MAX_TRACKED_VAR_BITS} bits are not read"
            ));
        }
        // Each part: (slot, width, lowest declared index, ascending declaration).
        let mut spans: Vec<(usize, u32, i64, bool)> = Vec::new();
        for (sig, w, idx) in &parts {
            let slot = self.slot(*sig, *w);
            let (lo, asc) = match idx {
                None => (0, false),
                Some(Index::Bit(i)) => (*i, false),
                // Position k (LSB first) holds declared index l + k (descending declaration)
                // or l - k (ascending).
                Some(Index::Range(m, l)) => (*l, m < l),
            };
            spans.push((slot, *w, lo, asc));
        }
        let pos_of = |idx: i64| -> Option<(usize, u32)> {
            spans.iter().find_map(|&(slot, w, l, asc)| {
                let k = if asc {
                    l.checked_sub(idx)?
                } else {
                    idx.checked_sub(l)?
                };
                (0..i64::from(w)).contains(&k).then_some((slot, k as u32))
            })
        };
        let too_wide = |n: u128| {
            format!("`{spec}` is {n} bits wide; a mapped signal has at most {MAX_MAPPED_BITS}")
        };
        let bits = match slice {
            None => {
                let total: u128 = spans.iter().map(|s| u128::from(s.1)).sum();
                if total > MAX_MAPPED_BITS as u128 {
                    return Err(too_wide(total));
                }
                if let [(slot, w, _, _)] = spans.as_slice() {
                    (0..*w).map(|k| (*slot, k)).collect()
                } else {
                    let mut all: Vec<(i64, (usize, u32))> = Vec::new();
                    for &(slot, w, l, asc) in &spans {
                        for k in 0..w {
                            let i = if asc {
                                l - i64::from(k)
                            } else {
                                l + i64::from(k)
                            };
                            all.push((i, (slot, k)));
                        }
                    }
                    all.sort_by_key(|x| x.0);
                    all.dedup_by_key(|x| x.0);
                    all.into_iter().map(|x| x.1).collect()
                }
            }
            Some((a, b)) => {
                let n = (i128::from(a) - i128::from(b)).unsigned_abs() + 1;
                if n > MAX_MAPPED_BITS as u128 {
                    return Err(too_wide(n));
                }
                let mut v = Vec::with_capacity(n as usize);
                for k in 0..n as i64 {
                    let idx = if a >= b { b + k } else { b - k };
                    let bit = pos_of(idx)
                        .ok_or_else(|| format!("`{spec}`: bit {idx} is outside `{name}`"))?;
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

    fn set(&mut self, i: usize, c: u8) {
        let (w, b) = (i / 64, i % 64);
        let m = 1u64 << b;
        let (Some(val), Some(unk)) = (self.val.get_mut(w), self.unk.get_mut(w)) else {
            return;
        };
        match c {
            b'0' => {
                *val &= !m;
                *unk &= !m;
            }
            b'1' => {
                *val |= m;
                *unk &= !m;
            }
            _ => {
                *val &= !m;
                *unk |= m;
            }
        }
    }

    fn get(&self, i: usize) -> Option<bool> {
        let (w, b) = (i / 64, i % 64);
        let unk = self.unk.get(w).copied().unwrap_or(u64::MAX);
        if unk >> b & 1 == 1 {
            None
        } else {
            Some(self.val.get(w).copied().unwrap_or(0) >> b & 1 == 1)
        }
    }
}

/// Value of LSB-first position `i` of a change `v` (states, most significant first): VCD
/// left-extension gives 0 for a leading 0/1, else the leading x/z.
pub fn value_at(v: &[u8], i: usize) -> u8 {
    let n = v.len();
    if i < n {
        v.get(n - 1 - i).copied().unwrap_or(b'x')
    } else {
        match v.first() {
            Some(b'x') => b'x',
            Some(b'z') => b'z',
            _ => b'0',
        }
    }
}

/// The tracked values.
pub struct State {
    bits: Vec<Bits>,
    widths: Vec<u32>,
}

impl State {
    /// All tracked slots, x.
    pub fn new(widths: &[u32]) -> Self {
        State {
            bits: widths.iter().map(|w| Bits::new(*w)).collect(),
            widths: widths.to_vec(),
        }
    }

    /// Applies a change to `slot`.
    pub fn apply(&mut self, slot: usize, v: &[u8]) {
        let w = self.widths.get(slot).copied().unwrap_or(0) as usize;
        if let Some(b) = self.bits.get_mut(slot) {
            for i in 0..w {
                b.set(i, value_at(v, i));
            }
        }
    }

    /// A bit: Some if known.
    pub fn bit(&self, (slot, pos): (usize, u32)) -> Option<bool> {
        self.bits.get(slot).and_then(|b| b.get(pos as usize))
    }

    /// Whether the first bit of `s` is a known 1.
    pub fn one(&self, s: &Sig) -> bool {
        s.bits.first().is_some_and(|b| self.bit(*b) == Some(true))
    }

    /// Up to 128 bits of `s` from result bit `from`: (value with x/z read as 0, x/z mask).
    pub fn gather(&self, s: &Sig, from: usize, width: usize) -> (u128, u128) {
        let mut v = 0u128;
        let mut unk = 0u128;
        let bits = s.bits.get(from..).unwrap_or(&[]);
        for (k, b) in bits.iter().take(width.min(128)).enumerate() {
            match self.bit(*b) {
                Some(true) => v |= 1u128 << k,
                Some(false) => {}
                None => unk |= 1u128 << k,
            }
        }
        (v, unk)
    }
}
