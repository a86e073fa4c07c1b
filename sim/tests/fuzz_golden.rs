//! Fuzzing of every input the golden flow reads (issue 14): scenario files, result files,
//! signal maps, port templates, hex strings and waveforms (VCD, gzip'd VCD, FST headers).
//! Random bytes, mutations and truncations of valid files, deep nesting, huge numbers and
//! sizes. Each case must end in a value or an error, never a panic, a hang or an unbounded
//! allocation; and inputs the docs call invalid must be errors.
//!
//! Cases per reader: `DYSHARP_FUZZ_CASES` (default 200, a few seconds in all); the seed is
//! `DYSHARP_FUZZ_SEED` (default 1). A failing case prints its seed and input.

use dysharp_sim::scenario::pktspec::{parse_hex128, parse_hex_bytes, parse_uint};
use dysharp_sim::scenario::{diff, DiffOptions, GoldenResult, Scenario};
use dysharp_sim::vcd_extract::{expand, extract, SignalMap};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

fn cases() -> usize {
    std::env::var("DYSHARP_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

fn seed() -> u64 {
    std::env::var("DYSHARP_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

fn example(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/golden")
        .join(name);
    std::fs::read_to_string(p).expect("example file")
}

/// Runs `f` on `cases()` generated inputs; a panic fails the test naming the case.
fn campaign(name: &str, gen: impl Fn(&mut ChaCha8Rng) -> Vec<u8>, f: impl Fn(&[u8])) {
    let n = cases();
    let mut rng = ChaCha8Rng::seed_from_u64(seed() ^ fxhash(name));
    for k in 0..n {
        let input = gen(&mut rng);
        if catch_unwind(AssertUnwindSafe(|| f(&input))).is_err() {
            let shown = String::from_utf8_lossy(&input[..input.len().min(2000)]).into_owned();
            panic!("{name}: case {k} (seed {}) panicked on:\n{shown}", seed());
        }
    }
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

/// Interesting replacements: huge, negative, odd numbers; non-ASCII; signs; nesting.
const TOKENS: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-1",
    "0",
    "4294967296",
    "1e308",
    "\"0xffffffffffffffff\"",
    "\"0x+1\"",
    "\"é\"",
    "é",
    "+",
    "null",
    "[]",
    "{}",
    "\"\"",
    "((((((((((p))))))))))",
    "[[[[[[[[[[[[[[[[",
    "}}}}",
    "\"0..4000000000000\"",
    "$scope",
    "$end",
    "#0",
    "bx",
    "\u{0}",
];

/// A mutation of `base`: byte flips, token splices, truncation, duplication.
fn mutate(rng: &mut ChaCha8Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..rng.gen_range(1..4) {
        if v.is_empty() {
            break;
        }
        let i = rng.gen_range(0..v.len());
        match rng.gen_range(0..6) {
            0 => v[i] = rng.gen(),
            1 => v.truncate(i),
            2 => {
                let t = TOKENS[rng.gen_range(0..TOKENS.len())].as_bytes();
                let end = (i + rng.gen_range(0..12)).min(v.len());
                v.splice(i..end, t.iter().copied());
            }
            3 => {
                let end = (i + rng.gen_range(1..64)).min(v.len());
                let chunk = v[i..end].to_vec();
                v.splice(i..i, chunk);
            }
            4 => {
                // Replace a number with a huge one.
                if v[i].is_ascii_digit() {
                    let end = (i..v.len())
                        .find(|&j| !v[j].is_ascii_digit())
                        .unwrap_or(v.len());
                    v.splice(i..end, b"99999999999999999999999".iter().copied());
                }
            }
            _ => {
                let end = (i + rng.gen_range(1..16)).min(v.len());
                v.drain(i..end);
            }
        }
    }
    v
}

fn random_bytes(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let n = rng.gen_range(0..512);
    (0..n).map(|_| rng.gen()).collect()
}

fn nested(open: &str, close: &str, depth: usize, middle: &str) -> Vec<u8> {
    format!("{}{middle}{}", open.repeat(depth), close.repeat(depth)).into_bytes()
}

// ---------------------------------------------------------------------------------------------
// Scenario and result files
// ---------------------------------------------------------------------------------------------

#[test]
fn fuzz_scenarios() {
    let base = example("scenario.json").into_bytes();
    campaign(
        "scenario",
        |rng| match rng.gen_range(0..10) {
            0 => random_bytes(rng),
            1 => nested("[", "]", rng.gen_range(1..100_000), "1"),
            2 => nested("{\"a\":", "}", rng.gen_range(1..100_000), "1"),
            _ => mutate(rng, &base),
        },
        |input| {
            let text = String::from_utf8_lossy(input);
            if let Ok(p) = Scenario::from_json("s.json", &text) {
                let r = p.run();
                let back = GoldenResult::from_json("e.json", &r.to_json()).expect("own output");
                assert!(diff(&back, &back, DiffOptions::default()).equal);
            }
        },
    );
}

#[test]
fn fuzz_result_files_and_diff() {
    let e = Scenario::from_json("s.json", &example("scenario.json"))
        .expect("example")
        .run();
    let base = e
        .to_json()
        .replace("\"expected\"", "\"observed\"")
        .into_bytes();
    campaign(
        "result",
        |rng| match rng.gen_range(0..10) {
            0 => random_bytes(rng),
            1 => nested("[", "]", rng.gen_range(1..100_000), ""),
            _ => mutate(rng, &base),
        },
        |input| {
            let text = String::from_utf8_lossy(input);
            if let Ok(o) = GoldenResult::from_json("o.json", &text) {
                let opt = DiffOptions {
                    max_diffs: 5,
                    ..Default::default()
                };
                let r = diff(&e, &o, opt);
                assert!(r.divergences.len() <= 5 && r.total >= r.divergences.len());
                let _ = r.to_string();
                let _ = e.check_pair("e.json", &o, "o.json");
            }
        },
    );
}

#[test]
fn fuzz_hex_strings() {
    campaign(
        "hex",
        |rng| {
            let alphabet = b"0123456789abcdefABCDEF_x+- \xc3\xa9";
            let n = rng.gen_range(0..40);
            (0..n)
                .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                .collect()
        },
        |input| {
            let s = String::from_utf8_lossy(input);
            if let Ok(b) = parse_hex_bytes(&s) {
                assert!(s
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == '_' || c == 'x' || c.is_whitespace()));
                assert!(b.len() <= s.len() / 2);
            }
            if parse_hex128(&s).is_ok() || parse_uint(&s).is_ok() {
                assert!(!s.contains('+') && !s.contains('-') && s.is_ascii(), "{s}");
            }
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Signal maps and templates
// ---------------------------------------------------------------------------------------------

#[test]
fn fuzz_templates() {
    campaign(
        "template",
        |rng| {
            if rng.gen_range(0..10) == 0 {
                return nested("{", "}", 1, &"(".repeat(rng.gen_range(1..200_000)));
            }
            let alphabet = b"p0123456789+-*() {}";
            let n = rng.gen_range(0..60);
            (0..n)
                .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                .collect()
        },
        |input| {
            let s = String::from_utf8_lossy(input);
            let _ = expand(&s, 31);
        },
    );
    // Deeply nested parentheses are an error, not a stack overflow.
    let deep = format!("x[{{{}p{}}}]", "(".repeat(100_000), ")".repeat(100_000));
    assert!(expand(&deep, 0).is_err());
    assert!(expand("{9223372036854775807*2}", 0).is_err());
    assert!(expand("{-(-9223372036854775807-1)}", 0).is_err());
}

fn vcd_and_map() -> (String, String) {
    let mut v = String::from(
        "$date today $end\n$timescale 1ns $end\n$scope module TOP $end\n\
         $var wire 1 ! clk $end\n$scope interface bus $end\n\
         $var logic 1 \" valid $end\n$var logic 1 # last $end\n\
         $var logic 128 $ data[127:0] $end\n$var bit 48 % addr [47:0] $end\n\
         $var logic 1 & we $end\n$upscope $end\n$upscope $end\n$enddefinitions $end\n\
         $dumpvars\n0!\n0\"\n0#\n0&\nb0 $\nb0 %\n$end\n",
    );
    for t in 0..12u64 {
        v += &format!("#{}\n1!\n", 10 * t + 5);
        v += &format!(
            "#{}\n0!\n{}\"\n{}#\nb{:b} $\nb{:b} %\n{}&\n",
            10 * t + 10,
            t % 3 != 0,
            (t % 2) as u8,
            0x1234_5678_9abc_def0u128.wrapping_mul(u128::from(t) + 1),
            16 * t,
            (t % 4 == 1) as u8
        )
        .replace("true", "1")
        .replace("false", "0");
    }
    let map = "version = 1\nclock = \"TOP.clk\"\n[[stream]]\nname = \"s\"\nport = 0\n\
               valid = \"TOP.bus.valid\"\ndata = \"TOP.bus.data[127:0]\"\nlast = \"TOP.bus.last\"\n\
               [[mem]]\nport = \"0..1\"\nvalid = \"TOP.bus.valid\"\nwe = \"TOP.bus.we\"\n\
               addr = \"TOP.bus.addr\"\nwdata = \"TOP.bus.data\"\n"
        .to_string();
    (v, map)
}

#[test]
fn fuzz_signal_maps() {
    let (vcd, base) = vcd_and_map();
    campaign(
        "map",
        |rng| {
            match rng.gen_range(0..12) {
            0 => random_bytes(rng),
            1 => nested("a = [", "]", rng.gen_range(1..100_000), ""),
            2 => format!("version = 1\nclock = \"TOP.clk\"\n[[stream]]\nport = \"0..{}\"\nvalid = \"v\"\ndata = \"d\"\nlast = \"l\"\n", rng.gen::<u64>()).into_bytes(),
            3 => base
                .replace("[127:0]", &format!("[{}:0]", rng.gen::<i64>()))
                .into_bytes(),
            _ => mutate(rng, base.as_bytes()),
        }
        },
        |input| {
            let text = String::from_utf8_lossy(input);
            if let Ok(m) = SignalMap::from_toml("m.toml", &text) {
                let _ = extract(vcd.as_bytes(), "w.vcd", &m, "m.toml");
            }
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Waveforms
// ---------------------------------------------------------------------------------------------

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).expect("in memory");
    e.finish().expect("in memory")
}

#[test]
fn fuzz_waveforms() {
    let (vcd, map) = vcd_and_map();
    let map = SignalMap::from_toml("m.toml", &map).expect("map");
    let ok = extract(vcd.as_bytes(), "w.vcd", &map, "m.toml").expect("the base waveform reads");
    assert!(!ok.streams[0].frames.is_empty());
    let gz = extract(gzip(vcd.as_bytes()).as_slice(), "w.vcd.gz", &map, "m.toml").expect("gzip'd");
    assert_eq!(gz.streams[0].frames, ok.streams[0].frames);
    campaign(
        "waveform",
        |rng| match rng.gen_range(0..14) {
            0 => random_bytes(rng),
            1 => {
                let d = rng.gen_range(1..100_000);
                let mut s = "$scope module a $end\n".repeat(d);
                s += &"$upscope $end\n".repeat(d);
                s.into_bytes()
            }
            2 => vcd
                .replace("128 $ data", &format!("{} $ data", rng.gen::<u32>()))
                .into_bytes(),
            3 => gzip(&mutate(rng, vcd.as_bytes())),
            4 => {
                let mut g = gzip(vcd.as_bytes());
                let n = g.len();
                g.truncate(rng.gen_range(2..n));
                g
            }
            5 => {
                // An FST header block followed by garbage.
                let mut f = vec![0u8];
                f.extend_from_slice(&329u64.to_be_bytes());
                f.extend(random_bytes(rng));
                f
            }
            6 => format!("{}b{} $\n", vcd, "1".repeat(rng.gen_range(1..300))).into_bytes(),
            _ => mutate(rng, vcd.as_bytes()),
        },
        |input| {
            let _ = extract(input, "w.vcd", &map, "m.toml");
        },
    );
}

#[test]
fn invalid_waveforms_are_errors() {
    let (vcd, map) = vcd_and_map();
    let map = SignalMap::from_toml("m.toml", &map).expect("map");
    let err = |text: &str| match extract(text.as_bytes(), "w.vcd", &map, "m.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    };
    // Time going backwards.
    let e = err(&format!("{vcd}#3\n1!\n"));
    assert!(
        e.contains("w.vcd: at `line ") && e.contains("backwards"),
        "{e}"
    );
    // A change of an undeclared identifier.
    let e = err(&format!("{vcd}#1000\n1?\n"));
    assert!(e.contains("no `$var` declares"), "{e}");
    // A value wider than its variable, a bad digit, a bad timestamp.
    assert!(err(&format!("{vcd}#1000\nb111 \"\n")).contains("bits for a signal of 1"));
    assert!(err(&format!("{vcd}#1000\nb12 $\n")).contains("not a binary value"));
    assert!(err(&format!("{vcd}#1x0\n")).contains("timestamp"));
    // Scopes nested too deep: an error, not a stack overflow.
    let deep = "$scope module a $end\n".repeat(100_000);
    assert!(err(&deep).contains("deeper"));
    // A header that never ends, an FST that is not one, a mapped var too wide to track.
    assert!(err("$scope module TOP $end\n").contains("$enddefinitions"));
    let mut f = vec![0u8];
    f.extend_from_slice(&329u64.to_be_bytes());
    f.extend_from_slice(b"garbage");
    assert!(extract(f.as_slice(), "w.fst", &map, "m.toml").is_err());
    let wide = vcd.replace("128 $ data", "4294967295 $ data");
    assert!(err(&wide).contains("not read"));
}

/// `examples/golden/waves.fst` is `waves.vcd` converted by GTKWave's `vcd2fst`.
fn example_bytes(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/golden")
        .join(name);
    std::fs::read(p).expect("example file")
}

#[test]
fn fst_and_vcd_read_alike() {
    let map = SignalMap::from_toml("waves.toml", &example("waves.toml")).expect("map");
    let vcd = extract(
        example_bytes("waves.vcd").as_slice(),
        "waves.vcd",
        &map,
        "m",
    )
    .unwrap();
    let fst_bytes = example_bytes("waves.fst");
    let fst = extract(fst_bytes.as_slice(), "waves.fst", &map, "m").unwrap();
    assert_eq!(vcd.streams[0].frames.len(), 2);
    assert_eq!(fst.streams[0].frames, vcd.streams[0].frames);
    assert_eq!(fst.streams[0].frames[1].xz, vec![2], "x/z survives FST");
    let gz = extract(gzip(&fst_bytes).as_slice(), "waves.fst.gz", &map, "m").unwrap();
    assert_eq!(gz.streams[0].frames, vcd.streams[0].frames);
}

/// Corrupted FST files: every one reads or fails with an error, without a panic, an abort
/// (a failed huge allocation) or a hang. Besides byte and bit flips and truncations, the
/// mutations write big numbers over the file, as 64-bit big-endian words (the block
/// lengths, counts and sizes) and as LEB128 varints (the sizes inside value-change blocks).
/// `--nocapture` prints how many cases read and how many the FST reader itself rejected
/// (those past the pre-check of `vcd_extract::fst`).
#[test]
fn fuzz_fst() {
    use std::cell::Cell;
    let map = SignalMap::from_toml("waves.toml", &example("waves.toml")).expect("map");
    let fst_bytes = example_bytes("waves.fst");
    let big = |rng: &mut ChaCha8Rng| -> u64 {
        match rng.gen_range(0..4) {
            0 => rng.gen(),
            1 => rng.gen::<u64>() >> rng.gen_range(0..64),
            2 => 1 << rng.gen_range(0..64),
            _ => u64::MAX - rng.gen_range(0..4),
        }
    };
    let (read, by_reader, total) = (Cell::new(0), Cell::new(0), Cell::new(0));
    campaign(
        "fst",
        |rng| {
            let mut v = fst_bytes.clone();
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..v.len());
                match rng.gen_range(0..5) {
                    0 => v[i] = rng.gen(),
                    1 => v.truncate(i.max(9)),
                    2 => {
                        let w = big(rng).to_be_bytes();
                        let n = w.len().min(v.len() - i);
                        v[i..i + n].copy_from_slice(&w[..n]);
                    }
                    3 => {
                        let mut x = big(rng);
                        let mut j = i;
                        while j < v.len() {
                            v[j] = (x as u8 & 0x7f) | if x >= 0x80 { 0x80 } else { 0 };
                            x >>= 7;
                            j += 1;
                            if x == 0 {
                                break;
                            }
                        }
                    }
                    _ => v[i] ^= 1 << rng.gen_range(0..8),
                }
            }
            v
        },
        |input| {
            total.set(total.get() + 1);
            match extract(input, "w.fst", &map, "m") {
                Ok(_) => read.set(read.get() + 1),
                Err(e) if !e.to_string().contains("FST block at byte") => {
                    by_reader.set(by_reader.get() + 1)
                }
                Err(_) => {}
            }
        },
    );
    eprintln!(
        "fuzz_fst: {} cases, {} read, {} rejected by the FST reader, the rest by the pre-check",
        total.get(),
        read.get(),
        by_reader.get()
    );
}

/// Valid configurations at the edges of every limit run (and a step past each is an error).
#[test]
fn edge_configurations_run() {
    let scen = |cfg: &str| {
        format!(
            "{{\"version\": 1, \"config\": {cfg}, \"initial\": {{\"hubs\": [{{\"port\": 31, \"memory\": [{{\"addr\": \"0xfffffffffff0\", \"hex\": \"{}\"}}]}}]}}, \"stimulus\": [{{\"port\": 31, \"packets\": [{{\"packet\": {{\"opcode\": \"READ\", \"maddr\": \"0xfffffffffff0\", \"src_port\": 31, \"tag\": 4095}}}}, {{\"packet\": {{\"opcode\": \"DYN_ST\", \"maddr\": \"0x400000000000\", \"targets\": [0, 65503], \"values\": [1, 2]}}}}]}}]}}",
            "ab".repeat(16)
        )
    };
    let hub = |entries: u64, ways: u64, slots: u32| {
        format!("{{\"mbase\": \"0x400000000000\", \"log2_bsize\": 4, \"al_base\": \"0x100000\", \"log2_al_entries\": 12, \"data_base\": \"0x100000000\", \"log2_slots\": {slots}, \"tlb_entries\": {entries}, \"tlb_ways\": {ways}}}")
    };
    let cfg = |epp: u64, targets: u64, h: String| {
        format!(
            "{{\"num_ports\": 32, \"experts_per_port\": {epp}, \"max_targets\": {targets}, \"groups\": [{}], \"hub\": {h}}}",
            vec!["4294967295"; 256].join(", ")
        )
    };
    let ok = cfg(2047, 32767, hub(65536, 1, 20));
    let p = Scenario::from_json("edge.json", &scen(&ok)).expect("edge configuration");
    let r = p.run();
    assert!(r.egress.iter().map(|e| e.packets.len()).sum::<usize>() > 0);
    for bad in [
        cfg(2048, 32767, hub(65536, 1, 20)),
        cfg(2047, 32768, hub(65536, 1, 20)),
        cfg(2047, 32767, hub(131072, 1, 20)),
        cfg(2047, 32767, hub(65536, 3, 20)),
        cfg(2047, 32767, hub(65536, 1, 33)),
    ] {
        assert!(
            Scenario::from_json("edge.json", &scen(&bad)).is_err(),
            "{bad}"
        );
    }
}
