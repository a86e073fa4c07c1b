//! Waveform readers: a header (every variable with its full name, signal, width and declared
//! index) and a body pushed into a [`Sink`] as timestamps and value changes.
//!
//! * VCD (plain or gzip'd, from a file or standard input) is read by the streaming reader of
//!   [`super::vcd`]: one pass, bounded memory, errors with line numbers.
//! * FST is read by `wellen` (the library of the Surfer waveform viewer), see [`super::fst`].

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// A declared index of a variable: `[msb:lsb]` or `[bit]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    /// `[bit]`.
    Bit(i64),
    /// `[msb:lsb]` (either order).
    Range(i64, i64),
}

/// One declared variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarDecl {
    /// Scopes and reference joined by `.`, without the index.
    pub name: String,
    /// The signal (value-change identifier) it shows; several variables may share one.
    pub signal: usize,
    /// Declared width in bits.
    pub width: u32,
    /// Declared index, if any.
    pub index: Option<Index>,
}

/// A waveform's header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaveHeader {
    /// Every variable.
    pub vars: Vec<VarDecl>,
    /// Width of each signal.
    pub widths: Vec<u32>,
}

/// Where a reader error is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// `line N` (VCD) or empty.
    pub place: String,
    /// What is wrong.
    pub msg: String,
}

impl ReadError {
    /// An error at `place`.
    pub fn new(place: impl Into<String>, msg: impl Into<String>) -> Self {
        ReadError {
            place: place.into(),
            msg: msg.into(),
        }
    }
}

/// Receives the body of a waveform.
pub trait Sink {
    /// Whether the changes of `signal` are wanted.
    fn wants(&self, signal: usize) -> bool;
    /// A new timestamp (never below the previous one).
    fn time(&mut self, t: u64);
    /// A change of a wanted signal: value characters `0 1 x z` (lower case), most significant
    /// first, at most the signal's width (shorter values are extended as in VCD).
    fn change(&mut self, signal: usize, value: &[u8]);
    /// A remark (truncated file, ...).
    fn warn(&mut self, msg: String);
}

/// A waveform body ready to be read into a [`Sink`].
pub trait Body {
    /// Reads the whole body.
    fn read_into(&mut self, sink: &mut dyn Sink) -> Result<(), ReadError>;
}

/// Size of the buffer over the input.
const BUF: usize = 1 << 20;

/// Largest FST file read from standard input or a gzip stream (they are buffered in memory
/// because the FST reader seeks).
pub const MAX_FST_IN_MEMORY: usize = 1 << 30;

/// Opens a waveform: `-` is standard input; gzip (by its magic bytes) is decompressed on the
/// fly; FST is recognised by its header block. Returns the header and the body.
pub fn open(path: &Path) -> Result<(WaveHeader, Box<dyn Body>), OpenError> {
    let io = OpenError::Io;
    let input: Box<dyn BufRead> = if path == Path::new("-") {
        Box::new(BufReader::with_capacity(BUF, std::io::stdin()))
    } else {
        Box::new(BufReader::with_capacity(
            BUF,
            std::fs::File::open(path).map_err(io)?,
        ))
    };
    open_reader(input).map_err(OpenError::Read)
}

/// Why a waveform cannot be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The file cannot be opened.
    Io(std::io::Error),
    /// Its content is wrong.
    Read(ReadError),
}

/// [`open`] over any buffered input.
pub fn open_reader<'a>(
    mut input: Box<dyn BufRead + 'a>,
) -> Result<(WaveHeader, Box<dyn Body + 'a>), ReadError> {
    let head = input
        .fill_buf()
        .map_err(|e| ReadError::new("", format!("cannot be read: {e}")))?;
    if head.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::bufread::MultiGzDecoder::new(input);
        let mut inner: Box<dyn BufRead + 'a> = Box::new(BufReader::with_capacity(BUF, gz));
        let h = inner
            .fill_buf()
            .map_err(|e| ReadError::new("", format!("gzip stream: {e}")))?;
        if h.starts_with(&[0x1f, 0x8b]) {
            return Err(ReadError::new("", "gzip inside gzip is not read"));
        }
        if super::fst::looks_like_fst(h) {
            return super::fst::open(read_all(inner)?);
        }
        return super::vcd::open(inner);
    }
    if super::fst::looks_like_fst(head) {
        return super::fst::open(read_all(input)?);
    }
    super::vcd::open(input)
}

fn read_all<'a>(input: Box<dyn BufRead + 'a>) -> Result<Vec<u8>, ReadError> {
    let mut v = Vec::new();
    input
        .take(MAX_FST_IN_MEMORY as u64 + 1)
        .read_to_end(&mut v)
        .map_err(|e| ReadError::new("", format!("cannot be read: {e}")))?;
    if v.len() > MAX_FST_IN_MEMORY {
        return Err(ReadError::new(
            "",
            format!("an FST stream over {MAX_FST_IN_MEMORY} bytes is not buffered; give the file by name"),
        ));
    }
    Ok(v)
}
