//! The study's arithmetic (issue 15, docs/paper.md) against brute-force counts on small
//! traces: link bytes and lower bounds of the three schemes, the fused bound, the AL-TLB sweep,
//! the closed forms, and the training-routing generator.

use dysharp_sim::hub::tlb::Tlb;
use dysharp_sim::study::plan::share_std;
use dysharp_sim::study::{
    run, study_links, sweep_one, uniform_expectation, Grid, HubStreams, Schedule, StudyError,
    StudyOptions,
};
use dysharp_sim::trace::{generate, share_std_concentration, DistSpec};
use dysharp_sim::traffic::{RowShape, Token};

/// One packet on one link: (port, uplink?, payload bytes, wire bytes).
type Hop = (usize, bool, u64, u64);

/// Packets of one token in one phase under one scheme, by the spec's rules written out
/// (spec §3 wire lengths: flit0, ⌈targets/8⌉ target flits, a byte-enable flit for stores,
/// `len` payload flits).
fn brute_hops(
    scheme: &str,
    dispatch: bool,
    t: &Token,
    ports: usize,
    epp: usize,
    row: usize,
) -> Vec<Hop> {
    let flits = row / 16;
    let chunks: Vec<u64> = (0..flits.div_ceil(16))
        .map(|c| (flits - 16 * c).min(16) as u64)
        .collect();
    let mut per_port = vec![0u64; ports];
    for &e in &t.experts {
        let g = e as usize / epp;
        if g != t.src {
            per_port[g] += 1;
        }
    }
    let remote: u64 = per_port.iter().sum();
    let mut hops = Vec::new();
    let tf = |n: u64| n.div_ceil(8);
    for &len in &chunks {
        let pay = 16 * len;
        match (scheme, dispatch) {
            ("dysharp", true) if remote > 0 => {
                hops.push((t.src, true, pay, 16 * (1 + tf(remote) + 1 + len)));
                for (g, &n) in per_port.iter().enumerate() {
                    if n > 0 {
                        hops.push((g, false, pay, 16 * (1 + tf(n) + 1 + len)));
                    }
                }
            }
            ("dysharp", false) if remote > 0 => {
                hops.push((t.src, true, 0, 16 * (1 + tf(remote))));
                for (g, &n) in per_port.iter().enumerate() {
                    if n > 0 {
                        hops.push((g, false, 0, 16 * (1 + tf(n))));
                        hops.push((g, true, pay, 16 * (1 + len)));
                    }
                }
                hops.push((t.src, false, pay, 16 * (1 + len)));
            }
            ("unicast", d) => {
                for (g, &n) in per_port.iter().enumerate() {
                    if n > 0 {
                        let (from, to) = if d { (t.src, g) } else { (g, t.src) };
                        hops.push((from, true, pay, 16 * (2 + len)));
                        hops.push((to, false, pay, 16 * (2 + len)));
                    }
                }
            }
            ("nvls", true) => {
                hops.push((t.src, true, pay, 16 * (2 + len)));
                for g in 0..ports {
                    hops.push((g, false, pay, 16 * (2 + len)));
                }
            }
            ("nvls", false) => {
                hops.push((t.src, true, 0, 16));
                for g in 0..ports {
                    hops.push((g, false, 0, 16));
                    hops.push((g, true, pay, 16 * (1 + len)));
                }
                hops.push((t.src, false, pay, 16 * (1 + len)));
            }
            _ => {}
        }
    }
    hops
}

/// Per-link wire bytes (index `2·port + uplink`) and payload totals (up, down) of a token set.
fn brute_links(
    scheme: &str,
    dispatch: bool,
    tokens: &[&Token],
    ports: usize,
    epp: usize,
    row: usize,
) -> (Vec<u64>, u64, u64) {
    let mut wire = vec![0u64; 2 * ports];
    let (mut up, mut down) = (0, 0);
    for t in tokens {
        for (p, is_up, pay, w) in brute_hops(scheme, dispatch, t, ports, epp, row) {
            wire[2 * p + usize::from(is_up)] += w;
            if is_up {
                up += pay;
            } else {
                down += pay;
            }
        }
    }
    (wire, up, down)
}

fn max_flits(w: &[u64]) -> u64 {
    w.iter().copied().max().unwrap_or(0) / 16
}

/// A small irregular trace: 4 ports, 2 experts per port, top-3, 6 tokens per rank.
fn small_trace() -> (Vec<Token>, usize, usize, usize) {
    let (ports, epp, per_rank) = (4, 2, 6);
    let t = generate(
        &DistSpec::Zipf { alpha: 1.2 },
        ports * per_rank,
        ports * epp,
        3,
        ports,
        7,
    )
    .unwrap();
    let mut tokens = t.replay_tokens().0;
    // One token with every expert local (sends nothing under DySHARP and unicast).
    tokens[0].experts = vec![0, 1];
    (tokens, ports, epp, per_rank)
}

#[test]
fn links_match_brute_force_counts() {
    let (tokens, ports, epp, per_rank) = small_trace();
    let row = 16 * 17; // two chunks: 16 flits and 1 flit
    for tile in [1, 2, 4, 6] {
        let s = study_links(
            &tokens,
            ports,
            epp,
            per_rank,
            tile,
            RowShape { row_bytes: row },
        );
        let all: Vec<&Token> = tokens.iter().collect();
        for (name, totals) in [
            ("dysharp", &s.dysharp),
            ("unicast", &s.unicast),
            ("nvls", &s.nvls),
        ] {
            let (dw, du, dd) = brute_links(name, true, &all, ports, epp, row);
            let (cw, cu, cd) = brute_links(name, false, &all, ports, epp, row);
            assert_eq!(
                (totals.dispatch_up, totals.dispatch_down),
                (du, dd),
                "{name}"
            );
            assert_eq!((totals.combine_up, totals.combine_down), (cu, cd), "{name}");
            assert_eq!(
                totals.wire_total,
                dw.iter().sum::<u64>() + cw.iter().sum::<u64>(),
                "{name}"
            );
            assert_eq!(totals.dispatch_lb, max_flits(&dw), "{name}");
            assert_eq!(totals.combine_lb, max_flits(&cw), "{name}");
            // Both phases at once on the links; per direction sums.
            let both: Vec<u64> = dw.iter().zip(&cw).map(|(a, b)| a + b).collect();
            assert_eq!(totals.concurrent_lb, max_flits(&both), "{name}");
            let dir = |up: bool| -> u64 {
                both.iter()
                    .enumerate()
                    .filter(|(i, _)| (i % 2 == 1) == up)
                    .map(|(_, w)| w)
                    .sum()
            };
            assert_eq!(
                (totals.wire_up, totals.wire_down),
                (dir(true), dir(false)),
                "{name}"
            );
            if name == "nvls" {
                continue;
            }
            // Fused: step i carries Dispatch of tile i and Combine of tile i - 1.
            let tiles = per_rank.div_ceil(tile);
            let tile_tokens = |i: usize| -> Vec<&Token> {
                tokens
                    .iter()
                    .enumerate()
                    .filter(|(n, _)| (n % per_rank) / tile == i)
                    .map(|(_, t)| t)
                    .collect()
            };
            let mut fused = 0;
            for step in 0..=tiles {
                let mut w = vec![0u64; 2 * ports];
                if step < tiles {
                    let (d, _, _) = brute_links(name, true, &tile_tokens(step), ports, epp, row);
                    w.iter_mut().zip(&d).for_each(|(a, b)| *a += b);
                }
                if step > 0 {
                    let (c, _, _) =
                        brute_links(name, false, &tile_tokens(step - 1), ports, epp, row);
                    w.iter_mut().zip(&c).for_each(|(a, b)| *a += b);
                }
                fused += max_flits(&w);
            }
            assert_eq!(totals.fused_lb, fused, "{name} tile {tile}");
        }
        // One tile covering the sequence: fusion cannot overlap anything.
        if tile >= per_rank {
            assert_eq!(s.dysharp.fused_lb, s.dysharp.sequential_lb());
            assert_eq!(s.unicast.fused_lb, s.unicast.sequential_lb());
        }
    }
}

#[test]
fn derived_ratios_follow_the_totals() {
    let (tokens, ports, epp, per_rank) = small_trace();
    let s = study_links(
        &tokens,
        ports,
        epp,
        per_rank,
        2,
        RowShape { row_bytes: 512 },
    );
    let (d, u, n) = (
        s.dysharp.payload_total() as f64,
        s.unicast.payload_total() as f64,
        s.nvls.payload_total() as f64,
    );
    assert!((s.dysharp_change() - (d / u - 1.0)).abs() < 1e-12);
    assert!((s.nvls_useless() - (n / d - 1.0)).abs() < 1e-12);
    assert!((s.ideal_speedup() - u / d).abs() < 1e-12);
    let fused = s.unicast.sequential_lb() as f64 / s.dysharp.fused_lb as f64;
    assert!((s.fused_speedup() - fused).abs() < 1e-12);
    assert!((s.fraction_of_ideal() - fused / (u / d)).abs() < 1e-12);
    // The paper's metric: DySHARP's own volume over bandwidth against its concurrent time.
    let vol = s.dysharp.wire_up.max(s.dysharp.wire_down) as f64 / (16.0 * ports as f64);
    assert!((s.paper_fraction_of_ideal() - vol / s.dysharp.concurrent_lb as f64).abs() < 1e-12);
    assert!(s.paper_fraction_of_ideal() <= 1.0 + 1e-12);
    let best = s.unicast.sequential_lb().min(s.unicast.fused_lb) as f64;
    assert!((s.fused_vs_best_unicast() - best / s.dysharp.fused_lb as f64).abs() < 1e-12);
    // NVLS deliveries: every token to every GPU; useful where the GPU holds one of its experts.
    let useful: u64 = tokens
        .iter()
        .map(|t| {
            (0..ports)
                .filter(|g| t.experts.iter().any(|&e| e as usize / epp == *g))
                .count() as u64
        })
        .sum();
    assert_eq!(s.useful_deliveries, useful);
    assert_eq!(s.allgather_deliveries, (tokens.len() * ports) as u64);
    let useless = (tokens.len() * ports) as f64 - useful as f64;
    assert!((s.nvls_useless_deliveries() - useless / useful as f64).abs() < 1e-12);
}

#[test]
fn nvls_useless_deliveries_is_the_papers_340_percent() {
    // DeepSeek-V3 top-8 on 32 GPUs: r = C(248, 8) / C(256, 8), r / (1 − r) = 340.4%.
    let x = uniform_expectation(256, 8, 32).unwrap();
    let r: f64 = (0..8)
        .map(|i| (248 - i) as f64 / (256 - i) as f64)
        .product();
    assert!((x.p_none - r).abs() < 1e-12);
    assert!(
        (x.nvls_useless_deliveries - 3.404).abs() < 5e-4,
        "{}",
        x.nvls_useless_deliveries
    );
    // The same from a generated uniform trace, within sampling noise.
    let tokens = generate(&DistSpec::Uniform, 32 * 256, 256, 8, 32, 1)
        .unwrap()
        .replay_tokens()
        .0;
    let s = study_links(&tokens, 32, 8, 256, 64, RowShape { row_bytes: 256 });
    assert!(
        (s.nvls_useless_deliveries() - 3.404).abs() < 0.05,
        "{}",
        s.nvls_useless_deliveries()
    );
}

#[test]
fn normal_routing_draws_shares_around_k_over_e() {
    let spec: DistSpec = "normal:0.01".parse().unwrap();
    assert_eq!(spec.to_string(), "normal:0.01");
    assert!("normal:0".parse::<DistSpec>().is_err());
    assert!("normal".parse::<DistSpec>().is_err());
    // Far from the clipping at 0 (k/E = 0.125), the realized std is the asked one.
    let tokens = generate(&spec, 65536, 64, 8, 8, 3)
        .unwrap()
        .replay_tokens()
        .0;
    let got = share_std(&tokens, 64);
    assert!((got - 0.01).abs() < 0.004, "{got}");
    // DeepSeek-V3 top-8 at 0.032 (k/E = 0.031): clipping narrows the realized spread.
    let spec: DistSpec = "normal:0.032".parse().unwrap();
    let tokens = generate(&spec, 16384, 256, 8, 8, 1)
        .unwrap()
        .replay_tokens()
        .0;
    let got = share_std(&tokens, 256);
    assert!(got > 0.018 && got < 0.032, "{got}");
    for t in &tokens {
        let mut e = t.experts.clone();
        e.sort_unstable();
        e.dedup();
        assert_eq!(e.len(), 8);
    }
}

#[test]
fn layer_model_orders_the_schedules() {
    use dysharp_sim::study::layer::{layer_report, layer_row, LayerParams};
    let tokens = generate(&DistSpec::Uniform, 8 * 512, 256, 8, 8, 1)
        .unwrap()
        .replay_tokens()
        .0;
    let l = study_links(&tokens, 8, 32, 512, 128, RowShape { row_bytes: 14336 });
    let p = LayerParams::dsv3(512);
    let r = layer_row(&p, "mock", 512, 8, &l, false);
    let ms = |n: &str| r.schedules.iter().find(|s| s.schedule == n).unwrap().ms;
    // DeepEP pays compute plus communication; the overlapped schedules at most the larger
    // of the two plus a tile of fill, and DySHARP's communication bound is the smaller.
    assert!(ms("deepep") > ms("comet") && ms("comet") >= ms("dysharp"));
    assert!((r.compute_ms + r.deepep_comm_ms - ms("deepep")).abs() < 1e-9);
    assert!(r.deepep_comm_share > 0.0 && r.deepep_comm_share < 1.0);
    // Compute alone: 2 FLOPs × 3 matrices × hidden × intermediate × (8 + 1 shared) × tokens,
    // forward and backward (3×), at half of the H100's 989.4 TFLOP/s.
    let flops = 3.0 * 2.0 * 3.0 * 7168.0 * 2048.0 * 9.0 * 512.0;
    assert!((r.compute_ms - 1e3 * flops / (0.5 * 989.4e12)).abs() < 1e-9);
    let rep = layer_report(&p, 8, &[("mock".into(), 512, l.clone())], "mock");
    assert_eq!(rep.rows.len(), 2);
    assert!(!rep.moves_most.is_empty());
    assert!(rep.assumptions.iter().all(|a| !a.source.is_empty()));
    // Slowing the links by the reported factor gives the paper's 70.4% share.
    let x = rep.comm_scale_for_paper_share.unwrap();
    assert!(
        (rep.paper_regime.unwrap().deepep_comm_share - 0.704).abs() < 1e-6,
        "{x}"
    );
}

/// The sweep's pass-skipping against translating every chunk of every row.
fn naive_sweep(
    tokens: &[Token],
    ports: usize,
    epp: usize,
    per_rank: usize,
    (entries, ways): (usize, usize),
    (schedule, tile): (Schedule, usize),
    chunks: usize,
) -> (u64, u64, u64, u64) {
    // Global order: token j of ranks 0..P, then j + 1, ...
    let order: Vec<&Token> = (0..per_rank)
        .flat_map(|j| (0..ports).map(move |r| (r, j)))
        .map(|(r, j)| &tokens[r * per_rank + j])
        .collect();
    let mut steps: Vec<(bool, &Token)> = Vec::new();
    match schedule {
        Schedule::Phased => {
            steps.extend(order.iter().map(|t| (true, *t)));
            steps.extend(order.iter().map(|t| (false, *t)));
        }
        Schedule::Fused => {
            let per_tile = tile * ports;
            let tiles = order.len().div_ceil(per_tile);
            for i in 0..=tiles {
                for k in 0..per_tile {
                    if let Some(t) = order.get(i * per_tile + k).filter(|_| i < tiles) {
                        steps.push((true, *t));
                    }
                    if i > 0 {
                        if let Some(t) = order.get((i - 1) * per_tile + k) {
                            steps.push((false, *t));
                        }
                    }
                }
            }
        }
    }
    let (mut dl, mut dw, mut cl, mut cw) = (0, 0, 0, 0);
    for g in 0..ports {
        let mut tlb = Tlb::new(entries, ways);
        for &(dispatch, t) in &steps {
            if t.src == g {
                continue;
            }
            let locals: Vec<u32> = t
                .experts
                .iter()
                .filter(|&&e| e as usize / epp == g)
                .map(|&e| (e as usize % epp) as u32)
                .collect();
            for _ in 0..chunks {
                for &l in &locals {
                    let miss = tlb.lookup(l, t.aidx).is_none();
                    if miss {
                        tlb.fill(l, t.aidx, 0);
                    }
                    let (lk, wk) = if dispatch {
                        (&mut dl, &mut dw)
                    } else {
                        (&mut cl, &mut cw)
                    };
                    *lk += 1;
                    *wk += u64::from(miss);
                }
            }
        }
    }
    (dl, dw, cl, cw)
}

#[test]
fn tlb_sweep_matches_translating_every_chunk() {
    let (ports, epp, per_rank) = (4, 8, 40);
    for dist in [DistSpec::Uniform, DistSpec::Zipf { alpha: 2.0 }] {
        let tokens = generate(&dist, ports * per_rank, ports * epp, 6, ports, 3)
            .unwrap()
            .replay_tokens()
            .0;
        let streams = HubStreams::new(&tokens, ports, epp, per_rank);
        for (entries, ways) in [(16, 1), (16, 2), (16, 16), (64, 4), (64, 64), (256, 256)] {
            for (schedule, tile) in [
                (Schedule::Phased, 0),
                (Schedule::Fused, 4),
                (Schedule::Fused, 16),
            ] {
                let r = sweep_one(&streams, entries, ways, schedule, tile, 5);
                let (dl, dw, cl, cw) = naive_sweep(
                    &tokens,
                    ports,
                    epp,
                    per_rank,
                    (entries, ways),
                    (schedule, tile),
                    5,
                );
                let got = (
                    r.dispatch.lookups,
                    r.dispatch.walks,
                    r.combine.lookups,
                    r.combine.walks,
                );
                assert_eq!(
                    got,
                    (dl, dw, cl, cw),
                    "{dist} {entries}/{ways} {schedule:?} tile {tile}"
                );
                let walks = (dw + cw) as f64;
                assert!((r.walks_per_token - walks / tokens.len() as f64).abs() < 1e-12);
                assert!((r.hit_rate - (1.0 - walks / (dl + cl) as f64)).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn closed_form_matches_enumeration() {
    // Every 3-subset of 8 experts, 4 ranks of 2, every source rank.
    let (e, k, p) = (8usize, 3usize, 4usize);
    let m = e / p;
    let mut subsets = Vec::new();
    for a in 0..e {
        for b in a + 1..e {
            for c in b + 1..e {
                subsets.push([a, b, c]);
            }
        }
    }
    let (mut q, mut f) = (0.0, 0.0);
    for s in 0..p {
        for set in &subsets {
            let mut ranks: Vec<usize> = set.iter().map(|x| x / m).filter(|&r| r != s).collect();
            ranks.sort_unstable();
            ranks.dedup();
            q += f64::from(u8::from(!ranks.is_empty()));
            f += ranks.len() as f64;
        }
    }
    let n = (p * subsets.len()) as f64;
    let x = uniform_expectation(e, k, p).unwrap();
    assert!((x.p_remote - q / n).abs() < 1e-12);
    assert!((x.remote_ranks - f / n).abs() < 1e-12);
    assert!((x.ideal_speedup - 2.0 * (f / n) / (q / n + f / n)).abs() < 1e-12);
    assert!(uniform_expectation(10, 3, 4).is_none());
}

#[test]
fn closed_form_agrees_with_a_generated_uniform_trace() {
    let (ep, per_rank) = (8, 512);
    let tokens = generate(&DistSpec::Uniform, ep * per_rank, 256, 8, ep, 1)
        .unwrap()
        .replay_tokens()
        .0;
    let s = study_links(&tokens, ep, 32, per_rank, 64, RowShape { row_bytes: 256 });
    let x = uniform_expectation(256, 8, ep).unwrap();
    let f = s.unicast.dispatch_up as f64 / (256.0 * tokens.len() as f64);
    assert!(
        (f - x.remote_ranks).abs() / x.remote_ranks < 0.02,
        "{f} vs {}",
        x.remote_ranks
    );
    assert!((s.dysharp_change() - x.dysharp_traffic_change).abs() < 0.01);
}

#[test]
fn share_std_hits_its_target() {
    let alpha = share_std_concentration(0.032, 256, 8).unwrap();
    assert!((alpha - 0.946).abs() < 0.01, "{alpha}");
    assert!(share_std_concentration(0.0, 256, 8).is_none());
    assert!(share_std_concentration(10.0, 256, 8).is_none());
    for (target, seed) in [(0.01, 1), (0.032, 2), (0.05, 3)] {
        let spec: DistSpec = format!("share-std:{target}").parse().unwrap();
        let tokens = generate(&spec, 16384, 256, 8, 8, seed)
            .unwrap()
            .replay_tokens()
            .0;
        let got = share_std(&tokens, 256);
        assert!(
            (got - target).abs() / target < 0.25,
            "target {target}: {got}"
        );
    }
    assert!("share-std:-1".parse::<DistSpec>().is_err());
    assert!("share-std".parse::<DistSpec>().is_err());
    assert_eq!(
        "share-std:0.02".parse::<DistSpec>().unwrap().to_string(),
        "share-std:0.02"
    );
}

#[test]
fn quick_study_is_deterministic_and_complete() {
    let mut o = StudyOptions::new(Grid::Quick);
    let mut calls = 0;
    let a = run(&o, &mut |p| {
        calls += 1;
        assert!(p.done <= p.total);
    })
    .unwrap();
    o.threads = 2;
    let b = run(&o, &mut |_| {}).unwrap();
    assert!(calls > 0);
    assert_eq!(a.traffic_csv(), b.traffic_csv());
    assert_eq!(a.tlb_csv(), b.tlb_csv());
    assert_eq!(a.claims.len(), 16);
    assert!(a
        .claims
        .iter()
        .all(|c| !c.ours.is_empty() && !c.ours.contains("n/a") && !c.source.is_empty()));
    assert!(a.layer.is_some());
    assert!(!a.in_switch.is_empty());
    assert!(a.in_switch_skipped.is_some());
    // Every traffic row: DySHARP never moves more payload than unicast; NVLS at least as much
    // as DySHARP.
    for r in &a.traffic {
        assert!(r.links.dysharp.payload_total() <= r.links.unicast.payload_total());
        assert!(r.links.nvls.payload_total() >= r.links.dysharp.payload_total());
    }
    assert_eq!(a.traffic_csv().lines().count(), a.traffic.len() + 1);
}

#[test]
fn bad_options_name_their_flag() {
    let flag = |f: &dyn Fn(&mut StudyOptions)| {
        let mut o = StudyOptions::new(Grid::Quick);
        f(&mut o);
        match run(&o, &mut |_| {}) {
            Err(StudyError::Option { flag, .. }) => flag,
            other => panic!(
                "expected an option error, got {:?}",
                other.map(|r| r.seconds)
            ),
        }
    };
    assert_eq!(flag(&|o| o.eps = vec![64]), "eps");
    assert_eq!(flag(&|o| o.eps = vec![]), "eps");
    assert_eq!(flag(&|o| o.tile = 0), "tile");
    assert_eq!(flag(&|o| o.tlb_entries = vec![100]), "tlb-entries");
    assert_eq!(flag(&|o| o.tlb_ways = vec![3]), "tlb-ways");
    assert_eq!(flag(&|o| o.tlb_ep = 3), "tlb-ep");
    assert_eq!(flag(&|o| o.threads = 0), "threads");
    let mut o = StudyOptions::new(Grid::Quick);
    o.counts = Some("/nonexistent/counts.csv".into());
    assert!(matches!(run(&o, &mut |_| {}), Err(StudyError::Gen { .. })));
}
