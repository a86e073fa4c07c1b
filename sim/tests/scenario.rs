//! Golden-model comparison (docs/golden.md): scenario files, `run`, the ordering rules and
//! first-divergence reports of `diff`, and `from-vcd` on hand-written and synthesized
//! waveforms with injected faults.

use dysharp_sim::numerics::{AccMode, DType, ReduceOp};
use dysharp_sim::packet::{ErrorCode, Flit, Opcode};
use dysharp_sim::scenario::pktspec::{hex128, parse_hex128};
use dysharp_sim::scenario::{
    diff, DiffOptions, DiffReport, GoldenResult, Prepared, ResultKind, Scenario,
};
use dysharp_sim::vcd_extract::{self, expand, extract, inject_faults, Override, SignalMap};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/golden")
        .join(name)
}

fn example_scenario() -> Prepared {
    Scenario::load(&example("scenario.json")).expect("example scenario loads")
}

fn expected() -> GoldenResult {
    example_scenario().run()
}

fn observed_from(e: &GoldenResult) -> GoldenResult {
    let mut o = e.clone();
    o.kind = ResultKind::Observed;
    o
}

fn flits(e: &GoldenResult, port: usize, i: usize) -> Vec<Flit> {
    e.egress.iter().find(|p| p.port == port).unwrap().packets[i]
        .frame()
        .unwrap()
}

fn set_flits(o: &mut GoldenResult, port: usize, i: usize, f: &[Flit]) {
    let pe = o.egress.iter_mut().find(|p| p.port == port).unwrap();
    pe.packets[i].flits = Some(f.iter().map(|x| hex128(*x)).collect());
    pe.packets[i].packet = None;
}

/// Position on `port` of the first packet matching `pred` (on the decoded flit0).
fn find(
    e: &GoldenResult,
    port: usize,
    pred: impl Fn(&dysharp_sim::packet::Packet) -> bool,
) -> usize {
    let limits = e.limits();
    e.egress
        .iter()
        .find(|p| p.port == port)
        .unwrap()
        .packets
        .iter()
        .position(|x| {
            dysharp_sim::packet::decode(
                &x.frame().unwrap(),
                dysharp_sim::packet::Origin::Egress,
                &limits,
            )
            .is_ok_and(|p| pred(&p))
        })
        .expect("packet present")
}

fn first(r: &DiffReport) -> &dysharp_sim::scenario::Divergence {
    r.first.as_ref().expect("a divergence")
}

// ---------------------------------------------------------------------------------------------
// Scenario and run
// ---------------------------------------------------------------------------------------------

#[test]
fn example_scenario_covers_every_op_dtype_and_response() {
    let prep = example_scenario();
    let e = prep.run();
    let limits = e.limits();
    let mut ops = BTreeSet::new();
    let mut dtypes = BTreeSet::new();
    let mut rops = BTreeSet::new();
    let mut accs = BTreeSet::new();
    for pe in &e.egress {
        for x in &pe.packets {
            assert!(x.error.is_none(), "{:?}", x.error);
            let p = dysharp_sim::packet::decode(
                &x.frame().unwrap(),
                dysharp_sim::packet::Origin::Egress,
                &limits,
            )
            .unwrap();
            ops.insert(p.opcode);
            if p.opcode.is_ld_reduce() || p.opcode == Opcode::RspReduce || p.opcode.is_store() {
                dtypes.insert(p.dtype.code());
            }
            if p.opcode.is_ld_reduce() {
                rops.insert(p.rop.code());
                accs.insert(p.acc.code());
            }
        }
    }
    // Every opcode but the partial (which stays inside the switch) leaves it.
    for op in Opcode::ALL.into_iter().filter(|o| *o != Opcode::RspPartial) {
        assert!(ops.contains(&op), "{op} never leaves the switch");
    }
    assert_eq!(dtypes.len(), DType::ALL.len(), "dtypes {dtypes:?}");
    assert_eq!(rops.len(), ReduceOp::ALL.len(), "reduce ops {rops:?}");
    assert_eq!(accs.len(), AccMode::ALL.len(), "acc modes {accs:?}");
    let errs: BTreeSet<String> = e
        .error_counters
        .as_ref()
        .unwrap()
        .iter()
        .flat_map(|p| p.counts.keys().cloned())
        .collect();
    for c in [
        ErrorCode::Hcc,
        ErrorCode::Frame,
        ErrorCode::Opcode,
        ErrorCode::Dup,
        ErrorCode::Unmapped,
        ErrorCode::Range,
    ] {
        assert!(
            errs.contains(c.name()),
            "{} not counted: {errs:?}",
            c.name()
        );
    }
    let writes: usize = e
        .mem_writes
        .as_ref()
        .unwrap()
        .iter()
        .map(|h| h.writes.len())
        .sum();
    assert!(writes > 10);
    // Deterministic, and the file round-trips.
    let again = prep.run();
    assert_eq!(again.digest, e.digest);
    let back = GoldenResult::from_json("expected.json", &e.to_json()).unwrap();
    let (x, y) = (back.to_json(), e.to_json());
    if let Some((a, b)) = x.lines().zip(y.lines()).find(|(a, b)| a != b) {
        panic!("the result file does not round-trip: `{a}` vs `{b}`");
    }
    assert_eq!(x, y);
    assert!(diff(&e, &back, DiffOptions::default()).equal);
}

#[test]
fn preloaded_rows_are_reduced_by_combine() {
    // Port 0's Combine of experts 9, 10 (hub 1) and 17 (hub 2): rows from the initial state.
    let e = expected();
    let i = find(&e, 0, |p| p.opcode == Opcode::RspReduce && p.tag == 3);
    let pe = &e.egress[0].packets[i];
    let vals = serde_json::to_value(&pe.packet.as_ref().unwrap().values).unwrap();
    // lane 0: 1 + 0.5 + 1; lane 3: 4 + 0.001 + 4 rounded once to bf16; lane 5: 6 + inf + 0.
    assert_eq!(vals[0], 2.5);
    assert_eq!(vals[3], 8.0);
    assert_eq!(vals[5], "inf");
}

#[test]
fn injection_is_round_robin_across_ports() {
    let text = r#"{
      "version": 1,
      "config": { "num_ports": 2, "experts_per_port": 4, "max_targets": 8 },
      "stimulus": [
        { "port": 1, "packets": [
            { "packet": { "opcode": "WRITE", "maddr": 16, "route": 0, "tag": 10, "payload": "01" } },
            { "packet": { "opcode": "WRITE", "maddr": 32, "route": 0, "tag": 11, "payload": "02" } } ] },
        { "port": 0, "packets": [
            { "packet": { "opcode": "WRITE", "maddr": 48, "route": 0, "tag": 20, "payload": "03" } },
            { "packet": { "opcode": "WRITE", "maddr": 64, "route": 0, "tag": 21, "payload": "04" } },
            { "packet": { "opcode": "WRITE", "maddr": 80, "route": 0, "tag": 22, "payload": "05" } } ] }
      ]
    }"#;
    let prep = Scenario::from_json("rr.json", text).unwrap();
    assert_eq!(prep.order(), vec![(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]);
    let e = prep.run();
    let tags: Vec<u16> = e.egress[0]
        .packets
        .iter()
        .map(|x| x.packet.as_ref().unwrap().tag.unwrap())
        .collect();
    assert_eq!(tags, vec![20, 10, 21, 11, 22]);
    let addrs: Vec<u64> = e.mem_writes.as_ref().unwrap()[0]
        .writes
        .iter()
        .map(|w| w.addr.0)
        .collect();
    assert_eq!(addrs, vec![48, 16, 64, 32, 80]);
}

#[test]
fn scenario_errors_name_the_file_and_the_json_path() {
    let ok = std::fs::read_to_string(example("scenario.json")).unwrap();
    let err = |text: &str| Scenario::from_json("s.json", text).unwrap_err().to_string();

    let e = err(&ok.replacen("\"version\": 1", "\"version\": 2", 1));
    assert!(
        e.contains("s.json") && e.contains("version") && e.contains("unsupported"),
        "{e}"
    );
    let e = err(&ok.replacen("\"version\": 1,", "", 1));
    assert!(e.contains("missing field `version`"), "{e}");
    let e = err(&ok.replacen("\"tag\": 2,", "\"tag\": 2, \"colour\": 1,", 1));
    assert!(
        e.contains("s.json: at `stimulus[0].packets[1].packet.colour`: unknown field"),
        "{e}"
    );
    let e = err(&ok.replacen("\"opcode\": \"READ\"", "\"opcode\": \"REED\"", 1));
    assert!(e.contains("stimulus[0].packets[5].packet.opcode"), "{e}");
    let e = err(&ok.replacen("\"39000000002198000000000000000007\"", "\"3900\"", 1));
    assert!(
        e.contains("stimulus[3].packets[1].flits") && e.contains("32 hex digits"),
        "{e}"
    );
    let e = err(&ok.replacen(
        "\"log2_slots\": 12,",
        "\"log2_slots\": 12, \"extra\": 0,",
        1,
    ));
    assert!(e.contains("config.hub") && e.contains("extra"), "{e}");
    let e = err(&ok.replacen("{\n      \"port\": 3,", "{\n      \"port\": 9,", 1));
    assert!(
        e.contains("stimulus[3].port") && e.contains("num_ports"),
        "{e}"
    );
    let e = err(&ok.replacen("\"len\": 2,", "\"len\": 40,", 1));
    assert!(e.contains("len"), "{e}");
    let e = err(&ok.replacen("\"expert\": 17, \"aidx\"", "\"expert\": 3, \"aidx\"", 1));
    assert!(
        e.contains("initial.hubs[2].al[0].expert") && e.contains("not on port 2"),
        "{e}"
    );
    let e = err("{\"version\": 1, \"config\": {\"num_ports\": 2, \"experts_per_port\": 1, \"max_targets\": 1}, \"stimulus\": [{\"port\": 0, \"packets\": [{\"packet\": {\"opcode\": \"WRITE\", \"payload\": [1, 2], \"values\": [1, 3]}}]}]}");
    assert!(
        e.contains("stimulus[0].packets[0].packet") && e.contains("disagree"),
        "{e}"
    );
    let e = GoldenResult::from_json("o.json", "{\"version\": 1, \"kind\": \"observed\", \"egress\": [{\"port\": 0, \"packets\": [{\"flits\": [\"zz\"]}]}]}")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("o.json") && e.contains("egress[0].packets[0]"),
        "{e}"
    );
}

#[test]
fn structured_and_hex_forms_agree() {
    // A packet may be given both ways if they agree; values and hex payloads are the same.
    let text = r#"{
      "version": 1,
      "config": { "num_ports": 2, "experts_per_port": 4, "max_targets": 8 },
      "stimulus": [ { "port": 0, "packets": [
        { "packet": { "opcode": "WRITE", "maddr": "0x10", "route": 1, "dtype": "f32", "values": [1.0, "-inf", "0x7fc00001", -0.0] },
          "flits": ["%H", "ffffffffffffffffffffffffffffffff", "800000007fc00001ff8000003f800000"] },
        { "packet": { "opcode": "WRITE", "maddr": "0x10", "route": 1, "dtype": "f32", "payload": "0000803f000080ff0100c07f00000080" } }
      ] } ]
    }"#;
    let mut p = dysharp_sim::packet::Packet::new(Opcode::Write);
    p.maddr = 0x10;
    p.route = 1;
    p.dtype = DType::F32;
    p.be = Some(u128::MAX);
    p.payload = parse_hex128("800000007fc00001ff8000003f800000")
        .unwrap()
        .to_le_bytes()
        .to_vec();
    let text = text.replace("%H", &hex128(p.encode()[0]));
    let prep = Scenario::from_json("s.json", &text).unwrap();
    assert_eq!(prep.frames[0][0], p.encode());
    assert_eq!(prep.frames[0][1], p.encode());
}

// ---------------------------------------------------------------------------------------------
// Diff on result files
// ---------------------------------------------------------------------------------------------

#[test]
fn diff_is_equal_on_itself() {
    let e = expected();
    let r = diff(&e, &observed_from(&e), DiffOptions::default());
    assert!(r.equal, "{r}");
    assert_eq!(r.counts.egress_equal, 40);
    assert!(r.to_string().starts_with("equal"));
}

#[test]
fn flipped_payload_bit_is_the_first_divergence() {
    let e = expected();
    let mut o = observed_from(&e);
    let i = find(&e, 1, |p| p.opcode == Opcode::RspReduce);
    let mut f = flits(&e, 1, i);
    f[1] ^= 1 << 17; // payload flit 0, byte 2, bit 1: f16 lane 1, bit 1
    set_flits(&mut o, 1, i, &f);
    let r = diff(&e, &o, DiffOptions::default());
    assert!(!r.equal);
    let d = first(&r);
    assert_eq!((d.section.as_str(), d.kind.as_str()), ("egress", "differs"));
    assert_eq!(d.port, Some(1));
    assert_eq!(d.index, Some(0));
    assert_eq!(d.expected_position, Some(i));
    assert!(d.flow.as_ref().unwrap().contains("RSP_REDUCE"));
    assert_eq!(d.details.len(), 1, "{d}");
    let t = &d.details[0];
    assert!(t.starts_with("payload lane 1 (f16"), "{t}");
    assert!(
        t.contains("0x38cc") && t.contains("0x38ce") && t.contains("0.5996"),
        "{t}"
    );
    assert!(
        t.contains("payload bit 17") && t.contains("0b0011_1000_1100_1110"),
        "{t}"
    );
    assert_eq!(r.counts.egress_differ, 1);
}

#[test]
fn dropped_flit_is_the_first_divergence() {
    let e = expected();
    let mut o = observed_from(&e);
    let i = find(&e, 3, |p| p.opcode == Opcode::DynSt && p.src_port == 0);
    let mut f = flits(&e, 3, i);
    f.remove(3);
    set_flits(&mut o, 3, i, &f);
    let r = diff(&e, &o, DiffOptions::default());
    let d = first(&r);
    assert_eq!(
        (d.port, d.index, d.kind.as_str()),
        (Some(3), Some(1), "differs")
    );
    assert_eq!(d.flow.as_deref(), Some("requests with src_port 0"));
    let all = d.details.join("\n");
    assert!(
        all.contains("ERR_FRAME") && all.contains("expected 5 flits, observed 4"),
        "{all}"
    );
    assert!(all.contains("first differing flit 3"), "{all}");
}

#[test]
fn swapped_packets_in_one_flow_are_the_first_divergence() {
    let e = expected();
    let mut o = observed_from(&e);
    let a = find(&e, 3, |p| p.opcode == Opcode::McLdReduce);
    let b = find(&e, 3, |p| p.opcode == Opcode::Read && p.src_port == 0);
    o.egress[3].packets.swap(a, b);
    let r = diff(&e, &o, DiffOptions::default());
    let d = first(&r);
    assert_eq!((d.port, d.index), (Some(3), Some(2)), "{d}");
    assert_eq!(d.expected_position, Some(a));
    let all = d.details.join("\n");
    assert!(
        all.contains("opcode: expected MC_LD_REDUCE, observed READ"),
        "{all}"
    );
    assert!(all.contains("reordered within the flow"), "{all}");
    assert_eq!(r.counts.egress_differ, 2);
}

#[test]
fn interleavings_the_spec_leaves_open_are_not_differences() {
    let e = expected();
    // Different sources at one egress port.
    let mut o = observed_from(&e);
    let a = find(&e, 1, |p| p.opcode == Opcode::McSt && p.src_port == 1);
    let b = find(&e, 1, |p| {
        p.opcode == Opcode::DynLdReduce && p.src_port == 2 && p.tag == 32
    });
    o.egress[1].packets.swap(a, b);
    assert!(diff(&e, &o, DiffOptions::default()).equal);
    // Load-reduce results of different requests (RSP_REDUCE tags 3 and 4 to port 0).
    let mut o = observed_from(&e);
    let a = find(&e, 0, |p| p.opcode == Opcode::RspReduce && p.tag == 3);
    let b = find(&e, 0, |p| p.opcode == Opcode::RspReduce && p.tag == 4);
    o.egress[0].packets.swap(a, b);
    assert!(diff(&e, &o, DiffOptions::default()).equal);
    // Responses and requests of one source on one port (separate classes).
    let mut o = observed_from(&e);
    let a = find(&e, 3, |p| p.opcode == Opcode::RspRead);
    o.egress[3].packets.swap(a, a - 1);
    assert!(diff(&e, &o, DiffOptions::default()).equal);
    // Ports in a different order in the file.
    let mut o = observed_from(&e);
    o.egress.reverse();
    assert!(diff(&e, &o, DiffOptions::default()).equal);
}

#[test]
fn missing_and_extra_packets_are_reported() {
    let e = expected();
    let mut o = observed_from(&e);
    let i = find(&e, 2, |p| p.opcode == Opcode::RspError && p.tag == 33);
    let gone = o.egress[2].packets.remove(i);
    let r = diff(&e, &o, DiffOptions::default());
    let d = first(&r);
    assert_eq!(
        (d.kind.as_str(), d.port, d.index),
        ("missing", Some(2), Some(0))
    );
    assert!(d
        .flow
        .as_ref()
        .unwrap()
        .contains("RSP_ERROR with src_port 0, tag 0x21"));
    assert_eq!(r.counts.egress_missing, 1);
    let mut o = observed_from(&e);
    o.egress[0].packets.push(gone);
    let r = diff(&e, &o, DiffOptions::default());
    let d = first(&r);
    assert_eq!(
        (d.kind.as_str(), d.port, d.observed_position),
        ("extra", Some(0), Some(10))
    );
    assert_eq!(r.counts.egress_extra, 1);
}

#[test]
fn header_corruption_is_decoded_field_by_field() {
    let e = expected();
    let mut o = observed_from(&e);
    let i = find(&e, 0, |p| p.opcode == Opcode::RspRead);
    let mut f = flits(&e, 0, i);
    f[0] ^= 1 << 40; // maddr bit 35, hcc no longer matches
    set_flits(&mut o, 0, i, &f);
    let d = diff(&e, &o, DiffOptions::default()).first.unwrap();
    let all = d.details.join("\n");
    assert!(all.contains("ERR_HCC"), "{all}");
    assert!(
        all.contains("flit0 field maddr [52:5]: expected 0x1000, observed 0x800001000"),
        "{all}"
    );
}

#[test]
fn memory_writes_errors_and_digest_are_compared() {
    let e = expected();
    // A strobed byte differs.
    let mut o = observed_from(&e);
    let w = &mut o.mem_writes.as_mut().unwrap()[3].writes[0];
    let (_, data, strobe) = w.parse().unwrap();
    let byte = strobe.trailing_zeros();
    w.data = hex128(data ^ (0x10u128 << (8 * byte)));
    let r = diff(&e, &o, DiffOptions::default());
    let d = first(&r);
    assert_eq!(
        (d.section.as_str(), d.port, d.index),
        ("mem_writes", Some(3), Some(0))
    );
    assert!(
        d.details[0].contains(&format!("data byte {byte} (strobed)")),
        "{d}"
    );
    assert!(
        diff(
            &e,
            &o,
            DiffOptions {
                ignore_mem: true,
                ..Default::default()
            }
        )
        .equal
    );
    // An unstrobed byte is don't-care.
    let mut o = observed_from(&e);
    let h = o.mem_writes.as_mut().unwrap();
    let (hub, k) = h
        .iter()
        .enumerate()
        .find_map(|(hub, x)| {
            x.writes
                .iter()
                .position(|w| w.parse().unwrap().2 != 0xFFFF)
                .map(|k| (hub, k))
        })
        .unwrap();
    let w = &mut h[hub].writes[k];
    let (_, data, strobe) = w.parse().unwrap();
    let byte = (!strobe).trailing_zeros();
    w.data = hex128(data ^ (0xFFu128 << (8 * byte)));
    assert!(diff(&e, &o, DiffOptions::default()).equal);
    // A missing write.
    let mut o = observed_from(&e);
    o.mem_writes.as_mut().unwrap()[1].writes.pop();
    assert_eq!(first(&diff(&e, &o, DiffOptions::default())).kind, "missing");
    // Error counters.
    let mut o = observed_from(&e);
    o.error_counters.as_mut().unwrap()[2]
        .counts
        .insert("ERR_ROUTE".into(), 1);
    let d = diff(&e, &o, DiffOptions::default()).first.unwrap();
    assert_eq!((d.section.as_str(), d.port), ("error_counters", Some(2)));
    assert!(d.details[0].contains("ERR_ROUTE (8): expected 0, observed 1"));
    // Digest; absent sections are not compared.
    let mut o = observed_from(&e);
    o.digest.as_mut().unwrap().value = "00".into();
    assert_eq!(
        first(&diff(&e, &o, DiffOptions::default())).section,
        "digest"
    );
    o.digest = None;
    o.mem_writes = None;
    let r = diff(&e, &o, DiffOptions::default());
    assert!(r.equal);
    assert_eq!(r.not_compared.len(), 2, "{:?}", r.not_compared);
}

// ---------------------------------------------------------------------------------------------
// from-vcd: a hand-written waveform
// ---------------------------------------------------------------------------------------------

/// Binary digits of `v << shift` for a VCD vector change.
fn bin(v: u128, shift: usize) -> String {
    format!("{v:b}{}", "0".repeat(shift))
}

#[test]
fn from_vcd_reads_shared_buses_and_bit_slices() {
    // Two ports share a 256-bit data bus (port 1 in [255:128]) and a 2-bit valid vector;
    // ready is one scalar per port; last is bit-blasted into two vars. The bus is declared
    // [259:4] to check declared-index slicing. Port 1 carries an RSP_ERROR (one flit) and a
    // two-flit frame with a stall (valid && !ready); port 0 one flit during reset (ignored)
    // and a stray `valid` with x data after the last edge.
    let mut err = dysharp_sim::packet::Packet::new(Opcode::RspError);
    err.route = 1;
    err.src_port = 1;
    err.tag = 0x7;
    err.ecode = ErrorCode::Frame as u8;
    let e0 = err.encode()[0];
    let (a, b) = (0x1111_2222_3333_4444_5555_6666_7777_8888u128, 0xABCDu128);
    let p1 = |v: u128| bin(v, 128);
    let vcd = format!(
        "$date today $end
$timescale 1ns $end
$scope module TOP $end
$var wire 1 ! clk $end
$var wire 1 r rst_n $end
$scope module dut $end
$var wire 2 v valid [1:0] $end
$var wire 1 y0 ready0 $end
$var wire 1 y1 ready1 $end
$var wire 256 d data [259:4] $end
$var wire 1 l0 last [0] $end
$var wire 1 l1 last [1] $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
0!
0r
b01 v
1y0
1y1
b{e0b} d
1l0
0l1
$end
#5
1!
#10
0!
1r
b10 v
b{p1e0} d
1l1
#15
1!
#20
0!
0l1
b{p1a} d
0y1
#25
1!
#30
0!
1y1
#35
1!
b0 v
#40
0!
b10 v
b{p1b} d
1l1
#45
1!
b00 v
#50
0!
b01 v
bx d
#52
",
        e0b = bin(e0, 0),
        p1e0 = p1(e0),
        p1a = p1(a),
        p1b = p1(b),
    );
    let map_text = r#"
version = 1
clock = "TOP.clk"
reset = "TOP.rst_n"
[[stream]]
name = "out"
port = [0, 1]
valid = "TOP.dut.valid[{p}]"
ready = "TOP.dut.ready{p}"
data = "TOP.dut.data[{128*p+131}:{128*p+4}]"
last = "TOP.dut.last[{p}]"
"#;
    let map = SignalMap::from_toml("map.toml", map_text).unwrap();
    let ex = extract(vcd.as_bytes(), "hand.vcd", &map, "map.toml").unwrap();
    assert_eq!(ex.edges, 5);
    let s0 = &ex.streams[0];
    let s1 = &ex.streams[1];
    assert_eq!((s0.port, s1.port), (0, 1));
    assert!(s0.frames.is_empty(), "the flit during reset must not count");
    assert_eq!(s1.frames.len(), 2);
    assert_eq!(s1.frames[0].flits, vec![e0]);
    assert_eq!(s1.frames[0].times, vec![15]);
    // Edge 25 stalls (ready low), edge 35 takes `a`, edge 45 takes `b`.
    assert_eq!(s1.frames[1].flits, vec![a, b]);
    assert_eq!(s1.frames[1].times, vec![35, 45]);
    let r = ex.to_result(Some("hand.vcd".into()), &map, &vcd_extract_limits(), None);
    assert_eq!(r.egress[1].packets.len(), 2);
    let p = r.egress[1].packets[0].packet.as_ref().unwrap();
    assert_eq!(p.opcode, Some(Opcode::RspError));
    assert_eq!(r.egress[1].packets[0].stream.as_deref(), Some("out"));
    assert!(r.egress[1].packets[1]
        .error
        .as_ref()
        .unwrap()
        .contains("ERR_HCC"));
    assert!(r.mem_writes.is_none() && r.error_counters.is_none());
    // The port-0 valid after the last edge is never sampled, so no warning about x data.
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // A waveform cut in the middle of a line (a simulation stopped while writing).
    let cut = &vcd[..vcd.len() - 3];
    let ex2 = extract(cut.as_bytes(), "cut.vcd", &map, "map.toml").unwrap();
    assert_eq!(ex2.streams[1].frames, s1.frames);
    assert!(
        ex2.warnings[0].contains("ends in the middle"),
        "{:?}",
        ex2.warnings
    );
}

fn vcd_extract_limits() -> dysharp_sim::packet::Limits {
    dysharp_sim::scenario::permissive_limits()
}

#[test]
fn mapping_errors_are_clear() {
    let vcd = "$scope module TOP $end\n$var wire 1 ! clk $end\n$var wire 4 # valid_o [3:0] $end\n$var wire 512 $ data_o [511:0] $end\n$upscope $end\n$enddefinitions $end\n#0\n0!\n";
    let run = |m: &str| {
        let map = SignalMap::from_toml("m.toml", m)?;
        extract(vcd.as_bytes(), "w.vcd", &map, "m.toml").map(|_| ())
    };
    let base = "version = 1\nclock = \"TOP.clk\"\n[[stream]]\nport = \"0..4\"\nvalid = \"TOP.valid_o[{p}]\"\ndata = \"TOP.data_o[{128*p+127}:{128*p}]\"\nlast = \"TOP.valid_o[{p}]\"\n";
    assert!(run(base).is_ok());
    let e = run(&base.replace("TOP.clk", "TOP.clock"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("m.toml: at `clock") && e.contains("TOP.clock") && e.contains("TOP.clk"),
        "{e}"
    );
    let e = run(&base.replace("valid_o[{p}]\"\ndata", "valid_o\"\ndata"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("stream[0].valid") && e.contains("4 bits wide") && e.contains("bit select"),
        "{e}"
    );
    let e = run(&base.replace("{128*p+127}", "{128*p+128}"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("exactly 128"), "{e}");
    let e = run(&base.replace("\"0..4\"", "\"0..5\""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("port 4") && e.contains("outside"), "{e}");
    let e = run(&base.replace("version = 1", "version = 3"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unsupported mapping version"), "{e}");
    let e = run(&format!("{base}colour = 1\n")).unwrap_err().to_string();
    assert!(e.contains("stream[0]") && e.contains("colour"), "{e}");
    assert_eq!(expand("x[{128*p+127}:{128*(p)}]", 3).unwrap(), "x[511:384]");
    assert!(expand("x[{p+}]", 1).is_err());
}

// ---------------------------------------------------------------------------------------------
// from-vcd: a waveform of the whole example scenario, shaped like rtl/dysharp_top.sv
// ---------------------------------------------------------------------------------------------

/// Per-port streams for the synthesized waveform: flits with their last bit.
type Queue = std::collections::VecDeque<(Flit, bool)>;

/// Writes a VCD with `dysharp_top`'s port names carrying `e`'s egress packets (requests on the
/// hub monitor tap, responses on sm_rsp), memory writes and final error counters. Outputs
/// change right after each rising edge, as registered outputs do; the SM stalls and the
/// memory inserts reads and stalls on some cycles.
fn synth_vcd(e: &GoldenResult, n: usize) -> String {
    let mut rsp: Vec<Queue> = vec![Queue::new(); n];
    let mut req: Vec<Queue> = vec![Queue::new(); n];
    for pe in &e.egress {
        for x in &pe.packets {
            let f = x.frame().unwrap();
            let q = if (f[0] & 0xF) as u8 <= 6 {
                &mut req[pe.port]
            } else {
                &mut rsp[pe.port]
            };
            for (k, fl) in f.iter().enumerate() {
                q.push_back((*fl, k + 1 == f.len()));
            }
        }
    }
    let mut mem: Vec<std::collections::VecDeque<(u64, u128, u16)>> = vec![Default::default(); n];
    for h in e.mem_writes.as_ref().unwrap() {
        mem[h.hub] = h.writes.iter().map(|w| w.parse().unwrap()).collect();
    }
    let sigs: [(&str, &str, usize); 16] = [
        ("!", "clk_i", 1),
        ("\"", "rst_ni", 1),
        ("#", "sm_rsp_valid_o", n),
        ("$", "sm_rsp_ready_i", n),
        ("%", "sm_rsp_data_o", 128 * n),
        ("&", "sm_rsp_last_o", n),
        ("'", "hub_req_mon_valid_o", n),
        ("(", "hub_req_mon_data_o", 128 * n),
        (")", "hub_req_mon_last_o", n),
        ("*", "mem_req_valid_o", n),
        ("+", "mem_req_ready_i", n),
        (",", "mem_req_we_o", n),
        ("-", "mem_req_addr_o", 48 * n),
        (".", "mem_req_wdata_o", 128 * n),
        ("/", "mem_req_wstrb_o", 16 * n),
        ("0", "err_count_o", ErrorCode::COUNT * 32 * n),
    ];
    let mut out = String::from("$timescale 1ps $end\n$scope module TOP $end\n");
    for (id, name, w) in sigs {
        if w == 1 {
            out += &format!("$var wire 1 {id} {name} $end\n");
        } else {
            out += &format!("$var wire {w} {id} {name} [{}:0] $end\n", w - 1);
        }
    }
    out += "$upscope $end\n$enddefinitions $end\n";
    // Vectors as bit arrays, LSB first.
    let mut bits: Vec<Vec<bool>> = sigs.iter().map(|(_, _, w)| vec![false; *w]).collect();
    let dump = |bits: &Vec<Vec<bool>>, out: &mut String| {
        for (s, (id, _, _)) in sigs.iter().enumerate().skip(1) {
            let v: String = bits[s]
                .iter()
                .rev()
                .map(|b| if *b { '1' } else { '0' })
                .collect();
            if bits[s].len() == 1 {
                *out += &format!("{v}{id}\n");
            } else {
                *out += &format!("b{v} {id}\n");
            }
        }
    };
    let mut fire = drive(0, n, &mut bits, &rsp, &req, &mem);
    out += "#0\n$dumpvars\n0!\n";
    dump(&bits, &mut out);
    out += "$end\n";
    let mut t = 0u64;
    let mut cycle = 0usize;
    loop {
        // The rising edge samples what was driven before it; the next cycle's values change
        // in the same timestamp, as registered outputs do.
        t += 1;
        out += &format!("#{t}\n1!\n");
        for (p, (a, b, c)) in fire.iter().enumerate() {
            if *a {
                rsp[p].pop_front();
            }
            if *b {
                req[p].pop_front();
            }
            if *c {
                mem[p].pop_front();
            }
        }
        cycle += 1;
        let busy =
            rsp.iter().chain(&req).any(|q| !q.is_empty()) || mem.iter().any(|q| !q.is_empty());
        if !busy && cycle > 4 {
            for pe in e.error_counters.as_ref().unwrap() {
                for (k, c) in pe.array().unwrap().iter().enumerate() {
                    put(
                        &mut bits,
                        15,
                        ErrorCode::COUNT * 32 * pe.port + 32 * k,
                        32,
                        *c as u128,
                    );
                }
            }
            dump(&bits, &mut out);
            out += &format!("#{}\n0!\n", t + 1);
            return out;
        }
        fire = drive(cycle, n, &mut bits, &rsp, &req, &mem);
        dump(&bits, &mut out);
        t += 1;
        out += &format!("#{t}\n0!\n");
    }
}

fn put(bits: &mut [Vec<bool>], s: usize, lsb: usize, w: usize, v: u128) {
    for k in 0..w {
        bits[s][lsb + k] = v >> k & 1 == 1;
    }
}

/// Drives the signals for one cycle; returns per port what fires at its edge (SM response,
/// hub request, memory write).
fn drive(
    cycle: usize,
    n: usize,
    bits: &mut [Vec<bool>],
    rsp: &[Queue],
    req: &[Queue],
    mem: &[std::collections::VecDeque<(u64, u128, u16)>],
) -> Vec<(bool, bool, bool)> {
    let in_reset = cycle < 3;
    put(bits, 1, 0, 1, (!in_reset) as u128);
    let mut fire = Vec::new();
    for p in 0..n {
        let bubble = (cycle + p) % 5 == 4;
        let ready = (cycle + 2 * p) % 4 != 3;
        // During reset port 0 shows junk that must not count.
        let (rv, rd, rl) = match rsp[p].front() {
            _ if in_reset => (p == 0, 0xDEADu128, true),
            Some((f, l)) if !bubble => (true, *f, *l),
            _ => (false, 0, false),
        };
        put(bits, 2, p, 1, rv as u128);
        put(bits, 3, p, 1, ready as u128);
        put(bits, 4, 128 * p, 128, rd);
        put(bits, 5, p, 1, rl as u128);
        let (mv, md, ml) = match req[p].front() {
            Some((f, l)) if !in_reset && !bubble => (true, *f, *l),
            _ => (false, 0, false),
        };
        put(bits, 6, p, 1, mv as u128);
        put(bits, 7, 128 * p, 128, md);
        put(bits, 8, p, 1, ml as u128);
        // Memory: a read every third cycle, a stall every fourth.
        let mem_ready = !(cycle + p).is_multiple_of(4);
        let read = cycle % 3 == 1;
        let (wv, we, wa, wd, ws) = match mem[p].front() {
            _ if in_reset => (false, false, 0, 0, 0),
            _ if read => (true, false, 0x40, 0x55u128, 0xFFFFu16),
            Some((a, d, s)) => (true, true, *a, *d, *s),
            None => (false, false, 0, 0, 0),
        };
        put(bits, 9, p, 1, wv as u128);
        put(bits, 10, p, 1, mem_ready as u128);
        put(bits, 11, p, 1, we as u128);
        put(bits, 12, 48 * p, 48, wa as u128);
        put(bits, 13, 128 * p, 128, wd);
        put(bits, 14, 16 * p, 16, ws as u128);
        fire.push((rv && ready && !in_reset, mv, wv && we && mem_ready));
    }
    fire
}

fn from_vcd(vcd: &str, e: &GoldenResult) -> (GoldenResult, vcd_extract::Extraction) {
    let map = SignalMap::load(&example("SIGNALS.toml")).unwrap();
    let ex = extract(vcd.as_bytes(), "synth.vcd", &map, "SIGNALS.toml").unwrap();
    let r = ex.to_result(Some("synth.vcd".into()), &map, &e.limits(), None);
    // Through the file format, as the CLI does.
    let r = GoldenResult::from_json("observed.json", &r.to_json()).unwrap();
    (r, ex)
}

fn with_faults(vcd: &str, o: &[Override]) -> String {
    let mut out = Vec::new();
    inject_faults(vcd.as_bytes(), &mut out, o).unwrap();
    String::from_utf8(out).unwrap()
}

/// The frame (in the extraction) of a stream of `port` whose flit0 equals `flit0`.
fn frame_times(
    ex: &vcd_extract::Extraction,
    port: usize,
    name: &str,
    flit0: Flit,
) -> (Vec<Flit>, Vec<u64>) {
    let s = ex
        .streams
        .iter()
        .find(|s| s.port == port && s.name == name)
        .unwrap();
    let f = s.frames.iter().find(|f| f.flits[0] == flit0).unwrap();
    (f.flits.clone(), f.times.clone())
}

#[test]
fn from_vcd_of_the_example_matches_and_faults_are_found() {
    let e = expected();
    let vcd = synth_vcd(&e, 4);
    let (o, ex) = from_vcd(&vcd, &e);
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    let r = diff(&e, &o, DiffOptions::default());
    assert!(r.equal, "{r}");
    assert_eq!(r.counts.egress_equal, 40);
    assert_eq!(
        r.not_compared,
        vec!["digest (absent from the observed file)".to_string()]
    );

    // The same waveform with one payload bit flipped.
    let i = find(&e, 1, |p| p.opcode == Opcode::RspReduce);
    let want = flits(&e, 1, i);
    let (_, times) = frame_times(&ex, 1, "sm_rsp", want[0]);
    let bad = with_faults(
        &vcd,
        &[Override {
            edge_time: times[1],
            signal: "TOP.sm_rsp_data_o[255:128]".into(),
            value: want[1] ^ (1 << 17),
        }],
    );
    let r = diff(&e, &from_vcd(&bad, &e).0, DiffOptions::default());
    let d = first(&r);
    assert_eq!(
        (d.port, d.index, d.expected_position),
        (Some(1), Some(0), Some(i)),
        "{r}"
    );
    assert!(
        d.details[0].starts_with("payload lane 1 (f16") && d.details[0].contains("payload bit 17"),
        "{r}"
    );
    assert_eq!(r.counts.egress_differ, 1, "{r}");

    // One flit dropped (valid forced low at its edge).
    let i = find(&e, 3, |p| p.opcode == Opcode::DynSt && p.src_port == 0);
    let want = flits(&e, 3, i);
    let (_, times) = frame_times(&ex, 3, "hub_req", want[0]);
    let bad = with_faults(
        &vcd,
        &[Override {
            edge_time: times[3],
            signal: "TOP.hub_req_mon_valid_o[3]".into(),
            value: 0,
        }],
    );
    let r = diff(&e, &from_vcd(&bad, &e).0, DiffOptions::default());
    let d = first(&r);
    assert_eq!((d.port, d.index), (Some(3), Some(1)), "{r}");
    assert_eq!(d.flow.as_deref(), Some("requests with src_port 0"));
    assert!(
        d.details
            .join("\n")
            .contains("expected 5 flits, observed 4"),
        "{r}"
    );

    // Two packets of one flow swapped on port 3 (MC_LD_REDUCE and READ, both one flit).
    let a = find(&e, 3, |p| p.opcode == Opcode::McLdReduce);
    let b = find(&e, 3, |p| p.opcode == Opcode::Read && p.src_port == 0);
    let (fa, ta) = frame_times(&ex, 3, "hub_req", flits(&e, 3, a)[0]);
    let (fb, tb) = frame_times(&ex, 3, "hub_req", flits(&e, 3, b)[0]);
    let sig = "TOP.hub_req_mon_data_o[511:384]".to_string();
    let bad = with_faults(
        &vcd,
        &[
            Override {
                edge_time: ta[0],
                signal: sig.clone(),
                value: fb[0],
            },
            Override {
                edge_time: tb[0],
                signal: sig,
                value: fa[0],
            },
        ],
    );
    let r = diff(&e, &from_vcd(&bad, &e).0, DiffOptions::default());
    let d = first(&r);
    assert_eq!(
        (d.port, d.index, d.expected_position),
        (Some(3), Some(2), Some(a)),
        "{r}"
    );
    assert!(
        d.details
            .join("\n")
            .contains("opcode: expected MC_LD_REDUCE, observed READ"),
        "{r}"
    );

    // Two load-reduce results of different requests swapped: legitimately equal.
    let a = find(&e, 0, |p| p.opcode == Opcode::RspReduce && p.tag == 3);
    let b = find(&e, 0, |p| p.opcode == Opcode::RspReduce && p.tag == 4);
    let (fa, ta) = frame_times(&ex, 0, "sm_rsp", flits(&e, 0, a)[0]);
    let (fb, tb) = frame_times(&ex, 0, "sm_rsp", flits(&e, 0, b)[0]);
    let sig = "TOP.sm_rsp_data_o[127:0]".to_string();
    let mut ov = Vec::new();
    for k in 0..2 {
        ov.push(Override {
            edge_time: ta[k],
            signal: sig.clone(),
            value: fb[k],
        });
        ov.push(Override {
            edge_time: tb[k],
            signal: sig.clone(),
            value: fa[k],
        });
    }
    let r = diff(
        &e,
        &from_vcd(&with_faults(&vcd, &ov), &e).0,
        DiffOptions::default(),
    );
    assert!(r.equal, "{r}");
}

/// A memory port whose requests carry several 16-byte lines (like `dysharp_top` with
/// `MemLines` > 1): each beat is recorded as its lines, in order, with their own strobes; a
/// read beat and a stalled beat are not writes; a beat claiming more lines than `beat_lines`
/// is reported and skipped.
#[test]
fn from_vcd_splits_multi_line_memory_beats() {
    let map = SignalMap::from_toml(
        "wide.toml",
        r#"
version = 1
clock = "TOP.clk_i"
[[mem]]
port = "0..2"
valid = "TOP.mem_req_valid_o[{p}]"
ready = "TOP.mem_req_ready_i[{p}]"
we = "TOP.mem_req_we_o[{p}]"
addr = "TOP.mem_req_addr_o[{48*p+47}:{48*p}]"
lines = "TOP.mem_req_lines_o[{3*p+2}:{3*p}]"
beat_lines = 4
wdata = "TOP.mem_req_wdata_o[{512*p+511}:{512*p}]"
wstrb = "TOP.mem_req_wstrb_o[{64*p+63}:{64*p}]"
"#,
    )
    .unwrap();
    let bin = |v: u128, w: usize| -> String {
        (0..w)
            .rev()
            .map(|k| if k < 128 && v >> k & 1 == 1 { '1' } else { '0' })
            .collect()
    };
    // Port 1's beat: 3 lines at 0x1000, line i = 0x11 * (i + 1), strobes 0xFFFF, 0x00FF, 0xF000.
    let mut wdata = String::new();
    let mut wstrb = String::new();
    for i in (0..4).rev() {
        let (d, s) = match i {
            0 => (0x11u128, 0xFFFFu128),
            1 => (0x22, 0x00FF),
            2 => (0x33, 0xF000),
            _ => (0, 0),
        };
        wdata += &bin(d, 128);
        wstrb += &bin(s, 16);
    }
    let zeros = |w: usize| "0".repeat(w);
    let head = "$timescale 1ps $end\n$scope module TOP $end\n\
        $var wire 1 ! clk_i $end\n$var wire 2 a mem_req_valid_o [1:0] $end\n\
        $var wire 2 b mem_req_ready_i [1:0] $end\n$var wire 2 c mem_req_we_o [1:0] $end\n\
        $var wire 96 d mem_req_addr_o [95:0] $end\n$var wire 6 e mem_req_lines_o [5:0] $end\n\
        $var wire 1024 f mem_req_wdata_o [1023:0] $end\n\
        $var wire 128 g mem_req_wstrb_o [127:0] $end\n$upscope $end\n$enddefinitions $end\n";
    let mut vcd = String::from(head);
    // Cycle 1: port 1 offers the 3-line write, memory not ready (stall: not recorded).
    // Cycle 2: accepted. Cycle 3: a 2-line read on port 0 (not a write).
    // Cycle 4: port 0 claims 7 lines (more than beat_lines): skipped with a warning.
    let addr = format!("{}{}", bin(0x1000, 48), zeros(48));
    let cycles = [
        ("10", "00", "10", addr.clone(), "010000", true),
        ("10", "10", "10", addr.clone(), "011000", true),
        ("01", "11", "00", zeros(96), "000010", false),
        ("01", "11", "01", zeros(96), "000111", false),
    ];
    vcd += "#0\n$dumpvars\n0!\n";
    for (t, (v, r, w, a, l, wide)) in cycles.iter().enumerate() {
        let t = 2 * t as u64;
        vcd += &format!("#{t}\n0!\nb{v} a\nb{r} b\nb{w} c\nb{a} d\nb{l} e\n");
        if *wide {
            vcd += &format!("b{wdata}{} f\nb{wstrb}{} g\n", zeros(512), zeros(64));
        } else {
            vcd += &format!("b{} f\nb{} g\n", zeros(1024), zeros(128));
        }
        if t == 0 {
            vcd += "$end\n";
        }
        vcd += &format!("#{}\n1!\n", t + 1);
    }
    let ex = extract(vcd.as_bytes(), "wide.vcd", &map, "wide.toml").unwrap();
    let w1: Vec<(u64, u128, u16)> = ex.mem[&1]
        .iter()
        .map(|w| (w.addr, w.data, w.strobe))
        .collect();
    assert_eq!(
        w1,
        vec![
            (0x1000, 0x11, 0xFFFF),
            (0x1010, 0x22, 0x00FF),
            (0x1020, 0x33, 0xF000)
        ]
    );
    assert!(ex.mem[&0].is_empty(), "{:?}", ex.mem[&0]);
    assert!(
        ex.warnings.iter().any(|w| w.contains("claims 7 lines")),
        "{:?}",
        ex.warnings
    );
    // beat_lines above 1 needs the `lines` signal.
    let bad = SignalMap::from_toml(
        "bad.toml",
        "version = 1\nclock = \"TOP.clk_i\"\n[[mem]]\nport = \"0..1\"\nvalid = \"TOP.v\"\naddr = \"TOP.a\"\nwdata = \"TOP.d\"\nbeat_lines = 2\n",
    )
    .unwrap();
    let e = extract(head.as_bytes(), "wide.vcd", &bad, "bad.toml").unwrap_err();
    assert!(e.to_string().contains("beat_lines"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Bad input found by fuzzing (issue 14): errors, never panics or silent acceptance
// ---------------------------------------------------------------------------------------------

/// A minimal scenario with `config` and `initial` spliced in.
fn tiny(config: &str, initial: &str) -> String {
    format!(
        "{{\"version\": 1, \"config\": {config}, \"initial\": {initial}, \"stimulus\": [{{\"port\": 0, \"packets\": [{{\"packet\": {{\"opcode\": \"READ\", \"maddr\": 4096}}}}]}}]}}"
    )
}

const TINY_CONFIG: &str = "{\"num_ports\": 2, \"experts_per_port\": 2, \"max_targets\": 4}";

fn scenario_err(text: &str) -> String {
    match Scenario::from_json("s.json", text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn hex_strings_reject_non_ascii_and_signs() {
    use dysharp_sim::scenario::pktspec::{parse_hex_bytes, parse_uint};
    // A multi-byte character used to split a two-digit slice: a panic.
    assert!(parse_hex_bytes("aé").is_err());
    assert!(parse_hex_bytes("0é0").is_err());
    let e = scenario_err(&tiny(
        TINY_CONFIG,
        "{\"hubs\": [{\"port\": 0, \"memory\": [{\"addr\": 4096, \"hex\": \"0é\"}]}]}",
    ));
    assert!(
        e.contains("initial.hubs[0].memory[0].hex") && e.contains("not a hex digit"),
        "{e}"
    );
    // `+` was taken as a sign by from_str_radix.
    assert!(parse_hex_bytes("+1").is_err());
    assert!(parse_hex128(&format!("+{}", "0".repeat(31))).is_err());
    assert!(parse_hex128(&format!("0x+{}", "0".repeat(31))).is_err());
    assert!(parse_uint("+5").is_err() && parse_uint("0x+5").is_err() && parse_uint("0x").is_err());
    assert_eq!(parse_uint("0x1_0"), Ok(16));
    assert_eq!(parse_hex128(&format!("{}1", "0".repeat(31))), Ok(1));
    let obs = format!(
        "{{\"version\": 1, \"kind\": \"observed\", \"egress\": [], \"mem_writes\": [{{\"hub\": 0, \"writes\": [{{\"addr\": 0, \"data\": \"{}\", \"strobe\": \"+fff\"}}]}}]}}",
        "0".repeat(32)
    );
    let e = GoldenResult::from_json("o.json", &obs)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("mem_writes[0].writes[0]") && e.contains("strobe"),
        "{e}"
    );
}

#[test]
fn config_products_and_sizes_are_checked() {
    // experts_per_port x num_ports used to wrap past validation and size the counters.
    let big = usize::MAX / 2 + 1;
    let e = scenario_err(&tiny(
        &format!("{{\"num_ports\": 2, \"experts_per_port\": {big}, \"max_targets\": 4}}"),
        "{}",
    ));
    assert!(e.contains("at `config`") && e.contains("experts"), "{e}");
    // A huge TLB was allocated before anything looked at it.
    let e = scenario_err(&tiny(
        "{\"num_ports\": 2, \"experts_per_port\": 2, \"max_targets\": 4, \"hub\": {\"mbase\": 0, \"log2_bsize\": 14, \"al_base\": 1048576, \"log2_al_entries\": 12, \"data_base\": 4294967296, \"log2_slots\": 12, \"tlb_entries\": 1099511627776, \"tlb_ways\": 1099511627776}}",
        "{}",
    ));
    assert!(e.contains("tlb_entries") && e.contains("maximum"), "{e}");
    // Slots of the last expert beyond 2^48.
    let e = scenario_err(&tiny(
        "{\"num_ports\": 2, \"experts_per_port\": 2, \"max_targets\": 4, \"hub\": {\"mbase\": 0, \"log2_bsize\": 30, \"al_base\": 1048576, \"log2_al_entries\": 12, \"data_base\": 4294967296, \"log2_slots\": 31, \"tlb_entries\": 4, \"tlb_ways\": 4}}",
        "{}",
    ));
    assert!(e.contains("48-bit address space"), "{e}");
    // An AIdx of more than 20 bits (the AL-TLB's tag width, spec §7); 20 is the largest.
    let hub = |l: u32| {
        format!("{{\"num_ports\": 2, \"experts_per_port\": 2, \"max_targets\": 4, \"hub\": {{\"mbase\": 0, \"log2_bsize\": 14, \"al_base\": 1048576, \"log2_al_entries\": {l}, \"data_base\": 4294967296, \"log2_slots\": 12, \"tlb_entries\": 4, \"tlb_ways\": 4}}}}")
    };
    let e = scenario_err(&tiny(&hub(21), "{}"));
    assert!(
        e.contains("at `config`") && e.contains("log2_al_entries 21 above 20"),
        "{e}"
    );
    Scenario::from_json("s.json", &tiny(&hub(20), "{}")).expect("log2_al_entries 20 is valid");
}

#[test]
fn addresses_may_not_wrap_or_leave_48_bits() {
    let e = scenario_err(&tiny(
        TINY_CONFIG,
        "{\"hubs\": [{\"port\": 0, \"memory\": [{\"addr\": \"0xfffffffffffffff0\", \"hex\": \"00112233445566778899aabbccddeeff0011\"}]}]}",
    ));
    assert!(e.contains("memory[0]") && e.contains("48-bit"), "{e}");
    let e = scenario_err(&tiny(
        TINY_CONFIG,
        "{\"hubs\": [{\"port\": 0, \"memory\": [{\"slot\": {\"expert\": 0, \"lidx\": 0, \"offset\": 18446744073709551615}, \"hex\": \"00\"}]}]}",
    ));
    assert!(e.contains("memory[0]"), "{e}");
    let e = scenario_err(&tiny(
        TINY_CONFIG,
        "{\"hubs\": [{\"port\": 0, \"memory\": [{\"addr\": \"0xfffffffffff0\", \"hex\": \"00112233445566778899aabbccddeeff00\"}]}]}",
    ));
    assert!(e.contains("48-bit"), "{e}");
    // The last byte of the space is fine.
    Scenario::from_json(
        "s.json",
        &tiny(
            TINY_CONFIG,
            "{\"hubs\": [{\"port\": 0, \"memory\": [{\"addr\": \"0xffffffffffff\", \"hex\": \"01\"}]}]}",
        ),
    )
    .expect("last byte of the 48-bit space");
}

// ---------------------------------------------------------------------------------------------
// Trust: what `diff` accepts and how it reports (issue 14)
// ---------------------------------------------------------------------------------------------

fn load_err(r: &GoldenResult) -> String {
    match GoldenResult::from_json("r.json", &r.to_json()) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_edited_readable_packet_is_rejected() {
    let e = expected();
    GoldenResult::from_json("e.json", &e.to_json()).expect("the golden output checks itself");
    // Edit the readable decode of a packet that keeps its flits: used to diff `equal`.
    let mut o = observed_from(&e);
    let i = find(&e, 1, |p| p.opcode == Opcode::RspReduce);
    let p = o.egress[1].packets[i].packet.as_mut().unwrap();
    p.tag = Some(p.tag.unwrap_or(0) ^ 1);
    let m = load_err(&o);
    assert!(
        m.contains(&format!("egress[1].packets[{i}]")) && m.contains("disagree"),
        "{m}"
    );
    let mut o = observed_from(&e);
    let p = o.egress[1].packets[i].packet.as_mut().unwrap();
    if let Some(v) = p.values.as_mut() {
        v[0] = dysharp_sim::scenario::LaneValue::Num(1234.0);
    }
    assert!(load_err(&o).contains("disagree"));
    // An `error` on a frame that decodes.
    let mut o = observed_from(&e);
    o.egress[0].packets[0].error = Some("ERR_HCC".into());
    assert!(load_err(&o).contains("`error`"));
}

#[test]
fn kinds_and_configurations_are_validated() {
    let e = expected();
    let o = observed_from(&e);
    // Swapped arguments.
    let m = o
        .check_pair("o.json", &e, "e.json")
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("o.json: at `kind`") && m.contains("swapped"),
        "{m}"
    );
    e.check_pair("e.json", &o, "o.json")
        .expect("same configuration");
    // Different configurations.
    let mut o2 = o.clone();
    o2.config.as_mut().unwrap().max_targets -= 1;
    let m = e
        .check_pair("e.json", &o2, "o.json")
        .unwrap_err()
        .to_string();
    assert!(m.contains("o.json: at `config`"), "{m}");
    // An invalid configuration in a result file.
    let mut o3 = o.clone();
    o3.config.as_mut().unwrap().num_ports = 40;
    let m = load_err(&o3);
    assert!(m.contains("at `config`") && m.contains("num_ports"), "{m}");
    // Ports beyond the configuration.
    let mut o4 = o.clone();
    o4.egress[0].port = 7;
    assert!(load_err(&o4).contains("egress[0].port"));
}

#[test]
fn a_dropped_packet_is_missing_and_max_diffs_shows_more() {
    let e = expected();
    let mut o = observed_from(&e);
    let i = find(&e, 3, |p| p.opcode == Opcode::McLdReduce);
    o.egress[3].packets.remove(i);
    let r = diff(&e, &o, DiffOptions::default());
    let d = first(&r);
    assert_eq!(
        (d.kind.as_str(), d.port, d.expected_position),
        ("missing", Some(3), Some(i)),
        "{r}"
    );
    assert_eq!(
        (
            r.counts.egress_missing,
            r.counts.egress_differ,
            r.counts.egress_extra
        ),
        (1, 0, 0),
        "{r}"
    );
    // Three faults: all are counted, --max-diffs shows them.
    let j = find(&e, 1, |p| p.opcode == Opcode::RspReduce);
    let mut f = flits(&e, 1, j);
    f[1] ^= 1 << 17;
    set_flits(&mut o, 1, j, &f);
    o.egress[2].packets.remove(0);
    let r = diff(&e, &o, DiffOptions::default());
    assert_eq!((r.total, r.divergences.len()), (3, 1));
    assert!(
        r.to_string().contains("2 more divergence(s) not shown"),
        "{r}"
    );
    let r = diff(
        &e,
        &o,
        DiffOptions {
            max_diffs: 10,
            ..Default::default()
        },
    );
    assert_eq!(r.divergences.len(), 3);
    let ports: Vec<Option<usize>> = r.divergences.iter().map(|d| d.port).collect();
    assert_eq!(ports, vec![Some(1), Some(2), Some(3)]);
    assert!(r.to_string().contains("divergence 3: egress port 3"), "{r}");
}

#[test]
fn x_and_z_bits_are_mismatches_unless_told_otherwise() {
    let e = expected();
    let mut o = observed_from(&e);
    // A data bit that is x, read as 0 where the golden bit is 0: used to compare equal.
    let n = o.egress[0].packets[0].frame().unwrap().len();
    let mut masks = vec![hex128(0); n];
    masks[0] = hex128(1 << 127);
    o.egress[0].packets[0].xz = Some(masks);
    let o = GoldenResult::from_json("o.json", &o.to_json()).expect("valid x/z masks");
    let r = diff(&e, &o, DiffOptions::default());
    assert!(!r.equal);
    let d = first(&r);
    assert_eq!((d.kind.as_str(), d.port), ("differs", Some(0)), "{r}");
    assert!(d.details.join("\n").contains("x/z bits"), "{r}");
    let lenient = DiffOptions {
        x_as_zero: true,
        ..Default::default()
    };
    assert!(diff(&e, &o, lenient).equal);
    // Memory writes and error counters too.
    let mut o = observed_from(&e);
    let h = o
        .mem_writes
        .as_mut()
        .unwrap()
        .iter_mut()
        .find(|h| !h.writes.is_empty())
        .unwrap();
    h.writes[0].xz = Some(hex128(u128::MAX));
    assert_eq!(
        first(&diff(&e, &o, DiffOptions::default())).section,
        "mem_writes"
    );
    assert!(diff(&e, &o, lenient).equal);
    let mut o = observed_from(&e);
    o.error_counters.as_mut().unwrap()[0].xz = vec!["ERR_HCC".into()];
    assert_eq!(
        first(&diff(&e, &o, DiffOptions::default())).section,
        "error_counters"
    );
    assert!(diff(&e, &o, lenient).equal);
    // A mask per flit.
    let mut o = observed_from(&e);
    o.egress[0].packets[0].xz = Some(vec![hex128(1)]);
    if n != 1 {
        assert!(load_err(&o).contains("xz"));
    }
}
