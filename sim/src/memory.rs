//! Sparse byte-addressable GPU memory of a hub, in 1 KiB pages.
//!
//! Pages are carved, in allocation order, out of chunks that double in size from
//! 64 KiB up to 32 MiB, so pages written one after the other lie side by side
//! whatever their addresses. The benches store each new token in a slot of its
//! own (16 KiB apart) and write its first few lines: with 1 KiB pages, four such
//! tokens share one 4 KiB page of the system, zero-filled once, where a page of
//! 64 KiB (or 4 KiB) cost a system page, its page fault and its zero-fill per
//! token (`dysharp bench-sim --model top_p8`: peak memory 698 -> 202 MB, and the
//! zero-filling on the scoreboard's and the memory feeder's core had slowed the
//! simulating one; docs/perf.md). Dense data (a replay's rows) fills whole
//! chunks either way.
//!
//! Chunks are anonymous memory maps, which the kernel hands out zeroed and
//! lazily (a page of the map costs nothing until it is touched, and nothing is
//! zero-filled twice, as a heap allocation's `memset` would), whatever the
//! process's allocator does with fresh memory (an allocator that asks for
//! transparent huge pages zero-fills 2 MiB at the first touch). A chunk whose
//! map fails is a zeroed heap allocation. Either way a fresh page reads as zero.
//!
//! Transparent huge pages were tried for the large chunks and rejected: on the
//! development machine (a VM) their first-touch cost varied from 5x cheaper to
//! 4x dearer than 4 KiB pages from run to run.

use crate::fxhash::FxHashMap;
use memmap2::{Advice, MmapMut};
use std::collections::VecDeque;
use std::fmt;

const PAGE_BITS: u32 = 10;
const PAGE: usize = 1 << PAGE_BITS;
/// Smallest chunk, in pages (64 KiB).
const CHUNK_MIN_PAGES: usize = (64 << 10) / PAGE;
/// Largest chunk, in pages (32 MiB).
const CHUNK_MAX_PAGES: usize = (32 << 20) / PAGE;

/// Bytes of a line, the unit of [`SparseMemory::read_lines`] and [`SparseMemory::write_lines`].
const LINE: usize = 16;

/// The byte masks of the 256 byte strobes: entry `s` has byte `i` all ones where bit `i` of `s`
/// is set.
const BYTE_MASKS: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut s = 0;
    while s < 256 {
        let mut i = 0;
        while i < 8 {
            if s >> i & 1 == 1 {
                t[s] |= 0xFF << (8 * i);
            }
            i += 1;
        }
        s += 1;
    }
    t
};

/// The bytes of a 16-byte line whose strobe bit is set, as a mask of the line's little-endian
/// number (strobe bit `i` → bits `8 i .. 8 i + 8`).
fn strobe_mask(strobe: u16) -> u128 {
    u128::from(BYTE_MASKS[usize::from(strobe & 0xFF)])
        | u128::from(BYTE_MASKS[usize::from(strobe >> 8)]) << 64
}

/// The backing store of a run of pages.
enum Chunk {
    /// An anonymous memory map (zeroed by the kernel on first touch).
    Map(MmapMut),
    /// A zeroed heap allocation.
    Heap(Box<[u8]>),
}

impl Chunk {
    /// A zeroed chunk of `pages` pages: a memory map, or on the heap if the map fails.
    fn new(pages: usize) -> Chunk {
        match MmapMut::map_anon(pages * PAGE) {
            Ok(m) => Chunk::Map(m),
            Err(_) => Chunk::heap(pages),
        }
    }

    /// A zeroed chunk of `pages` pages on the heap.
    fn heap(pages: usize) -> Chunk {
        Chunk::Heap(vec![0u8; pages * PAGE].into_boxed_slice())
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Chunk::Map(m) => m,
            Chunk::Heap(b) => b,
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Chunk::Map(m) => m,
            Chunk::Heap(b) => b,
        }
    }
}

/// Zeroed memory made, and faulted in, ahead of time (possibly on another
/// thread) for a [`SparseMemory`] to allocate pages from once its current
/// memory is used up: see [`SparseMemory::add_reserve`]. Page faults are much
/// of the cost of filling a large memory; a reserve moves them elsewhere.
pub struct Reserve(Chunk);

impl fmt::Debug for Reserve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reserve")
            .field("bytes", &self.bytes())
            .finish()
    }
}

impl Reserve {
    /// At least `bytes` (whole pages, at least one) of zeroed memory,
    /// faulted in now where the system allows it.
    pub fn new(bytes: usize) -> Reserve {
        let pages = bytes.div_ceil(PAGE).max(1);
        match MmapMut::map_anon(pages * PAGE) {
            Ok(m) => {
                // Only an optimisation: without it the pages fault in on first use.
                let _ = m.advise(Advice::PopulateWrite);
                Reserve(Chunk::Map(m))
            }
            Err(_) => Reserve(Chunk::heap(pages)),
        }
    }

    /// Bytes of the reserve.
    pub fn bytes(&self) -> usize {
        self.0.bytes().len()
    }
}

/// Where a resident page lives: (chunk, page within the chunk).
type Loc = (u32, u32);

/// Sparse memory: unwritten bytes read as zero.
#[derive(Default)]
pub struct SparseMemory {
    /// Page number → location.
    index: FxHashMap<u64, Loc>,
    chunks: Vec<Chunk>,
    /// Pages handed out from the last chunk.
    last_used: usize,
    /// The page [`SparseMemory::write_lines`] wrote last and where it lives: a hub writes a row
    /// beat after beat into one page, and only the first beat looks the page up.
    last_write: Option<(u64, Loc)>,
    /// Reserves not yet used, in the order they were added.
    spare: VecDeque<Chunk>,
}

impl fmt::Debug for SparseMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SparseMemory")
            .field("pages", &self.index.len())
            .field("chunks", &self.chunks.len())
            .finish()
    }
}

impl Clone for SparseMemory {
    fn clone(&self) -> Self {
        let mut by_loc: Vec<(Loc, u64)> = self.index.iter().map(|(k, l)| (*l, *k)).collect();
        by_loc.sort_unstable();
        let mut m = SparseMemory::new();
        for (loc, page) in by_loc {
            let src = self.page(loc);
            let new = m.alloc(page);
            m.page_mut(new).copy_from_slice(src);
        }
        m
    }
}

impl SparseMemory {
    /// Empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    fn page(&self, (c, i): Loc) -> &[u8] {
        let off = i as usize * PAGE;
        &self.chunks[c as usize].bytes()[off..off + PAGE]
    }

    fn page_mut(&mut self, (c, i): Loc) -> &mut [u8] {
        let off = i as usize * PAGE;
        &mut self.chunks[c as usize].bytes_mut()[off..off + PAGE]
    }

    /// Allocates a zeroed page for page number `page` (not yet resident).
    fn alloc(&mut self, page: u64) -> Loc {
        let cap = self.chunks.last().map_or(0, |c| c.bytes().len() / PAGE);
        if self.last_used == cap {
            let chunk = match self.spare.pop_front() {
                Some(c) => c,
                None => Chunk::new((2 * cap).clamp(CHUNK_MIN_PAGES, CHUNK_MAX_PAGES)),
            };
            self.chunks.push(chunk);
            self.last_used = 0;
        }
        let loc = ((self.chunks.len() - 1) as u32, self.last_used as u32);
        self.last_used += 1;
        self.index.insert(page, loc);
        loc
    }

    /// Adds a reserve: pages are allocated from it (after the current memory,
    /// and earlier reserves) before any new memory is requested. A clone of the
    /// memory does not share its unused reserves.
    pub fn add_reserve(&mut self, r: Reserve) {
        self.spare.push_back(r.0);
    }

    /// Bytes allocated but not yet used by a page: the rest of the current
    /// memory and the unused reserves.
    pub fn free_bytes(&self) -> usize {
        let cap = self.chunks.last().map_or(0, |c| c.bytes().len() / PAGE);
        (cap - self.last_used) * PAGE + self.spare.iter().map(|c| c.bytes().len()).sum::<usize>()
    }

    /// Whether a reserve is waiting to be used (pages come from it once the current memory
    /// is used up, instead of from new memory of the memory's own).
    pub fn has_reserve(&self) -> bool {
        !self.spare.is_empty()
    }

    /// Reads `buf.len()` bytes at `addr`.
    pub fn read(&self, mut addr: u64, buf: &mut [u8]) {
        let mut done = 0;
        while done < buf.len() {
            let off = (addr as usize) & (PAGE - 1);
            let n = (PAGE - off).min(buf.len() - done);
            match self.index.get(&(addr >> PAGE_BITS)) {
                Some(&loc) => buf[done..done + n].copy_from_slice(&self.page(loc)[off..off + n]),
                None => buf[done..done + n].fill(0),
            }
            done += n;
            addr += n as u64;
        }
    }

    /// The `len` bytes at `addr`, if they lie in one resident page (else read
    /// them with [`SparseMemory::read`]).
    pub fn get(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let off = (addr as usize) & (PAGE - 1);
        if off + len > PAGE {
            return None;
        }
        let loc = *self.index.get(&(addr >> PAGE_BITS))?;
        Some(&self.page(loc)[off..off + len])
    }

    /// Writes `data` at `addr`.
    pub fn write(&mut self, mut addr: u64, data: &[u8]) {
        let mut done = 0;
        while done < data.len() {
            let off = (addr as usize) & (PAGE - 1);
            let n = (PAGE - off).min(data.len() - done);
            let page = addr >> PAGE_BITS;
            let loc = match self.index.get(&page) {
                Some(&loc) => loc,
                None => self.alloc(page),
            };
            self.page_mut(loc)[off..off + n].copy_from_slice(&data[done..done + n]);
            done += n;
            addr += n as u64;
        }
    }

    /// Writes the bytes of a 16-byte line whose strobe bit is set.
    pub fn write_line(&mut self, addr: u64, data: &[u8; 16], strobe: u16) {
        if strobe == 0xFFFF {
            self.write(addr, data);
            return;
        }
        let mut line = [0u8; 16];
        self.read(addr, &mut line);
        for (i, b) in line.iter_mut().enumerate() {
            if strobe >> i & 1 == 1 {
                *b = data[i];
            }
        }
        self.write(addr, &line);
    }

    /// Reads `out.len()` consecutive 16-byte lines from `addr`, each as a little-endian number
    /// (line `i` at `addr + 16 i`): [`SparseMemory::read`] a line at a time, with one page
    /// look-up and no byte copies where the lines lie in one page (a memory beat).
    pub fn read_lines(&self, addr: u64, out: &mut [u128]) {
        let off = (addr as usize) & (PAGE - 1);
        if off + LINE * out.len() <= PAGE {
            match self.index.get(&(addr >> PAGE_BITS)) {
                Some(&loc) => {
                    let page = &self.page(loc)[off..];
                    for (line, bytes) in out.iter_mut().zip(page.chunks_exact(LINE)) {
                        *line = u128::from_le_bytes(bytes.try_into().expect("a 16-byte line"));
                    }
                }
                None => out.fill(0),
            }
            return;
        }
        for (i, line) in out.iter_mut().enumerate() {
            let mut b = [0u8; LINE];
            self.read(addr + (LINE * i) as u64, &mut b);
            *line = u128::from_le_bytes(b);
        }
    }

    /// Writes consecutive 16-byte lines from `addr`, each a little-endian number with its byte
    /// strobes (line `i` at `addr + 16 i`, `data[i]` under `strobe[i]`; `data` and `strobe` are as
    /// long): [`SparseMemory::write_line`] a line at a time, with one page look-up where the lines
    /// lie in one page (a memory beat).
    pub fn write_lines(&mut self, addr: u64, data: &[u128], strobe: &[u16]) {
        debug_assert_eq!(data.len(), strobe.len());
        let off = (addr as usize) & (PAGE - 1);
        if off + LINE * data.len() > PAGE {
            for (i, (d, s)) in data.iter().zip(strobe).enumerate() {
                self.write_line(addr + (LINE * i) as u64, &d.to_le_bytes(), *s);
            }
            return;
        }
        let page = addr >> PAGE_BITS;
        let loc = match self.last_write {
            Some((p, loc)) if p == page => loc,
            _ => {
                let loc = match self.index.get(&page) {
                    Some(&loc) => loc,
                    None => self.alloc(page),
                };
                self.last_write = Some((page, loc));
                loc
            }
        };
        let bytes = &mut self.page_mut(loc)[off..];
        for ((line, d), s) in bytes.chunks_exact_mut(LINE).zip(data).zip(strobe) {
            let line: &mut [u8; LINE] = line.try_into().expect("a 16-byte line");
            let v = if *s == u16::MAX {
                *d
            } else {
                let keep = !strobe_mask(*s);
                (u128::from_le_bytes(*line) & keep) | (d & !keep)
            };
            *line = v.to_le_bytes();
        }
    }

    /// Reads a little-endian 32-bit word.
    pub fn read_u32(&self, addr: u64) -> u32 {
        let mut b = [0u8; 4];
        self.read(addr, &mut b);
        u32::from_le_bytes(b)
    }

    /// Bytes resident (allocated pages × page size).
    pub fn resident_bytes(&self) -> usize {
        self.index.len() * PAGE
    }

    /// Iterates over resident pages as (base address, bytes), in address order.
    pub fn pages(&self) -> Vec<(u64, &[u8])> {
        let mut v: Vec<_> = self
            .index
            .iter()
            .map(|(k, loc)| (k << PAGE_BITS, self.page(*loc)))
            .collect();
        v.sort_by_key(|(a, _)| *a);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_page_and_strobe() {
        let mut m = SparseMemory::new();
        let data: Vec<u8> = (0..100).collect();
        m.write(PAGE as u64 - 50, &data);
        let mut back = vec![0u8; 100];
        m.read(PAGE as u64 - 50, &mut back);
        assert_eq!(back, data);
        m.write_line(0x100, &[0xAA; 16], 0x0003);
        let mut l = [0u8; 16];
        m.read(0x100, &mut l);
        assert_eq!(&l[..3], &[0xAA, 0xAA, 0]);
        assert_eq!(m.read_u32(0x2000), 0);
        assert_eq!(m.get(0x100, 16), Some(&l[..]));
        assert_eq!(m.get(PAGE as u64 - 8, 16), None, "crosses a page");
        assert_eq!(m.get(0x10_0000, 16), None, "not resident");
    }

    /// `write_lines` and `read_lines` do what `write_line` and `read` do a line at a time: beats
    /// of 1 to 5 lines at every line offset of a page (those that cross into the next page, or
    /// into one not resident, included), with full, partial and empty strobes.
    #[test]
    fn line_beats_match_line_by_line_access() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut fast, mut slow) = (SparseMemory::new(), SparseMemory::new());
        for round in 0..3u64 {
            for n in 1..=5usize {
                for line in 0..PAGE / LINE {
                    let addr = (round * 3 + n as u64) * PAGE as u64 * 2 + (LINE * line) as u64;
                    let data: Vec<u128> = (0..n)
                        .map(|_| u128::from(next()) << 64 | u128::from(next()))
                        .collect();
                    let strobe: Vec<u16> = (0..n)
                        .map(|_| match next() % 4 {
                            0 => u16::MAX,
                            1 => 0,
                            _ => next() as u16,
                        })
                        .collect();
                    fast.write_lines(addr, &data, &strobe);
                    for (i, (d, s)) in data.iter().zip(&strobe).enumerate() {
                        slow.write_line(addr + (LINE * i) as u64, &d.to_le_bytes(), *s);
                    }
                    let mut got = vec![0u128; n + 1];
                    fast.read_lines(addr, &mut got);
                    let want: Vec<u128> = (0..=n)
                        .map(|i| {
                            let mut b = [0u8; LINE];
                            slow.read(addr + (LINE * i) as u64, &mut b);
                            u128::from_le_bytes(b)
                        })
                        .collect();
                    assert_eq!(got, want, "{n} lines at {addr:#x}");
                }
            }
        }
        assert_eq!(fast.pages(), slow.pages());
        assert_eq!(strobe_mask(0x8001), 0xFF << 120 | 0xFF);
        for s in 0..=u16::MAX {
            let bytes = (0..16).fold(0u128, |m, i| {
                m | ((u128::from(s >> i & 1) * 0xFF) << (8 * i))
            });
            assert_eq!(strobe_mask(s), bytes, "strobe {s:#06x}");
        }
    }

    /// Enough scattered pages for several chunks, memory maps among them: every
    /// page reads back, fresh bytes read zero, and a clone is equal and independent.
    #[test]
    fn many_chunks_and_clone() {
        let mut m = SparseMemory::new();
        let pages = 4 * CHUNK_MIN_PAGES + 7;
        for i in 0..pages as u64 {
            // Descending, spread-out page numbers: allocation order != address order.
            let addr = ((pages as u64 - i) * 977) << PAGE_BITS | 0x30;
            m.write(addr, &i.to_le_bytes());
        }
        assert_eq!(m.resident_bytes(), pages * PAGE);
        assert!(m.chunks.len() >= 3, "pages from several chunks");
        assert!(m.chunks.iter().all(|c| matches!(c, Chunk::Map(_))));
        let c = m.clone();
        m.write(977 << PAGE_BITS, &[1]);
        for i in 0..pages as u64 {
            let addr = ((pages as u64 - i) * 977) << PAGE_BITS;
            let mut b = [0xFFu8; 0x40];
            c.read(addr, &mut b);
            assert_eq!(b[..0x30], [0; 0x30]);
            assert_eq!(b[0x30..0x38], i.to_le_bytes());
            assert_eq!(b[0x38..], [0; 8]);
        }
        let mut b = [0u8; 1];
        c.read(977 << PAGE_BITS, &mut b);
        assert_eq!(b, [0], "the clone does not share pages");
        let (mp, cp) = (m.pages(), c.pages());
        assert_eq!(mp.len(), cp.len());
        assert!(mp.windows(2).all(|w| w[0].0 < w[1].0));
    }

    /// Pages come from reserves, in order, once the current memory is used up.
    #[test]
    fn reserves_are_used_in_order() {
        let mut m = SparseMemory::new();
        // The first chunk, filled.
        let base = CHUNK_MIN_PAGES as u64;
        for p in 0..base {
            m.write(p << PAGE_BITS, &[1]);
        }
        assert_eq!(m.free_bytes(), 0);
        m.add_reserve(Reserve::new(2 * PAGE));
        m.add_reserve(Reserve::new(1));
        assert_eq!(m.free_bytes(), 3 * PAGE);
        for p in base..base + 3 {
            m.write(p << PAGE_BITS | 8, &[p as u8]);
        }
        assert_eq!(m.free_bytes(), 0);
        assert_eq!(m.chunks.len(), 3);
        assert_eq!(m.chunks[1].bytes().len(), 2 * PAGE);
        let mut b = [0xFFu8; 16];
        m.read((base + 2) << PAGE_BITS, &mut b);
        let mut want = [0u8; 16];
        want[8] = (base + 2) as u8;
        assert_eq!(b, want);
        m.write((base + 3) << PAGE_BITS, &[4]);
        assert_eq!(m.resident_bytes(), (CHUNK_MIN_PAGES + 4) * PAGE);
    }

    /// Pages from a chunk on the heap (where a memory map fails) read zero until written and
    /// keep what is written, beside pages from maps.
    #[test]
    fn heap_chunks_serve_pages_too() {
        let mut m = SparseMemory::new();
        m.add_reserve(Reserve(Chunk::heap(2)));
        m.write(0x30, &[7; 4]);
        m.write(5 << PAGE_BITS, &[9]);
        assert!(matches!(m.chunks[0], Chunk::Heap(_)));
        let mut b = [0xFFu8; 0x38];
        m.read(0, &mut b);
        assert_eq!(b[..0x30], [0; 0x30]);
        assert_eq!(b[0x30..0x34], [7; 4]);
        assert_eq!(b[0x34..], [0; 4]);
        m.write(9 << PAGE_BITS, &[1]);
        assert_eq!(m.chunks.len(), 2, "a third page takes a new chunk");
        assert!(matches!(m.chunks[1], Chunk::Map(_)));
        assert_eq!(m.read_u32(5 << PAGE_BITS), 9);
    }
}
