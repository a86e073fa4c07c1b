//! Sparse byte-addressable GPU memory of a hub, in 64 KiB pages.

use crate::fxhash::FxHashMap;

const PAGE_BITS: u32 = 16;
const PAGE: usize = 1 << PAGE_BITS;

/// Sparse memory: unwritten bytes read as zero.
#[derive(Clone, Debug, Default)]
pub struct SparseMemory {
    pages: FxHashMap<u64, Box<[u8]>>,
}

impl SparseMemory {
    /// Empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads `buf.len()` bytes at `addr`.
    pub fn read(&self, mut addr: u64, buf: &mut [u8]) {
        let mut done = 0;
        while done < buf.len() {
            let off = (addr as usize) & (PAGE - 1);
            let n = (PAGE - off).min(buf.len() - done);
            match self.pages.get(&(addr >> PAGE_BITS)) {
                Some(p) => buf[done..done + n].copy_from_slice(&p[off..off + n]),
                None => buf[done..done + n].fill(0),
            }
            done += n;
            addr += n as u64;
        }
    }

    /// Writes `data` at `addr`.
    pub fn write(&mut self, mut addr: u64, data: &[u8]) {
        let mut done = 0;
        while done < data.len() {
            let off = (addr as usize) & (PAGE - 1);
            let n = (PAGE - off).min(data.len() - done);
            let page = self
                .pages
                .entry(addr >> PAGE_BITS)
                .or_insert_with(|| vec![0u8; PAGE].into_boxed_slice());
            page[off..off + n].copy_from_slice(&data[done..done + n]);
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

    /// Reads a little-endian 32-bit word.
    pub fn read_u32(&self, addr: u64) -> u32 {
        let mut b = [0u8; 4];
        self.read(addr, &mut b);
        u32::from_le_bytes(b)
    }

    /// Bytes resident (allocated pages × page size).
    pub fn resident_bytes(&self) -> usize {
        self.pages.len() * PAGE
    }

    /// Iterates over resident pages as (base address, bytes), in address order.
    pub fn pages(&self) -> Vec<(u64, &[u8])> {
        let mut v: Vec<_> = self
            .pages
            .iter()
            .map(|(k, p)| (k << PAGE_BITS, &p[..]))
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
    }
}
