//! Destination hub (spec §5, §7): AL table, AL-TLB, address translation, memory
//! accesses and pre-reduction of local targets on Combine.
//!
//! A hub handles one packet at a time, in downlink arrival order, and its targets
//! in list order. Per target it performs: a walk read on a TLB miss, an AL entry
//! write when it allocates, then its `len` data-line accesses in ascending order.

pub mod tlb;

use crate::config::HubConfig;
use crate::memory::SparseMemory;
use crate::numerics::{reduce_lanes, Accumulator};
use crate::packet::{ErrorCode, Opcode, Packet, Stage};
use serde::Serialize;
use tlb::{Tlb, TlbStats};

/// One access on a hub's memory port (16-byte lines).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum MemAccess {
    /// A line read.
    Read {
        /// Line address (16-byte aligned).
        addr: u64,
    },
    /// A line write with per-byte strobes.
    Write {
        /// Line address (16-byte aligned).
        addr: u64,
        /// Line data (byte i = bits 8i+7:8i).
        data: u128,
        /// Byte strobes.
        strobe: u16,
    },
}

/// Counters of one hub.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HubStats {
    /// TLB counters.
    pub tlb: TlbStats,
    /// AL entries allocated.
    pub allocations: u64,
    /// AL table walks (TLB misses that read memory).
    pub walks: u64,
    /// Memory line reads.
    pub line_reads: u64,
    /// Memory line writes.
    pub line_writes: u64,
}

/// The hub of one port.
#[derive(Clone, Debug)]
pub struct Hub {
    /// Port number.
    pub port: usize,
    cfg: HubConfig,
    experts_per_port: usize,
    /// GPU memory.
    pub mem: SparseMemory,
    /// AL allocation counter per local expert.
    pub counters: Vec<u32>,
    tlb: Tlb,
    allocations: u64,
    walks: u64,
    line_reads: u64,
    line_writes: u64,
    /// Memory accesses in order, when logging is on.
    pub log: Option<Vec<MemAccess>>,
    /// Errors detected here (codes 11–13), indexed `code - 1`.
    pub errors: [u64; ErrorCode::COUNT],
    /// Reused by load-reduces.
    acc: Accumulator,
    /// Reused by load-reduces.
    scratch: Vec<u8>,
}

impl Hub {
    /// A hub with empty memory.
    pub fn new(port: usize, cfg: &HubConfig, experts_per_port: usize) -> Self {
        Hub {
            port,
            cfg: cfg.clone(),
            experts_per_port,
            mem: SparseMemory::new(),
            counters: vec![0; experts_per_port],
            tlb: Tlb::new(cfg.tlb_entries, cfg.tlb_ways),
            allocations: 0,
            walks: 0,
            line_reads: 0,
            line_writes: 0,
            log: None,
            errors: [0; ErrorCode::COUNT],
            acc: Accumulator::default(),
            scratch: Vec::new(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> HubStats {
        HubStats {
            tlb: self.tlb.stats,
            allocations: self.allocations,
            walks: self.walks,
            line_reads: self.line_reads,
            line_writes: self.line_writes,
        }
    }

    fn read_line(&mut self, addr: u64) -> [u8; 16] {
        let mut l = [0u8; 16];
        self.mem.read(addr, &mut l);
        self.line_reads += 1;
        if let Some(log) = &mut self.log {
            log.push(MemAccess::Read { addr });
        }
        l
    }

    fn write_line(&mut self, addr: u64, data: &[u8; 16], strobe: u16) {
        self.mem.write_line(addr, data, strobe);
        self.line_writes += 1;
        if let Some(log) = &mut self.log {
            log.push(MemAccess::Write {
                addr,
                data: u128::from_le_bytes(*data),
                strobe,
            });
        }
    }

    /// Address of the AL entry of local expert `local` and algebraic index `aidx`.
    pub fn al_entry_addr(&self, local: u32, aidx: u32) -> u64 {
        self.cfg.al_base + 4 * (((local as u64) << self.cfg.log2_al_entries) + aidx as u64)
    }

    /// Translates a multimem address for local expert `local` (spec §7).
    ///
    /// With `allocate` (Dispatch) an unwritten entry is allocated; without it
    /// (Combine) it is `ERR_UNMAPPED`.
    pub fn translate(
        &mut self,
        local: u32,
        maddr: u64,
        len: usize,
        allocate: bool,
    ) -> Result<u64, ErrorCode> {
        let c = &self.cfg;
        if maddr < c.mbase {
            return Err(ErrorCode::Range);
        }
        let rel = maddr - c.mbase;
        let bsize = 1u64 << c.log2_bsize;
        let aidx = rel >> c.log2_bsize;
        let off = rel & (bsize - 1);
        if aidx >= 1u64 << c.log2_al_entries || off + 16 * len as u64 > bsize {
            return Err(ErrorCode::Range);
        }
        let aidx = aidx as u32;
        let lidx = match self.tlb.lookup(local, aidx) {
            Some(l) => l,
            None => {
                let ea = self.al_entry_addr(local, aidx);
                let line_addr = ea & !0xF;
                let line = self.read_line(line_addr);
                self.walks += 1;
                let lane = (ea & 0xF) as usize;
                let word = u32::from_le_bytes(line[lane..lane + 4].try_into().expect("4 bytes"));
                if word >> 31 == 1 {
                    let l = word & 0x7FFF_FFFF;
                    self.tlb.fill(local, aidx, l);
                    l
                } else if allocate {
                    let ctr = &mut self.counters[local as usize];
                    if (*ctr as u64) >= 1u64 << self.cfg.log2_slots {
                        return Err(ErrorCode::Alloc);
                    }
                    let l = *ctr;
                    *ctr += 1;
                    self.allocations += 1;
                    let mut data = [0u8; 16];
                    data[lane..lane + 4].copy_from_slice(&(l | 0x8000_0000).to_le_bytes());
                    self.write_line(line_addr, &data, 0xF << lane);
                    self.tlb.fill(local, aidx, l);
                    l
                } else {
                    return Err(ErrorCode::Unmapped);
                }
            }
        };
        let c = &self.cfg;
        let slot = ((local as u64) << c.log2_slots) + lidx as u64;
        Ok(c.data_base + (slot << c.log2_bsize) + off)
    }

    fn write_payload(&mut self, base: u64, pkt: &Packet) {
        let be = pkt.be.unwrap_or(u128::MAX);
        let len = pkt.len as usize;
        let mask = if len >= 16 {
            u128::MAX
        } else {
            (1u128 << (8 * len)) - 1
        };
        let full = be & mask == mask;
        if self.log.is_none() && full {
            // Fast path: the same bytes as the line-by-line loop below.
            self.mem.write(base, &pkt.payload[..16 * len]);
            self.line_writes += len as u64;
            return;
        }
        for i in 0..pkt.len as usize {
            let mut strobe = 0u16;
            for h in 0..8 {
                if (be >> (8 * i + h)) & 1 == 1 {
                    strobe |= 0b11 << (2 * h);
                }
            }
            let line: [u8; 16] = pkt.payload[16 * i..16 * i + 16]
                .try_into()
                .expect("payload holds len flits");
            self.write_line(base + 16 * i as u64, &line, strobe);
        }
    }

    /// Reads the `row` bytes at `va` (as [`Hub::read_payload`] does) into the
    /// accumulator.
    fn accumulate_row(&mut self, pkt: &Packet, va: u64, row: usize) {
        let (dt, op, acc) = (pkt.dtype, pkt.rop, pkt.acc);
        const MSG: &str = "a row of len*16 bytes accumulates";
        if self.log.is_none() {
            if let Some(bytes) = self.mem.get(va, row) {
                self.line_reads += (row / 16) as u64;
                self.acc.add_input(dt, op, acc, bytes).expect(MSG);
                return;
            }
        }
        let mut buf = std::mem::take(&mut self.scratch);
        buf.resize(row, 0);
        self.read_payload_into(va, &mut buf);
        self.acc.add_input(dt, op, acc, &buf).expect(MSG);
        self.scratch = buf;
    }

    fn read_payload(&mut self, base: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; 16 * len];
        self.read_payload_into(base, &mut out);
        out
    }

    /// Reads `out.len() / 16` lines at `base` into `out`.
    fn read_payload_into(&mut self, base: u64, out: &mut [u8]) {
        if self.log.is_none() {
            self.mem.read(base, out);
            self.line_reads += (out.len() / 16) as u64;
            return;
        }
        for (i, line) in out.chunks_exact_mut(16).enumerate() {
            line.copy_from_slice(&self.read_line(base + 16 * i as u64));
        }
    }

    fn local(&self, expert: u16) -> u32 {
        (expert as usize % self.experts_per_port) as u32
    }

    /// Handles one request delivered on the downlink; returns the responses it
    /// puts on the uplink (their `src_port` is stamped by the switch).
    pub fn handle(&mut self, pkt: &Packet) -> Vec<Packet> {
        self.handle_targets(pkt, &pkt.targets)
    }

    /// [`Hub::handle`] of `pkt` with its target list replaced by `targets` (a
    /// dynamic replica described without copying its packet).
    pub(crate) fn handle_targets(&mut self, pkt: &Packet, targets: &[u16]) -> Vec<Packet> {
        let len = pkt.len as usize;
        match pkt.opcode {
            Opcode::DynSt => {
                let mut out = Vec::new();
                for &t in targets {
                    match self.translate(self.local(t), pkt.maddr, len, true) {
                        Ok(va) => self.write_payload(va, pkt),
                        Err(code) => {
                            self.errors[code as usize - 1] += 1;
                            out.push(error_response(pkt, code));
                        }
                    }
                }
                out
            }
            Opcode::DynLdReduce => {
                // The targets' rows are reduced in list order as they are read.
                let row = 16 * len;
                self.acc.reset_lanes(row / pkt.dtype.bytes());
                for &t in targets {
                    match self.translate(self.local(t), pkt.maddr, len, false) {
                        Ok(va) => self.accumulate_row(pkt, va, row),
                        Err(code) => {
                            self.acc.reset();
                            self.errors[code as usize - 1] += 1;
                            return vec![partial(pkt, code as u8, Vec::new())];
                        }
                    }
                }
                let mut out = vec![0u8; row];
                // Rows are all `len * 16` bytes, a multiple of every lane size, so
                // the reduction cannot fail (a legal request has targets).
                self.acc
                    .finish(pkt.dtype, &mut out)
                    .expect("rows of len*16 bytes reduce");
                vec![partial(pkt, 0, out)]
            }
            Opcode::Write | Opcode::McSt => {
                self.write_payload(pkt.maddr, pkt);
                Vec::new()
            }
            Opcode::Read => {
                let data = self.read_payload(pkt.maddr, len);
                let mut r = response(pkt, Opcode::RspRead);
                r.payload = data;
                vec![r]
            }
            Opcode::McLdReduce => {
                let row = self.read_payload(pkt.maddr, len);
                vec![partial(pkt, 0, reduce(pkt, &[row]))]
            }
            // Responses never reach a hub: the switch delivers them to the SM.
            Opcode::RspRead | Opcode::RspPartial | Opcode::RspReduce | Opcode::RspError => {
                Vec::new()
            }
        }
    }
}

/// Reduces rows of a load-reduce request in the given order (spec §9).
pub fn reduce(pkt: &Packet, rows: &[Vec<u8>]) -> Vec<u8> {
    let inputs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
    let mut out = vec![0u8; 16 * pkt.len as usize];
    // Rows are all `len * 16` bytes, a multiple of every lane size, and non-empty,
    // so the reduction cannot fail.
    reduce_lanes(pkt.dtype, pkt.rop, pkt.acc, &inputs, &mut out)
        .expect("rows of len*16 bytes reduce");
    out
}

/// [`reduce`] of borrowed rows (each `16 * pkt.len` bytes, at least one),
/// with a reused accumulator.
pub(crate) fn reduce_with<'a>(
    acc: &mut Accumulator,
    pkt: &Packet,
    rows: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<u8> {
    let row = 16 * pkt.len as usize;
    acc.reset_lanes(row / pkt.dtype.bytes());
    for r in rows {
        acc.add_input(pkt.dtype, pkt.rop, pkt.acc, r)
            .expect("rows of len*16 bytes reduce");
    }
    let mut out = vec![0u8; row];
    acc.finish(pkt.dtype, &mut out)
        .expect("rows of len*16 bytes reduce");
    out
}

/// A response header copying a request's fields (spec §4).
pub fn response(req: &Packet, opcode: Opcode) -> Packet {
    Packet {
        opcode,
        stage: req.stage,
        maddr: req.maddr,
        src_port: 0,
        tag: req.tag,
        len: req.len,
        dtype: req.dtype,
        rop: req.rop,
        acc: req.acc,
        route: req.src_port,
        ecode: 0,
        targets: Vec::new(),
        be: None,
        payload: Vec::new(),
    }
}

fn partial(req: &Packet, ecode: u8, payload: Vec<u8>) -> Packet {
    let mut r = response(req, Opcode::RspPartial);
    r.ecode = ecode;
    r.payload = payload;
    r
}

/// An `RSP_ERROR` for a request, to its `src_port` (spec §4).
pub fn error_response(req: &Packet, code: ErrorCode) -> Packet {
    let mut r = Packet::new(Opcode::RspError);
    r.stage = Stage::Dispatch;
    r.maddr = req.maddr;
    r.tag = req.tag;
    r.route = req.src_port;
    r.ecode = code as u8;
    r
}
