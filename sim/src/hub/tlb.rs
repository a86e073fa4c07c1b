//! AL-TLB model (spec §7): set-associative, round-robin replacement.

use crate::fxhash::FxHashMap;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    local: u32,
    aidx: u32,
    lidx: u32,
}

/// Hit and miss counters of a TLB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TlbStats {
    /// Lookups that hit.
    pub hits: u64,
    /// Lookups that missed.
    pub misses: u64,
    /// Fills that replaced a valid entry.
    pub evictions: u64,
}

impl TlbStats {
    /// Hit rate in [0, 1] (1 when there were no lookups).
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            1.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

/// The AL-TLB: caches (expert local index, AIdx) → LIdx.
#[derive(Clone, Debug)]
pub struct Tlb {
    sets: usize,
    ways: usize,
    slots: Vec<Option<Entry>>,
    rr: Vec<usize>,
    /// Valid ways per set. Entries are never invalidated, so the valid ways of
    /// a set are always its lowest ones.
    filled: Vec<usize>,
    /// [`key`] of (local, aidx) → slot, so a fully associative lookup is O(1)
    /// in the model.
    index: FxHashMap<u64, usize>,
    /// Counters.
    pub stats: TlbStats,
}

impl Tlb {
    /// A TLB of `entries` entries and `ways` ways (`entries / ways` must be a power of two).
    pub fn new(entries: usize, ways: usize) -> Self {
        let sets = entries / ways;
        Tlb {
            sets,
            ways,
            slots: vec![None; entries],
            rr: vec![0; sets],
            filled: vec![0; sets],
            index: FxHashMap::default(),
            stats: TlbStats::default(),
        }
    }

    fn set_of(&self, aidx: u32) -> usize {
        (aidx as usize) & (self.sets - 1)
    }

    /// Looks a translation up, counting a hit or a miss.
    pub fn lookup(&mut self, local: u32, aidx: u32) -> Option<u32> {
        let hit = self
            .index
            .get(&key(local, aidx))
            .and_then(|&i| self.slots[i])
            .map(|e| e.lidx);
        if hit.is_some() {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
        }
        hit
    }

    /// Fills a translation: lowest invalid way of the set, else the round-robin victim.
    pub fn fill(&mut self, local: u32, aidx: u32, lidx: u32) {
        let s = self.set_of(aidx);
        let base = s * self.ways;
        // The lowest invalid way: the valid ways are the lowest `filled[s]`.
        let way = match self.filled[s] {
            w if w < self.ways => {
                self.filled[s] += 1;
                w
            }
            _ => {
                let w = self.rr[s];
                self.rr[s] = (w + 1) % self.ways;
                self.stats.evictions += 1;
                w
            }
        };
        if let Some(old) = self.slots[base + way] {
            self.index.remove(&key(old.local, old.aidx));
        }
        self.slots[base + way] = Some(Entry { local, aidx, lidx });
        self.index.insert(key(local, aidx), base + way);
    }
}

/// The index key of a translation.
fn key(local: u32, aidx: u32) -> u64 {
    (local as u64) << 32 | aidx as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_miss_and_round_robin() {
        let mut t = Tlb::new(2, 2);
        assert_eq!(t.lookup(0, 1), None);
        t.fill(0, 1, 10);
        t.fill(0, 2, 20);
        assert_eq!(t.lookup(0, 1), Some(10));
        t.fill(0, 3, 30); // evicts way 0 (aidx 1)
        assert_eq!(t.lookup(0, 1), None);
        assert_eq!(t.lookup(0, 2), Some(20));
        t.fill(0, 4, 40); // evicts way 1 (aidx 2)
        assert_eq!(t.lookup(0, 2), None);
        assert_eq!(t.lookup(0, 3), Some(30));
        assert_eq!(t.stats.hits, 3);
        assert_eq!(t.stats.misses, 3);
        assert_eq!(t.stats.evictions, 2);
    }

    #[test]
    fn direct_mapped_sets() {
        let mut t = Tlb::new(4, 1);
        t.fill(1, 0, 5);
        t.fill(1, 1, 6);
        assert_eq!(t.lookup(1, 0), Some(5));
        assert_eq!(t.lookup(2, 0), None);
        t.fill(1, 4, 7); // same set as aidx 0
        assert_eq!(t.lookup(1, 0), None);
        assert_eq!(t.lookup(1, 1), Some(6));
    }
}
