//! The verification wrapper of `dysharp_top`, generated from the top's own header.
//!
//! Inside the design every per-port signal is a packed array or struct (`flit_t [NumPorts-1:0]`,
//! `logic [NumPorts-1:0][MemLines-1:0][127:0]`). The simulation models, the C++ bridge, the
//! cocotb bench and a waveform reader want plain vectors, and the benches observe the request
//! flits each hub accepts. `dysharp_top_tb` (`verif/harness/dysharp_top_tb.sv`) gives them both:
//! the top's parameters, verbatim, and its ports as flat vectors of the same bits (element `[p]`
//! of a packed array at `[W*p +: W]`), plus the hub request taps. It is generated here from
//! `rtl/dysharp_top.sv` (`dysharp gen-wrapper`), and a test checks that the committed file is the
//! generated one, so the two cannot drift apart.

use std::fmt::{self, Write as _};

/// The top module whose wrapper is generated.
pub const TOP_MODULE: &str = "dysharp_top";

/// The wrapper's module name.
pub const WRAPPER_MODULE: &str = "dysharp_top_tb";

/// Path of the generated wrapper from the repository root.
pub const WRAPPER_PATH: &str = "verif/harness/dysharp_top_tb.sv";

/// The top's source as built into this crate (`rtl/dysharp_top.sv`).
pub const TOP_SV: &str = include_str!("../../rtl/dysharp_top.sv");

/// A header the generator cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrapperError {
    /// 1-based line of the top's source.
    pub line: usize,
    /// What is wrong there.
    pub msg: String,
}

impl fmt::Display for WrapperError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rtl/dysharp_top.sv line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for WrapperError {}

/// One parameter of the top's header.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Param {
    /// `parameter int unsigned NumPorts = 8`.
    decl: String,
    /// Its comment (`// ...`), or empty.
    comment: String,
}

impl Param {
    /// The parameter's name.
    fn name(&self) -> &str {
        let lhs = self.decl.split('=').next().unwrap_or(&self.decl);
        lhs.split_whitespace().last().unwrap_or("")
    }
}

/// One port of the top's header.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Port {
    dir: String,
    /// The element type: `logic` or a type of the package (`flit_t`).
    base: String,
    /// Packed dimensions, outermost first, as (msb expression, lsb expression).
    dims: Vec<(String, String)>,
    name: String,
}

impl Port {
    /// The port's width as a SystemVerilog expression.
    fn width(&self) -> String {
        let mut factors: Vec<String> = self.dims.iter().map(|(m, l)| dim_size(m, l)).collect();
        if self.base != "logic" {
            factors.push(format!("$bits({})", self.base));
        }
        if factors.is_empty() {
            "1".to_string()
        } else {
            factors.join("*")
        }
    }
}

/// The number of elements of `[msb:lsb]` as an expression (`[N-1:0]` is `N`).
fn dim_size(msb: &str, lsb: &str) -> String {
    let msb = msb.trim();
    let lsb = lsb.trim();
    if lsb == "0" {
        if let Some(n) = msb.strip_suffix("-1") {
            return factor(n.trim());
        }
        if let Ok(n) = msb.parse::<u64>() {
            return (n + 1).to_string();
        }
        return format!("({msb}+1)");
    }
    format!("(({msb})-({lsb})+1)")
}

/// `e` as a factor of a product: parenthesised unless it is a name, a number or a call.
fn factor(e: &str) -> String {
    let simple = e
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        || (e.starts_with('$') && e.ends_with(')') && e.matches('(').count() == 1);
    if simple {
        e.to_string()
    } else {
        format!("({e})")
    }
}

/// The header of `module` in `text`: its parameter lines (verbatim, trimmed) and its ports.
fn header(text: &str, module: &str) -> Result<(Vec<Param>, Vec<Port>), WrapperError> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(&format!("module {module}")))
        .ok_or_else(|| WrapperError {
            line: 1,
            msg: format!("no `module {module}`"),
        })?;
    let mut params = Vec::new();
    let mut ports = Vec::new();
    let mut in_ports = false;
    for (i, raw) in lines.iter().enumerate().skip(start + 1) {
        let l = raw.trim();
        let err = |msg: &str| WrapperError {
            line: i + 1,
            msg: msg.to_string(),
        };
        if l == ");" {
            if !in_ports {
                return Err(err("the header ends before its port list"));
            }
            return Ok((params, ports));
        }
        if l.is_empty() || l.starts_with("//") {
            continue;
        }
        if l == ") (" {
            in_ports = true;
            continue;
        }
        if !in_ports {
            if l.starts_with("parameter ") {
                // The declaration without its separating comma, and its comment.
                let (code, comment) = match l.split_once("//") {
                    Some((c, m)) => (c.trim(), format!("// {}", m.trim())),
                    None => (l, String::new()),
                };
                params.push(Param {
                    decl: code.trim_end_matches(',').trim().to_string(),
                    comment,
                });
            }
            continue;
        }
        let decl = l.split("//").next().unwrap().trim().trim_end_matches(',');
        let (dir, rest) = decl
            .split_once(char::is_whitespace)
            .ok_or_else(|| err("a port without a direction"))?;
        if dir != "input" && dir != "output" {
            return Err(err(&format!(
                "`{dir}`: only input and output ports are wrapped"
            )));
        }
        let rest = rest.trim();
        let base_len = rest
            .find(|c: char| c.is_whitespace() || c == '[')
            .ok_or_else(|| err("a port without a type"))?;
        let base = &rest[..base_len];
        let mut rest = rest[base_len..].trim();
        let mut dims = Vec::new();
        while let Some(r) = rest.strip_prefix('[') {
            let close = matching_bracket(r).ok_or_else(|| err("an unclosed `[`"))?;
            let inner = &r[..close];
            let (msb, lsb) = split_range(inner).ok_or_else(|| err("a dimension without `:`"))?;
            dims.push((msb, lsb));
            rest = r[close + 1..].trim();
        }
        if rest.is_empty() || !rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(err(&format!("cannot read the port name in `{decl}`")));
        }
        ports.push(Port {
            dir: dir.to_string(),
            base: base.to_string(),
            dims,
            name: rest.to_string(),
        });
    }
    Err(WrapperError {
        line: lines.len(),
        msg: format!("the header of {module} has no end"),
    })
}

/// The index of the `]` that closes a `[` just before `s`.
fn matching_bracket(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            ']' if depth == 0 => return Some(i),
            ']' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `msb:lsb` split at its top-level colon.
fn split_range(s: &str) -> Option<(String, String)> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => return Some((s[..i].to_string(), s[i + 1..].to_string())),
            _ => {}
        }
    }
    None
}

/// The wrapper's text, generated from the top's source `top_sv`.
pub fn render(top_sv: &str) -> Result<String, WrapperError> {
    let (params, ports) = header(top_sv, TOP_MODULE)?;
    if params.is_empty() || ports.is_empty() {
        return Err(WrapperError {
            line: 1,
            msg: "no parameters or no ports".into(),
        });
    }
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "// Generated by `dysharp gen-wrapper` from rtl/dysharp_top.sv: do not edit."
    );
    let _ = writeln!(
        w,
        "// {WRAPPER_MODULE}: the verification wrapper of {TOP_MODULE} (registry/src/wrapper.rs). The\n\
         // simulation models top_p4, top_p8, top_p16, top_p32 and the cocotb bench build it; synthesis\n\
         // and the product take {TOP_MODULE}. Its parameters are the top's, verbatim; its ports are the\n\
         // top's as flat vectors of the same bits (element [p] of a packed array at [W*p +: W]), plus one\n\
         // observation tap: the request flits each hub accepts from the switch\n\
         // (hub_req_mon_valid_o: a handshake this cycle), read from inside {TOP_MODULE}."
    );
    let _ = writeln!(w, "\nmodule {WRAPPER_MODULE} import dysharp_pkg::*; #(");
    let decl_w = params.iter().map(|p| p.decl.len() + 1).max().unwrap_or(0);
    for (i, p) in params.iter().enumerate() {
        let sep = if i + 1 < params.len() { "," } else { "" };
        let line = format!("{}{sep}", p.decl);
        let _ = writeln!(
            w,
            "  {}",
            format!("{line:<decl_w$} {}", p.comment).trim_end()
        );
    }
    let _ = writeln!(w, ") (");
    let types: Vec<String> = ports
        .iter()
        .map(|p| match p.width().as_str() {
            "1" => "logic".to_string(),
            n => match n.parse::<u64>() {
                Ok(n) => format!("logic [{}:0]", n - 1),
                Err(_) => format!("logic [{n}-1:0]"),
            },
        })
        .collect();
    let type_w = types.iter().map(String::len).max().unwrap_or(0);
    for (p, ty) in ports.iter().zip(&types) {
        let _ = writeln!(w, "  {:<6} {ty:<type_w$} {},", p.dir, p.name);
    }
    let _ = writeln!(
        w,
        "  // Verification tap: the request flits hub p accepts (port p at [FlitBits*p +: FlitBits]).\n  \
         output logic [NumPorts-1:0] hub_req_mon_valid_o,\n  \
         output logic [NumPorts*FlitBits-1:0] hub_req_mon_data_o,\n  \
         output logic [NumPorts-1:0] hub_req_mon_last_o\n);\n"
    );
    let _ = writeln!(w, "  {TOP_MODULE} #(");
    let names: Vec<&str> = params.iter().map(Param::name).collect();
    let name_w = names.iter().map(|n| n.len()).max().unwrap_or(0);
    for (i, n) in names.iter().enumerate() {
        let sep = if i + 1 < names.len() { "," } else { "" };
        let _ = writeln!(w, "    .{n:<name_w$} ({n}){sep}");
    }
    let _ = writeln!(w, "  ) u_dut (");
    let port_w = ports.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for (i, p) in ports.iter().enumerate() {
        let sep = if i + 1 < ports.len() { "," } else { "" };
        let _ = writeln!(w, "    .{:<port_w$} ({}){sep}", p.name, p.name);
    }
    let _ = writeln!(w, "  );\n");
    let _ = writeln!(
        w,
        "  assign hub_req_mon_valid_o = u_dut.req_out_valid & u_dut.req_out_ready;\n  \
         assign hub_req_mon_data_o  = u_dut.req_out_data;\n  \
         assign hub_req_mon_last_o  = u_dut.req_out_last;\n\nendmodule"
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_of_packed_ports() {
        let p = |base: &str, dims: &[(&str, &str)]| Port {
            dir: "input".into(),
            base: base.into(),
            dims: dims
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            name: "x".into(),
        };
        assert_eq!(p("logic", &[]).width(), "1");
        assert_eq!(p("logic", &[("47", "0")]).width(), "48");
        assert_eq!(
            p("flit_t", &[("NumPorts-1", "0")]).width(),
            "NumPorts*$bits(flit_t)"
        );
        assert_eq!(
            p(
                "logic",
                &[("NumPorts-1", "0"), ("$clog2(MemLines+1)-1", "0")]
            )
            .width(),
            "NumPorts*$clog2(MemLines+1)"
        );
        assert_eq!(
            p("logic", &[("NumGroups*NumPorts-1", "0")]).width(),
            "(NumGroups*NumPorts)"
        );
        assert_eq!(p("logic", &[("7", "4")]).width(), "((7)-(4)+1)");
    }

    #[test]
    fn the_top_header_is_read_and_wrapped() {
        let (params, ports) = header(TOP_SV, TOP_MODULE).unwrap();
        assert!(params.len() >= 10, "{params:?}");
        assert!(ports.iter().any(|p| p.name == "sm_req_data_i"));
        let text = render(TOP_SV).unwrap();
        // Every parameter verbatim and passed on, every port connected.
        for p in &params {
            assert!(text.contains(p.decl.as_str()), "{}", p.decl);
            let pass = format!(".{} ", p.name());
            assert!(text.contains(&pass), "{} not passed on", p.name());
        }
        for p in &ports {
            assert!(text.contains(&format!(".{} ", p.name)), "{}", p.name);
        }
    }

    #[test]
    fn bad_headers_are_errors_with_a_line() {
        let e = render("module other;\nendmodule\n").unwrap_err();
        assert!(e.msg.contains("no `module dysharp_top`"), "{e}");
        let text = "module dysharp_top #(\n  parameter int A = 1\n) (\n  inout logic x\n);\n";
        let e = render(text).unwrap_err();
        assert_eq!(e.line, 4);
        let text = "module dysharp_top #(\n  parameter int A = 1\n) (\n  input logic [3:0 x\n);\n";
        assert!(render(text).is_err());
        let text = "module dysharp_top #(\n  parameter int A = 1\n) (\n  input logic x\n";
        assert!(render(text).unwrap_err().msg.contains("no end"));
    }
}
