//! vLLM routed-experts arrays (`.npy`) as routing traces.
//!
//! vLLM's `--enable-return-routed-experts` returns, per request, an integer array of shape
//! `[tokens, moe_layers, top_k]`: for every token and MoE layer, the IDs of the experts it was
//! routed to. Saved with `numpy.save`, that is a `.npy` file. This module reads one into a
//! [`Trace`]: one (step 0, layer `l`) group per MoE layer, the tokens split over the EP ranks in
//! contiguous blocks as evenly as possible (rank `r` holds tokens
//! `r*T/P .. (r+1)*T/P`, the way a sequence is sharded over data-parallel ranks), one record per
//! rank and layer.
//!
//! Accepted: NumPy format versions 1–3, C order, little- or big-endian integers of 1, 2, 4 or 8
//! bytes (vLLM writes int16), exactly three dimensions. Every expert ID is checked like a JSON
//! trace's: `0..experts`, no repeat within a token's list. Errors name the file and, for a bad
//! value, its `[token][layer][slot]` index. The data must be as long as the header's shape says;
//! the header is checked before anything is allocated, so a lying shape costs nothing.

use crate::trace::format::{LineError, RecordChecker, Trace, TraceRecord};
use npyz::{DType, NpyFile, TypeChar};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use thiserror::Error;

/// Largest number of token×layer×slot entries read from one file (2^31: 4 GiB of int16).
pub const MAX_NPY_ENTRIES: u64 = 1 << 31;

/// Why a `.npy` routing array was rejected.
#[derive(Debug, Error)]
pub enum NpyError {
    /// The file could not be opened or read.
    #[error("{file}: {source}")]
    Io {
        /// File name as given.
        file: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The header is not a NumPy array header, or describes an array we do not read.
    #[error("{file}: header: {message}")]
    Header {
        /// File name as given.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// The data ends before the shape says it should.
    #[error("{file}: data: truncated: the header's shape {shape:?} needs {needed} values, the file holds {found}")]
    Truncated {
        /// File name as given.
        file: String,
        /// The header's shape.
        shape: Vec<u64>,
        /// Values the shape needs.
        needed: u64,
        /// Values present.
        found: u64,
    },
    /// A value is not a valid expert ID of its token.
    #[error("{file}: value [{token}][{layer}][{slot}]: {message}")]
    Value {
        /// File name as given.
        file: String,
        /// Token index.
        token: u64,
        /// Layer index.
        layer: u64,
        /// Position in the token's top-k list.
        slot: u64,
        /// What is wrong.
        message: String,
    },
    /// The EP degree cannot split this array.
    #[error("{file}: --ep {ep}: {message}")]
    Ranks {
        /// File name as given.
        file: String,
        /// The EP degree asked for.
        ep: usize,
        /// What is wrong.
        message: String,
    },
}

/// Reads a vLLM routed-experts array from `path`; see the module documentation.
pub fn read_npy(path: &Path, experts: usize, ep: usize) -> Result<Trace, NpyError> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|source| NpyError::Io {
        file: name.clone(),
        source,
    })?;
    let len = file.metadata().map(|m| m.len()).ok();
    read_npy_from(BufReader::new(file), len, &name, experts, ep)
}

/// Reads a routed-experts array from `reader` (`len`: its total length in bytes, if known,
/// to reject a truncated file before reading it); `name` names it in errors.
pub fn read_npy_from(
    reader: impl Read + 'static,
    len: Option<u64>,
    name: &str,
    experts: usize,
    ep: usize,
) -> Result<Trace, NpyError> {
    let header_err = |message: String| NpyError::Header {
        file: name.to_string(),
        message,
    };
    if ep == 0 || ep > super::MAX_EP {
        return Err(NpyError::Ranks {
            file: name.to_string(),
            ep,
            message: format!("must be between 1 and {}", super::MAX_EP),
        });
    }
    let npy = NpyFile::new(reader).map_err(|e| header_err(e.to_string()))?;
    let header = npy.header().clone();
    let shape = header.shape().to_vec();
    if shape.len() != 3 {
        return Err(header_err(format!(
            "shape {shape:?}: expected 3 dimensions [tokens, moe_layers, top_k]"
        )));
    }
    if npy.order() != npyz::Order::C {
        return Err(header_err(
            "Fortran order: save the array in C order".into(),
        ));
    }
    let (width, signed) = match header.dtype() {
        DType::Plain(ts) if matches!(ts.type_char(), TypeChar::Int | TypeChar::Uint) => {
            (ts.size_field(), ts.type_char() == TypeChar::Int)
        }
        other => {
            return Err(header_err(format!(
                "dtype {}: expected an integer type (vLLM writes int16, '<i2')",
                other.descr()
            )))
        }
    };
    if ![1, 2, 4, 8].contains(&width) {
        return Err(header_err(format!(
            "integers of {width} bytes are not read"
        )));
    }
    let (tokens, layers, topk) = (shape[0], shape[1], shape[2]);
    let entries = tokens
        .checked_mul(layers)
        .and_then(|v| v.checked_mul(topk))
        .filter(|&v| v <= MAX_NPY_ENTRIES)
        .ok_or_else(|| {
            header_err(format!(
                "shape {shape:?} holds more than {MAX_NPY_ENTRIES} values"
            ))
        })?;
    if tokens == 0 || layers == 0 || topk == 0 {
        return Err(header_err(format!(
            "shape {shape:?}: every dimension must be at least 1"
        )));
    }
    if let Some(len) = len {
        // The header is at most len bytes, so the data holds at most len / width values.
        let found = len / width;
        if found < entries {
            return Err(NpyError::Truncated {
                file: name.to_string(),
                shape,
                needed: entries,
                found,
            });
        }
    }
    let ranks = ep as u64;
    let mut records: Vec<TraceRecord> = Vec::new();
    for layer in 0..layers {
        for rank in 0..ranks {
            let first = rank * tokens / ranks;
            let last = (rank + 1) * tokens / ranks;
            records.push(TraceRecord {
                step: 0,
                layer,
                rank: rank as u32,
                num_tokens: (last - first) as usize,
                topk: topk as usize,
                top_indices: Vec::with_capacity((last - first) as usize),
                label: None,
            });
        }
    }
    let values = read_values(npy, width, signed).map_err(header_err)?;
    let mut list: Vec<u16> = Vec::with_capacity(topk as usize);
    let mut got = 0u64;
    for (i, v) in values.enumerate() {
        let v = match v {
            Ok(v) => v,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(NpyError::Truncated {
                    file: name.to_string(),
                    shape,
                    needed: entries,
                    found: got,
                })
            }
            Err(source) => {
                return Err(NpyError::Io {
                    file: name.to_string(),
                    source,
                })
            }
        };
        let (token, layer, slot) = (
            i as u64 / (layers * topk),
            i as u64 / topk % layers,
            i as u64 % topk,
        );
        let bad = |message: String| NpyError::Value {
            file: name.to_string(),
            token,
            layer,
            slot,
            message,
        };
        if v < 0 || v >= experts as i128 {
            return Err(bad(format!(
                "expert ID {v} out of range (the model has {experts} experts)"
            )));
        }
        let id = v as u16;
        if list.contains(&id) {
            return Err(bad(format!(
                "expert {id} appears twice in this token's list"
            )));
        }
        list.push(id);
        if slot + 1 == topk {
            // The rank whose block holds the token: floor(token*P/T) or the next one
            // (integer blocks may be uneven).
            let rank = (token * ranks / tokens..ranks)
                .find(|&r| token < (r + 1) * tokens / ranks)
                .unwrap_or(ranks - 1);
            let rec = &mut records[(layer * ranks + rank) as usize];
            rec.top_indices.push(std::mem::take(&mut list));
            list.reserve(topk as usize);
        }
        got += 1;
        if got == entries {
            break;
        }
    }
    if got < entries {
        return Err(NpyError::Truncated {
            file: name.to_string(),
            shape,
            needed: entries,
            found: got,
        });
    }
    records.retain(|r| r.num_tokens > 0);
    let mut checker = RecordChecker::new(Some(experts));
    for (i, r) in records.iter().enumerate() {
        checker
            .check(r, i + 1)
            .map_err(|e: LineError| NpyError::Header {
                file: name.to_string(),
                message: e.to_string(),
            })?;
    }
    Ok(Trace::new(
        records,
        Some(format!("vllm-routed-experts: {name}")),
    ))
}

/// The array's values as `i128` (wide enough for every integer type), or why the dtype
/// cannot be read.
fn read_values<R: Read + 'static>(
    npy: NpyFile<R>,
    width: u64,
    signed: bool,
) -> Result<Values, String> {
    fn boxed<T, R>(npy: NpyFile<R>) -> Result<Values, String>
    where
        T: npyz::Deserialize + Into<i128> + 'static,
        R: Read + 'static,
    {
        let it = npy.data::<T>().map_err(|e| e.to_string())?;
        Ok(Box::new(it.map(|v| v.map(Into::into))))
    }
    match (width, signed) {
        (1, true) => boxed::<i8, R>(npy),
        (1, false) => boxed::<u8, R>(npy),
        (2, true) => boxed::<i16, R>(npy),
        (2, false) => boxed::<u16, R>(npy),
        (4, true) => boxed::<i32, R>(npy),
        (4, false) => boxed::<u32, R>(npy),
        (8, true) => boxed::<i64, R>(npy),
        _ => boxed::<u64, R>(npy),
    }
}

/// The values of an array, in C order.
type Values = Box<dyn Iterator<Item = io::Result<i128>>>;

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A `.npy` file (format 1.0) of `descr` values with `shape`, from raw little-endian bytes.
    fn npy(descr: &str, shape: &[u64], data: &[u8]) -> Vec<u8> {
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        let tuple = if dims.len() == 1 {
            format!("({},)", dims[0])
        } else {
            format!("({})", dims.join(", "))
        };
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn i16s(v: &[i16]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn read(bytes: Vec<u8>, experts: usize, ep: usize) -> Result<Trace, NpyError> {
        let len = bytes.len() as u64;
        read_npy_from(std::io::Cursor::new(bytes), Some(len), "r.npy", experts, ep)
    }

    #[test]
    fn reads_tokens_layers_and_splits_ranks_in_blocks() {
        // 3 tokens, 2 layers, top-2.
        let data = i16s(&[
            0, 1, 2, 3, /* t1 */ 4, 5, 6, 7, /* t2 */ 1, 7, 3, 0,
        ]);
        let t = read(npy("<i2", &[3, 2, 2], &data), 8, 2).unwrap();
        assert_eq!(t.step_layers(), vec![(0, 0), (0, 1)]);
        // Rank 0 holds token 0, rank 1 tokens 1 and 2.
        let l0 = t.tokens(0, 0);
        assert_eq!(
            l0,
            vec![
                (0, 0, &[0u16, 1][..]),
                (1, 0, &[4, 5][..]),
                (1, 1, &[1, 7][..])
            ]
        );
        let l1: Vec<_> = t.tokens(0, 1).into_iter().map(|x| x.2.to_vec()).collect();
        assert_eq!(l1, vec![vec![2, 3], vec![6, 7], vec![3, 0]]);
        assert!(t.label.as_deref().unwrap().contains("vllm"));
        // Other integer types and byte orders read the same.
        let be: Vec<u8> = [0i32, 1, 2, 3, 4, 5, 6, 7, 1, 7, 3, 0]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        assert_eq!(read(npy(">i4", &[3, 2, 2], &be), 8, 2).unwrap(), t);
        // More ranks than tokens: empty ranks have no record.
        let t4 = read(npy("<i2", &[3, 2, 2], &data), 8, 4).unwrap();
        assert_eq!(t4.tokens(0, 0).len(), 3);
    }

    #[test]
    fn rejects_bad_arrays_naming_what_is_wrong() {
        let ok = i16s(&[0, 1, 2, 3]);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (npy("<f4", &[1, 1, 4], &[0; 16]), "integer"),
            (npy("<i2", &[4, 1], &i16s(&[0, 1, 2, 3])), "3 dimensions"),
            (npy("<i2", &[1, 0, 4], &[]), "at least 1"),
            (npy("<i2", &[1, 1, 4], &ok[..6]), "truncated"),
            (npy("<i2", &[1 << 40, 1 << 20, 8], &ok), "more than"),
            (
                npy("<i2", &[1, 1, 4], &i16s(&[0, 1, 9, 3])),
                "[0][0][2]: expert ID 9",
            ),
            (
                npy("<i2", &[1, 1, 4], &i16s(&[0, 1, -1, 3])),
                "expert ID -1",
            ),
            (
                npy("<i2", &[1, 1, 4], &i16s(&[0, 1, 1, 3])),
                "appears twice",
            ),
            (b"not numpy".to_vec(), "header"),
            (Vec::new(), "header"),
        ];
        for (bytes, want) in cases {
            let e = read(bytes, 8, 1).unwrap_err().to_string();
            assert!(e.starts_with("r.npy") && e.contains(want), "{want}: {e}");
        }
        let e = read(npy("<i2", &[1, 1, 4], &ok), 8, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--ep 0"), "{e}");
        // Without the length up front, truncation is still found.
        let short = npy("<i2", &[2, 1, 4], &ok);
        let e = read_npy_from(std::io::Cursor::new(short), None, "s.npy", 8, 1)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.npy") && e.contains("truncated"), "{e}");
    }

    #[test]
    fn fuzz_mutated_and_truncated_files_never_panic() {
        let cases: u64 = std::env::var("DYSHARP_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3000);
        let base = npy(
            "<i2",
            &[3, 2, 2],
            &i16s(&[0, 1, 2, 3, 4, 5, 6, 7, 1, 7, 3, 0]),
        );
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..cases {
            let mut b = base.clone();
            match rng.gen_range(0..3) {
                0 => b.truncate(rng.gen_range(0..b.len())),
                1 => {
                    for _ in 0..rng.gen_range(1..6) {
                        let i = rng.gen_range(0..b.len());
                        b[i] = rng.gen();
                    }
                }
                _ => b = (0..rng.gen_range(0..200)).map(|_| rng.gen()).collect(),
            }
            let _ = read(b, 8, rng.gen_range(0..5));
        }
    }
}
