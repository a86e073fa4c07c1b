//! The threaded scoreboard's queue ([`super::Scoreboard::threaded`], [`super::thread`]):
//! [`Event`]s as a stream of 128-bit words, each event as long as what it carries.
//!
//! A batch of `(cycle, Event)` pairs held every event in the room of the largest (a beat of four
//! written lines: 128 bytes with its cycle), and each frame in a heap block of its own, made on
//! the simulating thread and freed on the checker's. As words, a read beat takes two words (32
//! bytes), a write beat of `n` lines `2 + n`, a frame of `n` flits `1 + n` (its flits copied: the
//! bench keeps and reuses its buffers), and the simulating thread writes fewer cache lines that
//! the other core then takes away.
//!
//! Layout: a header word (the cycle in bits 0..64, the kind in 64..66, the port in 66..82, the
//! count of flits or lines in 82..114, and for a beat whether it writes in bit 114), then for a
//! frame its flits, for a beat a word with its address (bits 0..64) and its lines' strobes (line
//! `i`'s at bits `64 + 16 i`), and a write's lines.

use super::{BeatLines, Event, BEAT_LINES};

const KIND_SHIFT: u32 = 64;
const PORT_SHIFT: u32 = 66;
const COUNT_SHIFT: u32 = 82;
const WRITE_SHIFT: u32 = 114;
const PORT_MASK: u128 = 0xFFFF;
const COUNT_MASK: u128 = 0xFFFF_FFFF;

const FRAME_IN: u128 = 0;
const HUB_REQUEST: u128 = 1;
const SM_RESPONSE: u128 = 2;
const MEM: u128 = 3;

/// Appends event `ev`, observed in `cycle`, to `out`.
pub(super) fn encode(out: &mut Vec<u128>, cycle: u64, ev: &Event<'_>) {
    let header = |kind: u128, port: usize, count: usize| {
        let port = u128::try_from(port).ok().filter(|&p| p <= PORT_MASK);
        let count = u128::try_from(count).ok().filter(|&n| n <= COUNT_MASK);
        let (Some(port), Some(count)) = (port, count) else {
            unreachable!("a port below 65,536 and a frame of fewer than 2^32 flits")
        };
        u128::from(cycle) | kind << KIND_SHIFT | port << PORT_SHIFT | count << COUNT_SHIFT
    };
    match *ev {
        Event::FrameIn { port, frame } => {
            out.push(header(FRAME_IN, port, frame.len()));
            out.extend_from_slice(frame);
        }
        Event::HubRequest { q, frame } => {
            out.push(header(HUB_REQUEST, q, frame.len()));
            out.extend_from_slice(frame);
        }
        Event::SmResponse { q, frame } => {
            out.push(header(SM_RESPONSE, q, frame.len()));
            out.extend_from_slice(frame);
        }
        Event::Mem { q, ref lines } => {
            let n = lines.len as usize;
            out.push(header(MEM, q, n) | u128::from(lines.write) << WRITE_SHIFT);
            let strobes = (0..n).fold(0u128, |s, i| s | u128::from(lines.strobe[i]) << (16 * i));
            out.push(u128::from(lines.addr) | strobes << 64);
            if lines.write {
                out.extend_from_slice(&lines.data[..n]);
            }
        }
    }
}

/// How many words of `words` (the start of a stream [`encode`] wrote, perhaps cut anywhere) hold
/// whole events: the part [`decode`] may read.
pub(super) fn whole_events(words: &[u128]) -> usize {
    let mut at = 0;
    while let Some(&h) = words.get(at) {
        let n = ((h >> COUNT_SHIFT) & COUNT_MASK) as usize;
        let len = match (h >> KIND_SHIFT) & 3 {
            MEM if (h >> WRITE_SHIFT) & 1 == 1 => 2 + n,
            MEM => 2,
            _ => 1 + n,
        };
        if len > words.len() - at {
            break;
        }
        at += len;
    }
    at
}

/// The events of `words` (as [`encode`] wrote them), in order, with their cycles; the frames
/// borrow their flits from `words`.
pub(super) fn decode(words: &[u128]) -> Decode<'_> {
    Decode { words }
}

/// The iterator of [`decode`].
pub(super) struct Decode<'a> {
    words: &'a [u128],
}

impl<'a> Decode<'a> {
    /// The next `n` words (the stream was written by [`encode`]: they are there).
    fn take(&mut self, n: usize) -> &'a [u128] {
        let (head, rest) = self
            .words
            .split_at_checked(n)
            .expect("an event's words are in the stream");
        self.words = rest;
        head
    }
}

impl<'a> Iterator for Decode<'a> {
    type Item = (u64, Event<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let (&h, rest) = self.words.split_first()?;
        self.words = rest;
        let cycle = h as u64;
        let port = ((h >> PORT_SHIFT) & PORT_MASK) as usize;
        let n = ((h >> COUNT_SHIFT) & COUNT_MASK) as usize;
        let ev = match (h >> KIND_SHIFT) & 3 {
            FRAME_IN => Event::FrameIn {
                port,
                frame: self.take(n),
            },
            HUB_REQUEST => Event::HubRequest {
                q: port,
                frame: self.take(n),
            },
            SM_RESPONSE => Event::SmResponse {
                q: port,
                frame: self.take(n),
            },
            _ => {
                debug_assert!(n <= BEAT_LINES);
                let a = self.take(1)[0];
                let write = (h >> WRITE_SHIFT) & 1 == 1;
                let mut lines = BeatLines::new(a as u64, write);
                lines.len = n as u8;
                for (i, s) in lines.strobe[..n].iter_mut().enumerate() {
                    *s = (a >> (64 + 16 * i)) as u16;
                }
                if write {
                    lines.data[..n].copy_from_slice(self.take(n));
                }
                Event::Mem { q: port, lines }
            }
        };
        Some((cycle, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of event, frames of 0 to 20 flits, beats of 1 to 4 lines read and written,
    /// the largest cycle and port: decoded as they were encoded, in order, and nothing more.
    #[test]
    fn events_round_trip_through_words() {
        let flits: Vec<u128> = (0..20u128).map(|i| (i << 100) | (i * 0x1_0001)).collect();
        let mut beats = Vec::new();
        for n in 1..=BEAT_LINES {
            for write in [false, true] {
                let mut b = BeatLines::new(0xFFFF_0000_1230 + n as u64, write);
                for i in 0..n {
                    b.data[i] = if write { u128::MAX - i as u128 } else { 0 };
                    b.strobe[i] = if write { 0xFFFF >> i } else { 0 };
                }
                b.len = n as u8;
                beats.push(b);
            }
        }
        let mut events = Vec::new();
        for n in [0, 1, 7, 20] {
            events.push((
                u64::MAX,
                Event::FrameIn {
                    port: 3,
                    frame: &flits[..n],
                },
            ));
            events.push((
                n as u64,
                Event::HubRequest {
                    q: 0xFFFF,
                    frame: &flits[..n],
                },
            ));
            events.push((
                0,
                Event::SmResponse {
                    q: 63,
                    frame: &flits[20 - n..],
                },
            ));
        }
        for (i, b) in beats.iter().enumerate() {
            events.push((i as u64, Event::Mem { q: i, lines: *b }));
        }
        let mut words = Vec::new();
        for (c, e) in &events {
            encode(&mut words, *c, e);
        }
        let back: Vec<(u64, Event<'_>)> = decode(&words).collect();
        assert_eq!(back, events);
        // Cut anywhere, the stream's whole events are the ones that end before the cut.
        let mut ends = vec![0];
        for (c, e) in &events {
            let mut one = Vec::new();
            encode(&mut one, *c, e);
            ends.push(ends.last().copied().unwrap_or(0) + one.len());
        }
        for cut in 0..=words.len() {
            let whole = ends.iter().copied().filter(|&e| e <= cut).max();
            assert_eq!(Some(whole_events(&words[..cut])), whole, "cut at {cut}");
        }
        // A read beat is two words; a write of n lines 2 + n; a frame of n flits 1 + n.
        let mut w = Vec::new();
        encode(
            &mut w,
            1,
            &Event::Mem {
                q: 0,
                lines: beats[6],
            },
        );
        assert_eq!(w.len(), 2);
        w.clear();
        encode(
            &mut w,
            1,
            &Event::Mem {
                q: 0,
                lines: beats[7],
            },
        );
        assert_eq!(w.len(), 2 + BEAT_LINES);
        w.clear();
        encode(
            &mut w,
            1,
            &Event::SmResponse {
                q: 0,
                frame: &flits[..7],
            },
        );
        assert_eq!(w.len(), 8);
    }
}
