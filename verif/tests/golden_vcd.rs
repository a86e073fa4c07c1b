//! The golden-comparison workflow of docs/golden.md on our own RTL: the example scenario
//! (examples/golden/scenario.json) runs on `dysharp_top` (model top_p4) with a VCD, the egress
//! streams, memory writes and error counters are extracted with `from-vcd`'s mapping
//! (examples/golden/SIGNALS.toml) and compared with `golden run`: equal. The same VCD with one
//! payload bit flipped, one flit dropped and two packets of one flow swapped is reported as the
//! right first divergence.
//!
//! The bench cannot preload GPU memory or AL counters into the RTL, so the scenario runs
//! without its `initial` section (on both sides). Packets are driven one at a time in the
//! scenario's injection order, each to completion, so that each hub sees the golden model's
//! packet order (docs/golden.md, "Order-dependent state"). Set `DYSHARP_KEEP_VCD=1` to keep
//! the waveforms (the path is printed).

use dysharp_sim::packet::{decode, Flit, Opcode, Origin, Packet};
use dysharp_sim::scenario::{diff, DiffOptions, GoldenResult, Initial, Prepared, Scenario};
use dysharp_sim::vcd_extract::{extract_file, inject_faults, Extraction, Override, SignalMap};
use dysharp_verif::{Bench, BenchConfig};
use std::io::BufReader;
use std::path::{Path, PathBuf};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/golden")
        .join(name)
}

/// The example scenario without its initial state.
fn scenario() -> Prepared {
    let text = std::fs::read_to_string(example("scenario.json")).unwrap();
    let mut s = Scenario::parse("examples/golden/scenario.json", &text).unwrap();
    s.initial = Initial::default();
    s.prepare("examples/golden/scenario.json (initial state removed)")
        .unwrap()
}

/// Runs the scenario on the RTL and writes `vcd`.
fn run_rtl(prep: &Prepared, vcd: &Path) {
    let cfg = prep.config();
    let mut bc = BenchConfig::new("top_p4", 0x601d);
    bc.hub = cfg.hub.clone();
    bc.groups = cfg.groups.clone();
    bc.vcd = Some(vcd.to_path_buf());
    let mut b = Bench::new(bc).expect("bench");
    assert_eq!(
        b.golden_cfg(),
        cfg,
        "the example scenario's config must match model top_p4's parameters"
    );
    for (p, i) in prep.order() {
        b.push_frame(p, prep.frames[p][i].clone());
        if let Err(e) = b.run(20_000) {
            panic!("RTL run of packet {i} of port {p} failed: {e}");
        }
    }
    b.close();
}

fn observed(vcd: &Path, e: &GoldenResult) -> (GoldenResult, Extraction) {
    let map_path = example("SIGNALS.toml");
    let map = SignalMap::load(&map_path).unwrap();
    let ex = extract_file(vcd, &map, &map_path.display().to_string()).unwrap();
    let o = ex.to_result(Some(vcd.display().to_string()), &map, &e.limits(), None);
    // Through the file format, as the CLI does.
    (
        GoldenResult::from_json("observed.json", &o.to_json()).unwrap(),
        ex,
    )
}

fn packets(e: &GoldenResult, port: usize) -> Vec<(Vec<Flit>, Packet)> {
    let limits = e.limits();
    e.egress
        .iter()
        .find(|x| x.port == port)
        .unwrap()
        .packets
        .iter()
        .map(|x| {
            let f = x.frame().unwrap();
            let p = decode(&f, Origin::Egress, &limits).unwrap();
            (f, p)
        })
        .collect()
}

/// (position on the port, flits, edge times) of the first expected packet matching `pred`.
fn locate(
    e: &GoldenResult,
    ex: &Extraction,
    port: usize,
    stream: &str,
    pred: impl Fn(&Packet) -> bool,
) -> (usize, Vec<Flit>, Vec<u64>) {
    let (i, (f, _)) = packets(e, port)
        .into_iter()
        .enumerate()
        .find(|(_, (_, p))| pred(p))
        .expect("packet expected");
    let s = ex
        .streams
        .iter()
        .find(|s| s.port == port && s.name == stream)
        .unwrap();
    let fr = s
        .frames
        .iter()
        .find(|x| x.flits == f)
        .expect("frame in the waveform");
    (i, f, fr.times.clone())
}

fn rewrite(vcd: &Path, out: &Path, o: &[Override]) {
    let r = BufReader::new(std::fs::File::open(vcd).unwrap());
    let w = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
    inject_faults(r, w, o).unwrap();
}

#[test]
fn rtl_matches_golden_and_faults_are_located() {
    let prep = scenario();
    let e = prep.run();
    let dir = std::env::temp_dir().join(format!("dysharp-golden-vcd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vcd = dir.join("top_p4.vcd");
    run_rtl(&prep, &vcd);

    let (o, ex) = observed(&vcd, &e);
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    let r = diff(&e, &o, DiffOptions::default());
    assert!(r.equal, "the RTL differs from the golden model:\n{r}");
    let n: usize = e.egress.iter().map(|p| p.packets.len()).sum();
    assert_eq!(r.counts.egress_equal, n);
    assert!(o
        .mem_writes
        .as_ref()
        .unwrap()
        .iter()
        .any(|h| !h.writes.is_empty()));

    // One payload bit flipped: the f16 RSP_REDUCE to SM 1.
    let (i, f, t) = locate(&e, &ex, 1, "sm_rsp", |p| p.opcode == Opcode::RspReduce);
    let bad = dir.join("flip.vcd");
    rewrite(
        &vcd,
        &bad,
        &[Override {
            edge_time: t[1],
            signal: "TOP.sm_rsp_data_o[255:128]".into(),
            value: f[1] ^ (1 << 17),
        }],
    );
    let r = diff(&e, &observed(&bad, &e).0, DiffOptions::default());
    let d = r.first.as_ref().expect("a divergence");
    assert_eq!(
        (d.port, d.index, d.expected_position),
        (Some(1), Some(0), Some(i)),
        "{r}"
    );
    assert!(d.details[0].starts_with("payload lane 1 (f16"), "{r}");
    assert_eq!(r.counts.egress_differ, 1, "{r}");

    // One flit dropped: flit 3 of the DYN_ST from port 0 to hub 3.
    let (i, _, t) = locate(&e, &ex, 3, "hub_req", |p| {
        p.opcode == Opcode::DynSt && p.src_port == 0
    });
    let bad = dir.join("drop.vcd");
    rewrite(
        &vcd,
        &bad,
        &[Override {
            edge_time: t[3],
            signal: "TOP.hub_req_mon_valid_o[3]".into(),
            value: 0,
        }],
    );
    let r = diff(&e, &observed(&bad, &e).0, DiffOptions::default());
    let d = r.first.as_ref().expect("a divergence");
    assert_eq!((d.port, d.expected_position), (Some(3), Some(i)), "{r}");
    assert_eq!(d.flow.as_deref(), Some("requests with src_port 0"), "{r}");
    assert!(d.details.join("\n").contains("observed 4"), "{r}");

    // Two packets of one flow swapped: MC_LD_REDUCE and READ from port 0 to hub 3.
    let (a, fa, ta) = locate(&e, &ex, 3, "hub_req", |p| p.opcode == Opcode::McLdReduce);
    let (_, fb, tb) = locate(&e, &ex, 3, "hub_req", |p| {
        p.opcode == Opcode::Read && p.src_port == 0
    });
    let sig = "TOP.hub_req_mon_data_o[511:384]".to_string();
    let bad = dir.join("swap.vcd");
    rewrite(
        &vcd,
        &bad,
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
    let r = diff(&e, &observed(&bad, &e).0, DiffOptions::default());
    let d = r.first.as_ref().expect("a divergence");
    assert_eq!(d.expected_position, Some(a), "{r}");
    assert!(
        d.details
            .join("\n")
            .contains("opcode: expected MC_LD_REDUCE, observed READ"),
        "{r}"
    );
    if std::env::var_os("DYSHARP_KEEP_VCD").is_some() {
        eprintln!("waveforms kept in {}", dir.display());
    } else {
        std::fs::remove_dir_all(&dir).ok();
    }
}
