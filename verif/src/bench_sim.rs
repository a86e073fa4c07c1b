//! How fast a model simulates, and where the time goes (`dysharp bench-sim`).
//!
//! One stimulus, driven three ways on the same model with the same seed:
//! 1. the top-level bench ([`Bench`]) with the full scoreboard, random legal
//!    traffic of every op at line rate, recording the model's input words of
//!    every cycle; and the same bench without its scoreboard (the events
//!    dropped, nothing checked: [`BenchConfig::check`]), the bench's own cost;
//! 2. a Rust loop that feeds the recorded words back, one FFI call per cycle
//!    and nothing else (the bench's and scoreboard's cost removed);
//! 3. the model's own C++ loop over the recorded words ([`Sim::replay`]: one
//!    call per part of the run), the floor for this model on this machine.
//!
//! Replays 2 and 3 must end with the outputs of run 1 (the model is
//! deterministic for a seed), which checks that the recording is complete.
//!
//! The ways take turns, a part of the cycles each ([`measure_once`]), so that a machine whose
//! speed drifts weighs on all of them alike and their ratios are stable where the speeds are not.
//! Before the timed parts every way runs an untimed warm-up (`dysharp bench-sim --warmup`, 2,000
//! cycles by default): the speeds are those of a long run (a regression's), without what a run
//! pays once when it starts, the bench more than the replays (its memories' first pages, the
//! allocators' first blocks; on this VM one step of the bench has taken up to 8.7 ms then, over
//! 400 times a step's usual time; docs/perf.md).
//!
//! The bench runs with the scoreboard inline (between the cycles, one core), where the machine
//! has a core more than the model's threads (two cores for a single-threaded model, three for a
//! `_mt` one) with the scoreboard on a thread of its own ([`BenchConfig::check_thread`], as
//! `dysharp replay --engine rtl` runs it), and without the scoreboard. The checked runs must
//! check the same packets, and every run must end with the same outputs (the scoreboard does
//! not steer the bench). The first figure is the threaded one where it ran.

use crate::sim::{ModelInfo, Profile, Sim};
use crate::stimulus::Stimulus;
use crate::tb::{Bench, BenchConfig, TbError};
use dysharp_sim::config::Config;
use dysharp_sim::packet::Flit;
use serde::Serialize;
use std::sync::mpsc;
use std::time::Instant;

/// The measured speeds of one model: with `repeat` runs, each speed is the median of the runs'
/// (a VM's speed drifts between runs; `runs` has every one).
#[derive(Clone, Debug, Serialize)]
pub struct BenchSimReport {
    /// Model name.
    pub model: String,
    /// How the model's C++ was compiled (with profile feedback or without).
    pub profile: Profile,
    /// Cycles timed, after the warm-up.
    pub cycles: u64,
    /// Cycles every way ran before the timed ones, untimed (after reset; the replays also run
    /// the reset cycles).
    pub warmup_cycles: u64,
    /// Packets the scoreboard checked in run 1, the warm-up's too (the same in every repetition).
    pub packets_checked: u64,
    /// Run 1: the Rust bench with the full scoreboard (on its own thread if `check_thread`).
    pub rust_cycles_per_s: f64,
    /// Run 1 with the scoreboard inline, between the cycles (one core).
    pub rust_inline_cycles_per_s: f64,
    /// Run 1 without the scoreboard: the bench alone, nothing checked (its GPU memories' page
    /// faults on another thread if `check_thread`).
    pub rust_unchecked_cycles_per_s: f64,
    /// Whether `rust_cycles_per_s` had the scoreboard on a thread of its own (the machine has
    /// a core more than the model's threads).
    pub check_thread: bool,
    /// Run 2: a Rust loop over the recorded inputs, one FFI call per cycle.
    pub rust_bare_cycles_per_s: f64,
    /// Run 3: the model's C++ loop over the recorded inputs.
    pub cpp_cycles_per_s: f64,
    /// `rust_cycles_per_s / cpp_cycles_per_s` (of the medians).
    pub ratio: f64,
    /// `rust_bare_cycles_per_s / cpp_cycles_per_s`: the cost of the FFI and the
    /// per-cycle word copies alone.
    pub bare_ratio: f64,
    /// The machine's 1-minute load average when the measurement started (`None`
    /// where `/proc/loadavg` cannot be read).
    pub load_average: Option<f64>,
    /// How many times the whole measurement ran (`--repeat`).
    pub repeat: usize,
    /// Every repetition's speeds, in the order they ran.
    pub runs: Vec<BenchSimRun>,
}

/// The speeds of one repetition, in cycles per second.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BenchSimRun {
    /// The bench with the full scoreboard (on its own thread if `check_thread`).
    pub rust_cycles_per_s: f64,
    /// The bench with the scoreboard inline.
    pub rust_inline_cycles_per_s: f64,
    /// The bench without its scoreboard.
    pub rust_unchecked_cycles_per_s: f64,
    /// The Rust loop over the recorded inputs.
    pub rust_bare_cycles_per_s: f64,
    /// The C++ loop over the recorded inputs.
    pub cpp_cycles_per_s: f64,
    /// `rust_cycles_per_s / cpp_cycles_per_s` of this repetition.
    pub ratio: f64,
}

/// The median of `v` (the mean of the middle two for an even count); `v` is not empty.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Runs the three measurements on `model` (a `dysharp_top` model) for `cycles` timed cycles of
/// traffic after `warmup` untimed ones, `repeat` times (at least once), and reports the median
/// of each speed.
pub fn bench_sim(
    model: &str,
    cycles: u64,
    warmup: u64,
    seed: u64,
    repeat: usize,
) -> Result<BenchSimReport, TbError> {
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok());
    let mut runs = Vec::new();
    let mut first: Option<(u64, bool)> = None;
    for _ in 0..repeat.max(1) {
        let (run, packets, check_thread) = measure_once(model, cycles, warmup, seed)?;
        match first {
            None => first = Some((packets, check_thread)),
            Some((p, _)) if p != packets => {
                return Err(TbError::Mismatch {
                    cycle: warmup + cycles,
                    what: format!(
                        "a repetition checked {packets} packets, the first {p}: the bench is \
                         not deterministic for its seed"
                    ),
                })
            }
            Some(_) => {}
        }
        runs.push(run);
    }
    let (packets_checked, check_thread) = first.expect("at least one run");
    let of = |f: fn(&BenchSimRun) -> f64| median(runs.iter().map(f).collect());
    let rust = of(|r| r.rust_cycles_per_s);
    let bare = of(|r| r.rust_bare_cycles_per_s);
    let cpp = of(|r| r.cpp_cycles_per_s);
    Ok(BenchSimReport {
        model: model.into(),
        profile: ModelInfo::find(model).map_or(Profile::None, |m| m.profile),
        cycles,
        warmup_cycles: warmup,
        packets_checked,
        rust_cycles_per_s: rust,
        rust_inline_cycles_per_s: of(|r| r.rust_inline_cycles_per_s),
        rust_unchecked_cycles_per_s: of(|r| r.rust_unchecked_cycles_per_s),
        check_thread,
        rust_bare_cycles_per_s: bare,
        cpp_cycles_per_s: cpp,
        ratio: rust / cpp,
        bare_ratio: bare / cpp,
        load_average,
        repeat: runs.len(),
        runs,
    })
}

/// Packets drawn and encoded ahead of use, [`AHEAD`] at a time, and handed out one by one in the
/// order drawn, so the bench queues the same frames in the same cycles as it would drawing each
/// when needed. Where the bench has a second core (the scoreboard's thread), the batches are drawn
/// on a thread of their own, two ahead, and the generator's work leaves the simulating thread;
/// otherwise they are drawn on it, a batch at a time (its code and state then come into the
/// caches once per batch rather than in nearly every cycle, between the model's evaluations).
enum StimulusAhead {
    /// Drawn on the simulating thread.
    Inline {
        st: Box<Stimulus>,
        ahead: std::vec::IntoIter<(usize, Vec<Flit>)>,
    },
    /// Drawn on a thread of its own (it ends when the receiver is dropped), in flat batches.
    Thread {
        batches: mpsc::Receiver<FlatBatch>,
        /// The batch being handed out, and its next frame and flit.
        cur: FlatBatch,
        frame: usize,
        flit: usize,
    },
}

/// A batch drawn on the stimulus thread: every frame's flits in one buffer, and each frame's
/// (source port, flit count), in order. The simulating thread copies each frame out into memory
/// of its own, which it frees itself once the frame is sent: a frame made on the stimulus thread
/// and freed on the simulating one cost that thread a free across cores per packet (`top_p8`
/// bench without its scoreboard: 0.896 of the C++ loop's speed with such frames, 0.912 with the
/// frames never freed; docs/perf.md).
#[derive(Default)]
struct FlatBatch {
    flits: Vec<Flit>,
    frames: Vec<(usize, usize)>,
}

/// Packets per batch of [`StimulusAhead`].
const AHEAD: usize = 256;

/// The next [`AHEAD`] packets of `st`: (source port, encoded frame).
fn draw_batch(st: &mut Stimulus) -> Vec<(usize, Vec<Flit>)> {
    (0..AHEAD)
        .map(|_| {
            let (p, pkt) = st.any_legal();
            (p, pkt.encode())
        })
        .collect()
}

/// [`draw_batch`] as a [`FlatBatch`].
fn draw_flat(st: &mut Stimulus) -> FlatBatch {
    let mut b = FlatBatch::default();
    for (p, frame) in draw_batch(st) {
        b.frames.push((p, frame.len()));
        b.flits.extend_from_slice(&frame);
    }
    b
}

impl StimulusAhead {
    /// The packets of a [`Stimulus`] of `cfg` and `seed`, drawn on a thread of their own if
    /// `thread` (and on this one if that thread cannot start).
    fn new(cfg: &Config, seed: u64, thread: bool) -> Self {
        if thread {
            let (tx, rx) = mpsc::sync_channel(2);
            let c = cfg.clone();
            let started = std::thread::Builder::new()
                .name("stimulus".into())
                .spawn(move || {
                    let mut st = Stimulus::new(&c, seed);
                    while tx.send(draw_flat(&mut st)).is_ok() {}
                });
            if started.is_ok() {
                return StimulusAhead::Thread {
                    batches: rx,
                    cur: FlatBatch::default(),
                    frame: 0,
                    flit: 0,
                };
            }
        }
        StimulusAhead::Inline {
            st: Box::new(Stimulus::new(cfg, seed)),
            ahead: Vec::new().into_iter(),
        }
    }

    /// The next packet of the stream: (source port, encoded frame). Fails only if the stimulus
    /// thread has stopped (it draws until this is dropped).
    fn next(&mut self) -> Result<(usize, Vec<Flit>), TbError> {
        match self {
            StimulusAhead::Inline { st, ahead } => loop {
                if let Some(x) = ahead.next() {
                    return Ok(x);
                }
                *ahead = draw_batch(st).into_iter();
            },
            StimulusAhead::Thread {
                batches,
                cur,
                frame,
                flit,
            } => loop {
                if let Some(&(p, n)) = cur.frames.get(*frame) {
                    let f = cur.flits[*flit..*flit + n].to_vec();
                    *frame += 1;
                    *flit += n;
                    return Ok((p, f));
                }
                *cur = batches.recv().map_err(|_| {
                    TbError::Config("the stimulus thread stopped drawing packets".into())
                })?;
                (*frame, *flit) = (0, 0);
            },
        }
    }
}

/// Parts each measurement is cut into: the runs take turns part by part (see [`measure_once`]).
const PARTS: u64 = 64;

/// One way of driving the model with the bench, timed over the parts it ran.
struct BenchRun {
    bench: Bench,
    stimulus: StimulusAhead,
    /// Frames kept queued at the sources (all ports together).
    keep_queued: usize,
    secs: f64,
}

impl BenchRun {
    /// A bench out of reset (not timed): `check`, `check_thread` and `record` as in
    /// [`BenchConfig`].
    fn new(
        model: &str,
        seed: u64,
        check: bool,
        check_thread: bool,
        record: bool,
    ) -> Result<Self, TbError> {
        let mut cfg = BenchConfig::new(model, seed);
        cfg.record_inputs = record;
        cfg.check = check;
        cfg.check_thread = check_thread;
        let bench = Bench::new(cfg)?;
        let stimulus = StimulusAhead::new(bench.golden_cfg(), seed, check_thread);
        let keep_queued = 4 * bench.ports();
        Ok(BenchRun {
            bench,
            stimulus,
            keep_queued,
            secs: 0.0,
        })
    }

    /// `n` more cycles of traffic, timed; with `last`, the scoreboard's thread also catches up
    /// within the measured time.
    fn run(&mut self, n: u64, last: bool) -> Result<(), TbError> {
        let t = Instant::now();
        let end = self.bench.cycles() + n;
        while self.bench.cycles() < end {
            while self.bench.queued() < self.keep_queued {
                let (p, frame) = self.stimulus.next()?;
                self.bench.push_frame(p, frame);
            }
            self.bench.step()?;
        }
        if last {
            self.bench.stats();
        }
        self.secs += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// `n` cycles untimed, the scoreboard's thread caught up (the warm-up).
    fn warm_up(&mut self, n: u64) -> Result<(), TbError> {
        self.run(n, true)?;
        self.secs = 0.0;
        Ok(())
    }

    /// Packets the scoreboard checked (0 without it), and the model's outputs now.
    fn end(mut self) -> (u64, Vec<u32>) {
        let packets = self.bench.stats().packets_checked;
        (packets, self.bench.take_recording().1)
    }
}

/// One measurement: the speeds, the packets checked and whether the scoreboard had a thread.
///
/// Every way is set up (and out of reset) and runs `warmup` cycles before any is timed (the
/// threaded scoreboard catching up), and then they take turns: each
/// runs a part ([`PARTS`] parts in all) of its cycles before the next one does, the two replays
/// replaying the part the inline bench just recorded. The speeds are each way's cycles over its
/// own time, and since the ways share the machine's slow and fast periods alike (this VM's speed
/// drifts by up to 2x within seconds), their ratios hold where the speeds themselves move.
fn measure_once(
    model: &str,
    cycles: u64,
    warmup: u64,
    seed: u64,
) -> Result<(BenchSimRun, u64, bool), TbError> {
    let mut inline = BenchRun::new(model, seed, true, false, true)?;
    // The model exists: the bench above opened it.
    let threads = ModelInfo::find(model).map_or(1, |m| m.threads.max(1));
    let check_thread = scoreboard_thread_fits(threads, std::thread::available_parallelism());
    let mut threaded = if check_thread {
        Some(BenchRun::new(model, seed, true, true, false)?)
    } else {
        None
    };
    let mut unchecked = BenchRun::new(model, seed, false, check_thread, false)?;
    let mut bare = Sim::new(model, seed)?;
    let mut cpp = Sim::new(model, seed)?;
    let per = bare.info().in_words.max(1);
    if warmup > 0 {
        inline.warm_up(warmup)?;
        if let Some(t) = &mut threaded {
            t.warm_up(warmup)?;
        }
        unchecked.warm_up(warmup)?;
        let words = inline.bench.drain_recording();
        for rec in words.chunks_exact(per) {
            bare.cycle_with(rec)?;
        }
        cpp.replay(&words)?;
    }
    let (mut recorded, mut bare_s, mut cpp_s) = (0u64, 0.0, 0.0);
    let part = cycles.div_ceil(PARTS).max(1);
    let mut done = 0;
    while done < cycles {
        let n = part.min(cycles - done);
        done += n;
        let last = done == cycles;
        inline.run(n, last)?;
        if let Some(t) = &mut threaded {
            t.run(n, last)?;
        }
        unchecked.run(n, last)?;
        // The inline bench's input words of this part (the reset's too without a warm-up).
        let words = inline.bench.drain_recording();
        recorded += (words.len() / per) as u64;
        let t = Instant::now();
        for rec in words.chunks_exact(per) {
            bare.cycle_with(rec)?;
        }
        bare_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        cpp.replay(&words)?;
        cpp_s += t.elapsed().as_secs_f64();
    }
    let (inline_s, threaded_s, unchecked_s) = (
        inline.secs,
        threaded.as_ref().map(|t| t.secs),
        unchecked.secs,
    );
    let end = warmup + cycles;
    let (packets_checked, want) = inline.end();
    if let Some(t) = threaded {
        let (packets, out) = t.end();
        same_end(
            &out,
            &want,
            end,
            "the bench with the scoreboard on its thread",
        )?;
        if packets != packets_checked {
            return Err(TbError::Mismatch {
                cycle: end,
                what: format!(
                    "the scoreboard on its thread checked {packets} packets, inline {packets_checked}"
                ),
            });
        }
    }
    let (_, out) = unchecked.end();
    same_end(&out, &want, end, "the bench without its scoreboard")?;
    same_outputs(&bare, &want, "the Rust replay")?;
    same_outputs(&cpp, &want, "the C++ replay")?;

    let rate = |n: f64, s: f64| n / s.max(1e-9);
    let rust = rate(cycles as f64, threaded_s.unwrap_or(inline_s));
    let cpp = rate(recorded as f64, cpp_s);
    let run = BenchSimRun {
        rust_cycles_per_s: rust,
        rust_inline_cycles_per_s: rate(cycles as f64, inline_s),
        rust_unchecked_cycles_per_s: rate(cycles as f64, unchecked_s),
        rust_bare_cycles_per_s: rate(recorded as f64, bare_s),
        cpp_cycles_per_s: cpp,
        ratio: rust / cpp,
    };
    Ok((run, packets_checked, check_thread))
}

/// Whether the scoreboard may take a thread of its own beside a model evaluated by `threads`
/// threads: only where a core is left for it (threads never exceed the machine's cores).
fn scoreboard_thread_fits(threads: usize, cores: std::io::Result<std::num::NonZeroUsize>) -> bool {
    cores.is_ok_and(|n| n.get() > threads)
}

fn same_outputs(sim: &Sim, want: &[u32], what: &str) -> Result<(), TbError> {
    same_end(
        sim.outputs(),
        want,
        sim.cycles(),
        &format!("{what} of the recorded inputs"),
    )
}

/// Fails unless a run ended with the inline bench run's outputs `want`.
fn same_end(got: &[u32], want: &[u32], cycle: u64, what: &str) -> Result<(), TbError> {
    if got == want {
        return Ok(());
    }
    let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
    Err(TbError::Mismatch {
        cycle,
        what: format!(
            "{what} ends with other outputs than the inline bench run (first differing output \
             word {first}): the model or the bench is not deterministic for its seed"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::{median, scoreboard_thread_fits};
    use std::num::NonZeroUsize;

    #[test]
    fn the_scoreboard_thread_needs_a_core_beyond_the_models_threads() {
        let cores = |n| Ok(NonZeroUsize::new(n).expect("non-zero"));
        assert!(!scoreboard_thread_fits(1, cores(1)));
        assert!(scoreboard_thread_fits(1, cores(2)));
        assert!(!scoreboard_thread_fits(2, cores(2)));
        assert!(scoreboard_thread_fits(2, cores(3)));
        assert!(!scoreboard_thread_fits(
            1,
            Err(std::io::Error::other("no count"))
        ));
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0]), 3.0);
        assert_eq!(median(vec![5.0, 1.0, 3.0]), 3.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
