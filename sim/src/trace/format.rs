//! The routing-trace file format: JSON Lines, one object per (step, layer, rank).
//!
//! Each non-blank line is a JSON object compatible with Megatron-core's routing trace:
//!
//! ```json
//! {"step":0,"layer":0,"rank":0,"num_tokens":2,"topk":2,"top_indices":[[3,5],[0,7]]}
//! ```
//!
//! * `step`, `layer`: non-negative integers; `rank`: the source EP rank (0..=2^32-1).
//! * `num_tokens`: the number of tokens of this rank; must equal the length of `top_indices`.
//! * `topk`: at least 1, the same on every record of a file; every token list has exactly `topk`
//!   expert IDs.
//! * `top_indices`: one list per token of distinct expert IDs, each `0..=65535` (the switch
//!   carries 16-bit expert IDs) and below the number of experts when the reader is told it.
//! * `label` (optional string): where the data came from, e.g.
//!   `"calibrated-synthetic: counts OLMoE-1B-7B/github/7"`. Preserved on read and write.
//!
//! Unknown keys are ignored, so newer Megatron versions may add fields. Blank lines are skipped.
//! A rank may have several records for one (step, layer) (for example micro-batches); its tokens
//! then follow in record order.
//!
//! Errors name the file, the 1-based line and the field, for example
//! `trace.jsonl:17: field "top_indices"[3]: expected 8 expert IDs, found 7`.

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use thiserror::Error;

/// Largest expert ID a trace may hold: expert IDs travel as 16-bit values in the packet's
/// target-extension flits.
pub const MAX_EXPERT_ID: u16 = u16::MAX;

/// The routing of the tokens of one EP rank in one (step, layer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceRecord {
    /// Training or inference step.
    pub step: u64,
    /// MoE layer index.
    pub layer: u64,
    /// Source EP rank (the GPU that owns these tokens).
    pub rank: u32,
    /// Number of tokens; equals `top_indices.len()` in a valid record.
    pub num_tokens: usize,
    /// Experts per token; every list in `top_indices` has this length in a valid record.
    pub topk: usize,
    /// For each token, its `topk` distinct expert IDs.
    pub top_indices: Vec<Vec<u16>>,
    /// Provenance of the data (for example `"calibrated-synthetic: counts MODEL/CORPUS/LAYER"`),
    /// written as the key `"label"` when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// A routing trace: records in file order, plus the trace's provenance label.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Trace {
    /// The records, in file order.
    pub records: Vec<TraceRecord>,
    /// Provenance of the whole trace. The reader sets it to the first `"label"` found on a
    /// record; the writer writes it into every record that has no label of its own.
    pub label: Option<String>,
}

/// An error reading or writing a trace file.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The file could not be opened, read or written.
    #[error("{file}: {source}")]
    Io {
        /// File name as given.
        file: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A line (or, for an in-memory trace, a record, numbered from 1) is invalid.
    #[error("{file}:{line}: {error}")]
    Line {
        /// File name as given.
        file: String,
        /// 1-based line number (record number for an in-memory trace).
        line: usize,
        /// What is wrong with the line.
        error: LineError,
    },
    /// The file holds no record.
    #[error("{file}: empty trace: no records")]
    Empty {
        /// File name as given.
        file: String,
    },
}

/// What is wrong with one line of a trace file. The message names the field; the file and
/// line are added by [`TraceError::Line`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LineError {
    /// The line is not valid UTF-8.
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// The line is not one valid JSON value.
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    /// The line is valid JSON but not an object.
    #[error("expected a JSON object, found {0}")]
    NotObject(String),
    /// A required key is absent.
    #[error("missing field \"{0}\"")]
    MissingField(&'static str),
    /// A value has the wrong JSON type or range. `field` is a path such as `"top_indices"[3][1]`.
    #[error("field {field}: expected {expected}, found {found}")]
    WrongType {
        /// Path of the offending value, e.g. `"rank"` or `"top_indices"[3]`.
        field: String,
        /// What was expected.
        expected: &'static str,
        /// What was found.
        found: String,
    },
    /// `num_tokens` disagrees with the number of token lists in `top_indices`.
    #[error("field \"num_tokens\": {declared} tokens declared, but \"top_indices\" holds {found} token lists")]
    TokenCount {
        /// The value of `num_tokens`.
        declared: usize,
        /// The length of `top_indices`.
        found: usize,
    },
    /// `topk` is 0.
    #[error("field \"topk\": must be at least 1")]
    ZeroTopk,
    /// `topk` differs from the `topk` of the first record.
    #[error("field \"topk\": {found} differs from topk {expected} on line {first_line}")]
    TopkChanged {
        /// `topk` of this record.
        found: usize,
        /// `topk` of the first record.
        expected: usize,
        /// Line of the first record.
        first_line: usize,
    },
    /// A token's list does not hold `topk` expert IDs.
    #[error("field \"top_indices\"[{token}]: expected {expected} expert IDs, found {found}")]
    TopkMismatch {
        /// 0-based token index within the record.
        token: usize,
        /// `topk` of the record.
        expected: usize,
        /// Length of the token's list.
        found: usize,
    },
    /// An expert ID does not fit in 16 bits.
    #[error(
        "field \"top_indices\"[{token}][{slot}]: expert ID {id} exceeds the 16-bit limit 65535"
    )]
    ExpertTooLarge {
        /// 0-based token index within the record.
        token: usize,
        /// 0-based position in the token's list.
        slot: usize,
        /// The offending ID.
        id: u64,
    },
    /// An expert ID is not below the declared number of experts.
    #[error("field \"top_indices\"[{token}][{slot}]: expert ID {id} out of range (the model has {experts} experts)")]
    ExpertOutOfRange {
        /// 0-based token index within the record.
        token: usize,
        /// 0-based position in the token's list.
        slot: usize,
        /// The offending ID.
        id: u16,
        /// Declared number of experts.
        experts: usize,
    },
    /// An expert appears twice in one token's list.
    #[error(
        "field \"top_indices\"[{token}][{slot}]: expert {id} appears twice in this token's list"
    )]
    DuplicateExpert {
        /// 0-based token index within the record.
        token: usize,
        /// 0-based position of the second occurrence.
        slot: usize,
        /// The repeated ID.
        id: u16,
    },
    /// The source rank is not below the EP degree the trace is read for.
    #[error("field \"rank\": rank {rank} out of range for ep = {ep}")]
    RankOutOfRange {
        /// The rank found.
        rank: u32,
        /// EP degree.
        ep: usize,
    },
}

/// Checks the invariants of records that span more than one record (the common `topk`) as
/// well as the per-record ones. Shared by the reader, [`Trace::validate`] and the statistics.
pub(crate) struct RecordChecker {
    experts: Option<usize>,
    ep: Option<usize>,
    first_topk: Option<(usize, usize)>,
    stamp: u32,
    seen: Vec<u32>,
}

impl RecordChecker {
    /// A checker; `experts`, when known, bounds the expert IDs.
    pub(crate) fn new(experts: Option<usize>) -> Self {
        RecordChecker {
            experts,
            ep: None,
            first_topk: None,
            stamp: 0,
            seen: Vec::new(),
        }
    }

    /// The checker with source ranks bounded by `ep` too, when known.
    pub(crate) fn with_ep(mut self, ep: Option<usize>) -> Self {
        self.ep = ep;
        self
    }

    /// Checks one record found on `line` (1-based).
    pub(crate) fn check(&mut self, rec: &TraceRecord, line: usize) -> Result<(), LineError> {
        if let Some(ep) = self.ep {
            if rec.rank as usize >= ep {
                return Err(LineError::RankOutOfRange { rank: rec.rank, ep });
            }
        }
        if rec.topk == 0 {
            return Err(LineError::ZeroTopk);
        }
        if rec.num_tokens != rec.top_indices.len() {
            return Err(LineError::TokenCount {
                declared: rec.num_tokens,
                found: rec.top_indices.len(),
            });
        }
        match self.first_topk {
            None => self.first_topk = Some((rec.topk, line)),
            Some((expected, first_line)) if expected != rec.topk => {
                return Err(LineError::TopkChanged {
                    found: rec.topk,
                    expected,
                    first_line,
                })
            }
            Some(_) => {}
        }
        if self.seen.is_empty() {
            self.seen = vec![0; usize::from(MAX_EXPERT_ID) + 1];
        }
        for (token, ids) in rec.top_indices.iter().enumerate() {
            if ids.len() != rec.topk {
                return Err(LineError::TopkMismatch {
                    token,
                    expected: rec.topk,
                    found: ids.len(),
                });
            }
            self.next_stamp();
            for (slot, &id) in ids.iter().enumerate() {
                if let Some(experts) = self.experts {
                    if usize::from(id) >= experts {
                        return Err(LineError::ExpertOutOfRange {
                            token,
                            slot,
                            id,
                            experts,
                        });
                    }
                }
                let mark = &mut self.seen[usize::from(id)];
                if *mark == self.stamp {
                    return Err(LineError::DuplicateExpert { token, slot, id });
                }
                *mark = self.stamp;
            }
        }
        Ok(())
    }

    fn next_stamp(&mut self) {
        if self.stamp == u32::MAX {
            self.seen.iter_mut().for_each(|m| *m = 0);
            self.stamp = 0;
        }
        self.stamp += 1;
    }
}

/// Short description of a JSON value for error messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => {
            if s.chars().count() > 40 {
                let head: String = s.chars().take(40).collect();
                format!("string \"{head}...\"")
            } else {
                format!("string \"{s}\"")
            }
        }
        Value::Array(a) => format!("an array of {} elements", a.len()),
        Value::Object(_) => "an object".to_string(),
    }
}

/// serde_json appends " at line L column C" to its messages; on a one-line document only the
/// column is meaningful.
fn json_message(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match msg.strip_suffix(&suffix) {
        Some(head) => format!("{head} (column {})", e.column()),
        None => msg,
    }
}

fn take<'a>(obj: &'a Map<String, Value>, key: &'static str) -> Result<&'a Value, LineError> {
    obj.get(key).ok_or(LineError::MissingField(key))
}

fn get_u64(obj: &Map<String, Value>, key: &'static str) -> Result<u64, LineError> {
    let v = take(obj, key)?;
    v.as_u64().ok_or_else(|| LineError::WrongType {
        field: format!("\"{key}\""),
        expected: "a non-negative integer",
        found: describe(v),
    })
}

fn get_usize(obj: &Map<String, Value>, key: &'static str) -> Result<usize, LineError> {
    let v = take(obj, key)?;
    v.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| LineError::WrongType {
            field: format!("\"{key}\""),
            expected: "a non-negative integer",
            found: describe(v),
        })
}

/// Parses one non-blank line into a record (without the cross-field checks).
fn parse_record(text: &str) -> Result<TraceRecord, LineError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| LineError::InvalidJson(json_message(&e)))?;
    let obj = match value {
        Value::Object(m) => m,
        other => return Err(LineError::NotObject(describe(&other))),
    };
    let step = get_u64(&obj, "step")?;
    let layer = get_u64(&obj, "layer")?;
    let rank_v = take(&obj, "rank")?;
    let rank = rank_v
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| LineError::WrongType {
            field: "\"rank\"".to_string(),
            expected: "a rank (integer 0..=4294967295)",
            found: describe(rank_v),
        })?;
    let num_tokens = get_usize(&obj, "num_tokens")?;
    let topk = get_usize(&obj, "topk")?;
    let top_v = take(&obj, "top_indices")?;
    let lists = top_v.as_array().ok_or_else(|| LineError::WrongType {
        field: "\"top_indices\"".to_string(),
        expected: "an array of token lists",
        found: describe(top_v),
    })?;
    let mut top_indices = Vec::with_capacity(lists.len());
    for (token, list_v) in lists.iter().enumerate() {
        let list = list_v.as_array().ok_or_else(|| LineError::WrongType {
            field: format!("\"top_indices\"[{token}]"),
            expected: "an array of expert IDs",
            found: describe(list_v),
        })?;
        let mut ids = Vec::with_capacity(list.len());
        for (slot, id_v) in list.iter().enumerate() {
            match id_v.as_u64() {
                Some(id) => match u16::try_from(id) {
                    Ok(id) => ids.push(id),
                    Err(_) => return Err(LineError::ExpertTooLarge { token, slot, id }),
                },
                None => {
                    return Err(LineError::WrongType {
                        field: format!("\"top_indices\"[{token}][{slot}]"),
                        expected: "an expert ID (integer 0..=65535)",
                        found: describe(id_v),
                    })
                }
            }
        }
        top_indices.push(ids);
    }
    let label = match obj.get("label") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(LineError::WrongType {
                field: "\"label\"".to_string(),
                expected: "a string",
                found: describe(other),
            })
        }
    };
    Ok(TraceRecord {
        step,
        layer,
        rank,
        num_tokens,
        topk,
        top_indices,
        label,
    })
}

/// A record as written: borrows the token lists and carries the effective label.
#[derive(Serialize)]
struct RecordOut<'a> {
    step: u64,
    layer: u64,
    rank: u32,
    num_tokens: usize,
    topk: usize,
    top_indices: &'a [Vec<u16>],
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
}

impl Trace {
    /// A trace from records and a label.
    pub fn new(records: Vec<TraceRecord>, label: Option<String>) -> Self {
        Trace { records, label }
    }

    /// Reads a JSON Lines trace file. With `experts = Some(E)`, expert IDs `>= E` are rejected.
    /// Errors name the file (as given), the 1-based line and the field.
    pub fn read(path: &Path, experts: Option<usize>) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|source| TraceError::Io {
            file: name.clone(),
            source,
        })?;
        Self::from_reader(BufReader::new(file), &name, experts)
    }

    /// [`Trace::read`] for a replay or statistics over `ep` ranks: every record, of every
    /// (step, layer), must also have its source rank below `ep` (an error names its line).
    pub fn read_for_ep(
        path: &Path,
        experts: Option<usize>,
        ep: usize,
    ) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|source| TraceError::Io {
            file: name.clone(),
            source,
        })?;
        Self::read_records(
            BufReader::new(file),
            &name,
            RecordChecker::new(experts).with_ep(Some(ep)),
        )
    }

    /// Reads a JSON Lines trace from any buffered reader; `name` is the file name used in error
    /// messages. With `experts = Some(E)`, expert IDs `>= E` are rejected.
    pub fn from_reader(
        reader: impl BufRead,
        name: &str,
        experts: Option<usize>,
    ) -> Result<Trace, TraceError> {
        Self::read_records(reader, name, RecordChecker::new(experts))
    }

    /// Reads the records of `reader`, each checked by `checker`.
    fn read_records(
        mut reader: impl BufRead,
        name: &str,
        mut checker: RecordChecker,
    ) -> Result<Trace, TraceError> {
        let mut records = Vec::new();
        let mut buf = Vec::new();
        let mut line = 0usize;
        loop {
            buf.clear();
            let n = reader
                .read_until(b'\n', &mut buf)
                .map_err(|source| TraceError::Io {
                    file: name.to_string(),
                    source,
                })?;
            if n == 0 {
                break;
            }
            line += 1;
            let at = |error: LineError| TraceError::Line {
                file: name.to_string(),
                line,
                error,
            };
            let text = std::str::from_utf8(&buf).map_err(|_| at(LineError::InvalidUtf8))?;
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            let rec = parse_record(text).map_err(at)?;
            checker.check(&rec, line).map_err(at)?;
            records.push(rec);
        }
        if records.is_empty() {
            return Err(TraceError::Empty {
                file: name.to_string(),
            });
        }
        let label = records.iter().find_map(|r| r.label.clone());
        Ok(Trace { records, label })
    }

    /// Checks an in-memory trace with the reader's rules; errors are reported as
    /// `<trace>:N: ...` where `N` is the 1-based record number (the line it would have when
    /// written).
    pub fn validate(&self, experts: Option<usize>) -> Result<(), TraceError> {
        const NAME: &str = "<trace>";
        if self.records.is_empty() {
            return Err(TraceError::Empty {
                file: NAME.to_string(),
            });
        }
        let mut checker = RecordChecker::new(experts);
        for (i, rec) in self.records.iter().enumerate() {
            checker
                .check(rec, i + 1)
                .map_err(|error| TraceError::Line {
                    file: NAME.to_string(),
                    line: i + 1,
                    error,
                })?;
        }
        Ok(())
    }

    /// Writes the trace as JSON Lines, one record per line, keys in the order `step`, `layer`,
    /// `rank`, `num_tokens`, `topk`, `top_indices`, `label`. A record without its own label is
    /// written with the trace's label, if any. The output is buffered internally.
    pub fn write(&self, w: impl Write) -> io::Result<()> {
        let mut w = BufWriter::new(w);
        for r in &self.records {
            let out = RecordOut {
                step: r.step,
                layer: r.layer,
                rank: r.rank,
                num_tokens: r.num_tokens,
                topk: r.topk,
                top_indices: &r.top_indices,
                label: r.label.as_deref().or(self.label.as_deref()),
            };
            serde_json::to_writer(&mut w, &out)?;
            w.write_all(b"\n")?;
        }
        w.flush()
    }

    /// Writes the trace to a file (created or truncated); errors name the file.
    pub fn write_file(&self, path: &Path) -> Result<(), TraceError> {
        let io_err = |source| TraceError::Io {
            file: path.display().to_string(),
            source,
        };
        let file = File::create(path).map_err(io_err)?;
        self.write(file).map_err(io_err)
    }

    /// The default (step, layer): the one of the first record, or `None` for an empty trace.
    pub fn default_step_layer(&self) -> Option<(u64, u64)> {
        self.records.first().map(|r| (r.step, r.layer))
    }

    /// Every (step, layer) present, in order of first appearance.
    pub fn step_layers(&self) -> Vec<(u64, u64)> {
        let mut seen = HashSet::new();
        self.records
            .iter()
            .map(|r| (r.step, r.layer))
            .filter(|sl| seen.insert(*sl))
            .collect()
    }

    /// The `topk` of the first record (the same on every record of a valid trace).
    pub fn topk(&self) -> Option<usize> {
        self.records.first().map(|r| r.topk)
    }

    /// The records of one (step, layer), in file order.
    pub fn records_at(&self, step: u64, layer: u64) -> impl Iterator<Item = &TraceRecord> + '_ {
        self.records
            .iter()
            .filter(move |r| r.step == step && r.layer == layer)
    }

    /// All tokens of one (step, layer) as `(source rank, token index, expert IDs)`, ordered by
    /// rank ascending. The tokens of one rank come in record order, and the token index counts
    /// from 0 per rank across all of that rank's records. Empty if the (step, layer) is absent.
    pub fn tokens(&self, step: u64, layer: u64) -> Vec<(u32, usize, &[u16])> {
        let mut recs: Vec<&TraceRecord> = self.records_at(step, layer).collect();
        recs.sort_by_key(|r| r.rank); // stable: record order within a rank
        let mut out = Vec::with_capacity(recs.iter().map(|r| r.top_indices.len()).sum());
        let mut current = None;
        let mut index = 0usize;
        for r in recs {
            if current != Some(r.rank) {
                current = Some(r.rank);
                index = 0;
            }
            for t in &r.top_indices {
                out.push((r.rank, index, t.as_slice()));
                index += 1;
            }
        }
        out
    }

    /// The tokens a replay sends: those of the default (step, layer), each with
    /// its source rank and a global algebraic index (its position), and the trace's
    /// top-k. Empty (and top-k 0) for an empty trace.
    pub fn replay_tokens(&self) -> (Vec<crate::traffic::Token>, usize) {
        let Some((step, layer)) = self.default_step_layer() else {
            return (Vec::new(), 0);
        };
        self.replay_tokens_at(step, layer)
    }

    /// The tokens a replay of (`step`, `layer`) sends, as [`Trace::replay_tokens`] gives
    /// them for the default group. Empty (and top-k 0) if the group has no record.
    pub fn replay_tokens_at(&self, step: u64, layer: u64) -> (Vec<crate::traffic::Token>, usize) {
        if self.records_at(step, layer).next().is_none() {
            return (Vec::new(), 0);
        }
        let tokens = self
            .tokens(step, layer)
            .into_iter()
            .enumerate()
            .map(|(i, (rank, _, experts))| crate::traffic::Token {
                src: rank as usize,
                aidx: i as u32,
                experts: experts.to_vec(),
            })
            .collect();
        (tokens, self.topk().unwrap_or(0))
    }

    /// Total number of tokens in one (step, layer).
    pub fn num_tokens(&self, step: u64, layer: u64) -> usize {
        self.records_at(step, layer)
            .map(|r| r.top_indices.len())
            .sum()
    }
}
