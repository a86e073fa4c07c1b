//! Block-level benches: `dysharp_al_tlb`, `dysharp_hub` and `dysharp_fifo_bank` driven standalone
//! (not through `dysharp_top`) and checked against the golden model or a reference queue.
//!
//! - AL-TLB (`tlb_fa`: 8 entries fully associative, `tlb_sa`: 16 entries in 4 sets of 4 ways):
//!   lookups and fills (a fill only after a lookup of the same key missed, as the hub does),
//!   compared every cycle with `dysharp_sim::hub::tlb::Tlb`: hit or miss, LIdx on a hit, and
//!   `fill_evict_o` against the golden model's eviction count.
//! - Hub (`hub_m1`: 8 experts, 16-entry 4-way TLB, 1 line per memory beat; `hub_m4`: 32 experts,
//!   512-entry fully associative TLB, 4 lines per beat): legal, pruned request packets on the
//!   request stream, a GPU memory on the memory port (random `mem_req_ready_i`, in-order read
//!   beats after a random latency), random `rsp_ready_i`; every memory access (split into 16-byte
//!   lines) and every response packet is compared with `dysharp_sim::hub::Hub`, and at the end
//!   the TLB and error counters.
//! - RAM-backed FIFO, a one-queue `dysharp_fifo_bank` (`fifo_bank`: 16-bit words, Depth 8;
//!   `fifo_bank_xp`: the crosspoint queue's 129 x 128; `fifo_bank_ft`: Depth 8 with FallThrough,
//!   as the hub's payload FIFO): random valid/ready and data against a `VecDeque`, every cycle:
//!   `usage_o`, `in_ready_o`, `out_valid_o` (exactly: the head word is shown from two cycles
//!   after its push on, one for a word that falls through) and `out_data_o`; and full throughput
//!   with both sides always on, from empty and from full.
//! - FIFO bank (`fifo_bank_q4`: a `dysharp_fifo_bank` of 4 crosspoint queues of Depth 8 beside 4
//!   one-queue banks of the same word and depth, fed the same inputs): every output of each
//!   queue equals its one-queue bank's every cycle, under random valid/ready, bursts and reset.
//!
//! Every test is seeded. A failure prints the seed and the command that re-runs it;
//! `DYSHARP_SEED=<seed>` replaces the seed of every case of the test (decimal or `0x` hex), and
//! `DYSHARP_VCD=<file>` writes a waveform of the block's ports.

use dysharp_sim::config::{Config, HubConfig};
use dysharp_sim::hub::tlb::Tlb;
use dysharp_sim::hub::{Hub, MemAccess};
use dysharp_sim::memory::SparseMemory;
use dysharp_sim::numerics::{reduce_lanes, AccMode, DType, ReduceOp};
use dysharp_sim::packet::{ErrorCode, Flit, Limits, Opcode, Packet, Stage};
use dysharp_verif::diff::{decode_any, packet_diff};
use dysharp_verif::stimulus::{Stimulus, SCRATCH};
use dysharp_verif::tb::same_access;
use dysharp_verif::{Port, Sim};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// Environment variable that replaces the seed of every case of a test.
const SEED_ENV: &str = "DYSHARP_SEED";

/// Parses a seed written in decimal or `0x` hex.
fn parse_seed(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The seed of a case: `DYSHARP_SEED` when set, else `default`.
fn seed_or(default: u64) -> u64 {
    match std::env::var(SEED_ENV) {
        Ok(v) => {
            let s = parse_seed(&v);
            assert!(
                s.is_some(),
                "{SEED_ENV}={v} is not a decimal or 0x-hex number"
            );
            s.unwrap_or(default)
        }
        Err(_) => default,
    }
}

/// The seeds of a randomized test: `count` seeds from `base`, or only `DYSHARP_SEED` when set.
fn seeds(base: u64, count: u64) -> Vec<u64> {
    if std::env::var_os(SEED_ENV).is_some() {
        vec![seed_or(base)]
    } else {
        (base..base + count).collect()
    }
}

/// Unwraps the result of one case of test `test`; on an error, fails the test with the seed and
/// the command that re-runs it.
fn check<T>(test: &str, case: &str, seed: u64, r: Result<T, String>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!(
            "{test} [{case}] failed (seed {seed:#x}): {e}\n  re-run: {SEED_ENV}={seed:#x} \
             cargo test --release -p dysharp-verif --test blocks {test}"
        ),
    }
}

/// `Err(msg)` unless `cond` holds: an assertion inside a case, reported with its seed.
fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(msg())
    }
}

/// Instantiates a model, writing a waveform when `DYSHARP_VCD` is set.
fn open(model: &str, seed: u64) -> Result<Sim, String> {
    let mut sim = Sim::new(model, seed).map_err(|e| e.to_string())?;
    if let Some(v) = std::env::var_os("DYSHARP_VCD") {
        sim.open_vcd(std::path::Path::new(&v))
            .map_err(|e| e.to_string())?;
    }
    Ok(sim)
}

/// Looks up an input port.
fn inp(sim: &Sim, name: &str) -> Result<Port, String> {
    sim.input(name).map_err(|e| e.to_string())
}

/// Looks up an output port.
fn outp(sim: &Sim, name: &str) -> Result<Port, String> {
    sim.output(name).map_err(|e| e.to_string())
}

// =================================================================================================
// AL-TLB
// =================================================================================================

/// The ports of a `dysharp_al_tlb` model.
struct TlbPorts {
    rst: Port,
    query: Port,
    lookup: Port,
    lk_local: Port,
    lk_aidx: Port,
    hit: Port,
    lidx: Port,
    fill: Port,
    fl_local: Port,
    fl_aidx: Port,
    fl_lidx: Port,
    evict: Port,
}

/// What the RTL TLB showed in one cycle (its LIdx in the next: the RAM's registered read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TlbOut {
    /// The LIdx on a hit (checked against the RTL in the following cycle), `None` on a miss.
    hit: Option<u32>,
    /// `fill_evict_o`: the fill of this cycle replaces a valid entry.
    evict: bool,
}

/// A `dysharp_al_tlb` model and the golden TLB it is compared with every cycle.
struct TlbBench {
    sim: Sim,
    p: TlbPorts,
    golden: Tlb,
    entries: usize,
    ways: usize,
    /// Mask of the local-index field (`LocalWidth` bits).
    local_mask: u32,
    /// The hit of the last cycle whose LIdx the RTL shows in this one: (cycle, key, LIdx).
    pending: Option<(u64, (u32, u32), u32)>,
    /// Lookups, hits and evicting fills seen so far.
    lookups: u64,
    hits: u64,
    evictions: u64,
}

impl TlbBench {
    /// Instantiates `model` and resets it.
    fn new(model: &str, seed: u64) -> Result<Self, String> {
        let sim = open(model, seed)?;
        let entries = sim.param_or("Entries", 512);
        let ways = sim.param_or("Ways", entries);
        let local_w = sim.param_or("LocalWidth", 5);
        let (aidx_w, lidx_w) = (sim.param_or("AidxWidth", 31), sim.param_or("LidxWidth", 31));
        if aidx_w != 31 || lidx_w != 31 || local_w > 16 {
            return Err(format!(
                "bench expects 31-bit AIdx and LIdx and a local index of at most 16 bits \
                 (model {model}: {local_w}/{aidx_w}/{lidx_w})"
            ));
        }
        let p = TlbPorts {
            rst: inp(&sim, "rst_ni")?,
            query: inp(&sim, "query_i")?,
            lookup: inp(&sim, "lookup_i")?,
            lk_local: inp(&sim, "lookup_local_i")?,
            lk_aidx: inp(&sim, "lookup_aidx_i")?,
            hit: outp(&sim, "lookup_hit_o")?,
            lidx: outp(&sim, "lookup_lidx_o")?,
            fill: inp(&sim, "fill_i")?,
            fl_local: inp(&sim, "fill_local_i")?,
            fl_aidx: inp(&sim, "fill_aidx_i")?,
            fl_lidx: inp(&sim, "fill_lidx_i")?,
            evict: outp(&sim, "fill_evict_o")?,
        };
        let mut b = TlbBench {
            sim,
            p,
            golden: Tlb::new(entries, ways),
            entries,
            ways,
            local_mask: (1u32 << local_w) - 1,
            pending: None,
            lookups: 0,
            hits: 0,
            evictions: 0,
        };
        b.reset()?;
        Ok(b)
    }

    /// Number of sets.
    fn sets(&self) -> u32 {
        (self.entries / self.ways) as u32
    }

    /// Holds reset for three cycles; the golden TLB starts empty again.
    fn reset(&mut self) -> Result<(), String> {
        self.flush()?;
        self.sim.set(self.p.query, 0);
        self.sim.set(self.p.lookup, 0);
        self.sim.set(self.p.fill, 0);
        self.sim.set(self.p.rst, 0);
        for _ in 0..3 {
            self.sim.cycle().map_err(|e| e.to_string())?;
        }
        self.sim.set(self.p.rst, 1);
        self.golden = Tlb::new(self.entries, self.ways);
        Ok(())
    }

    /// Compares the LIdx the RTL shows now with the hit of the last cycle, if there was one.
    fn check_pending(&mut self) -> Result<Option<u32>, String> {
        let Some((cyc, key, want)) = self.pending.take() else {
            return Ok(None);
        };
        let got = self.sim.get(self.p.lidx) as u32;
        ensure(got == want, || {
            format!("cycle {cyc}: lookup {key:?} hit with LIdx {want:#x} (golden), the RTL's LIdx RAM gave {got:#x} in the next cycle")
        })?;
        Ok(Some(got))
    }

    /// One cycle: looks `key` = (local, aidx) up and, if given, fills (local, aidx, lidx) at
    /// the clock edge. The lookup sees the state before the fill. Compares hit and
    /// `fill_evict_o` with the golden TLB now, the LIdx of a hit in the next cycle (the RTL reads
    /// it from a RAM), and returns what the golden TLB expects.
    fn step(&mut self, key: (u32, u32), fill: Option<(u32, u32, u32)>) -> Result<TlbOut, String> {
        let cyc = self.sim.cycles();
        let p = &self.p;
        self.sim.set(p.query, 1);
        self.sim.set(p.lookup, 1);
        self.sim.set(p.lk_local, key.0 as u128);
        self.sim.set(p.lk_aidx, key.1 as u128);
        let (f, fl, fa, fx) = fill.map_or((0, 0, 0, 0), |(l, a, x)| (1, l, a, x));
        self.sim.set(p.fill, f);
        self.sim.set(p.fl_local, fl as u128);
        self.sim.set(p.fl_aidx, fa as u128);
        self.sim.set(p.fl_lidx, fx as u128);
        self.sim.cycle().map_err(|e| format!("cycle {cyc}: {e}"))?;
        self.check_pending()?;
        let got_hit = self.sim.bit(self.p.hit, 0);
        let got_evict = self.sim.bit(self.p.evict, 0);
        let want_hit = self.golden.lookup(key.0, key.1);
        let mut want_evict = false;
        if let Some((l, a, x)) = fill {
            // The protocol of the header comment: never fill a key that is present.
            if self.golden.lookup(l, a).is_some() {
                return Err(format!(
                    "cycle {cyc}: bench error: fill of present key ({l}, {a})"
                ));
            }
            let before = self.golden.stats.evictions;
            self.golden.fill(l, a, x);
            want_evict = self.golden.stats.evictions > before;
        }
        if got_hit != want_hit.is_some() || got_evict != want_evict {
            return Err(format!(
                "cycle {cyc}: lookup {key:?}, fill {fill:?}: golden hit {want_hit:?} evict {want_evict}, RTL hit {got_hit} evict {got_evict}"
            ));
        }
        self.pending = want_hit.map(|x| (cyc, key, x));
        self.lookups += 1;
        self.hits += u64::from(got_hit);
        self.evictions += u64::from(got_evict);
        Ok(TlbOut {
            hit: want_hit,
            evict: got_evict,
        })
    }

    /// One idle cycle (no lookup, no fill) that checks the LIdx of the last cycle's hit; returns
    /// that LIdx as the RTL showed it. Without `query_i` the TLB shows no hit, whatever key is
    /// on its inputs (the compare is isolated).
    fn flush(&mut self) -> Result<Option<u32>, String> {
        if self.pending.is_none() {
            return Ok(None);
        }
        let cyc = self.sim.cycles();
        self.sim.set(self.p.query, 0);
        self.sim.set(self.p.lookup, 0);
        self.sim.set(self.p.fill, 0);
        self.sim.cycle().map_err(|e| format!("cycle {cyc}: {e}"))?;
        ensure(!self.sim.bit(self.p.hit, 0), || {
            format!("cycle {cyc}: lookup_hit_o without query_i")
        })?;
        self.check_pending()
    }

    /// Looks `key` up without a fill; returns the LIdx of a hit as the RTL's RAM gave it.
    fn look(&mut self, key: (u32, u32)) -> Result<Option<u32>, String> {
        self.step(key, None)?;
        self.flush()
    }

    /// Looks (local, aidx) up, expects a miss, and fills it with `lidx` in the next cycle
    /// (the hub's order: lookup, walk, fill); returns whether the fill evicted.
    fn miss_and_fill(&mut self, local: u32, aidx: u32, lidx: u32) -> Result<bool, String> {
        let cyc = self.sim.cycles();
        let h = self.look((local, aidx))?;
        ensure(h.is_none(), || {
            format!("cycle {cyc}: ({local}, {aidx}) should miss before its fill, hit {h:?}")
        })?;
        // The fill cycle looks an unrelated key up (local 0, AIdx of another value).
        Ok(self
            .step((0, aidx ^ 0x4000_0000), Some((local, aidx, lidx)))?
            .evict)
    }
}

/// A random key for a TLB: any local index, an AIdx that is small, near the top of its 31 bits
/// or anything.
fn random_key(rng: &mut ChaCha8Rng, local_mask: u32) -> (u32, u32) {
    let local = rng.gen::<u32>() & local_mask;
    let aidx = match rng.gen_range(0..4) {
        0 | 1 => rng.gen_range(0..32),
        2 => 0x7FFF_FFFF - rng.gen_range(0..32),
        _ => rng.gen::<u32>() & 0x7FFF_FFFF,
    };
    (local, aidx)
}

/// Random lookups and fills on `model`: phases of growing key pools (more hits first, more
/// evictions later), a reset in the middle. Returns (lookups, hits, evictions).
fn tlb_random(model: &str, seed: u64, cycles: usize) -> Result<(u64, u64, u64), String> {
    let mut b = TlbBench::new(model, seed)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Keys that missed and have not been filled since (the only keys the bench may fill).
    let mut pending: Vec<(u32, u32)> = Vec::new();
    let pools = [6usize, 12, 24, 64];
    for (phase, &size) in pools.iter().enumerate() {
        let mut pool: Vec<(u32, u32)> = (0..size)
            .map(|_| random_key(&mut rng, b.local_mask))
            .collect();
        pool.sort_unstable();
        pool.dedup();
        let fill_rate = rng.gen_range(0.2..0.8);
        for _ in 0..cycles / pools.len() {
            let Some(&key) = pool.choose(&mut rng) else {
                return Err("empty key pool".into());
            };
            let fill = if !pending.is_empty() && rng.gen_bool(fill_rate) {
                // Mostly the oldest miss (the hub's order), sometimes any.
                let i = if rng.gen_bool(0.7) {
                    0
                } else {
                    rng.gen_range(0..pending.len())
                };
                let (l, a) = pending.remove(i);
                Some((l, a, rng.gen::<u32>() & 0x7FFF_FFFF))
            } else {
                None
            };
            let out = b.step(key, fill)?;
            let filled_now = fill.is_some_and(|(l, a, _)| (l, a) == key);
            if out.hit.is_none() && !filled_now && !pending.contains(&key) {
                pending.push(key);
            }
        }
        if phase == 1 {
            // Reset in the middle of the sequence: every entry and pointer starts over.
            b.reset()?;
            pending.clear();
        }
    }
    b.flush()?;
    Ok((b.lookups, b.hits, b.evictions))
}

#[test]
fn tlb_random_lookups_and_fills_match_golden() {
    const TEST: &str = "tlb_random_lookups_and_fills_match_golden";
    for (i, model) in ["tlb_fa", "tlb_sa"].iter().enumerate() {
        for seed in seeds(0x7100 + 0x100 * i as u64, 16) {
            let (lookups, hits, evictions) =
                check(TEST, model, seed, tlb_random(model, seed, 40_000));
            eprintln!("{TEST} {model} seed {seed:#x}: {lookups} lookups, {hits} hits, {evictions} evicting fills");
            assert!(
                hits > lookups / 20 && evictions > 100,
                "{model} seed {seed:#x}: the sequence exercised too little ({hits} hits, {evictions} evictions in {lookups} lookups)"
            );
        }
    }
}

#[test]
fn tlb_hit_after_fill_and_miss() {
    const TEST: &str = "tlb_hit_after_fill_and_miss";
    for model in ["tlb_fa", "tlb_sa"] {
        let seed = seed_or(0x7201);
        check(
            TEST,
            model,
            seed,
            (|| {
                let mut b = TlbBench::new(model, seed)?;
                let sets = b.sets();
                // Empty after reset.
                ensure(b.look((1, 5))?.is_none(), || "hit in an empty TLB".into())?;
                // The fill cycle's own lookup of the same key still misses (state before the edge).
                let o = b.step((1, 5), Some((1, 5, 0x7FFF_FFFF)))?;
                ensure(o.hit.is_none() && !o.evict, || {
                    format!("fill cycle showed {o:?}")
                })?;
                ensure(b.look((1, 5))? == Some(0x7FFF_FFFF), || {
                    "no hit after the fill".into()
                })?;
                // A key differing in the local index, the AIdx, or by the number of sets misses.
                for k in [(2, 5), (1, 6), (1, 5 + sets), (1, 5 | 0x4000_0000)] {
                    ensure(b.look(k)?.is_none(), || {
                        format!("{k:?} hit, only (1, 5) is present")
                    })?;
                }
                // A second key in the same set; both hit, each with its own LIdx.
                b.miss_and_fill(1, 5 + sets, 42)?;
                ensure(b.look((1, 5))? == Some(0x7FFF_FFFF), || {
                    "first key lost".into()
                })?;
                ensure(b.look((1, 5 + sets))? == Some(42), || {
                    "second key lost".into()
                })?;
                // LIdx 0 and AIdx 0 / the largest AIdx are ordinary values.
                b.miss_and_fill(0, 0, 0)?;
                ensure(b.look((0, 0))? == Some(0), || "(0, 0) -> 0 not hit".into())?;
                b.miss_and_fill(7, 0x7FFF_FFFF, 9)?;
                ensure(b.look((7, 0x7FFF_FFFF))? == Some(9), || {
                    "largest AIdx not hit".into()
                })?;
                // Reset invalidates everything.
                b.reset()?;
                for k in [(1, 5), (1, 5 + sets), (0, 0), (7, 0x7FFF_FFFF)] {
                    ensure(b.look(k)?.is_none(), || format!("{k:?} survived reset"))?;
                }
                ensure(b.hits == 5, || {
                    format!("{} hits counted, 5 expected", b.hits)
                })
            })(),
        );
    }
}

#[test]
fn tlb_eviction_order_in_a_full_set() {
    const TEST: &str = "tlb_eviction_order_in_a_full_set";
    for model in ["tlb_fa", "tlb_sa"] {
        let seed = seed_or(0x7301);
        check(
            TEST,
            model,
            seed,
            (|| {
                let mut b = TlbBench::new(model, seed)?;
                let (sets, ways) = (b.sets(), b.ways as u32);
                // Set 1 (set 0 when fully associative): AIdx 1, 1 + sets, 1 + 2 sets, ...
                let set_key = |j: u32| (j % 8, 1 + sets * j);
                // A neighbour in another set (sa) must survive every replacement in set 1.
                if sets > 1 {
                    b.miss_and_fill(3, 2, 1000)?;
                }
                for j in 0..ways {
                    let (l, a) = set_key(j);
                    ensure(!b.miss_and_fill(l, a, 100 + j)?, || {
                        format!("fill {j} of {ways} evicted")
                    })?;
                }
                for j in 0..ways {
                    ensure(b.look(set_key(j))? == Some(100 + j), || {
                        format!("way {j} not hit when full")
                    })?;
                }
                // The next 2 * ways fills replace ways 0, 1, ..., ways-1, 0, 1, ... in turn.
                let mut resident: Vec<(u32, u32, u32)> = (0..ways)
                    .map(|j| (set_key(j).0, set_key(j).1, 100 + j))
                    .collect();
                for n in 0..2 * ways {
                    let j = ways + n;
                    let (l, a) = set_key(j);
                    ensure(b.miss_and_fill(l, a, 100 + j)?, || {
                        format!("replacement {n} did not evict")
                    })?;
                    let victim = (n % ways) as usize;
                    let old = resident[victim];
                    resident[victim] = (l, a, 100 + j);
                    ensure(b.look((old.0, old.1))?.is_none(), || {
                        format!("replacement {n}: victim way {victim} {old:?} still hits")
                    })?;
                    for r in &resident {
                        ensure(b.look((r.0, r.1))? == Some(r.2), || {
                            format!("replacement {n}: resident {r:?} lost")
                        })?;
                    }
                }
                if sets > 1 {
                    ensure(b.look((3, 2))? == Some(1000), || {
                        "entry of another set evicted".into()
                    })?;
                }
                ensure(b.evictions == 2 * ways as u64, || {
                    format!("{} evictions", b.evictions)
                })
            })(),
        );
    }
}

#[test]
fn tlb_fill_every_entry_then_replace() {
    const TEST: &str = "tlb_fill_every_entry_then_replace";
    for model in ["tlb_fa", "tlb_sa"] {
        let seed = seed_or(0x7401);
        check(
            TEST,
            model,
            seed,
            (|| {
                let mut b = TlbBench::new(model, seed)?;
                let (sets, entries) = (b.sets(), b.entries as u32);
                // Every entry: keys that differ only in the local index share an AIdx (and set).
                let key = |j: u32| ((j / sets) % 8, 0x100 + j % sets + sets * (j / (8 * sets)));
                let mut keys: Vec<(u32, u32)> = (0..entries).map(key).collect();
                keys.sort_unstable();
                keys.dedup();
                ensure(keys.len() == entries as usize, || {
                    "keys not distinct".into()
                })?;
                for (j, k) in keys.iter().enumerate() {
                    ensure(!b.miss_and_fill(k.0, k.1, j as u32)?, || {
                        format!("fill {j} evicted")
                    })?;
                }
                for (j, k) in keys.iter().enumerate() {
                    ensure(b.look(*k)? == Some(j as u32), || {
                        format!("{k:?} lost when full")
                    })?;
                }
                // Replacement of every entry: round-robin from way 0 of each set.
                for (n, k) in keys.iter().enumerate() {
                    let new = (k.0, k.1 + 64 * sets);
                    ensure(b.miss_and_fill(new.0, new.1, 1000 + n as u32)?, || {
                        format!("replacing fill {n} did not evict")
                    })?;
                }
                for (n, k) in keys.iter().enumerate() {
                    ensure(b.look(*k)?.is_none(), || {
                        format!("old key {k:?} still hits")
                    })?;
                    ensure(
                        b.look((k.0, k.1 + 64 * sets))? == Some(1000 + n as u32),
                        || format!("new key of {k:?} not hit"),
                    )?;
                }
                ensure(b.evictions == entries as u64, || {
                    format!("{} evictions", b.evictions)
                })
            })(),
        );
    }
}

// =================================================================================================
// Hub
// =================================================================================================

/// Cycle budget of one `HubBench::run`.
const LIMIT: u64 = 400_000;

/// The field widths of `dysharp_hub_pkg::hub_cfg_t` (the hub's `cfg_i`), first (most
/// significant) first: mbase, al_base, data_base, log2_bsize, log2_al_entries, log2_slots.
const HUB_CFG_FIELDS: [usize; 6] = [48, 48, 48, 5, 5, 5];

/// Width of `hub_cfg_t`.
const HUB_CFG_BITS: usize = 3 * 48 + 3 * 5;

/// The ports of a `dysharp_hub` model.
struct HubPorts {
    rst: Port,
    /// `cfg_i`, a packed `hub_cfg_t` (see [`HUB_CFG_FIELDS`]).
    cfg: Port,
    req_valid: Port,
    req_ready: Port,
    req_data: Port,
    req_last: Port,
    rsp_valid: Port,
    rsp_ready: Port,
    rsp_data: Port,
    rsp_last: Port,
    mem_valid: Port,
    mem_ready: Port,
    mem_we: Port,
    mem_addr: Port,
    mem_lines: Port,
    mem_wdata: Port,
    mem_wstrb: Port,
    mrsp_valid: Port,
    mrsp_ready: Port,
    mrsp_rdata: Port,
    tlb_hits: Port,
    tlb_misses: Port,
    err: Port,
}

impl HubPorts {
    /// Looks every port up.
    fn new(s: &Sim) -> Result<Self, String> {
        Ok(HubPorts {
            rst: inp(s, "rst_ni")?,
            cfg: inp(s, "cfg_i")?,
            req_valid: inp(s, "req_valid_i")?,
            req_ready: outp(s, "req_ready_o")?,
            req_data: inp(s, "req_data_i")?,
            req_last: inp(s, "req_last_i")?,
            rsp_valid: outp(s, "rsp_valid_o")?,
            rsp_ready: inp(s, "rsp_ready_i")?,
            rsp_data: outp(s, "rsp_data_o")?,
            rsp_last: outp(s, "rsp_last_o")?,
            mem_valid: outp(s, "mem_req_valid_o")?,
            mem_ready: inp(s, "mem_req_ready_i")?,
            mem_we: outp(s, "mem_req_we_o")?,
            mem_addr: outp(s, "mem_req_addr_o")?,
            mem_lines: outp(s, "mem_req_lines_o")?,
            mem_wdata: outp(s, "mem_req_wdata_o")?,
            mem_wstrb: outp(s, "mem_req_wstrb_o")?,
            mrsp_valid: inp(s, "mem_rsp_valid_i")?,
            mrsp_ready: outp(s, "mem_rsp_ready_o")?,
            mrsp_rdata: inp(s, "mem_rsp_rdata_i")?,
            tlb_hits: outp(s, "tlb_hits_o")?,
            tlb_misses: outp(s, "tlb_misses_o")?,
            err: outp(s, "err_count_o")?,
        })
    }
}

/// How the hub's environment behaves.
#[derive(Clone, Debug)]
struct HubEnv {
    /// Hub configuration on the `cfg_*` inputs (its TLB geometry is taken from the model).
    hub: HubConfig,
    /// Probability that the source offers its next request flit in a cycle.
    inject: f64,
    /// Probability of `rsp_ready_i` in a cycle.
    rsp_ready: f64,
    /// Probability of `mem_req_ready_i` in a cycle.
    mem_ready: f64,
    /// Read latency range in cycles (inclusive, at least 1).
    latency: (u64, u64),
}

impl HubEnv {
    /// No backpressure, memory latency 1, a flit offered every cycle.
    fn line_rate() -> Self {
        HubEnv {
            hub: HubConfig::default(),
            inject: 1.0,
            rsp_ready: 1.0,
            mem_ready: 1.0,
            latency: (1, 1),
        }
    }

    /// Random backpressure on every stream and read latency 1..60.
    fn stressed() -> Self {
        HubEnv {
            inject: 0.8,
            rsp_ready: 0.6,
            mem_ready: 0.7,
            latency: (1, 60),
            ..Self::line_rate()
        }
    }
}

/// What a hub bench has seen and checked.
#[derive(Clone, Debug, Default)]
struct HubRun {
    /// Request packets accepted.
    packets: u64,
    /// Request flits accepted.
    flits: u64,
    /// Cycle of the first and the last accepted request flit.
    first_flit: Option<u64>,
    last_flit: u64,
    /// Memory lines checked.
    accesses: u64,
    /// Response packets checked, in order (equal to the golden model's).
    responses: Vec<Packet>,
}

/// A `dysharp_hub` model with a source of request packets, a GPU memory and a response sink,
/// checked against the golden hub.
struct HubBench {
    sim: Sim,
    p: HubPorts,
    env: HubEnv,
    /// The golden hub (its memory-access log is on).
    golden: Hub,
    rng: ChaCha8Rng,
    /// The RTL's memory.
    mem: SparseMemory,
    /// `MemLines` of the model and the width of `mem_req_lines_o`.
    mem_lines: usize,
    lines_w: usize,
    /// Experts per port, largest target list, TLB entries of the model.
    epp: usize,
    max_targets: usize,
    tlb_entries: usize,
    /// Packets (and their flits) waiting to be sent; the next flit of the head.
    source: VecDeque<(Packet, Vec<Flit>)>,
    next: usize,
    offering: bool,
    /// Read beats in flight: (cycle from which it may be returned, its lines).
    reads: VecDeque<(u64, Vec<u128>)>,
    /// Memory line accesses the golden hub made that the RTL has not made yet.
    mem_exp: VecDeque<MemAccess>,
    /// Responses the golden hub produced that the RTL has not sent yet.
    exp_rsp: VecDeque<Packet>,
    /// Flits of the response being received.
    rsp_cur: Vec<Flit>,
    run: HubRun,
}

/// Decoding limits wide enough for any response of a standalone hub.
fn limits() -> Limits {
    Limits {
        num_ports: 32,
        experts_per_port: 32,
        max_targets: 32,
        groups: vec![1; 16],
        dynamic_ops: true,
    }
}

impl HubBench {
    /// Instantiates `model`, programs `env.hub` and resets it.
    fn new(model: &str, seed: u64, env: HubEnv) -> Result<Self, String> {
        let sim = open(model, seed)?;
        let p = HubPorts::new(&sim)?;
        if p.cfg.width() != HUB_CFG_BITS {
            return Err(format!(
                "cfg_i is {} bits, hub_cfg_t {HUB_CFG_BITS}: update HUB_CFG_FIELDS",
                p.cfg.width()
            ));
        }
        let epp = sim.param_or("ExpertsPerPort", 32);
        let max_targets = sim.param_or("MaxTargets", 32);
        let tlb_entries = sim.param_or("TlbEntries", 512);
        let tlb_ways = sim.param_or("TlbWays", tlb_entries);
        let mem_lines = sim.param_or("MemLines", 4);
        let gcfg = HubConfig {
            tlb_entries,
            tlb_ways,
            ..env.hub.clone()
        };
        let cfg = Config {
            experts_per_port: epp,
            max_targets,
            hub: gcfg.clone(),
            ..Config::default()
        };
        cfg.validate().map_err(|e| e.to_string())?;
        let mut golden = Hub::new(HUB_PORT, &gcfg, epp);
        golden.log = Some(Vec::new());
        let mut b = HubBench {
            sim,
            p,
            env,
            golden,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed),
            mem: SparseMemory::new(),
            mem_lines,
            lines_w: (usize::BITS - mem_lines.leading_zeros()) as usize,
            epp,
            max_targets,
            tlb_entries,
            source: VecDeque::new(),
            next: 0,
            offering: false,
            reads: VecDeque::new(),
            mem_exp: VecDeque::new(),
            exp_rsp: VecDeque::new(),
            rsp_cur: Vec::new(),
            run: HubRun::default(),
        };
        let h = &b.env.hub;
        let p = &b.p;
        let values = [
            h.mbase,
            h.al_base,
            h.data_base,
            h.log2_bsize as u64,
            h.log2_al_entries as u64,
            h.log2_slots as u64,
        ];
        let mut lsb = HUB_CFG_BITS;
        for (width, v) in HUB_CFG_FIELDS.into_iter().zip(values) {
            lsb -= width;
            b.sim.set_bits(p.cfg, lsb, width, u128::from(v));
        }
        b.sim.set(b.p.rst, 0);
        for _ in 0..4 {
            b.sim.cycle().map_err(|e| e.to_string())?;
        }
        b.sim.set(b.p.rst, 1);
        Ok(b)
    }

    /// Queues a request packet.
    fn push(&mut self, pkt: Packet) {
        let flits = pkt.encode();
        self.source.push_back((pkt, flits));
    }

    /// Writes `data` at `addr` into both memories (the RTL's and the golden hub's).
    fn preload(&mut self, addr: u64, data: &[u8]) {
        self.mem.write(addr, data);
        self.golden.mem.write(addr, data);
    }

    /// An error at the current cycle.
    fn err(&self, what: String) -> String {
        format!("cycle {}: {what}", self.sim.cycles())
    }

    /// Runs one cycle: drives the source, the sinks and the memory, then checks what moved.
    fn step(&mut self) -> Result<(), String> {
        let now = self.sim.cycles();
        if !self.offering && !self.source.is_empty() && self.rng.gen_bool(self.env.inject) {
            self.offering = true;
        }
        let (valid, data, last) = match (self.offering, self.source.front()) {
            (true, Some((_, f))) => (1, f[self.next], u128::from(self.next + 1 == f.len())),
            _ => (0, 0, 0),
        };
        let p = &self.p;
        self.sim.set(p.req_valid, valid);
        self.sim.set(p.req_data, data);
        self.sim.set(p.req_last, last);
        let rsp_ready = self.rng.gen_bool(self.env.rsp_ready);
        let mem_ready = self.rng.gen_bool(self.env.mem_ready);
        self.sim.set(p.rsp_ready, u128::from(rsp_ready));
        self.sim.set(p.mem_ready, u128::from(mem_ready));
        let beat = self
            .reads
            .front()
            .filter(|(t, _)| *t <= now)
            .map(|(_, d)| d);
        self.sim.set(p.mrsp_valid, u128::from(beat.is_some()));
        for i in 0..self.mem_lines {
            let line = beat.and_then(|d| d.get(i)).copied().unwrap_or(0);
            self.sim.set_bits(p.mrsp_rdata, 128 * i, 128, line);
        }
        let beat_offered = beat.is_some();
        self.sim.cycle().map_err(|e| format!("cycle {now}: {e}"))?;
        // A request flit accepted.
        if self.offering && self.sim.bit(self.p.req_ready, 0) {
            self.offering = false;
            self.run.flits += 1;
            self.run.first_flit.get_or_insert(now);
            self.run.last_flit = now;
            self.next += 1;
            if self
                .source
                .front()
                .is_some_and(|(_, f)| self.next == f.len())
            {
                self.next = 0;
                if let Some((pkt, _)) = self.source.pop_front() {
                    self.accept(&pkt);
                }
            }
        }
        // A response flit delivered.
        let p = &self.p;
        if rsp_ready && self.sim.bit(p.rsp_valid, 0) {
            self.rsp_cur.push(self.sim.get(p.rsp_data));
            if self.sim.bit(p.rsp_last, 0) {
                let frame = std::mem::take(&mut self.rsp_cur);
                self.response(&frame)?;
            }
        }
        // Read data taken.
        if beat_offered && self.sim.bit(self.p.mrsp_ready, 0) {
            self.reads.pop_front();
        }
        // A memory request beat.
        if mem_ready && self.sim.bit(self.p.mem_valid, 0) {
            self.mem_request(now)?;
        }
        Ok(())
    }

    /// The hub received a whole packet: the golden hub handles it.
    fn accept(&mut self, pkt: &Packet) {
        let rsps = self.golden.handle(pkt);
        if let Some(log) = self.golden.log.as_mut() {
            self.mem_exp.extend(log.drain(..));
        }
        self.exp_rsp.extend(rsps);
        self.run.packets += 1;
    }

    /// A response frame the RTL sent: it must be the golden hub's next response, bit for bit.
    fn response(&mut self, frame: &[Flit]) -> Result<(), String> {
        let got = decode_any(frame, &limits());
        let Some(want) = self.exp_rsp.pop_front() else {
            return Err(self.err(format!("unexpected response {got:?} ({frame:x?})")));
        };
        if want.encode() != frame {
            let diff = match &got {
                Ok(g) => packet_diff(&want, g),
                Err(e) => format!("undecodable ({e}): {frame:x?}"),
            };
            return Err(self.err(format!("response differs from golden {want:?}: {diff}")));
        }
        self.run.responses.push(want);
        Ok(())
    }

    /// The RTL made line access `got`: it must be the golden hub's next one.
    fn access(&mut self, got: MemAccess) -> Result<(), String> {
        match self.mem_exp.pop_front() {
            Some(want) if same_access(&want, &got) => {
                self.run.accesses += 1;
                Ok(())
            }
            Some(want) => Err(self.err(format!(
                "memory access {}: golden {want:x?}, RTL {got:x?}",
                self.run.accesses
            ))),
            None => Err(self.err(format!(
                "memory access the golden hub did not make: {got:x?}"
            ))),
        }
    }

    /// A memory request beat the memory accepted at cycle `now`: split into lines, performed
    /// on the RTL's memory and checked line by line.
    fn mem_request(&mut self, now: u64) -> Result<(), String> {
        let p = &self.p;
        let s = &self.sim;
        let lines = s.get(p.mem_lines) as usize;
        let we = s.bit(p.mem_we, 0);
        let addr = s.get(p.mem_addr) as u64;
        let w = self.mem_lines;
        let beat: Vec<(u128, u16)> = (0..w)
            .map(|i| {
                (
                    s.get_bits(p.mem_wdata, 128 * i, 128),
                    s.get_bits(p.mem_wstrb, 16 * i, 16) as u16,
                )
            })
            .collect();
        if lines == 0 || lines > w || addr & 0xF != 0 {
            return Err(self.err(format!(
                "memory beat of {lines} lines at {addr:#x} (MemLines {w}, lines_w {})",
                self.lines_w
            )));
        }
        if let Some(i) = (lines..w).find(|&i| beat[i] != (0, 0)) {
            return Err(self.err(format!(
                "memory beat of {lines} lines at {addr:#x}: line {i} past the count is not zero"
            )));
        }
        if we {
            for (i, &(data, strobe)) in beat.iter().take(lines).enumerate() {
                let a = addr + 16 * i as u64;
                self.mem.write_line(a, &data.to_le_bytes(), strobe);
                self.access(MemAccess::Write {
                    addr: a,
                    data,
                    strobe,
                })?;
            }
        } else {
            let mut data = Vec::with_capacity(lines);
            for i in 0..lines {
                let a = addr + 16 * i as u64;
                let mut line = [0u8; 16];
                self.mem.read(a, &mut line);
                data.push(u128::from_le_bytes(line));
                self.access(MemAccess::Read { addr: a })?;
            }
            let (lo, hi) = self.env.latency;
            let lat = if hi > lo {
                self.rng.gen_range(lo..=hi)
            } else {
                lo
            }
            .max(1);
            let t = (now + lat).max(self.reads.back().map_or(0, |(t, _)| *t));
            self.reads.push_back((t, data));
        }
        Ok(())
    }

    /// Everything sent has been handled and every expectation met.
    fn drained(&self) -> bool {
        self.source.is_empty()
            && !self.offering
            && self.reads.is_empty()
            && self.mem_exp.is_empty()
            && self.exp_rsp.is_empty()
            && self.rsp_cur.is_empty()
    }

    /// Runs until drained and then quiet for 32 cycles (no response flit, no memory access),
    /// and checks the counters; fails after `limit` cycles.
    fn run(&mut self, limit: u64) -> Result<(), String> {
        let start = self.sim.cycles();
        let mut quiet = 0;
        while quiet < 32 {
            self.step()?;
            quiet = if self.drained() { quiet + 1 } else { 0 };
            if self.sim.cycles() - start > limit {
                return Err(self.err(format!(
                    "not drained after {limit} cycles: {} packets unsent, {} responses and {} \
                     memory accesses expected, {} read beats in flight, {} response flits held",
                    self.source.len(),
                    self.exp_rsp.len(),
                    self.mem_exp.len(),
                    self.reads.len(),
                    self.rsp_cur.len()
                )));
            }
        }
        self.check_counters()
    }

    /// (TLB hits, TLB misses, [ERR_UNMAPPED, ERR_RANGE, ERR_ALLOC]) as the RTL counts them.
    fn rtl_counters(&self) -> (u64, u64, [u64; 3]) {
        let s = &self.sim;
        let e = |c: usize| s.get_bits(self.p.err, 32 * c, 32) as u64;
        (
            s.get(self.p.tlb_hits) as u64,
            s.get(self.p.tlb_misses) as u64,
            [e(0), e(1), e(2)],
        )
    }

    /// The golden hub's counters, in the order of [`HubBench::rtl_counters`].
    fn golden_counters(&self) -> (u64, u64, [u64; 3]) {
        let st = self.golden.stats();
        let e = |c: ErrorCode| self.golden.errors[c as usize - 1];
        (
            st.tlb.hits,
            st.tlb.misses,
            [
                e(ErrorCode::Unmapped),
                e(ErrorCode::Range),
                e(ErrorCode::Alloc),
            ],
        )
    }

    /// The RTL's counters equal the golden hub's.
    fn check_counters(&self) -> Result<(), String> {
        let (rtl, gold) = (self.rtl_counters(), self.golden_counters());
        ensure(rtl == gold, || {
            self.err(format!(
                "counters (TLB hits, misses, [unmapped, range, alloc]): RTL {rtl:?}, golden {gold:?}"
            ))
        })
    }

    /// The number of distinct local targets a legal packet can carry.
    fn max_k(&self) -> usize {
        self.epp.min(self.max_targets)
    }
}

/// Port number of the hub under test (its experts are `HUB_PORT * epp ..`).
const HUB_PORT: usize = 3;

/// A token dispatched by a test: multimem address, length and target local indices.
#[derive(Clone, Debug)]
struct Token {
    maddr: u64,
    len: u8,
    locals: Vec<u32>,
}

/// Builds legal, pruned request packets for the hub under test.
struct Gen {
    rng: ChaCha8Rng,
    /// IEEE edge-case payload values.
    stim: Stimulus,
    cfg: HubConfig,
    epp: usize,
    max_k: usize,
    tag: u16,
    next_aidx: u64,
    /// Every token dispatched with [`Gen::new_token`].
    tokens: Vec<Token>,
}

impl Gen {
    /// A generator for the hub of `b`.
    fn new(b: &HubBench, seed: u64) -> Self {
        let cfg = Config {
            experts_per_port: b.epp,
            max_targets: b.max_targets,
            hub: b.env.hub.clone(),
            ..Config::default()
        };
        Gen {
            rng: ChaCha8Rng::seed_from_u64(seed),
            stim: Stimulus::new(&cfg, seed ^ 0xda7a),
            cfg: b.env.hub.clone(),
            epp: b.epp,
            max_k: b.max_k(),
            tag: 0,
            next_aidx: 1,
            tokens: Vec::new(),
        }
    }

    /// Row size in bytes.
    fn bsize(&self) -> u64 {
        1 << self.cfg.log2_bsize
    }

    /// The multimem address of row `aidx` at byte offset `off`.
    fn maddr(&self, aidx: u64, off: u64) -> u64 {
        self.cfg.mbase + (aidx << self.cfg.log2_bsize) + off
    }

    /// A fresh algebraic index (never used before by this generator).
    fn fresh_aidx(&mut self) -> u64 {
        let a = self.next_aidx;
        self.next_aidx = (a + 1) % (1 << self.cfg.log2_al_entries);
        a
    }

    /// A random 16-byte aligned offset at which `len` flits fit in the row.
    fn offset(&mut self, len: u8) -> u64 {
        16 * self.rng.gen_range(0..=self.bsize() / 16 - len as u64)
    }

    /// `k` distinct local indices in random order.
    fn locals(&mut self, k: usize) -> Vec<u32> {
        let mut all: Vec<u32> = (0..self.epp as u32).collect();
        all.shuffle(&mut self.rng);
        all.truncate(k.clamp(1, self.max_k));
        all
    }

    /// A request header with a new tag and a random requester port.
    fn header(&mut self, op: Opcode) -> Packet {
        let mut p = Packet::new(op);
        p.tag = self.tag;
        self.tag = (self.tag + 1) & 0xFFF;
        p.src_port = self.rng.gen_range(0..8);
        p
    }

    /// A byte-enable flit: mostly all ones, else random (possibly whole lines off).
    fn be(&mut self) -> u128 {
        match self.rng.gen_range(0..8) {
            0 => self.rng.gen(),
            1 => self.rng.gen::<u128>() & self.rng.gen::<u128>(),
            _ => u128::MAX,
        }
    }

    /// A random element type.
    fn dtype(&mut self) -> DType {
        DType::ALL[self.rng.gen_range(0..3)]
    }

    /// A DYN_ST of a `len`-flit `dtype` payload at `maddr` to the given local targets.
    fn dyn_st(&mut self, maddr: u64, locals: &[u32], len: u8, dtype: DType, be: u128) -> Packet {
        let mut p = self.header(Opcode::DynSt);
        p.maddr = maddr;
        p.targets = locals.iter().map(|&l| self.expert(l)).collect();
        p.len = len;
        p.dtype = dtype;
        p.be = Some(be);
        p.payload = self.stim.payload(len, dtype);
        p
    }

    /// A DYN_LD_REDUCE at `maddr` of the given local targets.
    fn dyn_ld(
        &mut self,
        maddr: u64,
        locals: &[u32],
        len: u8,
        op: (DType, ReduceOp, AccMode),
    ) -> Packet {
        let mut p = self.header(Opcode::DynLdReduce);
        p.stage = Stage::Combine;
        p.maddr = maddr;
        p.targets = locals.iter().map(|&l| self.expert(l)).collect();
        p.len = len;
        (p.dtype, p.rop, p.acc) = op;
        p
    }

    /// A random reduction (type, op, accumulation).
    fn reduction(&mut self) -> (DType, ReduceOp, AccMode) {
        (
            self.dtype(),
            ReduceOp::ALL[self.rng.gen_range(0..3)],
            AccMode::ALL[self.rng.gen_range(0..2)],
        )
    }

    /// The expert ID of local index `l` on the hub under test.
    fn expert(&self, l: u32) -> u16 {
        (HUB_PORT * self.epp) as u16 + l as u16
    }

    /// A DYN_ST of a new token to `k` random targets (random offset, length, type, BE).
    fn new_token(&mut self, k: usize) -> Packet {
        let len = self.rng.gen_range(1..=16);
        self.new_token_len(k, len)
    }

    /// [`Gen::new_token`] of a given length.
    fn new_token_len(&mut self, k: usize, len: u8) -> Packet {
        let aidx = self.fresh_aidx();
        let off = self.offset(len);
        let maddr = self.maddr(aidx, off);
        let locals = self.locals(k);
        let (dt, be) = (self.dtype(), self.be());
        self.tokens.push(Token {
            maddr,
            len,
            locals: locals.clone(),
        });
        self.dyn_st(maddr, &locals, len, dt, be)
    }

    /// A DYN_ST writing token `i` again (same address and targets, new data).
    fn redispatch(&mut self, i: usize) -> Option<Packet> {
        let t = self.tokens.get(i)?.clone();
        let (dt, be) = (self.dtype(), self.be());
        Some(self.dyn_st(t.maddr, &t.locals, t.len, dt, be))
    }

    /// A DYN_LD_REDUCE of token `i`: a random non-empty subset of its targets in random order,
    /// a random length up to the token's, a random reduction.
    fn combine(&mut self, i: usize) -> Option<Packet> {
        let t = self.tokens.get(i)?.clone();
        let mut l = t.locals.clone();
        l.shuffle(&mut self.rng);
        l.truncate(self.rng.gen_range(1..=l.len()));
        let len = self.rng.gen_range(1..=t.len);
        let op = self.reduction();
        Some(self.dyn_ld(t.maddr, &l, len, op))
    }

    /// An identity op (WRITE, READ, MC_ST or MC_LD_REDUCE) of `len` flits at `maddr`.
    fn identity(&mut self, op: Opcode, maddr: u64, len: u8) -> Packet {
        let mut p = self.header(op);
        p.maddr = maddr;
        p.len = len;
        p.route = match op {
            Opcode::Write | Opcode::Read => HUB_PORT as u8,
            _ => self.rng.gen_range(0..16),
        };
        if op.is_ld_reduce() {
            (p.dtype, p.rop, p.acc) = self.reduction();
        } else {
            p.dtype = self.dtype();
        }
        if op.is_store() {
            p.be = Some(self.be());
            p.payload = self.stim.payload(len, p.dtype);
        }
        p
    }

    /// A random scratch address (identity-addressed region) for `len` flits.
    fn scratch(&mut self) -> u64 {
        SCRATCH + 16 * self.rng.gen_range(0..256u64)
    }
}

/// The two hub models.
const HUBS: [&str; 2] = ["hub_m1", "hub_m4"];

/// Runs one hub case: builds the bench and a generator, lets `body` queue packets (and run
/// intermediate phases), runs to the end and checks the counters. Returns the bench.
fn hub_case(
    model: &str,
    seed: u64,
    env: HubEnv,
    body: impl FnOnce(&mut HubBench, &mut Gen) -> Result<(), String>,
) -> Result<HubBench, String> {
    let mut b = HubBench::new(model, seed, env)?;
    let mut g = Gen::new(&b, seed);
    body(&mut b, &mut g)?;
    b.run(LIMIT)?;
    Ok(b)
}

#[test]
fn hub_dyn_st_one_to_max_targets() {
    const TEST: &str = "hub_dyn_st_one_to_max_targets";
    for (i, model) in HUBS.iter().enumerate() {
        let seed = seed_or(0x4100 + i as u64);
        let b = check(
            TEST,
            model,
            seed,
            hub_case(model, seed, HubEnv::stressed(), |b, g| {
                // DYN_ST with 1..=max targets (every target local to this hub, distinct), each a
                // new token: one walk, one AL entry write and len lines per target.
                let kmax = b.max_k();
                let mut total = 0u64;
                for k in 1..=kmax {
                    let p = g.new_token(k);
                    total += k as u64;
                    b.push(p);
                }
                b.run(LIMIT)?;
                let (hits, misses, errs) = b.rtl_counters();
                ensure(misses == total && hits == 0 && errs == [0; 3], || {
                    format!(
                        "after {total} allocations: {hits} hits, {misses} misses, errors {errs:?}"
                    )
                })?;
                ensure(b.golden.stats().allocations == total, || {
                    "allocation count".into()
                })?;
                // The same tokens again: valid entries (TLB hits, or walks of valid entries when
                // evicted), no new allocation.
                for j in (0..g.tokens.len()).rev() {
                    if let Some(p) = g.redispatch(j) {
                        b.push(p);
                    }
                }
                b.run(LIMIT)?;
                ensure(b.golden.stats().allocations == total, || {
                    "a re-dispatch allocated".into()
                })?;
                let want_writes: u64 = g
                    .tokens
                    .iter()
                    .map(|t| 2 * t.locals.len() as u64 * t.len as u64 + t.locals.len() as u64)
                    .sum();
                ensure(b.golden.stats().line_writes == want_writes, || {
                    format!(
                        "{} line writes, {want_writes} expected",
                        b.golden.stats().line_writes
                    )
                })
            }),
        );
        let (hits, _, _) = b.rtl_counters();
        if *model == "hub_m4" {
            // 528 entries fit the 512-entry TLB only partly; most re-dispatches hit.
            assert!(hits > 0, "{model}: no TLB hit on re-dispatch");
        }
        eprintln!(
            "{TEST} {model}: {} packets, {} line accesses, {} cycles",
            b.run.packets,
            b.run.accesses,
            b.sim.cycles()
        );
    }
}

#[test]
fn hub_dyn_ld_reduce_every_dtype_op_and_acc() {
    const TEST: &str = "hub_dyn_ld_reduce_every_dtype_op_and_acc";
    for (i, model) in HUBS.iter().enumerate() {
        let seed = seed_or(0x4200 + i as u64);
        check(
            TEST,
            model,
            seed,
            (|| {
                // Per (type, length) one row per target, each written by its own DYN_ST (full BE),
                // so the targets' rows differ; then load-reduces of subsets in random orders for
                // every op and accumulation mode. Each partial is compared with the golden hub
                // (bit-exact, by the bench) and with a direct reduction of the rows written.
                let mut expected: Vec<Vec<u8>> = Vec::new();
                let b = hub_case(model, seed, HubEnv::stressed(), |b, g| {
                    let k = b.max_k().min(6);
                    for dt in DType::ALL {
                        for len in [16u8, 5, 3, 1] {
                            let aidx = g.fresh_aidx();
                            let off = g.offset(len);
                            let maddr = g.maddr(aidx, off);
                            let locals = g.locals(k);
                            let mut rows = Vec::new();
                            for &l in &locals {
                                let p = g.dyn_st(maddr, &[l], len, dt, u128::MAX);
                                rows.push((l, p.payload.clone()));
                                b.push(p);
                            }
                            for rop in ReduceOp::ALL {
                                for acc in AccMode::ALL {
                                    let mut order = locals.clone();
                                    order.shuffle(&mut g.rng);
                                    order.truncate(g.rng.gen_range(1..=order.len()));
                                    let inputs: Vec<&[u8]> = order
                                        .iter()
                                        .filter_map(|l| {
                                            rows.iter().find(|r| r.0 == *l).map(|r| r.1.as_slice())
                                        })
                                        .collect();
                                    let mut out = vec![0u8; 16 * len as usize];
                                    reduce_lanes(dt, rop, acc, &inputs, &mut out)
                                        .map_err(|e| e.to_string())?;
                                    expected.push(out);
                                    b.push(g.dyn_ld(maddr, &order, len, (dt, rop, acc)));
                                }
                            }
                        }
                    }
                    Ok(())
                })?;
                let got: Vec<&Packet> = b.run.responses.iter().collect();
                ensure(got.len() == expected.len(), || {
                    format!("{} partials, {} load-reduces", got.len(), expected.len())
                })?;
                for (n, (r, want)) in got.iter().zip(&expected).enumerate() {
                    ensure(
                        r.opcode == Opcode::RspPartial && r.ecode == 0 && r.payload == *want,
                        || format!("partial {n}: {r:?} is not the direct reduction {want:x?}"),
                    )?;
                }
                let (hits, _, errs) = b.rtl_counters();
                ensure(hits > 0 && errs == [0; 3], || {
                    format!("hits {hits}, errors {errs:?}")
                })
            })(),
        );
    }
}

#[test]
fn hub_unmapped_combine_is_an_error() {
    const TEST: &str = "hub_unmapped_combine_is_an_error";
    for (i, model) in HUBS.iter().enumerate() {
        let seed = seed_or(0x4300 + i as u64);
        check(
            TEST,
            model,
            seed,
            (|| {
                let mut n_unmapped = 0u64;
                let b = hub_case(model, seed, HubEnv::stressed(), |b, g| {
                    let st = g.new_token(3);
                    b.push(st);
                    let t = g.tokens[0].clone();
                    let other: Vec<u32> = (0..b.epp as u32)
                        .filter(|l| !t.locals.contains(l))
                        .take(2)
                        .collect();
                    // A never-dispatched row: the first target fails.
                    for k in [1, 4] {
                        let aidx = g.fresh_aidx();
                        let locals = g.locals(k);
                        let op = g.reduction();
                        b.push(g.dyn_ld(g.maddr(aidx, 0), &locals, 4, op));
                        n_unmapped += 1;
                    }
                    // Mapped, unmapped, mapped: the hub stops at the second target (no access for
                    // the third), back to back with a good combine and a store.
                    let op = g.reduction();
                    let mixed = [t.locals[0], other[0], t.locals[1]];
                    b.push(g.dyn_ld(t.maddr, &mixed, t.len, op));
                    n_unmapped += 1;
                    let good = g.combine(0).ok_or("no token")?;
                    b.push(good);
                    let mixed = [t.locals[2], t.locals[0], other[1]];
                    b.push(g.dyn_ld(t.maddr, &mixed, t.len, op));
                    n_unmapped += 1;
                    let st = g.redispatch(0).ok_or("no token")?;
                    b.push(st);
                    // An unmapped entry stays unmapped (a Combine never allocates).
                    b.push(g.dyn_ld(t.maddr, &[other[0]], 1, op));
                    n_unmapped += 1;
                    let good = g.combine(0).ok_or("no token")?;
                    b.push(good);
                    Ok(())
                })?;
                let (_, _, errs) = b.rtl_counters();
                ensure(errs == [n_unmapped, 0, 0], || {
                    format!("error counters {errs:?}")
                })?;
                let failed = b
                    .run
                    .responses
                    .iter()
                    .filter(|r| {
                        r.opcode == Opcode::RspPartial && r.ecode == ErrorCode::Unmapped as u8
                    })
                    .count() as u64;
                ensure(failed == n_unmapped, || {
                    format!("{failed} ERR_UNMAPPED partials")
                })?;
                ensure(b.golden.stats().allocations == 3, || {
                    "a Combine allocated".into()
                })
            })(),
        );
    }
}

#[test]
fn hub_range_errors() {
    const TEST: &str = "hub_range_errors";
    for (i, model) in HUBS.iter().enumerate() {
        let seed = seed_or(0x4400 + i as u64);
        check(
            TEST,
            model,
            seed,
            (|| {
                let mut n_range = 0u64;
                let mut env = HubEnv::stressed();
                env.rsp_ready = 0.2; // error responses back up into the header queue
                let b = hub_case(model, seed, env, |b, g| {
                    let bsize = g.bsize();
                    let top = 1u64 << g.cfg.log2_al_entries;
                    let kmax = b.max_k();
                    for len in [1u8, 2, 16] {
                        let bad = [
                            g.cfg.mbase - bsize,
                            g.cfg.mbase - 16,
                            g.maddr(top, 0),
                            g.maddr(top + 5, 16),
                            0xFFFF_FFFF_FFF0,
                            // One flit past the row (only when len > 1 can it start inside).
                            g.maddr(7, bsize - 16 * (len as u64 - 1)),
                        ];
                        let good = [g.maddr(0, 0), g.maddr(top - 1, bsize - 16 * len as u64)];
                        for (j, &maddr) in bad.iter().enumerate() {
                            if j == 5 && len == 1 {
                                continue;
                            }
                            let k = if j % 2 == 0 { kmax } else { 1 + j % kmax };
                            let locals = g.locals(k);
                            let dt = g.dtype();
                            b.push(g.dyn_st(maddr, &locals, len, dt, u128::MAX));
                            n_range += locals.len() as u64;
                            let op = g.reduction();
                            b.push(g.dyn_ld(maddr, &locals, len, op));
                            n_range += 1;
                        }
                        for maddr in good {
                            let locals = g.locals(2);
                            let dt = g.dtype();
                            b.push(g.dyn_st(maddr, &locals, len, dt, u128::MAX));
                            let op = g.reduction();
                            b.push(g.dyn_ld(maddr, &locals, len, op));
                        }
                    }
                    Ok(())
                })?;
                let (_, _, errs) = b.rtl_counters();
                ensure(errs == [0, n_range, 0], || {
                    format!("error counters {errs:?}, {n_range} range errors")
                })?;
                let errors = b
                    .run
                    .responses
                    .iter()
                    .filter(|r| r.ecode == ErrorCode::Range as u8)
                    .count() as u64;
                ensure(errors == n_range, || {
                    format!("{errors} ERR_RANGE responses")
                })
            })(),
        );
    }
}

#[test]
fn hub_allocation_full_is_an_error() {
    const TEST: &str = "hub_allocation_full_is_an_error";
    for (i, model) in HUBS.iter().enumerate() {
        for log2_slots in [0u32, 2] {
            let seed = seed_or(0x4500 + i as u64);
            let case = format!("{model} log2_slots {log2_slots}");
            check(
                TEST,
                &case,
                seed,
                (|| {
                    let slots = 1u64 << log2_slots;
                    let mut env = HubEnv::stressed();
                    env.hub.log2_slots = log2_slots;
                    let (l, m) = (1u32, 2u32);
                    let mut n_alloc = 0u64;
                    let mut rows = Vec::new();
                    let b = hub_case(model, seed, env, |b, g| {
                        let st = |g: &mut Gen, b: &mut HubBench, aidx: u64, locals: &[u32]| {
                            let dt = g.dtype();
                            b.push(g.dyn_st(g.maddr(aidx, 0), locals, 2, dt, u128::MAX));
                        };
                        // Fill expert l's slots, then one more row for l: ERR_ALLOC.
                        for _ in 0..slots {
                            let a = g.fresh_aidx();
                            rows.push(a);
                            st(g, b, a, &[l]);
                        }
                        let a = g.fresh_aidx();
                        st(g, b, a, &[l, m]); // l fails, m allocates
                        let a2 = g.fresh_aidx();
                        st(g, b, a2, &[m, l]); // m allocates (if it has room), l fails
                        n_alloc += 2 + u64::from(slots < 2);
                        // Rows of l that are mapped still work; the failed one stays unmapped.
                        st(g, b, rows[0], &[l]);
                        let op = g.reduction();
                        b.push(g.dyn_ld(g.maddr(rows[0], 0), &[l], 2, op));
                        b.push(g.dyn_ld(g.maddr(a, 0), &[m, l], 2, op));
                        Ok(())
                    })?;
                    let (_, _, errs) = b.rtl_counters();
                    let n_unmapped = 1;
                    ensure(errs == [n_unmapped, 0, n_alloc], || {
                        format!("error counters {errs:?}, expected [{n_unmapped}, 0, {n_alloc}]")
                    })?;
                    ensure(b.golden.counters[l as usize] as u64 == slots, || {
                        format!("counter of expert {l}: {}", b.golden.counters[l as usize])
                    })
                })(),
            );
        }
    }
}

#[test]
fn hub_identity_ops() {
    const TEST: &str = "hub_identity_ops";
    for (i, model) in HUBS.iter().enumerate() {
        let seed = seed_or(0x4600 + i as u64);
        check(
            TEST,
            model,
            seed,
            (|| {
                let mut reads = Vec::new();
                let b = hub_case(model, seed, HubEnv::stressed(), |b, g| {
                    // Random contents in the scratch region, the same in both memories.
                    let fill: Vec<u8> = (0..16 * 272).map(|_| g.rng.gen()).collect();
                    b.preload(SCRATCH, &fill);
                    // WRITE then READ at the same address returns the written data (full BE).
                    for len in [1u8, 3, 4, 5, 16] {
                        let a = g.scratch();
                        let mut w = g.identity(Opcode::Write, a, len);
                        w.be = Some(u128::MAX);
                        reads.push((reads.len(), w.payload.clone()));
                        b.push(w);
                        b.push(g.identity(Opcode::Read, a, len));
                    }
                    // Every identity op, random lengths, addresses, BE, reductions.
                    for _ in 0..120 {
                        let op = [
                            Opcode::Write,
                            Opcode::Read,
                            Opcode::McSt,
                            Opcode::McLdReduce,
                        ][g.rng.gen_range(0..4)];
                        let len = g.rng.gen_range(1..=16);
                        let a = g.scratch();
                        b.push(g.identity(op, a, len));
                    }
                    Ok(())
                })?;
                for (n, data) in &reads {
                    let r = b.run.responses.get(*n).ok_or("missing RSP_READ")?;
                    ensure(r.opcode == Opcode::RspRead && r.payload == *data, || {
                        format!("READ after WRITE {n}: {r:?}")
                    })?;
                }
                let (hits, misses, errs) = b.rtl_counters();
                ensure(hits == 0 && misses == 0 && errs == [0; 3], || {
                    "identity ops touched the TLB or counted an error".into()
                })
            })(),
        );
    }
}

#[test]
fn hub_tlb_pressure_long_latency() {
    const TEST: &str = "hub_tlb_pressure_long_latency";
    for (i, model) in HUBS.iter().enumerate() {
        let seed = seed_or(0x4700 + i as u64);
        let b = check(
            TEST,
            model,
            seed,
            (|| {
                let env = HubEnv {
                    latency: (30, 60),
                    mem_ready: 0.8,
                    rsp_ready: 0.7,
                    inject: 1.0,
                    ..HubEnv::line_rate()
                };
                let b = hub_case(model, seed, env, |b, g| {
                    // More (expert, row) keys than TLB entries: dispatch, combine every token in
                    // another order, then mixed re-dispatches and combines.
                    let k = b.max_k();
                    let n = (b.tlb_entries / k + 4).max(12);
                    for _ in 0..n {
                        let p = g.new_token_len(k, 1);
                        b.push(p);
                    }
                    let mut order: Vec<usize> = (0..n).collect();
                    order.shuffle(&mut g.rng);
                    for &j in &order {
                        let mut t = g.tokens[j].clone();
                        t.locals.shuffle(&mut g.rng);
                        let op = g.reduction();
                        b.push(g.dyn_ld(t.maddr, &t.locals, 1, op));
                    }
                    for _ in 0..n {
                        let j = g.rng.gen_range(0..n);
                        let p = if g.rng.gen_bool(0.5) {
                            g.redispatch(j)
                        } else {
                            g.combine(j)
                        };
                        b.push(p.ok_or("no token")?);
                    }
                    Ok(())
                })?;
                let st = b.golden.stats();
                ensure(
                    st.tlb.evictions > 0
                        && st.walks > st.allocations
                        && st.tlb.misses > st.allocations,
                    || format!("no TLB pressure: {st:?}"),
                )?;
                Ok(b)
            })(),
        );
        let st = b.golden.stats();
        eprintln!(
            "{TEST} {model}: {} cycles, TLB {} hits / {} misses / {} evictions, {} walks",
            b.sim.cycles(),
            st.tlb.hits,
            st.tlb.misses,
            st.tlb.evictions,
            st.walks
        );
    }
}

/// A random mix of every operation under random backpressure and latency.
fn hub_random(model: &str, seed: u64, packets: usize) -> Result<HubBench, String> {
    let mut r = ChaCha8Rng::seed_from_u64(seed ^ 0xe4);
    let env = HubEnv {
        inject: r.gen_range(0.3..=1.0),
        rsp_ready: r.gen_range(0.3..=1.0),
        mem_ready: r.gen_range(0.3..=1.0),
        latency: (1, r.gen_range(1..=60)),
        ..HubEnv::line_rate()
    };
    hub_case(model, seed, env, |b, g| {
        // Scratch contents, and a few AL entries mapped by someone else (valid in memory,
        // never allocated by this hub) for rows above the generator's.
        let fill: Vec<u8> = (0..16 * 272).map(|_| g.rng.gen()).collect();
        b.preload(SCRATCH, &fill);
        let high = (1u64 << g.cfg.log2_al_entries) - 8;
        for j in 0..8u64 {
            let aidx = high + j;
            let k = g.rng.gen_range(1..=4);
            let locals = g.locals(k);
            for &l in &locals {
                let lidx = g.rng.gen_range(100..1u32 << g.cfg.log2_slots);
                let ea = b.golden.al_entry_addr(l, aidx as u32);
                b.preload(ea, &(lidx | 0x8000_0000).to_le_bytes());
            }
            g.tokens.push(Token {
                maddr: g.maddr(aidx, 0),
                len: 16,
                locals,
            });
        }
        let kmax = b.max_k();
        for _ in 0..packets {
            let j = g.rng.gen_range(0..g.tokens.len());
            let p = match g.rng.gen_range(0..20) {
                0..=5 => {
                    let k = g.rng.gen_range(1..=kmax);
                    g.new_token(k)
                }
                6..=7 => g.redispatch(j).ok_or("no token")?,
                8..=12 => g.combine(j).ok_or("no token")?,
                13 => {
                    // Unmapped or range-failing combine, or a store out of range.
                    let k = g.rng.gen_range(1..=kmax);
                    let locals = g.locals(k);
                    let op = g.reduction();
                    let below = high - 1 - g.rng.gen_range(0..100);
                    let maddr = match g.rng.gen_range(0..3) {
                        0 => g.maddr(below, 0),
                        1 => g.cfg.mbase - 16,
                        _ => g.maddr(1 << g.cfg.log2_al_entries, 0),
                    };
                    if g.rng.gen_bool(0.7) {
                        g.dyn_ld(maddr, &locals, 2, op)
                    } else {
                        let dt = g.dtype();
                        g.dyn_st(maddr, &locals, 2, dt, u128::MAX)
                    }
                }
                n => {
                    let op = [
                        Opcode::Write,
                        Opcode::Read,
                        Opcode::McSt,
                        Opcode::McLdReduce,
                    ][n as usize % 4];
                    let len = g.rng.gen_range(1..=16);
                    let a = g.scratch();
                    g.identity(op, a, len)
                }
            };
            b.push(p);
        }
        Ok(())
    })
}

#[test]
fn hub_random_mix_matches_golden() {
    const TEST: &str = "hub_random_mix_matches_golden";
    for (i, model) in HUBS.iter().enumerate() {
        for seed in seeds(0x4800 + 0x100 * i as u64, 8) {
            let b = check(TEST, model, seed, hub_random(model, seed, 400));
            let st = b.golden.stats();
            assert!(
                b.run.packets == 400
                    && st.tlb.hits > 0
                    && st.walks > 0
                    && !b.run.responses.is_empty(),
                "{model} seed {seed:#x}: too little exercised ({st:?})"
            );
            eprintln!(
                "{TEST} {model} seed {seed:#x}: {} cycles, {} responses, {} line accesses",
                b.sim.cycles(),
                b.run.responses.len(),
                b.run.accesses
            );
        }
    }
}

#[test]
fn hub_m4_dyn_st_line_rate() {
    const TEST: &str = "hub_m4_dyn_st_line_rate";
    let seed = seed_or(0x4900);
    let n = 200u64;
    let b = check(
        TEST,
        "hub_m4",
        seed,
        hub_case("hub_m4", seed, HubEnv::line_rate(), |b, g| {
            // One target each (every one a TLB miss with an allocation), 16 payload flits: 19 flits.
            for _ in 0..n {
                let p = g.new_token_len(1, 16);
                ensure(p.wire_flits() == 19, || "not a 19-flit packet".into())?;
                b.push(p);
            }
            Ok(())
        }),
    );
    let span = b.run.last_flit + 1 - b.run.first_flit.unwrap_or(0);
    let rate = b.run.flits as f64 / span as f64;
    eprintln!(
        "{TEST}: {} flits of {n} DYN_ST packets accepted in {span} cycles: {rate:.4} flit/cycle",
        b.run.flits
    );
    assert_eq!(b.run.flits, 19 * n, "flits accepted");
    assert_eq!(b.golden.stats().allocations, n, "allocations");
    assert!(
        rate >= 0.95,
        "hub_m4 accepted {rate:.4} flit/cycle, at least 0.95 expected"
    );
}

// =================================================================================================
// RAM-backed FIFO
// =================================================================================================

/// The one-queue `dysharp_fifo_bank` benches.
const FIFOS: [&str; 3] = ["fifo_bank", "fifo_bank_xp", "fifo_bank_ft"];

/// A FIFO word of up to 256 bits: bits 0..128 and 128..256.
type Word = (u128, u128);

/// The ports of a one-queue `dysharp_fifo_bank` model.
struct FifoPorts {
    rst: Port,
    in_valid: Port,
    in_ready: Port,
    in_data: Port,
    out_valid: Port,
    out_ready: Port,
    out_data: Port,
    usage: Port,
}

/// A one-queue `dysharp_fifo_bank` model and the reference queue it is compared with every cycle.
struct FifoBench {
    sim: Sim,
    p: FifoPorts,
    width: usize,
    depth: usize,
    /// Cycles from a push to the first cycle its word can be at the output: 2 through the RAM,
    /// 1 for a word that falls through.
    latency: u64,
    /// FallThrough: a word pushed while the FIFO holds nothing else after this cycle's pop skips
    /// the RAM (latency 1).
    fall_through: bool,
    /// The words held, oldest first, with the first cycle each can be at the output.
    held: VecDeque<(Word, u64)>,
    /// The word offered on the input; held until accepted (the producer's obligation).
    offer: Option<Word>,
    /// Cycles since the last reset.
    now: u64,
    pushes: u64,
    pops: u64,
    /// Cycles with the FIFO full, and with the output valid but not accepted.
    full_cycles: u64,
    stall_cycles: u64,
    /// Times the FIFO went from full to empty (`was_full`: full since it was last empty).
    sweeps: u64,
    was_full: bool,
}

/// Bits `[lsb, lsb + w)` of a word as an integer mask of `w` ones (`w <= 128`).
fn ones(w: usize) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

impl FifoBench {
    /// Instantiates `model` and resets it.
    fn new(model: &str, seed: u64) -> Result<Self, String> {
        let sim = open(model, seed)?;
        let width = sim.param_or("Width", 8);
        let depth = sim.param_or("Depth", 2);
        let fall_through = sim.param_or("FallThrough", 0) != 0;
        if width > 256 {
            return Err(format!(
                "bench expects Width <= 256 (model {model}: {width})"
            ));
        }
        let p = FifoPorts {
            rst: inp(&sim, "rst_ni")?,
            in_valid: inp(&sim, "in_valid_i")?,
            in_ready: outp(&sim, "in_ready_o")?,
            in_data: inp(&sim, "in_data_i")?,
            out_valid: outp(&sim, "out_valid_o")?,
            out_ready: inp(&sim, "out_ready_i")?,
            out_data: outp(&sim, "out_data_o")?,
            usage: outp(&sim, "usage_o")?,
        };
        let mut b = FifoBench {
            sim,
            p,
            width,
            depth,
            latency: if fall_through { 1 } else { 2 },
            fall_through,
            held: VecDeque::new(),
            offer: None,
            now: 0,
            pushes: 0,
            pops: 0,
            full_cycles: 0,
            stall_cycles: 0,
            sweeps: 0,
            was_full: false,
        };
        b.reset()?;
        Ok(b)
    }

    /// Holds reset for three cycles (with random inputs: reset must win); the reference empties.
    fn reset(&mut self) -> Result<(), String> {
        self.sim.set(self.p.rst, 0);
        for i in 0..3u128 {
            self.sim.set(self.p.in_valid, i & 1);
            self.sim.set(self.p.out_ready, (i >> 1) & 1);
            self.sim.cycle().map_err(|e| e.to_string())?;
        }
        self.sim.set(self.p.rst, 1);
        self.held.clear();
        self.offer = None;
        self.now = 0;
        self.was_full = false;
        Ok(())
    }

    /// A random word of `width` bits.
    fn word(&self, rng: &mut ChaCha8Rng) -> Word {
        let lo = rng.gen::<u128>() & ones(self.width.min(128));
        let hi = rng.gen::<u128>() & ones(self.width.saturating_sub(128));
        (lo, if self.width > 128 { hi } else { 0 })
    }

    fn set_word(&mut self, w: Word) {
        let lo_w = self.width.min(128);
        self.sim.set_bits(self.p.in_data, 0, lo_w, w.0);
        if self.width > 128 {
            self.sim
                .set_bits(self.p.in_data, 128, self.width - 128, w.1);
        }
    }

    fn get_word(&self) -> Word {
        let lo = self.sim.get_bits(self.p.out_data, 0, self.width.min(128));
        let hi = if self.width > 128 {
            self.sim.get_bits(self.p.out_data, 128, self.width - 128)
        } else {
            0
        };
        (lo, hi)
    }

    /// One cycle. Offers `new` on the input unless an earlier word is still waiting (that one
    /// stays), drives `out_ready`, and compares what the FIFO shows before the clock edge with
    /// the reference. Returns (pushed, popped).
    fn step(&mut self, new: Option<Word>, out_ready: bool) -> Result<(bool, bool), String> {
        let cyc = self.now;
        if self.offer.is_none() {
            self.offer = new;
        }
        let offer = self.offer;
        self.sim.set(self.p.in_valid, u128::from(offer.is_some()));
        if let Some(w) = offer {
            self.set_word(w);
        } else {
            // Data with valid low is don't-care: drive garbage.
            self.set_word((
                (cyc as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                cyc as u128,
            ));
        }
        self.sim.set(self.p.out_ready, u128::from(out_ready));
        self.sim.cycle().map_err(|e| format!("cycle {cyc}: {e}"))?;
        let usage = self.sim.get(self.p.usage) as usize;
        let in_ready = self.sim.bit(self.p.in_ready, 0);
        let out_valid = self.sim.bit(self.p.out_valid, 0);
        let n = self.held.len();
        ensure(usage == n, || {
            format!("cycle {cyc}: usage_o {usage}, {n} words held")
        })?;
        ensure(in_ready == (n != self.depth), || {
            format!(
                "cycle {cyc}: in_ready_o {in_ready} with {n} of {} words held",
                self.depth
            )
        })?;
        let want_valid = self.held.front().is_some_and(|&(_, t)| t <= cyc);
        ensure(out_valid == want_valid, || {
            format!(
                "cycle {cyc}: out_valid_o {out_valid}, expected {want_valid} (head due in cycle {:?})",
                self.held.front().map(|&(_, t)| t)
            )
        })?;
        if out_valid {
            let got = self.get_word();
            let want = self.held.front().map(|&(w, _)| w).unwrap_or_default();
            ensure(got == want, || {
                format!(
                    "cycle {cyc}: out_data_o {:#x}_{:032x}, expected {:#x}_{:032x} (word {} out)",
                    got.1, got.0, want.1, want.0, self.pops
                )
            })?;
        }
        let popped = out_valid && out_ready;
        let pushed = offer.is_some() && in_ready;
        if popped {
            self.held.pop_front();
            self.pops += 1;
        }
        if let (true, Some(w)) = (pushed, offer) {
            let through = self.fall_through && self.held.is_empty();
            let lat = if through { 1 } else { 2 };
            self.held.push_back((w, cyc + lat));
            self.offer = None;
            self.pushes += 1;
        }
        self.full_cycles += u64::from(n == self.depth);
        self.stall_cycles += u64::from(out_valid && !out_ready);
        self.was_full |= n == self.depth;
        if n == 0 && self.was_full {
            self.sweeps += 1;
            self.was_full = false;
        }
        self.now += 1;
        Ok((pushed, popped))
    }
}

/// Random traffic on `model`: phases of random length with their own input and output rates
/// (from never to always), bursts of output stalls, and resets with words held. Returns the
/// bench for its counters.
fn fifo_random(model: &str, seed: u64, cycles: u64) -> Result<FifoBench, String> {
    let mut b = FifoBench::new(model, seed)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rates = [0.0, 0.1, 0.5, 0.9, 1.0];
    let mut done = 0u64;
    while done < cycles {
        let len = rng.gen_range(10..(8 * b.depth as u64).max(40));
        let p_in = rates[rng.gen_range(0..rates.len())];
        let p_out = rates[rng.gen_range(0..rates.len())];
        // Some phases stall the output in bursts instead of cycle by cycle.
        let burst = rng.gen_bool(0.25);
        let mut stall = 0u64;
        for _ in 0..len {
            let new = rng.gen_bool(p_in).then(|| b.word(&mut rng));
            let ready = if burst {
                if stall == 0 && rng.gen_bool(0.2) {
                    stall = rng.gen_range(1..(2 * b.depth as u64 + 2));
                }
                stall = stall.saturating_sub(1);
                stall == 0
            } else {
                rng.gen_bool(p_out)
            };
            b.step(new, ready)?;
        }
        done += len;
        if rng.gen_bool(0.03) {
            b.reset()?;
        }
    }
    Ok(b)
}

#[test]
fn fifo_bank_random_traffic_matches_reference() {
    const TEST: &str = "fifo_bank_random_traffic_matches_reference";
    for (i, model) in FIFOS.iter().enumerate() {
        for seed in seeds(0xF100 + 0x100 * i as u64, 6) {
            let b = check(TEST, model, seed, fifo_random(model, seed, 40_000));
            eprintln!(
                "{TEST} {model} seed {seed:#x}: {} pushes, {} pops, {} cycles full, {} stalled, \
                 {} times from full to empty",
                b.pushes, b.pops, b.full_cycles, b.stall_cycles, b.sweeps
            );
            assert!(
                b.pops > 2_000 && b.full_cycles > 100 && b.stall_cycles > 1_000 && b.sweeps >= 2,
                "{model} seed {seed:#x}: the traffic exercised too little"
            );
        }
    }
}

/// Both sides always on: from empty, the first word is out after the latency and then one word
/// moves every cycle; from full, one word every cycle from the first cycle on; the drain empties
/// one word a cycle. Every cycle is also checked against the reference.
fn fifo_throughput(model: &str, seed: u64) -> Result<(), String> {
    let mut b = FifoBench::new(model, seed)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let d = b.depth as u64;
    let lat = b.latency;
    // From empty.
    let n = 4 * d + 50;
    for c in 0..n {
        let w = b.word(&mut rng);
        let (pushed, popped) = b.step(Some(w), true)?;
        ensure(pushed, || {
            format!("{model}: no push in cycle {c} from empty")
        })?;
        ensure(popped == (c >= lat), || {
            format!("{model}: cycle {c} from empty: popped {popped} (latency {lat})")
        })?;
    }
    // Fill up with the output stalled.
    while b.held.len() < b.depth {
        let w = b.word(&mut rng);
        b.step(Some(w), false)?;
    }
    let w = b.word(&mut rng);
    let (pushed, _) = b.step(Some(w), false)?;
    ensure(!pushed, || format!("{model}: pushed into a full FIFO"))?;
    // From full: the waiting word goes in in the cycle after the first pop, then one a cycle.
    for c in 0..3 * d + 10 {
        let w = b.word(&mut rng);
        let (pushed, popped) = b.step(Some(w), true)?;
        ensure(popped, || format!("{model}: no pop in cycle {c} from full"))?;
        ensure(pushed == (c > 0), || {
            format!("{model}: cycle {c} from full: pushed {pushed}")
        })?;
    }
    // Drain.
    let left = b.held.len();
    for c in 0..left {
        let (_, popped) = b.step(None, true)?;
        ensure(popped, || {
            format!("{model}: no pop in drain cycle {c} of {left}")
        })?;
    }
    let (_, popped) = b.step(None, true)?;
    ensure(!popped && b.held.is_empty(), || {
        format!("{model}: not empty after the drain")
    })?;
    // One word into the empty FIFO: out exactly after the latency, then gone.
    let w = b.word(&mut rng);
    b.step(Some(w), true)?;
    for c in 1..=lat {
        let (_, popped) = b.step(None, true)?;
        ensure(popped == (c == lat), || {
            format!("{model}: single word: popped {popped} {c} cycles after its push")
        })?;
    }
    Ok(())
}

#[test]
fn fifo_bank_full_throughput_from_empty_and_full() {
    const TEST: &str = "fifo_bank_full_throughput_from_empty_and_full";
    for (i, model) in FIFOS.iter().enumerate() {
        let seed = seed_or(0xF200 + i as u64);
        check(TEST, model, seed, fifo_throughput(model, seed));
    }
}

// =================================================================================================
// Crosspoint bank
// =================================================================================================

/// The ports of the `fifo_bank_q4` harness: a `dysharp_fifo_bank` of several queues and, beside
/// it, a one-queue bank per queue (`ref_*`) on the same inputs.
struct BankPorts {
    rst: Port,
    in_valid: Port,
    in_data: Port,
    in_last: Port,
    out_ready: Port,
    /// (bank, reference) pairs compared every cycle.
    pairs: Vec<(&'static str, Port, Port)>,
}

/// Random traffic into every queue of the bank and its reference FIFOs: offers held until taken
/// (the producer's obligation), the consumer's ready random per queue with phases of long stalls
/// (queues fill up) and of always-ready (queues drain), a reset now and then. Every cycle every
/// output of the bank must equal the reference's. Returns (words pushed, cycles some queue was
/// full, resets).
fn fifo_bank_q4_random(seed: u64, cycles: u64) -> Result<(u64, u64, u64), String> {
    let mut sim = open("fifo_bank_q4", seed)?;
    let n = sim.param_or("NumQ", 4);
    let pair = |name: &'static str| -> Result<(&'static str, Port, Port), String> {
        Ok((name, outp(&sim, name)?, outp(&sim, &format!("ref_{name}"))?))
    };
    let pairs = vec![
        pair("in_ready_o")?,
        pair("out_valid_o")?,
        pair("out_data_o")?,
        pair("out_last_o")?,
        pair("usage_o")?,
    ];
    let p = BankPorts {
        rst: inp(&sim, "rst_ni")?,
        in_valid: inp(&sim, "in_valid_i")?,
        in_data: inp(&sim, "in_data_i")?,
        in_last: inp(&sim, "in_last_i")?,
        out_ready: inp(&sim, "out_ready_i")?,
        pairs,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut offer: Vec<Option<(u128, bool)>> = vec![None; n];
    let (mut pushed, mut full_cycles, mut resets) = (0u64, 0u64, 0u64);
    let mut in_reset = 3u64;
    for cycle in 0..cycles {
        if cycle > 0 && rng.gen_ratio(1, 5_000) {
            in_reset = 1 + rng.gen_range(0..3);
            resets += 1;
        }
        // A phase of 256 cycles: the ready rate of the consumer and the offer rate of producers.
        let phase = (cycle / 256) % 3;
        let ready_rate = [0.05, 0.5, 1.0][phase as usize];
        sim.set(p.rst, u128::from(in_reset == 0));
        for (q, o) in offer.iter_mut().enumerate() {
            if o.is_none() && rng.gen_bool(0.6) {
                *o = Some((rng.gen::<u128>(), rng.gen_bool(0.3)));
            }
            let (v, d, l) = match o {
                Some((d, l)) => (1, *d, u128::from(*l)),
                None => (0, 0, 0),
            };
            sim.set_bits(p.in_valid, q, 1, v);
            sim.set_bits(p.in_data, 128 * q, 128, d);
            sim.set_bits(p.in_last, q, 1, l);
            sim.set_bits(p.out_ready, q, 1, u128::from(rng.gen_bool(ready_rate)));
        }
        sim.cycle().map_err(|e| format!("cycle {cycle}: {e}"))?;
        let valid = sim.get(p.pairs[1].2);
        // Outputs are read before the cycle's clock edge: in the first cycle of a reset they
        // still show the state before it (at cycle 0 the simulator's random initial state).
        let compare = if in_reset > 0 {
            &p.pairs[..0]
        } else {
            &p.pairs[..]
        };
        for (name, bank, reference) in compare {
            // Data only where it is valid (the RAMs' read registers start random).
            let per_q = match *name {
                "out_data_o" => 128,
                "out_last_o" => 1,
                _ => 0,
            };
            if per_q > 0 {
                for q in (0..n).filter(|q| (valid >> q) & 1 == 1) {
                    let a = sim.get_bits(*bank, per_q * q, per_q);
                    let b = sim.get_bits(*reference, per_q * q, per_q);
                    ensure(a == b, || {
                        format!(
                            "cycle {cycle}: {name} of queue {q}: bank {a:#x}, \
                             one-queue bank {b:#x}"
                        )
                    })?;
                }
                continue;
            }
            let (a, b) = (sim.get(*bank), sim.get(*reference));
            ensure(a == b, || {
                format!("cycle {cycle}: {name} of the bank {a:#x}, of one-queue bank {b:#x}")
            })?;
        }
        let ready = sim.get(p.pairs[0].1);
        for (q, o) in offer.iter_mut().enumerate() {
            if in_reset > 0 {
                *o = None;
            } else if o.is_some() && (ready >> q) & 1 == 1 {
                *o = None;
                pushed += 1;
            }
        }
        if in_reset == 0 && ready != (1u128 << n) - 1 {
            full_cycles += 1;
        }
        in_reset = in_reset.saturating_sub(1);
    }
    Ok((pushed, full_cycles, resets))
}

#[test]
fn fifo_bank_queues_are_independent() {
    const TEST: &str = "fifo_bank_queues_are_independent";
    for seed in seeds(0xB400, 4) {
        let (pushed, full, resets) = check(
            TEST,
            "fifo_bank_q4",
            seed,
            fifo_bank_q4_random(seed, 30_000),
        );
        eprintln!(
            "{TEST} seed {seed:#x}: {pushed} words pushed, {full} cycles with a queue full, \
             {resets} resets"
        );
        assert!(
            pushed > 20_000 && full > 1_000,
            "seed {seed:#x}: the traffic exercised too little"
        );
    }
}
