//! The signal mapping file (TOML, `version = 1`) and its port templates.

use crate::scenario::{error_at, GoldenError, FORMAT_VERSION};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::path::Path;

/// Ports a mapping entry may name: 0 to 31 (a switch has at most 32 ports).
pub const MAX_PORT: usize = 31;

/// Deepest nesting of parentheses and unary minus in a template expression.
pub const MAX_EXPR_DEPTH: usize = 64;
// ---------------------------------------------------------------------------------------------
// Mapping file
// ---------------------------------------------------------------------------------------------

/// The signal mapping file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalMap {
    /// Format version, 1.
    pub version: u32,
    /// The clock (full hierarchical name).
    pub clock: String,
    /// `"rising"` (default) or `"falling"`.
    #[serde(default)]
    pub edge: Edge,
    /// Optional reset: no flit counts at an edge where it is active.
    #[serde(default)]
    pub reset: Option<String>,
    /// Active level of `reset` (default 0: active low).
    #[serde(default)]
    pub reset_active: u8,
    /// Egress streams.
    #[serde(default)]
    pub stream: Vec<StreamMap>,
    /// Hub memory request ports (writes are recorded).
    #[serde(default)]
    pub mem: Vec<MemMap>,
    /// Error counters (final values).
    #[serde(default)]
    pub errors: Vec<ErrorsMap>,
}

/// Which clock edge samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Edge {
    /// 0 → 1.
    #[default]
    Rising,
    /// 1 → 0.
    Falling,
}

/// Ports an entry applies to: a number, a list, or a range `"0..8"` / `"0..=7"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSel(pub Vec<usize>);

impl<'de> Deserialize<'de> for PortSel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PortSel;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a port number, a list of ports, or a range \"0..8\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PortSel, E> {
                port(v).map(|p| PortSel(vec![p]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PortSel, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("negative port {v}")))
                    .and_then(port)
                    .map(|p| PortSel(vec![p]))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PortSel, E> {
                let bad = || E::custom(format!("`{v}` is not a range like \"0..8\" or \"0..=7\""));
                let (a, b, incl) = if let Some((a, b)) = v.split_once("..=") {
                    (a, b, true)
                } else if let Some((a, b)) = v.split_once("..") {
                    (a, b, false)
                } else {
                    return Err(bad());
                };
                let num = |x: &str| -> Result<u64, E> {
                    let x = x.trim();
                    if x.is_empty() || !x.bytes().all(|c| c.is_ascii_digit()) {
                        return Err(bad());
                    }
                    x.parse().map_err(|_| bad())
                };
                let a = port(num(a)?)?;
                let b = num(b)?;
                let last = if incl {
                    b
                } else {
                    b.checked_sub(1).ok_or_else(bad)?
                };
                let last = port(last)?;
                if last < a {
                    return Err(E::custom(format!("`{v}` selects no port")));
                }
                Ok(PortSel((a..=last).collect()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<PortSel, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element::<u64>()? {
                    let p = port(x)?;
                    if v.contains(&p) {
                        return Err(de::Error::custom(format!("port {p} is listed twice")));
                    }
                    v.push(p);
                }
                Ok(PortSel(v))
            }
        }
        d.deserialize_any(V)
    }
}

fn port<E: de::Error>(v: u64) -> Result<usize, E> {
    usize::try_from(v)
        .ok()
        .filter(|p| *p <= MAX_PORT)
        .ok_or_else(|| E::custom(format!("port {v} is above {MAX_PORT}")))
}

/// One egress stream (per port in `port`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamMap {
    /// Label written with each packet (e.g. `"sm_rsp"`).
    #[serde(default)]
    pub name: Option<String>,
    /// Egress port(s).
    #[serde(alias = "ports")]
    pub port: PortSel,
    /// 1-bit valid.
    pub valid: String,
    /// 1-bit ready (absent: always ready, for monitor taps that show accepted flits).
    #[serde(default)]
    pub ready: Option<String>,
    /// 128-bit data.
    pub data: String,
    /// 1-bit last.
    pub last: String,
}

/// One hub memory request port (per port in `port`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemMap {
    /// Hub(s).
    #[serde(alias = "ports")]
    pub port: PortSel,
    /// 1-bit request valid.
    pub valid: String,
    /// 1-bit request ready (absent: always ready).
    #[serde(default)]
    pub ready: Option<String>,
    /// 1-bit write enable (absent: every request is a write).
    #[serde(default)]
    pub we: Option<String>,
    /// Line address (up to 64 bits): of the first line of a multi-line beat.
    pub addr: String,
    /// Write data: 128 bits, or `128 × beat_lines` (line i at bits `[128*i +: 128]`).
    pub wdata: String,
    /// Byte strobes: 16 bits per line (absent: all bytes).
    #[serde(default)]
    pub wstrb: Option<String>,
    /// Number of 16-byte lines in a beat (up to 16 bits; absent: every request is one line).
    /// A beat of n lines is recorded as n line writes at `addr`, `addr + 16`, ...
    #[serde(default)]
    pub lines: Option<String>,
    /// Lines `wdata` holds (default 1; more needs `lines`).
    #[serde(default = "default_beat_lines")]
    pub beat_lines: u32,
}

fn default_beat_lines() -> u32 {
    1
}

/// Error counters of a port: `count` counters of `width` bits, code 1 in the lowest.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorsMap {
    /// Port(s).
    #[serde(alias = "ports")]
    pub port: PortSel,
    /// The counters' bits (a slice of the port's counters).
    pub counters: String,
    /// Bits per counter (default 32).
    #[serde(default = "default_width")]
    pub width: u32,
}

fn default_width() -> u32 {
    32
}

impl SignalMap {
    /// Reads a mapping file.
    pub fn load(path: &Path) -> Result<Self, GoldenError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|err| GoldenError::Io {
            file: file.clone(),
            err,
        })?;
        Self::from_toml(&file, &text)
    }

    /// Parses a mapping file's text (`file` names it in errors).
    pub fn from_toml(file: &str, text: &str) -> Result<Self, GoldenError> {
        let value: toml::Table =
            toml::from_str(text).map_err(|e| error_at(file, "", format!("not valid TOML: {e}")))?;
        match value.get("version") {
            None => {
                return Err(error_at(
                    file,
                    "version",
                    format!(
                    "missing field `version` (this tool reads mapping version {FORMAT_VERSION})"
                ),
                ))
            }
            Some(v) if v.as_integer() != Some(FORMAT_VERSION as i64) => {
                return Err(error_at(
                    file,
                    "version",
                    format!(
                    "unsupported mapping version {v} (this tool reads version {FORMAT_VERSION})"
                ),
                ))
            }
            Some(_) => {}
        }
        let de = toml::Deserializer::parse(text)
            .map_err(|e| error_at(file, "", format!("not valid TOML: {e}")))?;
        let m: SignalMap = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let msg = e.inner().message().to_string();
            error_at(file, if path == "." { "" } else { &path }, msg)
        })?;
        if m.reset_active > 1 {
            return Err(error_at(file, "reset_active", "must be 0 or 1"));
        }
        for (i, e) in m.errors.iter().enumerate() {
            if !(1..=64).contains(&e.width) {
                return Err(error_at(
                    file,
                    &format!("errors[{i}].width"),
                    "must be 1..=64",
                ));
            }
        }
        Ok(m)
    }
}

// ---------------------------------------------------------------------------------------------
// Templates: `{expr}` with `p`, integers, + - * and parentheses
// ---------------------------------------------------------------------------------------------

fn overflow() -> String {
    "the value overflows 64 bits".into()
}

fn eval(expr: &str, p: i64) -> Result<i64, String> {
    struct P<'a> {
        s: &'a [u8],
        i: usize,
        p: i64,
        depth: usize,
    }
    impl P<'_> {
        fn ws(&mut self) {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
        }
        fn expr(&mut self) -> Result<i64, String> {
            let mut v = self.term()?;
            loop {
                self.ws();
                match self.s.get(self.i) {
                    Some(b'+') => {
                        self.i += 1;
                        v = v.checked_add(self.term()?).ok_or_else(overflow)?;
                    }
                    Some(b'-') => {
                        self.i += 1;
                        v = v.checked_sub(self.term()?).ok_or_else(overflow)?;
                    }
                    _ => return Ok(v),
                }
            }
        }
        fn term(&mut self) -> Result<i64, String> {
            let mut v = self.factor()?;
            loop {
                self.ws();
                if self.s.get(self.i) == Some(&b'*') {
                    self.i += 1;
                    v = v.checked_mul(self.factor()?).ok_or_else(overflow)?;
                } else {
                    return Ok(v);
                }
            }
        }
        fn factor(&mut self) -> Result<i64, String> {
            self.depth += 1;
            if self.depth > MAX_EXPR_DEPTH {
                return Err(format!("nested deeper than {MAX_EXPR_DEPTH}"));
            }
            let v = self.factor_inner();
            self.depth -= 1;
            v
        }
        fn factor_inner(&mut self) -> Result<i64, String> {
            self.ws();
            match self.s.get(self.i) {
                Some(b'p') => {
                    self.i += 1;
                    Ok(self.p)
                }
                Some(b'-') => {
                    self.i += 1;
                    self.factor()?.checked_neg().ok_or_else(overflow)
                }
                Some(b'(') => {
                    self.i += 1;
                    let v = self.expr()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b')') {
                        return Err("missing `)`".into());
                    }
                    self.i += 1;
                    Ok(v)
                }
                Some(c) if c.is_ascii_digit() => {
                    let st = self.i;
                    while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                        self.i += 1;
                    }
                    self.s
                        .get(st..self.i)
                        .and_then(|d| std::str::from_utf8(d).ok())
                        .and_then(|d| d.parse().ok())
                        .ok_or_else(|| "number too large".into())
                }
                _ => Err("expected a number, `p` or `(`".into()),
            }
        }
    }
    let mut ps = P {
        s: expr.as_bytes(),
        i: 0,
        p,
        depth: 0,
    };
    let v = ps.expr()?;
    ps.ws();
    if ps.i != expr.len() {
        return Err(format!("unexpected `{}`", expr.get(ps.i..).unwrap_or("")));
    }
    Ok(v)
}

/// Expands `{expr}` placeholders for port `p`.
pub fn expand(template: &str, p: usize) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let j = rest[i..]
            .find('}')
            .ok_or_else(|| format!("`{template}`: unclosed `{{`"))?;
        let e = &rest[i + 1..i + j];
        let v = eval(e, p as i64).map_err(|m| format!("`{template}`: in `{{{e}}}`: {m}"))?;
        out.push_str(&v.to_string());
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
