//! Fault injection into a VCD (a test aid for the comparison flow, run on our own
//! waveforms): the `vcd` crate rewrites the file with chosen signal slices forced.

use super::reader::{Index, VarDecl, WaveHeader};
use super::signals::{value_at, Sig, Signals};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::{BufRead, Write};
use vcd::{Command, IdCode, ReferenceIndex, ScopeItem, Value};

/// The variables of a `vcd` crate header, by full name, with a signal number per id code.
fn wave_header(items: &[ScopeItem]) -> (WaveHeader, HashMap<IdCode, usize>) {
    let mut h = WaveHeader::default();
    let mut ids: HashMap<IdCode, usize> = HashMap::new();
    let mut stack: Vec<(&[ScopeItem], String)> = vec![(items, String::new())];
    while let Some((items, prefix)) = stack.pop() {
        for it in items {
            let join = |n: &str| {
                if prefix.is_empty() {
                    n.to_string()
                } else {
                    format!("{prefix}.{n}")
                }
            };
            match it {
                ScopeItem::Scope(s) => stack.push((&s.items, join(&s.identifier))),
                ScopeItem::Var(v) => {
                    let next = ids.len();
                    let signal = *ids.entry(v.code).or_insert(next);
                    if signal == h.widths.len() {
                        h.widths.push(v.size);
                    }
                    h.vars.push(VarDecl {
                        name: join(&v.reference),
                        signal,
                        width: v.size,
                        index: v.index.map(|i| match i {
                            ReferenceIndex::BitSelect(b) => Index::Bit(b.into()),
                            ReferenceIndex::Range(m, l) => Index::Range(m.into(), l.into()),
                        }),
                    });
                }
                _ => {}
            }
        }
    }
    (h, ids)
}

fn ascii(v: &vcd::Vector) -> Vec<u8> {
    v.iter()
        .map(|x| match x {
            Value::V0 => b'0',
            Value::V1 => b'1',
            Value::X => b'x',
            Value::Z => b'z',
        })
        .collect()
}

fn state(c: u8) -> Value {
    match c {
        b'0' => Value::V0,
        b'1' => Value::V1,
        b'z' => Value::Z,
        _ => Value::X,
    }
}

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

/// Copies a VCD (trusted: our own simulations), applying `overrides` (for testing the comparison flow: flip a payload bit,
/// drop a flit by forcing `valid` low, swap packets by exchanging data).
pub fn inject_faults<R: BufRead, W: Write>(
    input: R,
    output: W,
    overrides: &[Override],
) -> Result<(), String> {
    let mut parser = vcd::Parser::new(input);
    let header = parser.parse_header().map_err(|e| e.to_string())?;
    let (wh, ids) = wave_header(&header.items);
    let mut sigs = Signals::new(&wh);
    let code_of: HashMap<usize, IdCode> = ids.iter().map(|(c, s)| (*s, *c)).collect();
    let slot_of =
        |sigs: &Signals, id: &IdCode| ids.get(id).and_then(|s| sigs.slots.get(s)).copied();
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
                        emit(&mut w, code_of[&sigs.codes[slot]], &cur[slot])
                            .map_err(|e| e.to_string())?;
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
                        emit(&mut w, code_of[&sigs.codes[slot]], &v).map_err(|e| e.to_string())?;
                        restore.insert(slot);
                    }
                }
                w.command(&cmd).map_err(|e| e.to_string())?;
            }
            Command::ChangeScalar(id, v) => {
                if let Some(slot) = slot_of(&sigs, id) {
                    for (i, x) in cur[slot].iter_mut().enumerate() {
                        *x = if i == 0 { *v } else { Value::V0 };
                    }
                    restore.remove(&slot);
                }
                w.command(&cmd).map_err(|e| e.to_string())?;
            }
            Command::ChangeVector(id, v) => {
                if let Some(slot) = slot_of(&sigs, id) {
                    let c = ascii(v);
                    for (i, x) in cur[slot].iter_mut().enumerate() {
                        *x = state(value_at(&c, i));
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
