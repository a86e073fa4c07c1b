//! The checker on a thread of its own ([`super::Scoreboard::threaded`]).
//!
//! The bench encodes each event as words ([`words`]) into a small staging buffer, which stays in
//! its first-level cache, and moves the staged words into a ring buffer shared with the checker's
//! thread (`rtrb`, a single-producer single-consumer ring) every [`STAGE_WORDS`] words. The thread
//! takes whatever the ring holds each time it looks, applies the whole events, and keeps an event
//! that was cut for its next look; when it finds the ring empty it sleeps for [`POLL`]. The bench
//! wakes it only when the bench must wait: for room in the ring, or for every event to be applied
//! ([`Worker::sync`]). So the simulating thread makes no system call for the scoreboard while the
//! ring has room, and when it needs the checker's state (at the end of a run) the checker has at
//! most the last [`POLL`]'s events left to apply.
//!
//! Before (session 31), batches of 32,768 words went through a channel, the thread woken for each;
//! the last batch, up to 1,500 cycles of `top_p8`'s events, was checked after the last cycle
//! while the bench waited (`dysharp bench-sim --model top_p8`: its last part ran at 0.63 of the
//! C++ loop's speed against 0.92 for the others; with this ring 0.81). Smaller batches, each
//! waking the thread, had cost the bench more than that tail (4,096 words: 2 points of the ratio
//! to the C++ loop), and so did this ring looked at every 200 µs instead of every 5 ms (no gain
//! over the batches: the tail went, and more of the parts in between ran slow).

use super::{lock, words, Checker, Event, Shared};
use crate::tb::TbError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Words staged on the simulating thread before they move into the ring (16 KiB: about 50 cycles
/// of `top_p8` at line rate).
const STAGE_WORDS: usize = 1024;
/// The ring's room in words (1 MiB): how far the checker may fall behind before the bench waits.
const RING_WORDS: usize = 1 << 16;
/// How long the checker's thread sleeps when it finds the ring empty: about 250 cycles of
/// `top_p8` at 50,000 cycles/s, some 5,500 words, well within the ring.
const POLL: Duration = Duration::from_millis(5);
/// How long the bench waits at most before it looks whether the thread has ended (a panic).
const WAIT: Duration = Duration::from_millis(2);

/// The checker's state, and the condition the bench waits on for it to catch up.
struct Checked {
    state: Mutex<Shared>,
    caught_up: Condvar,
}

/// The bench's side of the checker's thread.
pub(super) struct Worker {
    checked: Arc<Checked>,
    /// Set by the thread at its first mismatch.
    failed: Arc<AtomicBool>,
    /// Set while the bench waits for the thread to catch up (the thread then signals).
    waiting: Arc<AtomicBool>,
    /// The ring's writing end (`None` once dropped: the thread then ends).
    ring: Option<rtrb::Producer<u128>>,
    /// Words staged before they move into the ring.
    stage: usize,
    /// Events not yet moved into the ring, as [`words`].
    staged: Vec<u128>,
    /// Words moved into the ring so far.
    sent: u64,
    handle: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the checker's thread with `chk`.
    pub(super) fn spawn(chk: Checker) -> Self {
        Self::with_sizes(chk, RING_WORDS, STAGE_WORDS)
    }

    /// [`Worker::spawn`] with a ring of `ring` words, moving staged words into it every `stage`
    /// words (tests use a ring shorter than an event).
    pub(super) fn with_sizes(chk: Checker, ring: usize, stage: usize) -> Self {
        let checked = Arc::new(Checked {
            state: Mutex::new(Shared {
                chk,
                error: None,
                stopped: false,
                applied: 0,
            }),
            caught_up: Condvar::new(),
        });
        let failed = Arc::new(AtomicBool::new(false));
        let waiting = Arc::new(AtomicBool::new(false));
        let (producer, consumer) = rtrb::RingBuffer::new(ring.max(1));
        let (c, f, w) = (checked.clone(), failed.clone(), waiting.clone());
        let handle = std::thread::Builder::new()
            .name("scoreboard".into())
            .spawn(move || check_from(consumer, &c, &f, &w))
            .expect("the scoreboard thread starts");
        Worker {
            checked,
            failed,
            waiting,
            ring: Some(producer),
            stage: stage.max(1),
            staged: Vec::with_capacity(2 * stage.max(1)),
            sent: 0,
            handle: Some(handle),
        }
    }

    /// Queues `ev`, observed in `cycle`, for the thread.
    pub(super) fn push(&mut self, cycle: u64, ev: &Event<'_>) {
        words::encode(&mut self.staged, cycle, ev);
        if self.staged.len() >= self.stage {
            self.publish();
        }
    }

    /// Moves the staged words into the ring, waiting for room where the thread is behind.
    fn publish(&mut self) {
        let Some(ring) = &mut self.ring else {
            return;
        };
        let mut rest: &[u128] = &self.staged;
        loop {
            let (_, left) = ring.push_partial_slice(rest);
            rest = left;
            if rest.is_empty() {
                break;
            }
            // The ring is full: the thread is behind, or has ended (a panic, raised here).
            raise_if_ended(&mut self.handle);
            if let Some(h) = &self.handle {
                h.thread().unpark();
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        self.sent += self.staged.len() as u64;
        self.staged.clear();
    }

    /// Waits until the thread has applied every event queued. A panic on the thread (a bug in
    /// the golden model) is raised here, as the inline scoreboard would raise it.
    pub(super) fn sync(&mut self) {
        self.publish();
        self.waiting.store(true, Ordering::Relaxed);
        if let Some(h) = &self.handle {
            h.thread().unpark();
        }
        let mut g = lock(&self.checked.state);
        while g.applied < self.sent {
            if self.handle.as_ref().is_none_or(JoinHandle::is_finished) {
                drop(g);
                raise_if_ended(&mut self.handle);
                unreachable!("the scoreboard thread ends only when the bench is dropped");
            }
            g = match self.checked.caught_up.wait_timeout(g, WAIT) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        self.waiting.store(false, Ordering::Relaxed);
    }

    /// The checker (call [`Worker::sync`] first for it to have applied every event).
    pub(super) fn state(&self) -> &Mutex<Shared> {
        &self.checked.state
    }

    /// The first mismatch the thread found, once.
    pub(super) fn take_error(&mut self) -> Option<TbError> {
        if !self.failed.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.checked.state).error.take()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.ring = None;
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// Raises the panic of the checker's thread if it has ended (it ends only with a panic while
/// the bench holds the ring).
fn raise_if_ended(handle: &mut Option<JoinHandle<()>>) {
    if handle.as_ref().is_some_and(JoinHandle::is_finished) {
        if let Some(Err(panic)) = handle.take().map(JoinHandle::join) {
            std::panic::resume_unwind(panic);
        }
    }
}

/// The checker's thread: applies the events of `ring` in order until the bench drops its end
/// (after a mismatch it still takes the words, so the bench never waits for room).
fn check_from(
    mut ring: rtrb::Consumer<u128>,
    checked: &Checked,
    failed: &AtomicBool,
    waiting: &AtomicBool,
) {
    // Words taken from the ring; the last event may be cut (the bench moves words, not events,
    // when the ring is full).
    let mut taken: Vec<u128> = Vec::with_capacity(ring.buffer().capacity());
    loop {
        let n = ring.slots();
        if n == 0 {
            if ring.is_abandoned() {
                return;
            }
            std::thread::park_timeout(POLL);
            continue;
        }
        if let Ok(chunk) = ring.read_chunk(n) {
            let (a, b) = chunk.as_slices();
            taken.extend_from_slice(a);
            taken.extend_from_slice(b);
            chunk.commit_all();
        }
        let whole = words::whole_events(&taken);
        let mut g = lock(&checked.state);
        if !g.stopped {
            for (cycle, ev) in words::decode(&taken[..whole]) {
                if let Err(e) = g.chk.apply(cycle, ev) {
                    g.error = Some(e);
                    g.stopped = true;
                    failed.store(true, Ordering::Release);
                    break;
                }
            }
        }
        g.applied += whole as u64;
        if waiting.load(Ordering::Relaxed) {
            checked.caught_up.notify_all();
        }
        drop(g);
        taken.drain(..whole);
    }
}
