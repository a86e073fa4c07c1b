"""cocotb bench of dysharp_top, checked on the fly against the golden model (dysharp_golden).

The SM uplinks send random legal DYN_ST / DYN_LD_REDUCE / WRITE / READ packets built with the
Python package, plus malformed frames (a bad header check code, a bad length); GPU memories with
random backpressure and latency answer the hub memory ports. As verif/src/tb.rs does, the golden
model follows the RTL's own order where order is the RTL's choice: the golden switch sees each
frame when the RTL has accepted it, and each golden hub handles the requests in the order the
RTL hub received them (the hub_req_mon_* taps). Every packet a hub receives, every response an
SM receives and every memory access is compared field by field when it happens; the error, TLB
and link counters at the end. Any difference fails the test with the field-level diff.

Run by run.py (docs/cocotb.md); environment: DYSHARP_COCOTB_PACKETS (default 500),
DYSHARP_COCOTB_BREAK=1 corrupts one expected field to show that the check fails.
"""

import os
import random
from collections import deque
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

import dysharp_golden as dg

SCRATCH = 0x8000_0000  # the identity-addressed region of WRITE/READ
MASK128 = (1 << 128) - 1


class Mismatch(AssertionError):
    pass


def field_slice(v, i, w):
    return (v >> (w * i)) & ((1 << w) - 1)


def u(sig):
    """The unsigned value of a signal (X/Z bits fail the test)."""
    try:
        return sig.value.to_unsigned()
    except ValueError as e:
        raise Mismatch(f"{sig._name}: not a 0/1 value ({sig.value}): {e}") from None


class Stimulus:
    """Seeded random legal operations for a configuration (after verif/src/stimulus.rs)."""

    def __init__(self, cfg, rng):
        self.cfg, self.rng = cfg, rng
        self.tags = [0] * cfg.num_ports
        self.dispatched = []  # (src, aidx, targets)
        self.next_aidx = 0

    def tag(self, port):
        t = self.tags[port]
        self.tags[port] = (t + 1) & 0xFFF
        return t

    def maddr(self, aidx):
        return self.cfg.mbase + (aidx << self.cfg.log2_bsize)

    def targets(self, src, k):
        epp = self.cfg.experts_per_port
        experts = [e for e in range(self.cfg.experts) if e // epp != src]
        return self.rng.sample(experts, k)

    def payload(self, dtype, flits):
        lanes = 16 * flits // (4 if dtype == "f32" else 2)
        return [self.rng.choice([0.0, -0.0, 1.5, -2.25, float("inf")]) if self.rng.random() < 0.1
                else round(self.rng.uniform(-4, 4), 3) for _ in range(lanes)]

    def dyn_st(self):
        src = self.rng.randrange(self.cfg.num_ports)
        if self.dispatched and self.rng.random() < 0.3:  # write a known token again (TLB hits)
            src, aidx, t = self.rng.choice(self.dispatched)
        else:
            t = self.targets(src, self.rng.randint(1, 4))
            aidx = self.next_aidx
            self.next_aidx += 1
            self.dispatched.append((src, aidx, t))
        dtype = self.rng.choice(["bf16", "f16", "f32"])
        n = self.rng.randint(1, 3)
        be = MASK128 if self.rng.random() < 0.8 else self.rng.getrandbits(128)
        return src, dg.Packet("DYN_ST", maddr=self.maddr(aidx), tag=self.tag(src), targets=t,
                              dtype=dtype, values=self.payload(dtype, n), be=be)

    def dyn_ld_reduce(self):
        if not self.dispatched or self.rng.random() < 0.05:  # never dispatched: ERR_UNMAPPED
            src = self.rng.randrange(self.cfg.num_ports)
            aidx, t = (1 << self.cfg.log2_al_entries) - 1, self.targets(src, 2)
        else:
            src, aidx, t = self.rng.choice(self.dispatched)
            t = self.rng.sample(t, self.rng.randint(1, len(t)))
        return src, dg.Packet("DYN_LD_REDUCE", maddr=self.maddr(aidx), tag=self.tag(src),
                              targets=t, len=self.rng.randint(1, 3),
                              dtype=self.rng.choice(["bf16", "f16", "f32"]),
                              rop=self.rng.choice(["add", "min", "max"]),
                              acc=self.rng.choice(["f32", "native"]))

    def unicast(self, write):
        src = self.rng.randrange(self.cfg.num_ports)
        kw = dict(route=self.rng.randrange(self.cfg.num_ports), tag=self.tag(src),
                  maddr=SCRATCH + 16 * self.rng.randrange(64))
        n = self.rng.randint(1, 3)
        if write:
            return src, dg.Packet("WRITE", dtype="f32", values=self.payload("f32", n),
                                  be=self.rng.getrandbits(128), **kw)
        return src, dg.Packet("READ", len=n, **kw)

    def any_legal(self):
        r = self.rng.randrange(100)
        if r < 45:
            return self.dyn_st()
        if r < 80:
            return self.dyn_ld_reduce()
        return self.unicast(r < 90)


def malformed_frames(stim):
    """A frame with a corrupted header (ERR_HCC: dropped, no answer) and one with len 0 and a
    correct check code (ERR_LENGTH: answered with RSP_ERROR)."""
    src, p = stim.unicast(True)
    bad_hcc = p.encode()
    bad_hcc[0] ^= 1 << 40  # a maddr bit; the check code no longer matches
    src2, q = stim.unicast(False)
    f = q.encode()
    len_lsb, len_w = 85, 5
    f[0] = dg.with_hcc(f[0] & ~(((1 << len_w) - 1) << len_lsb))
    try:
        dg.decode(bad_hcc, "sm", stim.cfg)
        raise Mismatch("a corrupted header decoded")
    except dg.DecodeError as e:
        assert e.code == "ERR_HCC", e
    try:
        dg.decode(f, "sm", stim.cfg)
        raise Mismatch("a frame of len 0 decoded")
    except dg.DecodeError as e:
        assert e.code == "ERR_LENGTH", e
    return [(src, bad_hcc), (src2, f)]


class Bench:
    def __init__(self, dut, cfg, mem_lines, rng, log):
        self.dut, self.cfg, self.rng, self.log = dut, cfg, rng, log
        self.n = cfg.num_ports
        self.mem_lines = mem_lines
        self.lines_w = mem_lines.bit_length()
        self.fab = dg.Fabric(cfg)
        n = self.n
        self.source = [deque() for _ in range(n)]
        self.next = [0] * n
        self.offering = [False] * n
        self.rsp = [[] for _ in range(n)]
        self.mon = [[] for _ in range(n)]
        self.mem = [dict() for _ in range(n)]
        self.reads = [deque() for _ in range(n)]
        self.mem_seen = [deque() for _ in range(n)]
        self.mem_exp = [deque() for _ in range(n)]
        self.exp_req = [[deque() for _ in range(n)] for _ in range(n)]
        self.exp_rsp = [[] for _ in range(n)]
        self.cycle = 0
        self.checked = {"hub requests": 0, "SM responses": 0, "memory accesses": 0}
        self.break_once = os.environ.get("DYSHARP_COCOTB_BREAK") == "1"

    def fail(self, what):
        raise Mismatch(f"cycle {self.cycle}: {what}")

    # -- scoreboard (verif/src/tb.rs) ---------------------------------------------------------

    def expect(self, outs):
        for q, pkt in outs:
            if self.break_once and pkt.opcode == "DYN_ST":
                self.break_once = False
                pkt = pkt.copy()
                pkt.tag ^= 1  # deliberately wrong expectation: the check must catch it
            if pkt.opcode in ("WRITE", "READ", "MC_ST", "MC_LD_REDUCE", "DYN_ST", "DYN_LD_REDUCE"):
                self.exp_req[q][pkt.src_port].append(pkt)
            else:
                self.exp_rsp[q].append(pkt)

    def frame_in(self, port, frame):
        self.expect(self.fab.switch_ingress(port, frame, "sm"))

    def hub_request(self, q, frame):
        try:
            got = dg.decode(frame, "egress", self.cfg)
        except dg.DecodeError as e:
            self.fail(f"hub {q} received an illegal frame ({e}): {[hex(f) for f in frame]}")
        flow = self.exp_req[q][got.src_port]
        if not flow:
            self.fail(f"hub {q} received an unexpected packet from port {got.src_port}: {got}")
        want = flow.popleft()
        d = dg.diff(want, frame, self.cfg)
        if d:
            self.fail(f"hub {q}, request from port {got.src_port}:\n  " + "\n  ".join(d))
        self.checked["hub requests"] += 1
        rsps, accesses = self.fab.hub_handle(q, want)
        self.mem_exp[q].extend(accesses)
        for r in rsps:
            self.expect(self.fab.switch_ingress(q, r, "hub"))
        self.check_mem(q)

    def check_mem(self, q):
        while self.mem_exp[q] and self.mem_seen[q]:
            want, got = self.mem_exp[q].popleft(), self.mem_seen[q].popleft()
            d = want.diff(got)
            if d:
                self.fail(f"hub {q} memory access: golden {want}, RTL {got}:\n  " + "\n  ".join(d))
            self.checked["memory accesses"] += 1
        if len(self.mem_seen[q]) > 4 * 64:
            self.fail(f"hub {q} made {len(self.mem_seen[q])} memory accesses the golden model "
                      f"did not predict; first {self.mem_seen[q][0]}")

    def sm_response(self, q, frame):
        try:
            got = dg.decode(frame, "egress", self.cfg)
        except dg.DecodeError as e:
            self.fail(f"SM {q} received a bad frame ({e}): {[hex(f) for f in frame]}")
        for i, w in enumerate(self.exp_rsp[q]):
            if (w.opcode, w.tag, w.src_port, w.maddr) == (got.opcode, got.tag, got.src_port, got.maddr):
                break
        else:
            self.fail(f"SM {q} received an unexpected response {got}; "
                      f"{len(self.exp_rsp[q])} pending: {self.exp_rsp[q][:4]}")
        want = self.exp_rsp[q].pop(i)
        d = dg.diff(want, frame, self.cfg)
        if d:
            self.fail(f"SM {q} response:\n  " + "\n  ".join(d))
        self.checked["SM responses"] += 1

    def drained(self):
        return all(
            not self.source[q] and not self.rsp[q] and not self.mon[q] and not self.reads[q]
            and not self.mem_seen[q] and not self.mem_exp[q] and not self.exp_rsp[q]
            and all(not f for f in self.exp_req[q])
            for q in range(self.n)) and self.fab.pending() == 0

    def pending(self):
        return "; ".join(
            f"port {q}: {len(self.source[q])} frames unsent, "
            f"{sum(len(f) for f in self.exp_req[q])} hub requests and {len(self.exp_rsp[q])} "
            f"responses expected, {len(self.mem_exp[q])} accesses expected, "
            f"{len(self.mem_seen[q])} unpredicted" for q in range(self.n))

    # -- one clock cycle ------------------------------------------------------------------------

    def drive(self):
        """Inputs for the coming rising edge (called at the falling edge)."""
        d, n = self.dut, self.n
        req_valid = req_data = req_last = rsp_ready = mem_ready = mrsp_valid = mrsp_data = 0
        self.sm_ready = [self.rng.random() < 0.9 for _ in range(n)]
        self.mem_ready = [self.rng.random() < 0.85 for _ in range(n)]
        for q in range(n):
            if not self.offering[q] and self.source[q] and self.rng.random() < 0.8:
                self.offering[q] = True
            if self.offering[q]:
                f = self.source[q][0]
                req_valid |= 1 << q
                req_data |= f[self.next[q]] << (128 * q)
                req_last |= int(self.next[q] + 1 == len(f)) << q
            rsp_ready |= int(self.sm_ready[q]) << q
            mem_ready |= int(self.mem_ready[q]) << q
            if self.reads[q] and self.reads[q][0][0] <= self.cycle:
                mrsp_valid |= 1 << q
                for i, line in enumerate(self.reads[q][0][1]):
                    mrsp_data |= line << (128 * (self.mem_lines * q + i))
        d.sm_req_valid_i.value = req_valid
        d.sm_req_data_i.value = req_data
        d.sm_req_last_i.value = req_last
        d.sm_rsp_ready_i.value = rsp_ready
        d.mem_req_ready_i.value = mem_ready
        d.mem_rsp_valid_i.value = mrsp_valid
        d.mem_rsp_rdata_i.value = mrsp_data

    def sample(self):
        """Handshakes of the coming rising edge (called in the read-only phase)."""
        d, n = self.dut, self.n
        req_ready = u(d.sm_req_ready_o)
        rsp_valid = u(d.sm_rsp_valid_o)
        mon_valid = u(d.hub_req_mon_valid_o)
        mem_valid = u(d.mem_req_valid_o)
        mrsp_ready = u(d.mem_rsp_ready_o)
        rsp_fire = [rsp_valid >> q & 1 and self.sm_ready[q] for q in range(n)]
        mem_fire = [mem_valid >> q & 1 and self.mem_ready[q] for q in range(n)]
        rsp_data = rsp_last = mon_data = mon_last = 0
        if any(rsp_fire):
            rsp_data, rsp_last = u(d.sm_rsp_data_o), u(d.sm_rsp_last_o)
        if mon_valid:
            mon_data, mon_last = u(d.hub_req_mon_data_o), u(d.hub_req_mon_last_o)
        if any(mem_fire):
            we, addr, lines = u(d.mem_req_we_o), u(d.mem_req_addr_o), u(d.mem_req_lines_o)
            wdata, wstrb = u(d.mem_req_wdata_o), u(d.mem_req_wstrb_o)
        for q in range(n):
            if req_ready >> q & 1 and self.offering[q]:
                self.offering[q] = False
                self.next[q] += 1
                if self.next[q] == len(self.source[q][0]):
                    self.next[q] = 0
                    self.frame_in(q, self.source[q].popleft())
            if rsp_fire[q]:
                self.rsp[q].append(field_slice(rsp_data, q, 128))
                if rsp_last >> q & 1:
                    frame, self.rsp[q] = self.rsp[q], []
                    self.sm_response(q, frame)
            if mon_valid >> q & 1:
                self.mon[q].append(field_slice(mon_data, q, 128))
                if mon_last >> q & 1:
                    frame, self.mon[q] = self.mon[q], []
                    self.hub_request(q, frame)
            if mrsp_ready >> q & 1 and self.reads[q] and self.reads[q][0][0] <= self.cycle:
                self.reads[q].popleft()
            if mem_fire[q]:
                self.mem_request(q, we >> q & 1, field_slice(addr, q, 48),
                                 field_slice(lines, q, self.lines_w), wdata, wstrb)

    def mem_request(self, q, we, addr, lines, wdata, wstrb):
        w = self.mem_lines
        if not 1 <= lines <= w:
            self.fail(f"hub {q} memory request of {lines} lines (MemLines = {w})")
        mem = self.mem[q]
        if we:
            for i in range(lines):
                a = addr + 16 * i
                data = field_slice(wdata, w * q + i, 128)
                strobe = field_slice(wstrb, w * q + i, 16)
                old = mem.get(a, 0)
                m = sum(0xFF << (8 * b) for b in range(16) if strobe >> b & 1)
                mem[a] = (old & ~m) | (data & m)
                self.mem_seen[q].append(dg.MemAccess("write", a, data, strobe))
        else:
            data = []
            for i in range(lines):
                a = addr + 16 * i
                data.append(mem.get(a, 0))
                self.mem_seen[q].append(dg.MemAccess("read", a))
            lat = self.rng.randint(1, 4)
            due = max(self.cycle + lat, self.reads[q][-1][0] if self.reads[q] else 0)
            self.reads[q].append((due, data))
        self.check_mem(q)

    def check_counters(self):
        d, n = self.dut, self.n
        err = u(d.err_count_o)
        k = len(dg.ERROR_CODES)  # counters per port, code c at index c - 1
        rtl = [[field_slice(err, q * k + c, 32) for c in range(k)] for q in range(n)]
        gold = self.fab.error_counters()
        for q in range(n):
            if rtl[q] != gold[q]:
                self.fail(f"port {q} error counters: RTL {rtl[q]}, golden {gold[q]}")
        for name, sig in (("tlb_hits", d.tlb_hits_o), ("tlb_misses", d.tlb_misses_o)):
            v = u(sig)
            rtl_v = [field_slice(v, q, 32) for q in range(n)]
            gold_v = [self.fab.hub_stats(q)[name] for q in range(n)]
            if rtl_v != gold_v:
                self.fail(f"{name}: RTL {rtl_v}, golden {gold_v}")
        links = self.fab.links()
        for name, sig in (("up_wire_flits", d.up_flits_o), ("down_wire_flits", d.dn_flits_o)):
            v = u(sig)
            rtl_v = [field_slice(v, q, 32) for q in range(n)]
            if rtl_v != links[name]:
                self.fail(f"{name}: RTL {rtl_v}, golden {links[name]}")
        return gold


@cocotb.test()
async def random_traffic(dut):
    """A few hundred random legal packets and two malformed frames on top_p4."""
    rtl = Path(os.environ["DYSHARP_RTL"])
    model = os.environ.get("DYSHARP_MODEL", "top_p4")
    params = dg.model_params(rtl / "models.toml", model)
    cfg = dg.Config.from_rtl_params(params)
    seed = int(os.environ["COCOTB_RANDOM_SEED"])
    rng = random.Random(seed)
    npk = int(os.environ.get("DYSHARP_COCOTB_PACKETS", "500"))
    dut._log.info(f"{model}: {cfg}; seed {seed}, {npk} packets")

    b = Bench(dut, cfg, int(params.get("MemLines", 4)), rng, dut._log)
    stim = Stimulus(cfg, rng)
    frames = [stim.any_legal() for _ in range(npk)]
    bad = malformed_frames(stim)
    frames[npk // 3:npk // 3] = bad[:1]
    frames[2 * npk // 3:2 * npk // 3] = bad[1:]
    for src, f in frames:
        b.source[src].append(f.encode() if isinstance(f, dg.Packet) else f)

    # Configuration inputs (static during and after reset) and reset.
    dut.cfg_group_mask_i.value = 0
    dut.cfg_mbase_i.value = cfg.mbase
    dut.cfg_al_base_i.value = cfg.al_base
    dut.cfg_data_base_i.value = cfg.data_base
    dut.cfg_log2_bsize_i.value = cfg.log2_bsize
    dut.cfg_log2_al_entries_i.value = cfg.log2_al_entries
    dut.cfg_log2_slots_i.value = cfg.log2_slots
    for s in (dut.sm_req_valid_i, dut.sm_req_data_i, dut.sm_req_last_i, dut.sm_rsp_ready_i,
              dut.mem_req_ready_i, dut.mem_rsp_valid_i, dut.mem_rsp_rdata_i):
        s.value = 0
    dut.rst_ni.value = 0
    cocotb.start_soon(Clock(dut.clk_i, 10, unit="ns").start())
    for _ in range(4):
        await FallingEdge(dut.clk_i)
    dut.rst_ni.value = 1

    limit, quiet = 200_000, 0
    while True:
        await FallingEdge(dut.clk_i)
        b.cycle += 1
        b.drive()
        await ReadOnly()
        b.sample()
        quiet = quiet + 1 if b.drained() else 0
        if quiet >= 16:
            break
        if b.cycle > limit:
            b.fail(f"not drained after {limit} cycles: {b.pending()}")
    await FallingEdge(dut.clk_i)
    gold = b.check_counters()
    hcc = sum(c[0] for c in gold)
    length = sum(c[2] for c in gold)
    if hcc < 1 or length < 1:
        b.fail(f"the malformed frames were not counted (ERR_HCC {hcc}, ERR_LENGTH {length})")
    dut._log.info(
        f"{b.cycle} cycles, {len(frames)} frames; checked against the golden model: "
        + ", ".join(f"{v} {k}" for k, v in b.checked.items())
        + "; error counters equal ("
        + ", ".join(f"{dg.ERROR_CODES[c + 1]} {sum(g[c] for g in gold)}"
                    for c in range(len(dg.ERROR_CODES)) if sum(g[c] for g in gold))
        + "); TLB and link counters equal")
