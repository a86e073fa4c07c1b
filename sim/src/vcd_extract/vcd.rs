//! A streaming VCD reader (IEEE 1364 §18 with the SystemVerilog extensions): one pass over a
//! buffered input, bounded memory, every error with its line.
//!
//! * Header: `$scope TYPE NAME $end` with any scope type (module, task, function, begin, fork,
//!   and SystemVerilog's interface, package, program, class, struct, union, generate, ...),
//!   `$upscope`, `$var TYPE SIZE ID REF [INDEX] $end` with any variable type (wire, reg,
//!   logic, bit, int, ...) and the index either apart or inside the reference (`data[127:0]`),
//!   other sections skipped to their `$end`.
//! * Body: `#TIME` (never decreasing), scalar changes `0! 1! x! z!`, vector changes `b0101 !`,
//!   real and string changes (`r1.5 !`, `s... !`, only on signals not mapped), `$dumpvars`
//!   and friends, `$comment`. A change of an undeclared identifier is an error.
//! * Limits: tokens up to [`MAX_TOKEN`] bytes, scopes nested up to [`MAX_SCOPE_DEPTH`].
//!
//! A file that ends inside the body (a simulation stopped while writing) keeps what was
//! complete, with a warning.

use super::reader::{Body, Index, ReadError, Sink, VarDecl, WaveHeader};
use std::collections::HashMap;
use std::io::BufRead;

/// Longest token (a name or a vector value) in bytes.
pub const MAX_TOKEN: usize = 1 << 20;

/// Deepest scope nesting.
pub const MAX_SCOPE_DEPTH: usize = 256;

/// Tokens of a buffered input, with line numbers.
struct Tokens<'a> {
    input: Box<dyn BufRead + 'a>,
    line: u64,
    tok: Vec<u8>,
    /// Line of the current token.
    tok_line: u64,
    /// The current token ended at the end of the input, without a line end: it may be cut.
    cut: bool,
}

impl Tokens<'_> {
    /// Reads the next whitespace-separated token into `self.tok`; false at the end.
    fn next(&mut self) -> Result<bool, ReadError> {
        self.tok.clear();
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(ReadError::new(
                        format!("line {}", self.line),
                        format!("cannot be read: {e}"),
                    ))
                }
            };
            if buf.is_empty() {
                self.cut = !self.tok.is_empty();
                return Ok(self.cut);
            }
            let mut used = 0;
            let mut done = false;
            for &b in buf {
                used += 1;
                if b.is_ascii_whitespace() {
                    if b == b'\n' {
                        self.line += 1;
                    }
                    if !self.tok.is_empty() {
                        done = true;
                        break;
                    }
                } else {
                    if self.tok.is_empty() {
                        self.tok_line = self.line;
                    }
                    if self.tok.len() >= MAX_TOKEN {
                        return Err(ReadError::new(
                            format!("line {}", self.tok_line),
                            format!("a token longer than {MAX_TOKEN} bytes"),
                        ));
                    }
                    self.tok.push(b);
                }
            }
            self.input.consume(used);
            if done {
                return Ok(true);
            }
        }
    }

    fn at(&self, msg: impl Into<String>) -> ReadError {
        ReadError::new(format!("line {}", self.tok_line), msg)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.tok).into_owned()
    }

    /// The next token, or an error naming `what` was expected.
    fn expect(&mut self, what: &str) -> Result<String, ReadError> {
        if !self.next()? {
            return Err(ReadError::new(
                format!("line {}", self.line),
                format!("the file ends where {what} was expected"),
            ));
        }
        Ok(self.text())
    }

    /// Skips to the next `$end`.
    fn skip_section(&mut self, name: &str) -> Result<(), ReadError> {
        let start = self.tok_line;
        loop {
            if !self.next()? {
                return Err(ReadError::new(
                    format!("line {start}"),
                    format!("`{name}` has no `$end`"),
                ));
            }
            if self.tok == b"$end" {
                return Ok(());
            }
        }
    }
}

/// Splits `name[a:b]` / `name[a]` into the name and its index.
fn split_index(s: &str) -> Option<(&str, Index)> {
    let body = s.strip_suffix(']')?;
    let i = body.rfind('[')?;
    let (name, idx) = (body.get(..i)?, body.get(i + 1..)?);
    let num = |x: &str| x.trim().parse::<i64>().ok();
    let index = match idx.split_once(':') {
        Some((a, b)) => Index::Range(num(a)?, num(b)?),
        None => Index::Bit(num(idx)?),
    };
    Some((name, index))
}

/// Reads the header; returns it and the body reader.
pub fn open<'a>(
    input: Box<dyn BufRead + 'a>,
) -> Result<(WaveHeader, Box<dyn Body + 'a>), ReadError> {
    let mut t = Tokens {
        input,
        line: 1,
        tok: Vec::new(),
        tok_line: 1,
        cut: false,
    };
    let mut scopes: Vec<String> = Vec::new();
    let mut ids: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut header = WaveHeader::default();
    loop {
        if !t.next()? {
            return Err(ReadError::new(
                format!("line {}", t.line),
                "the file ends before `$enddefinitions` (is it a VCD file?)",
            ));
        }
        match t.tok.as_slice() {
            b"$scope" => {
                let _kind = t.expect("a scope type")?;
                let name = t.expect("a scope name")?;
                if scopes.len() >= MAX_SCOPE_DEPTH {
                    return Err(t.at(format!("scopes nested deeper than {MAX_SCOPE_DEPTH}")));
                }
                scopes.push(name);
                if t.expect("`$end`")? != "$end" {
                    return Err(t.at("`$scope TYPE NAME` must end with `$end`"));
                }
            }
            b"$upscope" => {
                if scopes.pop().is_none() {
                    return Err(t.at("`$upscope` without an open scope"));
                }
                if t.expect("`$end`")? != "$end" {
                    return Err(t.at("`$upscope` must end with `$end`"));
                }
            }
            b"$var" => {
                let _kind = t.expect("a variable type")?;
                let size = t.expect("a variable size")?;
                let width: u32 = size.parse().ok().filter(|w| *w > 0).ok_or_else(|| {
                    t.at(format!(
                        "variable size `{size}` is not a positive 32-bit number"
                    ))
                })?;
                if !t.next()? {
                    return Err(t.at("the file ends in a `$var`"));
                }
                let code = t.tok.clone();
                let reference = t.expect("a variable name")?;
                let mut rest = Vec::new();
                loop {
                    let x = t.expect("`$end`")?;
                    if x == "$end" {
                        break;
                    }
                    if rest.len() >= 4 {
                        return Err(t.at("a `$var` has too many words before `$end`"));
                    }
                    rest.push(x);
                }
                let joined = format!("{reference}{}", rest.concat());
                let (leaf, index) = match split_index(&joined) {
                    Some((n, i)) => (n.trim_end().to_string(), Some(i)),
                    None if rest.is_empty() => (reference, None),
                    None => return Err(t.at(format!("`{}` is not an index", rest.join(" ")))),
                };
                let next = ids.len();
                let signal = *ids.entry(code).or_insert(next);
                if signal == header.widths.len() {
                    header.widths.push(width);
                } else if header.widths.get(signal) != Some(&width) {
                    return Err(t.at(format!("`{leaf}` reuses an identifier with another width")));
                }
                let mut name = scopes.join(".");
                if !name.is_empty() {
                    name.push('.');
                }
                name.push_str(&leaf);
                header.vars.push(VarDecl {
                    name,
                    signal,
                    width,
                    index,
                });
            }
            b"$enddefinitions" => {
                t.skip_section("$enddefinitions")?;
                break;
            }
            [b'$', ..] => {
                let name = t.text();
                if name == "$end" {
                    return Err(t.at("`$end` without a section"));
                }
                t.skip_section(&name)?;
            }
            _ => return Err(t.at(format!("unexpected `{}` in the header", t.text()))),
        }
    }
    let body = VcdBody {
        t,
        ids,
        widths: header.widths.clone(),
        value: Vec::new(),
    };
    Ok((header, Box::new(body)))
}

struct VcdBody<'a> {
    t: Tokens<'a>,
    ids: HashMap<Vec<u8>, usize>,
    widths: Vec<u32>,
    value: Vec<u8>,
}

fn state(c: u8) -> Option<u8> {
    match c {
        b'0' => Some(b'0'),
        b'1' => Some(b'1'),
        b'x' | b'X' => Some(b'x'),
        b'z' | b'Z' => Some(b'z'),
        _ => None,
    }
}

impl VcdBody<'_> {
    /// The signal of identifier `code`.
    fn signal(&self, code: &[u8]) -> Result<usize, ReadError> {
        self.ids.get(code).copied().ok_or_else(|| {
            self.t.at(format!(
                "value change of `{}`, an identifier no `$var` declares",
                String::from_utf8_lossy(code)
            ))
        })
    }

    fn truncated(&self, sink: &mut dyn Sink) {
        sink.warn(format!(
            "the waveform ends in the middle of line {}; the incomplete last command is ignored",
            self.t.tok_line
        ));
    }
}

impl Body for VcdBody<'_> {
    fn read_into(&mut self, sink: &mut dyn Sink) -> Result<(), ReadError> {
        let mut time: Option<u64> = None;
        while self.t.next()? {
            let tok = std::mem::take(&mut self.t.tok);
            let r = self.command(&tok, &mut time, sink);
            self.t.tok = tok;
            match r {
                Ok(true) => {}
                Ok(false) => {
                    self.truncated(sink);
                    return Ok(());
                }
                Err(_) if self.t.cut => {
                    self.truncated(sink);
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl VcdBody<'_> {
    /// One body command starting with `tok`; false if the file ends inside it.
    fn command(
        &mut self,
        tok: &[u8],
        time: &mut Option<u64>,
        sink: &mut dyn Sink,
    ) -> Result<bool, ReadError> {
        let Some((&first, rest)) = tok.split_first() else {
            return Ok(true);
        };
        match first {
            b'#' => {
                let t: u64 = std::str::from_utf8(rest)
                    .ok()
                    .filter(|s| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| {
                        self.t.at(format!(
                            "`{}` is not a timestamp (a 64-bit number)",
                            String::from_utf8_lossy(tok)
                        ))
                    })?;
                if let Some(prev) = *time {
                    if t < prev {
                        return Err(self
                            .t
                            .at(format!("time goes backwards: #{t} after #{prev}")));
                    }
                    if t == prev {
                        return Ok(true);
                    }
                }
                *time = Some(t);
                sink.time(t);
            }
            b'$' => match tok {
                b"$comment" => {
                    let start = self.t.tok_line;
                    loop {
                        if !self.t.next()? {
                            return Err(ReadError::new(
                                format!("line {start}"),
                                "`$comment` has no `$end`",
                            ));
                        }
                        if self.t.tok == b"$end" {
                            break;
                        }
                    }
                }
                b"$dumpvars" | b"$dumpall" | b"$dumpon" | b"$dumpoff" | b"$end" => {}
                _ => {
                    return Err(self.t.at(format!(
                        "`{}` is not a body command",
                        String::from_utf8_lossy(tok)
                    )))
                }
            },
            b'b' | b'B' | b'r' | b'R' | b's' | b'S' => {
                if !self.t.next()? {
                    return Ok(false);
                }
                let sig = self.signal(&self.t.tok)?;
                if !sink.wants(sig) {
                    return Ok(true);
                }
                if !matches!(first, b'b' | b'B') {
                    return Err(self.t.at(format!(
                        "a real or string value on a mapped signal (`{}`)",
                        String::from_utf8_lossy(&self.t.tok)
                    )));
                }
                let width = self.widths.get(sig).copied().unwrap_or(1) as usize;
                self.value.clear();
                for &c in rest {
                    let s = state(c).ok_or_else(|| {
                        self.t.at(format!(
                            "`{}` is not a binary value (0, 1, x, z)",
                            String::from_utf8_lossy(tok)
                        ))
                    })?;
                    self.value.push(s);
                }
                if self.value.is_empty() || self.value.len() > width {
                    return Err(self.t.at(format!(
                        "a value of {} bits for a signal of {width}",
                        self.value.len()
                    )));
                }
                sink.change(sig, &self.value);
            }
            c => {
                let s = state(c).ok_or_else(|| {
                    self.t.at(format!(
                        "`{}` is not a value change or timestamp",
                        String::from_utf8_lossy(tok)
                    ))
                })?;
                if rest.is_empty() {
                    return Err(self.t.at("a scalar value change without an identifier"));
                }
                let sig = self.signal(rest)?;
                if sink.wants(sig) {
                    sink.change(sig, &[s]);
                }
            }
        }
        Ok(true)
    }
}
