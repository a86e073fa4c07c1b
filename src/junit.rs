//! JUnit XML of a regression run (`dysharp regress --junit FILE`): the format
//! every CI system reads (GitHub Actions test reporters, GitLab, Jenkins).
//!
//! One `<testsuite>` per run (named by size and shard, so that shards of one
//! run merge into one report), one `<testcase>` per regression case and seed.
//! A failed case carries `<failure>` with its kind (mismatch, hang, error), the
//! first error and the command that re-runs exactly that case with a
//! waveform; a skipped case `<skipped>` with the reason; every case says what
//! it checked in `<system-out>`.

use dysharp_verif::coverage::html_escape;
use dysharp_verif::regress::{CaseResult, FailKind, Summary};
use std::fmt::Write;

/// Escapes text for an XML attribute or element: the five markup characters (as the
/// coverage report's HTML does), and characters XML 1.0 does not allow (control characters
/// other than tab, newline and carriage return, U+FFFE, U+FFFF) as U+FFFD.
fn escape(s: &str) -> String {
    let legal: String = s
        .chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect();
    html_escape(&legal)
}

fn kind_name(k: FailKind) -> &'static str {
    match k {
        FailKind::Mismatch => "mismatch",
        FailKind::Hang => "hang",
        FailKind::Error => "error",
    }
}

/// The `classname` of a case: the regression's kind (`stream`, `badinput`,
/// `trace/deepep`, ...), i.e. its name without the last path element.
fn classname(name: &str) -> String {
    match name.rsplit_once('/') {
        Some((kind, _)) => format!("dysharp.regress.{}", kind.replace('/', ".")),
        None => "dysharp.regress".into(),
    }
}

fn testcase(out: &mut String, c: &CaseResult) {
    let k = &c.checked;
    let _ = write!(
        out,
        "    <testcase name=\"{} seed {}\" classname=\"{}\" time=\"{:.3}\"",
        escape(&c.name),
        c.seed,
        escape(&classname(&c.name)),
        c.seconds
    );
    out.push_str(">\n");
    if let Some(f) = &c.failure {
        let mut text = f.message.clone();
        if let Some(s) = &f.shrunk {
            let _ = write!(text, "\nshrunk: {s}");
        }
        let _ = write!(text, "\nre-run: {}", f.rerun);
        let _ = writeln!(
            out,
            "      <failure type=\"{}\" message=\"{}\">{}</failure>",
            kind_name(f.kind),
            escape(f.message.lines().next().unwrap_or("")),
            escape(&text)
        );
    } else if let Some(why) = &c.skipped {
        let _ = writeln!(out, "      <skipped message=\"{}\"/>", escape(why));
    }
    let _ = writeln!(
        out,
        "      <system-out>{} packets and {} memory accesses checked, {} legal and {} malformed packets injected, {} frames cut by reset, {} cycles</system-out>",
        k.packets, k.mem_accesses, k.legal_injected, k.malformed_injected, k.cut_by_reset, k.cycles
    );
    out.push_str("    </testcase>\n");
}

/// The JUnit XML document of a regression summary.
pub fn junit(s: &Summary) -> String {
    let tests = s.cases.len();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"dysharp regress\" tests=\"{tests}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3}\">",
        s.cases_failed, s.cases_skipped, s.seconds
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"dysharp regress {} shard {}\" tests=\"{tests}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3}\">",
        escape(&s.size),
        escape(&s.shard),
        s.cases_failed,
        s.cases_skipped,
        s.seconds
    );
    for c in &s.cases {
        testcase(&mut out, c);
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dysharp_verif::regress::{Checked, Failure};

    fn case(name: &str, failure: Option<Failure>, skipped: Option<String>) -> CaseResult {
        CaseResult {
            name: name.into(),
            seed: 3,
            checked: Checked {
                packets: 10,
                ..Checked::default()
            },
            seconds: 1.5,
            skipped,
            failure,
        }
    }

    #[test]
    fn failures_skips_and_escaping() {
        let fail = Failure {
            kind: FailKind::Mismatch,
            message: "SM 2 response: tag <5> & \"x\"\nsecond line\u{1}".into(),
            shrunk: None,
            rerun: "dysharp regress --case stream/top_p8 --seed 3 --vcd f.vcd".into(),
        };
        let s = Summary {
            size: "quick".into(),
            shard: "1/1".into(),
            cases_run: 2,
            cases_skipped: 1,
            cases_failed: 1,
            packets_checked: 20,
            mem_checked: 0,
            legal_injected: 0,
            malformed_injected: 0,
            mismatches: 1,
            hangs: 0,
            cycles: 0,
            seconds: 4.0,
            cases: vec![
                case("stream/top_p4", None, None),
                case("sequence/top_p8", Some(fail), None),
                case("trace/e64k8/counts:x", None, Some("no ../shared".into())),
            ],
        };
        let x = junit(&s);
        assert!(x.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
        assert!(x.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
        assert!(x.contains(
            "<testcase name=\"stream/top_p4 seed 3\" classname=\"dysharp.regress.stream\" time=\"1.500\">"
        ));
        assert!(x.contains("classname=\"dysharp.regress.trace.e64k8\""));
        assert!(x.contains(
            "<failure type=\"mismatch\" message=\"SM 2 response: tag &lt;5&gt; &amp; &quot;x&quot;\">"
        ));
        assert!(x.contains("second line\u{FFFD}\nre-run: dysharp regress --case stream/top_p8"));
        assert!(x.contains("<skipped message=\"no ../shared\"/>"));
        assert_eq!(x.matches("<testcase ").count(), 3);
        assert_eq!(x.matches("</testcase>").count(), 3);
        assert!(x.ends_with("</testsuite>\n</testsuites>\n"));
    }
}
