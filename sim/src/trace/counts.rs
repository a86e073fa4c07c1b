//! Per-expert routing marginals: a CSV with the columns `model,corpus,layer,expert,count`.
//!
//! Each row gives how many token-to-expert assignments one expert received in one layer of one
//! model over one corpus (for example `../data/routing/expert_counts.csv`, converted from the
//! OLMoE routing analysis). The header names the columns; they may come in any order and extra
//! columns are ignored. Fields are split on `,` and trimmed; quoting is not supported. For each
//! (model, corpus, layer) the expert IDs must run `0..E` without gaps or repeats.
//!
//! Errors name the file, the 1-based line and the field.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;
use thiserror::Error;

/// Largest number of experts per selection (16-bit expert IDs).
const MAX_EXPERTS: u64 = 1 << 16;

/// One (model, corpus, layer) of a counts table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Selection {
    /// Model name, e.g. `OLMoE-1B-7B`.
    pub model: String,
    /// Corpus name, e.g. `github`.
    pub corpus: String,
    /// Layer index.
    pub layer: u64,
}

impl fmt::Display for Selection {
    /// `MODEL/CORPUS/LAYER`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.model, self.corpus, self.layer)
    }
}

/// An error reading a counts CSV or looking up a selection in it.
#[derive(Debug, Error)]
pub enum CountsError {
    /// The file could not be opened or read.
    #[error("{file}: {source}")]
    Io {
        /// File name as given.
        file: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The file has no header line.
    #[error("{file}: empty file: expected a header line model,corpus,layer,expert,count")]
    Empty {
        /// File name as given.
        file: String,
    },
    /// A line is not valid UTF-8.
    #[error("{file}:{line}: invalid UTF-8")]
    InvalidUtf8 {
        /// File name as given.
        file: String,
        /// 1-based line number.
        line: usize,
    },
    /// The header lacks a required column.
    #[error("{file}:{line}: header: missing column \"{column}\" (expected model,corpus,layer,expert,count)")]
    MissingColumn {
        /// File name as given.
        file: String,
        /// 1-based line number of the header.
        line: usize,
        /// The missing column.
        column: &'static str,
    },
    /// A row has a different number of fields than the header.
    #[error("{file}:{line}: expected {expected} comma-separated fields, found {found}")]
    FieldCount {
        /// File name as given.
        file: String,
        /// 1-based line number.
        line: usize,
        /// Number of header columns.
        expected: usize,
        /// Number of fields on the line.
        found: usize,
    },
    /// A field's value is invalid.
    #[error("{file}:{line}: field \"{field}\": {reason}")]
    Field {
        /// File name as given.
        file: String,
        /// 1-based line number.
        line: usize,
        /// Column name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An expert is listed twice for one selection.
    #[error("{file}:{line}: field \"expert\": expert {expert} of {selection} already listed on line {first_line}")]
    DuplicateExpert {
        /// File name as given.
        file: String,
        /// 1-based line number of the repeat.
        line: usize,
        /// The selection, as `MODEL/CORPUS/LAYER`.
        selection: Selection,
        /// The repeated expert ID.
        expert: u64,
        /// Line of the first occurrence.
        first_line: usize,
    },
    /// The expert IDs of a selection do not run `0..E` without gaps.
    #[error("{file}: {selection}: expert IDs must run from 0 without gaps, but expert {missing} is missing (highest is {highest})")]
    MissingExpert {
        /// File name as given.
        file: String,
        /// The selection.
        selection: Selection,
        /// The first missing ID.
        missing: u64,
        /// The highest ID listed.
        highest: u64,
    },
    /// The requested selection is not in the table.
    #[error("{file}: no rows for {selection} ({available})")]
    NotFound {
        /// File name as given.
        file: String,
        /// The requested selection.
        selection: Selection,
        /// What the file holds, as `models: ...; corpora: ...; layers: ...`.
        available: String,
    },
}

/// A parsed counts CSV: per (model, corpus, layer), the assignment count of each expert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountsTable {
    file: String,
    entries: Vec<(Selection, Vec<u64>)>,
}

/// Rows of one selection while parsing: expert ID -> (count, line).
type ExpertRows = BTreeMap<u64, (u64, usize)>;

/// The columns a counts CSV must have.
const COLUMNS: [&str; 5] = ["model", "corpus", "layer", "expert", "count"];

impl CountsTable {
    /// Reads a counts CSV file; errors name the file as given.
    pub fn read(path: &Path) -> Result<Self, CountsError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|source| CountsError::Io {
            file: name.clone(),
            source,
        })?;
        Self::from_reader(BufReader::new(file), &name)
    }

    /// Reads a counts CSV from any buffered reader; `name` is used in error messages.
    pub fn from_reader(mut reader: impl BufRead, name: &str) -> Result<Self, CountsError> {
        let file = || name.to_string();
        let mut header: Option<[usize; 5]> = None;
        let mut width = 0usize;
        let mut index: HashMap<Selection, usize> = HashMap::new();
        let mut rows: Vec<(Selection, ExpertRows)> = Vec::new();
        let mut buf = Vec::new();
        let mut line = 0usize;
        loop {
            buf.clear();
            let n = reader
                .read_until(b'\n', &mut buf)
                .map_err(|source| CountsError::Io {
                    file: file(),
                    source,
                })?;
            if n == 0 {
                break;
            }
            line += 1;
            let text = std::str::from_utf8(&buf)
                .map_err(|_| CountsError::InvalidUtf8 { file: file(), line })?
                .trim();
            if text.is_empty() {
                continue;
            }
            let fields: Vec<&str> = text.split(',').map(str::trim).collect();
            let cols = match header {
                None => {
                    let mut cols = [0usize; 5];
                    for (slot, column) in COLUMNS.iter().enumerate() {
                        cols[slot] = fields.iter().position(|f| f == column).ok_or(
                            CountsError::MissingColumn {
                                file: file(),
                                line,
                                column,
                            },
                        )?;
                    }
                    header = Some(cols);
                    width = fields.len();
                    continue;
                }
                Some(cols) => cols,
            };
            if fields.len() != width {
                return Err(CountsError::FieldCount {
                    file: file(),
                    line,
                    expected: width,
                    found: fields.len(),
                });
            }
            let field_err = |field: &'static str, reason: String| CountsError::Field {
                file: file(),
                line,
                field,
                reason,
            };
            let text_field = |slot: usize| -> Result<String, CountsError> {
                let v = fields[cols[slot]];
                if v.is_empty() {
                    Err(field_err(COLUMNS[slot], "empty value".to_string()))
                } else {
                    Ok(v.to_string())
                }
            };
            let int_field = |slot: usize| -> Result<u64, CountsError> {
                let v = fields[cols[slot]];
                v.parse::<u64>().map_err(|_| {
                    field_err(
                        COLUMNS[slot],
                        format!("expected a non-negative integer, found \"{v}\""),
                    )
                })
            };
            let selection = Selection {
                model: text_field(0)?,
                corpus: text_field(1)?,
                layer: int_field(2)?,
            };
            let expert = int_field(3)?;
            let count = int_field(4)?;
            if expert >= MAX_EXPERTS {
                return Err(field_err(
                    "expert",
                    format!("expert ID {expert} exceeds the 16-bit limit 65535"),
                ));
            }
            let slot = match index.get(&selection) {
                Some(&i) => i,
                None => {
                    index.insert(selection.clone(), rows.len());
                    rows.push((selection.clone(), BTreeMap::new()));
                    rows.len() - 1
                }
            };
            if let Some(&(_, first_line)) = rows[slot].1.get(&expert) {
                return Err(CountsError::DuplicateExpert {
                    file: file(),
                    line,
                    selection,
                    expert,
                    first_line,
                });
            }
            rows[slot].1.insert(expert, (count, line));
        }
        if header.is_none() {
            return Err(CountsError::Empty { file: file() });
        }
        let mut entries = Vec::with_capacity(rows.len());
        for (selection, experts) in rows {
            let highest = experts.keys().next_back().copied().unwrap_or(0);
            if let Some(missing) = (0u64..).zip(experts.keys()).find(|(i, e)| i != *e) {
                return Err(CountsError::MissingExpert {
                    file: file(),
                    selection,
                    missing: missing.0,
                    highest,
                });
            }
            let counts = experts.values().map(|&(c, _)| c).collect();
            entries.push((selection, counts));
        }
        Ok(CountsTable {
            file: name.to_string(),
            entries,
        })
    }

    /// The file name the table was read from (as given).
    pub fn file(&self) -> &str {
        &self.file
    }

    /// All selections with their per-expert counts (index = expert ID), in order of first
    /// appearance in the file.
    pub fn iter(&self) -> impl Iterator<Item = (&Selection, &[u64])> + '_ {
        self.entries.iter().map(|(s, c)| (s, c.as_slice()))
    }

    /// The per-expert counts (index = expert ID) of one (model, corpus, layer).
    pub fn get(&self, model: &str, corpus: &str, layer: u64) -> Result<&[u64], CountsError> {
        self.entries
            .iter()
            .find(|(s, _)| s.model == model && s.corpus == corpus && s.layer == layer)
            .map(|(_, c)| c.as_slice())
            .ok_or_else(|| {
                let join = |set: BTreeSet<String>| set.into_iter().collect::<Vec<_>>().join(", ");
                let models = join(self.entries.iter().map(|(s, _)| s.model.clone()).collect());
                let corpora = join(self.entries.iter().map(|(s, _)| s.corpus.clone()).collect());
                let layers: BTreeSet<u64> = self.entries.iter().map(|(s, _)| s.layer).collect();
                let layers = layers
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                CountsError::NotFound {
                    file: self.file.clone(),
                    selection: Selection {
                        model: model.to_string(),
                        corpus: corpus.to_string(),
                        layer,
                    },
                    available: format!("models: {models}; corpora: {corpora}; layers: {layers}"),
                }
            })
    }
}
