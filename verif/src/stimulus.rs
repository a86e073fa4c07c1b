//! Seeded random stimulus: legal packets of every operation (with payloads that
//! include NaN, infinities, subnormals and rounding ties) and malformed frames.

use dysharp_sim::config::Config;
use dysharp_sim::numerics::{AccMode, DType, ReduceOp};
use dysharp_sim::packet::fields::{self, to_bits};
use dysharp_sim::packet::{with_hcc, Flit, Opcode, Packet, Stage};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Base of the identity-addressed scratch region used by WRITE/READ/MC ops.
pub const SCRATCH: u64 = 0x8000_0000;

/// A generator of stimulus for one switch configuration.
pub struct Stimulus {
    rng: ChaCha8Rng,
    cfg: Config,
    tags: Vec<u16>,
    /// Per port: ld_reduces generated, and the tag of the last one.
    ld_tags: Vec<(u32, Option<u16>)>,
    /// (source port, aidx, targets) of every DYN_ST generated so far.
    dispatched: Vec<(usize, u32, Vec<u16>)>,
    next_aidx: u32,
    /// Largest top-k to draw (≤ MaxTargets).
    pub max_k: usize,
    /// Include the source's own experts in target lists (NVLS-style self-delivery).
    pub self_delivery: bool,
    /// Every 8th ld_reduce of a port reuses its previous ld_reduce's tag ([`Stimulus::ld_tag`]).
    pub reuse_ld_tags: bool,
}

impl Stimulus {
    /// A generator for `cfg` seeded with `seed`.
    pub fn new(cfg: &Config, seed: u64) -> Self {
        Stimulus {
            rng: ChaCha8Rng::seed_from_u64(seed),
            cfg: cfg.clone(),
            tags: vec![0; cfg.num_ports],
            ld_tags: vec![(0, None); cfg.num_ports],
            dispatched: Vec::new(),
            next_aidx: 0,
            max_k: cfg.max_targets.min(8),
            self_delivery: false,
            reuse_ld_tags: true,
        }
    }

    /// Restarts the random stream from `seed`, keeping what was dispatched (so a
    /// property-based input can name each operation by a small seed of its own).
    pub fn reseed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// The algebraic index of a new token from `src` to `targets`, recorded as dispatched.
    fn new_token(&mut self, src: usize, targets: &[u16]) -> u32 {
        let aidx = self.next_aidx;
        self.next_aidx = (self.next_aidx + 1) % (1 << self.cfg.hub.log2_al_entries.min(20));
        self.dispatched.push((src, aidx, targets.to_vec()));
        aidx
    }

    fn tag(&mut self, port: usize) -> u16 {
        let t = self.tags[port];
        self.tags[port] = (t + 1) & 0xFFF;
        t
    }

    /// The tag of an ld_reduce from `port`: every 8th reuses the tag of the port's previous
    /// ld_reduce, so that one may wait for a pending entry with the same (source, tag) (spec
    /// §5.3; cover point `c_same_tag_wait`). Draws nothing from the random stream.
    fn ld_tag(&mut self, port: usize) -> u16 {
        let (n, last) = self.ld_tags[port];
        let t = match last {
            Some(t) if self.reuse_ld_tags && n % 8 == 7 => t,
            _ => self.tag(port),
        };
        self.ld_tags[port] = (n.wrapping_add(1), Some(t));
        t
    }

    fn experts(&self) -> usize {
        self.cfg.experts()
    }

    /// A random value of `dtype`, biased to IEEE edge cases.
    pub fn value(&mut self, dtype: DType) -> u32 {
        let r = &mut self.rng;
        let (bits, exp_mask, man_bits) = match dtype {
            DType::Bf16 => (16, 0x7F80u32, 7),
            DType::F16 => (16, 0x7C00, 10),
            DType::F32 => (32, 0x7F80_0000, 23),
        };
        let sign = (r.gen::<u32>() & 1) << (bits - 1);
        let man = (1u32 << man_bits) - 1;
        match r.gen_range(0..16) {
            0 => sign,
            1 => sign | r.gen_range(1..=man),
            2 => sign | exp_mask,
            3 => exp_mask | r.gen_range(1..=man),
            4 => sign | (exp_mask - (1 << man_bits)) | (r.gen::<u32>() & man),
            _ => {
                // Normal values of similar magnitude, so additions round.
                let bias = (exp_mask >> man_bits) / 2;
                let e = bias + r.gen_range(0..4) - 2;
                sign | (e << man_bits) | (r.gen::<u32>() & man)
            }
        }
    }

    /// A payload of `len` flits of `dtype` values.
    pub fn payload(&mut self, len: u8, dtype: DType) -> Vec<u8> {
        let bytes = dtype.bytes();
        let mut out = Vec::with_capacity(16 * len as usize);
        for _ in 0..16 * len as usize / bytes {
            let v = self.value(dtype);
            out.extend_from_slice(&v.to_le_bytes()[..bytes]);
        }
        out
    }

    fn maddr(&self, aidx: u32, chunk: u64) -> u64 {
        self.cfg.hub.mbase + ((aidx as u64) << self.cfg.hub.log2_bsize) + 256 * chunk
    }

    fn random_targets(&mut self, src: usize, k: usize) -> Vec<u16> {
        let epp = self.cfg.experts_per_port;
        let mut all: Vec<u16> = (0..self.experts() as u16)
            .filter(|e| self.self_delivery || *e as usize / epp != src)
            .collect();
        all.shuffle(&mut self.rng);
        all.truncate(k.max(1));
        all
    }

    /// A Dispatch store of a new token (random source, k, length, byte enables).
    pub fn dyn_st(&mut self) -> (usize, Packet) {
        let src = self.rng.gen_range(0..self.cfg.num_ports);
        let k = self.rng.gen_range(1..=self.max_k);
        let targets = self.random_targets(src, k);
        self.dispatch(src, targets)
    }

    /// A Dispatch store of a new token whose targets crowd one destination port: up to
    /// MaxTargets of that port's experts (at least 9 where the port has them), so its replica
    /// carries more than one target flit (cover points `c_replica_tflits_*`).
    pub fn dyn_st_wide(&mut self) -> (usize, Packet) {
        let (src, targets) = self.dyn_st_wide_list();
        self.dispatch(src, targets)
    }

    /// A Dispatch store of a new token whose list crowds one destination port among others, in
    /// random order: at least 9 of that port's experts where it has them and MaxTargets allows,
    /// the rest of the list (up to MaxTargets) on other ports. Each egress then prunes a list
    /// of several target flits that are not its own alone: flits with none of its targets, and
    /// a last flit that completes two of its replica's (cover points `c_prune_*`).
    pub fn dyn_st_mixed(&mut self) -> (usize, Packet) {
        let n = self.cfg.num_ports;
        let epp = self.cfg.experts_per_port;
        let max_t = self.cfg.max_targets.max(1);
        let (src, mut targets) = self.dyn_st_wide_list();
        let dst = targets[0] as usize / epp;
        let room = max_t.saturating_sub(targets.len());
        let mut others: Vec<u16> = (0..self.experts() as u16)
            .filter(|e| {
                let port = *e as usize / epp;
                port != dst && (self.self_delivery || port != src)
            })
            .collect();
        others.shuffle(&mut self.rng);
        let o = if room == 0 || others.is_empty() || n < 2 {
            0
        } else {
            self.rng.gen_range(1..=room.min(others.len()))
        };
        targets.extend_from_slice(&others[..o]);
        targets.shuffle(&mut self.rng);
        self.dispatch(src, targets)
    }

    /// The source and target list of [`Stimulus::dyn_st_wide`].
    fn dyn_st_wide_list(&mut self) -> (usize, Vec<u16>) {
        let n = self.cfg.num_ports;
        let epp = self.cfg.experts_per_port;
        let src = self.rng.gen_range(0..n);
        let dst = if self.self_delivery || n == 1 {
            self.rng.gen_range(0..n)
        } else {
            (src + self.rng.gen_range(1..n)) % n
        };
        let most = self.cfg.max_targets.min(epp).max(1);
        let k = self.rng.gen_range(most.min(9)..=most);
        let mut targets: Vec<u16> = (0..epp).map(|e| (dst * epp + e) as u16).collect();
        targets.shuffle(&mut self.rng);
        targets.truncate(k);
        (src, targets)
    }

    fn dispatch(&mut self, src: usize, targets: Vec<u16>) -> (usize, Packet) {
        let aidx = self.new_token(src, &targets);
        let mut p = Packet::new(Opcode::DynSt);
        p.len = self.rng.gen_range(1..=16);
        p.maddr = self.maddr(aidx, 0);
        p.tag = self.tag(src);
        p.targets = targets;
        p.be = Some(if self.rng.gen_bool(0.8) {
            u128::MAX
        } else {
            self.rng.gen()
        });
        let dt = DType::ALL[self.rng.gen_range(0..3)];
        p.dtype = dt;
        p.payload = self.payload(p.len, dt);
        (src, p)
    }

    /// A Dispatch store that writes an already dispatched token again (same
    /// source, index and targets, new data): its AL entries are valid, so the hub
    /// hits in the AL-TLB or walks to a valid entry. A new token if none yet.
    pub fn redispatch(&mut self) -> (usize, Packet) {
        if self.dispatched.is_empty() {
            return self.dyn_st();
        }
        let i = self.rng.gen_range(0..self.dispatched.len());
        let (src, aidx, targets) = self.dispatched[i].clone();
        let mut p = Packet::new(Opcode::DynSt);
        p.len = self.rng.gen_range(1..=16);
        p.maddr = self.maddr(aidx, 0);
        p.tag = self.tag(src);
        p.targets = targets;
        p.be = Some(u128::MAX);
        p.dtype = DType::ALL[self.rng.gen_range(0..3)];
        p.payload = self.payload(p.len, p.dtype);
        (src, p)
    }

    /// `n` short Dispatch stores of new tokens from one source to one target
    /// set: `n` distinct AL entries per target hub, to overflow the AL-TLB.
    pub fn tlb_pressure(&mut self, n: usize) -> Vec<(usize, Packet)> {
        let (src, first) = self.dyn_st();
        let mut out = vec![(src, first.clone())];
        for _ in 1..n {
            let aidx = self.new_token(src, &first.targets);
            let mut p = first.clone();
            p.len = 1;
            p.be = Some(u128::MAX);
            p.maddr = self.maddr(aidx, 0);
            p.tag = self.tag(src);
            p.payload = self.payload(1, p.dtype);
            out.push((src, p));
        }
        out
    }

    /// A Dispatch store or Combine load-reduce whose multimem address fails the
    /// hub's range check (`ERR_RANGE`): below the multimem base, an algebraic
    /// index beyond the AL table, or a row offset plus length past the row. (A
    /// store's token stays in the record of dispatched tokens; combining it later
    /// is a legal `ERR_UNMAPPED` case.)
    pub fn dyn_out_of_range(&mut self) -> (usize, Packet) {
        let store = self.rng.gen_bool(0.5);
        let (src, mut p) = if store {
            self.dyn_st()
        } else {
            self.dyn_ld_reduce(false)
        };
        let h = &self.cfg.hub;
        let bsize = 1u64 << h.log2_bsize;
        let modes = if p.len > 1 { 3 } else { 2 };
        p.maddr = match self.rng.gen_range(0..modes) {
            0 => h.mbase - bsize,
            1 => {
                h.mbase + (((1u64 << h.log2_al_entries) + self.rng.gen_range(0..4)) << h.log2_bsize)
            }
            _ => {
                // The row's last len - 1 flits: one flit too long.
                let aidx = self.rng.gen_range(0..1u64 << h.log2_al_entries.min(20));
                h.mbase + (aidx << h.log2_bsize) + bsize - 16 * (p.len as u64 - 1)
            }
        };
        (src, p)
    }

    /// A Combine load-reduce of a dispatched token (a subset of its targets),
    /// or of a never-dispatched index when `unmapped`.
    pub fn dyn_ld_reduce(&mut self, unmapped: bool) -> (usize, Packet) {
        let (src, aidx, targets) = if self.dispatched.is_empty() || unmapped {
            let src = self.rng.gen_range(0..self.cfg.num_ports);
            let k = self.rng.gen_range(1..=self.max_k);
            let t = self.random_targets(src, k);
            (src, (1 << self.cfg.hub.log2_al_entries) - 1, t)
        } else {
            let i = self.rng.gen_range(0..self.dispatched.len());
            let (s, a, mut t) = self.dispatched[i].clone();
            t.shuffle(&mut self.rng);
            let keep = self.rng.gen_range(1..=t.len());
            t.truncate(keep);
            (s, a, t)
        };
        let mut p = Packet::new(Opcode::DynLdReduce);
        p.stage = Stage::Combine;
        p.len = self.rng.gen_range(1..=16);
        p.maddr = self.maddr(aidx, 0);
        p.tag = self.ld_tag(src);
        p.targets = targets;
        p.dtype = DType::ALL[self.rng.gen_range(0..3)];
        p.rop = ReduceOp::ALL[self.rng.gen_range(0..3)];
        p.acc = AccMode::ALL[self.rng.gen_range(0..2)];
        (src, p)
    }

    fn scratch(&mut self) -> u64 {
        SCRATCH + 16 * self.rng.gen_range(0..64u64)
    }

    /// A unicast WRITE or READ between random ports.
    pub fn unicast(&mut self, write: bool) -> (usize, Packet) {
        let src = self.rng.gen_range(0..self.cfg.num_ports);
        let mut p = Packet::new(if write { Opcode::Write } else { Opcode::Read });
        p.route = self.rng.gen_range(0..self.cfg.num_ports) as u8;
        p.maddr = self.scratch();
        p.len = self.rng.gen_range(1..=16);
        p.tag = self.tag(src);
        if write {
            p.be = Some(self.rng.gen());
            p.payload = self.payload(p.len, DType::F32);
        }
        (src, p)
    }

    /// A static-group MC_ST or MC_LD_REDUCE to a non-empty group, if any.
    pub fn multicast(&mut self, store: bool) -> Option<(usize, Packet)> {
        let groups: Vec<usize> = (0..self.cfg.groups.len())
            .filter(|g| self.cfg.groups[*g] != 0)
            .collect();
        let g = *groups.choose(&mut self.rng)?;
        let src = self.rng.gen_range(0..self.cfg.num_ports);
        let mut p = Packet::new(if store {
            Opcode::McSt
        } else {
            Opcode::McLdReduce
        });
        p.route = g as u8;
        p.maddr = self.scratch();
        p.len = self.rng.gen_range(1..=16);
        p.tag = if store {
            self.tag(src)
        } else {
            self.ld_tag(src)
        };
        p.dtype = DType::ALL[self.rng.gen_range(0..3)];
        if store {
            p.be = Some(u128::MAX);
            p.payload = self.payload(p.len, p.dtype);
        } else {
            p.rop = ReduceOp::ALL[self.rng.gen_range(0..3)];
            p.acc = AccMode::ALL[self.rng.gen_range(0..2)];
        }
        Some((src, p))
    }

    /// A random legal operation, in proportions that exercise every path. Without the dynamic
    /// operations (`Config::dynamic_ops` false, spec §5.7) only unicast and static-group ops.
    pub fn any_legal(&mut self) -> (usize, Packet) {
        loop {
            let r = if self.cfg.dynamic_ops {
                self.rng.gen_range(0..100)
            } else {
                self.rng.gen_range(70..100)
            };
            let x = match r {
                0..=36 => Some(self.dyn_st()),
                37..=38 => Some(self.dyn_st_mixed()),
                39 => Some(self.dyn_st_wide()),
                40..=69 => Some(self.dyn_ld_reduce(r == 69)),
                70..=79 => Some(self.unicast(r < 75)),
                _ => self.multicast(r < 90),
            };
            if let Some((src, mut p)) = x {
                // Sources sometimes claim another port: the switch must ignore it.
                if self.rng.gen_bool(0.25) {
                    p.src_port = self.rng.gen_range(0..32);
                }
                return (src, p);
            }
        }
    }

    /// A legal frame of [`Stimulus::any_legal`] with what a receiver must ignore sometimes set:
    /// `rsvd` other than 0 (the check code over it, spec §2) in one frame of four, and the
    /// unused lanes of a DYN op's last target flit other than 0xFFFF (spec §3) in one of two
    /// that have any. The switch clears the first and forwards 0xFFFF in the second.
    pub fn legal_frame(&mut self) -> (usize, Vec<Flit>) {
        let (src, p) = self.any_legal();
        let mut f = p.encode();
        if self.rng.gen_bool(0.25) {
            let mut b = to_bits(f[0]);
            fields::set(
                &mut b,
                fields::RSVD,
                self.rng.gen_range(1..=fields::RSVD.max()),
            );
            f[0] = with_hcc(fields::from_bits(&b));
        }
        let n = p.targets.len();
        let per = fields::TARGETS_PER_FLIT;
        if p.opcode.is_dynamic() && n % per != 0 && self.rng.gen_bool(0.5) {
            let last = n.div_ceil(per);
            for l in n % per..per {
                let noise = u128::from(self.rng.gen::<u16>());
                f[last] = (f[last] & !(0xFFFFu128 << (16 * l))) | (noise << (16 * l));
            }
        }
        (src, f)
    }

    /// A malformed frame: corrupted header, truncated or overlong, bad opcode,
    /// target count out of range, bad or duplicate expert IDs, and so on.
    pub fn malformed(&mut self) -> (usize, Vec<Flit>) {
        let (src, p) = self.any_legal();
        let mut f = p.encode();
        let edit = |f: &mut Vec<Flit>, field: fields::Field, v: u64| {
            let mut b = to_bits(f[0]);
            fields::set(&mut b, field, v);
            f[0] = with_hcc(fields::from_bits(&b));
        };
        match self.rng.gen_range(0..13) {
            0 => {
                let bit = self.rng.gen_range(0..128);
                f[0] ^= 1u128 << bit;
            }
            1 => {
                let cut = self.rng.gen_range(1..f.len().max(2));
                f.truncate(f.len() - cut.min(f.len() - 1));
                if f.len() == p.wire_flits() {
                    f.push(0);
                }
            }
            2 => {
                let n = self.rng.gen_range(1..8);
                f.extend((0..n).map(|_| self.rng.gen::<u128>()));
            }
            3 => edit(
                &mut f,
                fields::OPCODE,
                [0u64, 7, 8, 9, 10, 11, 12, 15][self.rng.gen_range(0..8)],
            ),
            4 => edit(
                &mut f,
                fields::LEN,
                [0u64, 17, 31][self.rng.gen_range(0..3)],
            ),
            5 => edit(
                &mut f,
                fields::TCOUNT,
                [0u64, self.cfg.max_targets as u64 + 1, 0x7FFF][self.rng.gen_range(0..3)],
            ),
            6 => edit(&mut f, fields::DTYPE, 3),
            7 => edit(&mut f, fields::MADDR, p.maddr | 8),
            8 => edit(&mut f, fields::ROUTE, 0xFF),
            9 => {
                // An expert ID out of range in the first target flit (DYN ops).
                if p.opcode.is_dynamic() {
                    f[1] = (f[1] & !0xFFFF) | 0xFFFE;
                } else {
                    edit(&mut f, fields::STAGE, 1);
                }
            }
            10 => edit(&mut f, fields::ROP, 3),
            // A stage that does not match the opcode (spec §2.1: ERR_OPCODE).
            11 => edit(
                &mut f,
                fields::STAGE,
                u64::from(p.opcode != Opcode::DynLdReduce),
            ),
            _ => {
                // A duplicated expert.
                if p.opcode.is_dynamic() && p.targets.len() >= 2 {
                    f[1] = (f[1] & !0xFFFF_0000) | ((f[1] & 0xFFFF) << 16);
                } else {
                    f[0] ^= 1u128 << 127;
                }
            }
        }
        (src, f)
    }
}
