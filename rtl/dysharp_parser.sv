// dysharp_parser: ingress frame parser of one switch port and one traffic class (spec §5.1, §6).
//
// Store-and-forward. Flits of the frame being received are captured as they arrive: flit0 into a
// register, every later flit (target-extension flits, byte enables, payload: the "tail") into a
// circular tail buffer (a dysharp_ram_1r1w of TailDepth flits, read ahead by a
// dysharp_ram_prefetch: its output is on time, as a flip-flop buffer's would be, with one flit in
// flip-flops). The spec §6 checks 1..10 run in order, exactly as `decode` in
// sim/src/packet/mod.rs, and each piece of work is done once, in the cycle its flit passes:
//   - target flit (request class): its IDs are checked against the expert count (check 9) and for
//     duplicates (check 10) with a bitmap of the experts the frame has named so far (cleared at
//     flit0): one lookup per ID and the pairs within the flit, never all pairs of the list;
//   - last flit: the header checks run on flit0 (the last flit itself for a one-flit frame), the
//     first failing check wins, and the verdict, the stamped hcc or the error flit's hcc are
//     registered (check stage, one cycle);
//   - target flit (request class, DYN op): the number of its IDs on each destination port, added
//     to per-port counts kept over the frame; the flit is stored in the tail buffer with its lanes
//     past tcount set to 16'hFFFF (spec §3: ignored on receive), so that no later stage needs the
//     list's length to read it. The list is never held whole in flip-flops nor sorted: each
//     egress prunes it as its replica streams out (dysharp_sw_prune);
//   - last flit of a good request: its destination ports, each port's target count (the replica's
//     tcount) and replica hcc, from those counts;
//   - check stage, good frame: one descriptor (flit0 with src_port := PortId, rsvd := 0, hcc
//     recomputed; the route; the number of tail flits) is pushed; its tail flits are readable
//     from this cycle on;
//   - check stage, bad frame: its tail flits were discarded (the tail write pointer rolled back to
//     the frame start), the error is reported on evt_*, and unless it is ERR_HCC one RSP_ERROR flit
//     (spec §5.1) for this port's SM is pushed on the err stream.
// The check stage reads flit0 from its capture register: the next frame cannot overwrite it
// before the cycle after (its flit0 is written at the end of that cycle).
// Frames are delimited by in_last_i only, so the next frame is parsed normally whatever the length
// fields said. Flits beyond the longest legal packet are counted, not stored.
//
// Throughput: a new frame is received while earlier ones are forwarded (DescDepth descriptors,
// TailDepth tail flits in flight), one flit per cycle in and out; the check stage adds one cycle
// of latency, no bubble.
//
// Origin 0: the port's SM (request class, requests 0x1-0x6 legal, targets captured).
//           With DynamicOps = 0 (spec §5.7) only 0x1-0x4 are legal and no target flit is
//           checked or counted: the descriptor carries the destination ports alone.
// Origin 1: the port's hub (response class, RSP_READ / RSP_PARTIAL / RSP_ERROR legal, no targets).

`include "dysharp_assert.svh"

module dysharp_parser
  import dysharp_pkg::*;
#(
  parameter int unsigned Origin         = 0,
  parameter int unsigned PortId         = 0,
  parameter int unsigned NumPorts       = 8,
  parameter int unsigned ExpertsPerPort = 32,
  parameter int unsigned MaxTargets     = 32,
  parameter bit          DynamicOps     = 1'b1, // 0: static groups and unicast only (spec §5.7)
  parameter int unsigned NumGroups      = 16,
  parameter int unsigned DescDepth      = 4,
  // Two longest tails: target flits (request class with the dynamic ops), byte enables, payload.
  parameter int unsigned TailDepth      = 2 * (1 + MaxLen + ((Origin == 0 && DynamicOps) ?
                                          (MaxTargets + TargetsPerFlit - 1) / TargetsPerFlit : 0))
) (
  input  logic                                                          clk_i,
  // Asynchronous reset; it also gates the tail RAM's write enable (a synchronous use).
  input  logic                                                          rst_ni,
  input  logic [NumGroups*NumPorts-1:0]                                 cfg_group_mask_i,
  // Flits from the ingress link arbiter. in_ready_o does not depend on in_valid_i.
  input  logic                                                          in_valid_i,
  output logic                                                          in_ready_o,
  input  flit_t                                                         in_data_i,
  input  logic                                                          in_last_i,
  // Checked good frames: descriptor (popped by the forwarder at the frame's end).
  output logic                                                          desc_valid_o,
  input  logic                                                          desc_ready_i,
  output flit_t                                                         desc_hdr_o,
  // Tail flits of the frame (target flits, byte enables, payload).
  output logic [$clog2(MaxLen+2+(MaxTargets+TargetsPerFlit-1)/TargetsPerFlit)-1:0] desc_ntail_o,
  // Request class: the destination ports and, for a DYN op, per destination port q the replica's
  // target count and hcc.
  output logic [NumPorts-1:0]                                           desc_dmask_o,
  output logic [NumPorts-1:0][$clog2(MaxTargets+1)-1:0]                 desc_cnt_o,
  output logic [NumPorts-1:0][7:0]                                      desc_rhcc_o,
  // Tail flits (target flits, byte enables, payload) of good frames, in order.
  output logic                                                          tail_valid_o,
  input  logic                                                          tail_ready_i,
  output flit_t                                                         tail_data_o,
  // RSP_ERROR packets (one flit each) for this port's SM.
  output logic                                                          err_valid_o,
  input  logic                                                          err_ready_i,
  output flit_t                                                         err_data_o,
  // Counter events, one cycle each, at a frame's last flit.
  output logic                                                          evt_err_o,
  output logic [EcodeWidth-1:0]                                         evt_code_o,
  output logic [$clog2(MaxLen+1)-1:0]                                   evt_payload_o
);

  localparam int unsigned TgtFlits  = (MaxTargets + TargetsPerFlit - 1) / TargetsPerFlit;
  localparam int unsigned MaxFrame  = 1 + TgtFlits + 1 + MaxLen;
  localparam int unsigned IdxW      = $clog2(MaxFrame + 1);      // 0..MaxFrame (saturating)
  // Tail flits: target flits (request class with the dynamic ops), byte enables, payload.
  localparam int unsigned MaxTail   = ((Origin == 0 && DynamicOps) ? TgtFlits : 0) + 1 + MaxLen;
  localparam int unsigned NtW       = $clog2(MaxLen + 2 + TgtFlits);
  localparam int unsigned PayW      = $clog2(MaxLen + 1);
  localparam int unsigned TPtrW     = (TailDepth > 1) ? $clog2(TailDepth) : 1;
  localparam int unsigned TCntW     = $clog2(TailDepth + 1);
  localparam int unsigned Experts   = NumPorts * ExpertsPerPort;
  localparam int unsigned ExpW      = (Experts > 1) ? $clog2(Experts) : 1;
  localparam bit          HasRoute  = (Origin == 0);               // requests: destinations
  localparam bit          StoreTgt  = HasRoute && DynamicOps;      // DYN ops: target lists
  localparam int unsigned PortW     = (NumPorts > 1) ? $clog2(NumPorts) : 1;
  localparam int unsigned RankW     = $clog2(MaxTargets + 1);
  localparam int unsigned RouteW    = NumPorts * (1 + RankW + 8);
  localparam int unsigned DescRtW   = StoreTgt ? RouteW : (HasRoute ? NumPorts : 0);
  localparam int unsigned DescW     = FlitBits + NtW + DescRtW;
  localparam int unsigned DescCntW  = $clog2(DescDepth + 1);
  localparam int unsigned ErrDepth  = 2;
  localparam int unsigned ErrCntW   = $clog2(ErrDepth + 1);

  typedef logic [IdxW-1:0]  idx_t;
  typedef logic [NtW-1:0]   nt_t;
  typedef logic [TPtrW-1:0] tptr_t;
  typedef logic [TCntW-1:0] tcnt_t;

  typedef logic [NumPorts-1:0][RankW-1:0]    pcnt_t;

  // Where a good request goes (request class), computed once at its last flit: the destination
  // ports, and for a DYN op each port's target count (the replica's tcount) and replica hcc.
  typedef struct packed {
    logic [NumPorts-1:0]      dmask;
    pcnt_t                    cnt;
    logic [NumPorts-1:0][7:0] rhcc;
  } route_t;

  // What a target flit's IDs add to the frame's checks 9 and 10 and to its per-port counts.
  typedef struct packed {
    logic [Experts-1:0] seen;      // experts named so far, this flit's included
    pcnt_t              cnt;       // IDs per destination port so far, this flit's included
    logic               expert;    // an ID names no expert (check 9)
    logic               dup;       // an ID repeats an earlier one (check 10)
  } tchk_t;

  // ---------------------------------------------------------------------------------------------
  // Frame capture state.
  idx_t     idx_q, idx_d;        // index of the next flit within the current frame (saturating)
  flit_t    hdr_q;               // flit0 of the current frame
  nt_t      ntail_q, ntail_d;    // tail flits of the current frame stored so far
  route_t   chk_route_q;         // request class: where the frame in the check stage goes
  hdr_t     hq;                  // captured flit0 (for the target-flit count)
  int unsigned tflits_hdr;       // target flits the captured flit0 announces (request class)
  logic     is_hdr, is_tgt;
  logic     fire, frame_end, store_tail;
  nt_t      ntail_cur;
  flit_t    tail_wdata;          // the flit stored: a target flit with its lanes past tcount set

  // Checks 9 and 10 of the frame's target flits received so far.
  tchk_t    tchk_q;

  // Check stage: the verdict on the frame that ended in the previous cycle.
  logic     chk_valid_q;         // a frame ended in the previous cycle
  ecode_e   chk_code_q;          // its first failing check (ErrNone: good)
  logic [7:0] chk_hcc_q;         // hcc of its stamped descriptor header (good) or error flit (bad)
  nt_t      chk_ntail_q;         // its tail flits
  logic [PayW-1:0] chk_pay_q;    // its payload flits (the counter event of a good frame)
  logic     chk_good;            // that frame is good

  // Tail buffer (circular, with roll-back of the frame being received): a dysharp_ram_1r1w read
  // ahead by a dysharp_ram_prefetch.
  tptr_t    tstart_q, tstart_d;  // write position of the current frame's first tail flit
  tptr_t    trd_q, trd_d;        // RAM read position (the oldest committed flit not yet read)
  tcnt_t    tcnt_q, tcnt_d;      // committed tail flits not yet taken (in the RAM or prefetched)
  tptr_t    twr;
  logic     tail_space, tail_pop, tail_re, tail_avail;
  logic [1:0] tail_staged;       // committed flits read from the RAM, not yet taken
  flit_t    tail_rdata;

  // Output queues.
  logic     desc_push, desc_in_ready, desc_space;
  logic     err_push, err_in_ready, err_space;
  logic [DescW-1:0] desc_wdata, desc_rdata;
  logic [DescCntW-1:0] desc_usage;
  logic [ErrCntW-1:0]  err_usage;
  flit_t    hdr_stamped, err_flit;

  function automatic tptr_t tptr_add(input tptr_t p, input int unsigned n);
    int unsigned s;
    s = 32'(p) + n;
    if (s >= TailDepth) begin
      s = s - TailDepth;
    end
    return s[TPtrW-1:0];
  endfunction

  // Checks 9 and 10 over target flit `k` (IDs TargetsPerFlit*k ...) of a list of `tcount` IDs,
  // given the experts the earlier flits named: each ID against the bitmap and the earlier IDs of
  // the same flit. An ID that names no expert is not entered (the frame fails check 9 anyway).
  // Also each ID's destination port counted (the counts of a bad frame are never used).
  function automatic tchk_t tflit_check_f(input flit_t flit, input int unsigned k,
                                          input int unsigned tcount, input tchk_t prev);
    tchk_t       c;
    logic [15:0] id [TargetsPerFlit];
    logic        in_list [TargetsPerFlit];
    logic [ExpW-1:0] e;
    logic [PortW-1:0] port;
    c = prev;
    for (int unsigned l = 0; l < TargetsPerFlit; l++) begin
      id[l]      = flit[16*l +: 16];
      in_list[l] = (TargetsPerFlit * k + l) < tcount;
    end
    for (int unsigned l = 0; l < TargetsPerFlit; l++) begin
      if (in_list[l]) begin
        port        = PortW'(32'(id[l]) / ExpertsPerPort);
        c.cnt[port] = c.cnt[port] + RankW'(1);
        if (32'(id[l]) >= Experts) begin
          c.expert = 1'b1;
        end else begin
          e = id[l][ExpW-1:0];
          if (c.seen[e]) begin
            c.dup = 1'b1;
          end
          for (int unsigned m = 0; m < l; m++) begin
            if (id[m] == id[l]) begin
              c.dup = 1'b1;
            end
          end
          c.seen[e] = 1'b1;
        end
      end
    end
    return c;
  endfunction

  // Target flit `k` of a list of `tcount` IDs as stored: its lanes past the list set to 16'hFFFF.
  function automatic flit_t tflit_pad_f(input flit_t flit, input int unsigned k,
                                        input int unsigned tcount);
    flit_t f;
    f = flit;
    for (int unsigned l = 0; l < TargetsPerFlit; l++) begin
      if ((TargetsPerFlit * k + l) >= tcount) begin
        f[16*l +: 16] = 16'hFFFF;
      end
    end
    return f;
  endfunction

  // The route of a good request with flit0 `f` (stamped hcc `hcc`) whose target list has `cnt`
  // IDs per port: its destination ports, and each replica's tcount and hcc. The CRC is linear (init 0, no final XOR): hcc(h ^ d) = hcc(h) ^ hcc(d), with d nonzero
  // only in the tcount field.
  function automatic route_t route_f(input flit_t f, input logic [7:0] hcc, input pcnt_t cnt,
                                     input logic [NumGroups*NumPorts-1:0] groups);
    route_t      r;
    hdr_t        h;
    flit_t       tcx;
    h = hdr_t'(f);
    r = '0;
    if (DynamicOps && op_is_dyn(h.opcode)) begin
      r.cnt = cnt;
      for (int unsigned q = 0; q < NumPorts; q++) begin
        r.dmask[q] = (cnt[q] != '0);
      end
    end else if (op_is_mc(h.opcode)) begin
      if (32'(h.route) < NumGroups) begin
        r.dmask = groups[NumPorts*32'(h.route) +: NumPorts];
      end
    end else begin
      for (int unsigned q = 0; q < NumPorts; q++) begin
        r.dmask[q] = (32'(h.route) == q);
      end
    end
    for (int unsigned q = 0; q < NumPorts; q++) begin
      tcx                           = '0;
      tcx[TcountLsb +: TcountWidth] = h.tcount ^ TcountWidth'(r.cnt[q]);
      r.rhcc[q]                     = DynamicOps ? (hcc ^ hcc_f(tcx)) : '0;
    end
    return r;
  endfunction

  // Spec §6 checks 1..10 of a frame of `nflits` flits with flit0 `f`, first failing wins
  // (decode() in sim/src/packet/mod.rs); checks 9 and 10 come from the target flits. The checks
  // do not look at rsvd, acc, tag and src_port (hence the lint waiver).
  function automatic ecode_e frame_code_f(input flit_t f, input int unsigned nflits,
                                          input logic expert_bad, input logic dup_bad,
                                          input logic [NumGroups*NumPorts-1:0] groups);
    hdr_t        h;
    int unsigned tcount, len, tfl, want;
    logic        op_ok, tcount_ok, route_ok;
    logic [NumPorts-1:0] gmask;
    ecode_e      code;
    h      = hdr_t'(f);
    tcount = 32'(h.tcount);
    len    = 32'(h.len);

    // Opcode legality for the origin, and stage (requests only; responses copy the request's).
    if (Origin == 0) begin
      // Without the dynamic operations (DynamicOps = 0) DYN_ST and DYN_LD_REDUCE are illegal.
      op_ok = op_is_request(h.opcode) && (DynamicOps || !op_is_dyn(h.opcode)) &&
              ((h.stage == 1'b1) ? op_needs_combine(h.opcode) : op_needs_dispatch(h.opcode));
    end else begin
      op_ok = op_is_hub_response(h.opcode);
    end

    if (op_is_dyn(h.opcode)) begin
      tcount_ok = (tcount != 0) && (tcount <= MaxTargets);
    end else begin
      tcount_ok = (tcount == 0);
    end

    tfl  = op_is_dyn(h.opcode) ? (tcount + TargetsPerFlit - 1) / TargetsPerFlit : 0;
    want = 1 + tfl + (op_is_store(h.opcode) ? 1 : 0) +
           (op_carries_payload(h.opcode, h.ecode) ? len : 0);

    gmask = '0;
    if (32'(h.route) < NumGroups) begin
      gmask = groups[NumPorts*32'(h.route) +: NumPorts];
    end
    if (op_is_mc(h.opcode)) begin
      route_ok = (32'(h.route) < NumGroups) && (gmask != '0);
    end else if (op_is_dyn(h.opcode)) begin
      route_ok = 1'b1;
    end else begin
      route_ok = 32'(h.route) < NumPorts;
    end

    if (h.hcc != hcc_f(f)) begin
      code = ErrHcc;
    end else if (!op_ok) begin
      code = ErrOpcode;
    end else if (op_len_checked(h.opcode, h.ecode) && ((len == 0) || (len > MaxLen))) begin
      code = ErrLength;
    end else if (!tcount_ok) begin
      code = ErrTcount;
    end else if (nflits != want) begin
      code = ErrFrame;
    end else if ((h.dtype == 2'd3) || (h.rop == 2'd3)) begin
      code = ErrFormat;
    end else if (h.maddr[3:0] != '0) begin
      code = ErrAlign;
    end else if (!route_ok) begin
      code = ErrRoute;
    end else if (expert_bad) begin
      code = ErrExpert;
    end else if (dup_bad) begin
      code = ErrDup;
    end else begin
      code = ErrNone;
    end
    return code;
  endfunction

  // The descriptor header of a good frame: src_port := PortId, rsvd := 0, and `hcc`.
  function automatic flit_t stamp_f(input flit_t f, input logic [7:0] hcc);
    hdr_t hs;
    hs          = hdr_t'(f);
    hs.src_port = SrcPortWidth'(PortId);
    hs.rsvd     = '0;
    hs.hcc      = hcc;
    return flit_t'(hs);
  endfunction

  // The RSP_ERROR of a bad frame (golden: Switch::ingress_frame): the frame's maddr and tag, for
  // this port's SM, with check code `hcc`.
  function automatic flit_t err_flit_f(input logic [MaddrWidth-1:0] maddr,
                                       input logic [TagWidth-1:0] tag, input ecode_e code,
                                       input logic [7:0] hcc);
    hdr_t he;
    he          = '0;
    he.opcode   = OpRspError;
    he.maddr    = maddr;
    he.tag      = tag;
    he.route    = RouteWidth'(PortId);
    he.ecode    = code;
    he.src_port = SrcPortWidth'(PortId);
    he.hcc      = hcc;
    return flit_t'(he);
  endfunction

  assign hq     = hdr_t'(hdr_q);
  assign is_hdr = (idx_q == '0);

  always_comb begin
    tflits_hdr = 0;
    if (StoreTgt && op_is_dyn(hq.opcode) && (hq.tcount != '0) && (32'(hq.tcount) <= MaxTargets)) begin
      tflits_hdr = (32'(hq.tcount) + TargetsPerFlit - 1) / TargetsPerFlit;
    end
  end

  // Room for the frame in the tail buffer, and for the check stage's push in the queue it goes
  // to (a frame in the check stage holds one place in each until it is pushed).
  assign is_tgt     = !is_hdr && (32'(idx_q) <= tflits_hdr);
  assign tail_space = (32'(tcnt_q) + 32'(ntail_q)) < TailDepth;
  assign desc_space = (32'(desc_usage) + 32'(chk_valid_q)) < DescDepth;
  assign err_space  = (32'(err_usage) + 32'(chk_valid_q)) < ErrDepth;
  assign in_ready_o = tail_space && desc_space && err_space;
  assign fire       = in_valid_i && in_ready_o;
  assign frame_end  = fire && in_last_i;
  assign store_tail = fire && !is_hdr && (32'(ntail_q) < MaxTail);
  assign ntail_cur  = ntail_q + nt_t'(store_tail);

  if (StoreTgt) begin : gen_tgt
    // Checks 9 and 10 and the per-port counts, one target flit at a time, as it is captured.
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        tchk_q <= '0;
      end else if (fire && is_hdr) begin
        tchk_q <= '0;
      end else if (fire && is_tgt) begin
        tchk_q <= tflit_check_f(in_data_i, 32'(idx_q) - 1, 32'(hq.tcount), tchk_q);
      end
    end
    assign tail_wdata = is_tgt ? tflit_pad_f(in_data_i, 32'(idx_q) - 1, 32'(hq.tcount))
                               : in_data_i;
  end else begin : gen_no_tgt
    assign tchk_q     = '0;
    assign tail_wdata = in_data_i;
  end

  // ---------------------------------------------------------------------------------------------
  // The verdict, once per frame at its last flit, registered into the check stage.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      chk_route_q <= '0;
      chk_valid_q <= 1'b0;
      chk_code_q  <= ErrNone;
      chk_hcc_q   <= '0;
      chk_ntail_q <= '0;
      chk_pay_q   <= '0;
    end else begin
      chk_valid_q <= frame_end;
      if (frame_end) begin
        automatic flit_t      f0;
        automatic tchk_t      tc;  // its `seen` is not needed at the last flit
        automatic ecode_e     code;
        automatic logic [7:0] hcc;
        f0 = is_hdr ? in_data_i : hdr_q;
        // A one-flit frame has no targets: the checks of the previous frame are still in tchk_q.
        tc = is_hdr ? '0 : tchk_q;
        if (StoreTgt && is_tgt) begin
          tc = tflit_check_f(in_data_i, 32'(idx_q) - 1, 32'(hq.tcount), tchk_q);
        end
        code        = frame_code_f(f0, 32'(idx_q) + 1, tc.expert, tc.dup, cfg_group_mask_i);
        chk_code_q  <= code;
        if (code == ErrNone) begin
          hcc       = hcc_f(stamp_f(f0, '0));
          chk_hcc_q <= hcc;
          if (HasRoute) begin
            chk_route_q <= route_f(f0, hcc, tc.cnt, cfg_group_mask_i);
          end
        end else begin
          chk_hcc_q <= hcc_f(err_flit_f(f0[MaddrLsb +: MaddrWidth], f0[TagLsb +: TagWidth], code,
                                        '0));
        end
        chk_ntail_q <= ntail_cur;
        chk_pay_q   <= op_carries_payload(f0[OpcodeLsb +: OpcodeWidth], f0[EcodeLsb +: EcodeWidth])
                       ? f0[LenLsb +: LenWidth] : '0;
      end
    end
  end


  // A good frame's tail flits become readable in its check stage; a bad frame's are dropped by
  // not advancing tstart (the next frame writes over them).
  assign chk_good = chk_valid_q && (chk_code_q == ErrNone);

  // ---------------------------------------------------------------------------------------------
  // Capture and tail-buffer bookkeeping.
  always_comb begin
    idx_d = idx_q;
    if (frame_end) begin
      idx_d = '0;
    end else if (fire && (32'(idx_q) < MaxFrame)) begin
      idx_d = idx_q + idx_t'(1);
    end
  end

  assign ntail_d  = frame_end ? '0 : ntail_cur;
  assign twr      = tptr_add(tstart_q, 32'(ntail_q));
  assign tail_pop = tail_valid_o && tail_ready_i;
  assign tstart_d = chk_good ? tptr_add(tstart_q, 32'(chk_ntail_q)) : tstart_q;
  assign trd_d    = tail_re ? tptr_add(trd_q, 1) : trd_q;

  always_comb begin
    tcnt_d = tcnt_q;
    if (tail_pop) begin
      tcnt_d = tcnt_d - tcnt_t'(1);
    end
    if (chk_good) begin
      tcnt_d = tcnt_d + tcnt_t'(chk_ntail_q);
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      idx_q    <= '0;
      hdr_q    <= '0;
      ntail_q  <= '0;
      tstart_q <= '0;
      trd_q    <= '0;
      tcnt_q   <= '0;
    end else begin
      idx_q    <= idx_d;
      ntail_q  <= ntail_d;
      tstart_q <= tstart_d;
      trd_q    <= trd_d;
      tcnt_q   <= tcnt_d;
      if (fire && is_hdr) begin
        hdr_q <= in_data_i;
      end
    end
  end

  // The RAM holds a committed flit not yet read: one of tcnt_q that is not in the prefetch
  // stages, or the first of the frame committed in this cycle (check stage; its flits were
  // written by the cycle before, and every earlier committed flit has been read, so it is at
  // trd_q). Reading the committing frame in its check stage puts its first tail flit on the
  // output in the cycle its descriptor is, as the flip-flop buffer did.
  assign tail_avail = (32'(tcnt_q) != 32'(tail_staged)) || (chk_good && (chk_ntail_q != '0));

  dysharp_ram_1r1w #(
    .Width (FlitBits),
    .Depth (TailDepth)
  ) u_tail_ram (
    .clk_i   (clk_i),
    .we_i    (rst_ni && store_tail),
    .waddr_i (twr),
    .wdata_i (tail_wdata),
    .re_i    (tail_re),
    .raddr_i (trd_q),
    .rdata_o (tail_rdata)
  );

  logic tail_stage_order;
  dysharp_ram_prefetch #(
    .Width (FlitBits)
  ) u_tail_prefetch (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .avail_i          (tail_avail),
    .re_o             (tail_re),
    .rdata_i          (tail_rdata),
    .byp_i            (1'b0),
    .byp_data_i       ('0),
    .out_valid_o      (tail_valid_o),
    .out_ready_i      (tail_ready_i),
    .out_data_o       (tail_data_o),
    .stage_cnt_o      (tail_staged),
    .stage_order_ok_o (tail_stage_order)
  );

  // ---------------------------------------------------------------------------------------------
  // Descriptor and error queues, pushed from the check stage. flit0 is still in its capture
  // register (the next frame's flit0 is written at the end of this cycle).
  assign desc_push   = chk_good;
  assign err_push    = chk_valid_q && !chk_good && (chk_code_q != ErrHcc);
  assign hdr_stamped = stamp_f(hdr_q, chk_hcc_q);
  assign err_flit    = err_flit_f(hdr_q[MaddrLsb +: MaddrWidth], hdr_q[TagLsb +: TagWidth],
                                  chk_code_q, chk_hcc_q);

  if (StoreTgt) begin : gen_desc_tgt
    route_t rt;
    assign desc_wdata   = {chk_route_q, chk_ntail_q, hdr_stamped};
    assign rt           = route_t'(desc_rdata[FlitBits+NtW +: DescRtW]);
    assign desc_dmask_o = rt.dmask;
    assign desc_cnt_o   = rt.cnt;
    assign desc_rhcc_o  = rt.rhcc;
  end else if (HasRoute) begin : gen_desc_static
    // DynamicOps = 0: no target lists; a replica is the request itself (only the destinations).
    assign desc_wdata   = {chk_route_q.dmask, chk_ntail_q, hdr_stamped};
    assign desc_dmask_o = desc_rdata[FlitBits+NtW +: DescRtW];
    assign desc_cnt_o   = '0;
    assign desc_rhcc_o  = '0;
    logic unused_route;
    assign unused_route = ^{chk_route_q.cnt, chk_route_q.rhcc};
  end else begin : gen_desc_no_tgt
    assign desc_wdata   = {chk_ntail_q, hdr_stamped};
    assign desc_dmask_o = '0;
    assign desc_cnt_o   = '0;
    assign desc_rhcc_o  = '0;
  end
  assign desc_hdr_o   = desc_rdata[0 +: FlitBits];
  assign desc_ntail_o = desc_rdata[FlitBits +: NtW];

  dysharp_fifo #(
    .Width (DescW),
    .Depth (DescDepth)
  ) u_desc_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (desc_push),
    .in_ready_o  (desc_in_ready),
    .in_data_i   (desc_wdata),
    .out_valid_o (desc_valid_o),
    .out_ready_i (desc_ready_i),
    .out_data_o  (desc_rdata),
    .usage_o     (desc_usage)
  );

  dysharp_fifo #(
    .Width (FlitBits),
    .Depth (ErrDepth)
  ) u_err_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (err_push),
    .in_ready_o  (err_in_ready),
    .in_data_i   (err_flit),
    .out_valid_o (err_valid_o),
    .out_ready_i (err_ready_i),
    .out_data_o  (err_data_o),
    .usage_o     (err_usage)
  );

  assign evt_err_o     = chk_valid_q && !chk_good;
  assign evt_code_o    = chk_code_q;
  assign evt_payload_o = chk_good ? chk_pay_q : '0;

  // The check stage's place in the queue it goes to was reserved (desc_space, err_space).
  logic unused_in_ready;
  assign unused_in_ready = desc_in_ready ^ err_in_ready;

  // Fields of the captured flit0 not needed for the target-flit count.
  logic unused_hq;
  assign unused_hq = ^{hq.hcc, hq.rsvd, hq.ecode, hq.route, hq.acc, hq.rop, hq.dtype, hq.len,
                       hq.tag, hq.src_port, hq.maddr, hq.stage};

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_tail_depth, TailDepth >= MaxTail + 1,
    "TailDepth must hold one longest tail plus one flit")

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh). A stalled output
  // is held in a copy taken only while it is stalled (dysharp_stream_chk for the tail and RSP_ERROR
  // streams).

  // The descriptor's outputs as one word (read only where a rule reads it: never built in a cycle
  // in which no descriptor was stalled).
  `define DYSHARP_PARSER_DESC_OUT {desc_hdr_o, desc_ntail_o, desc_dmask_o, desc_cnt_o, desc_rhcc_o}

  logic                                       desc_hold_q;  // stalled at the last edge
  logic [$bits(`DYSHARP_PARSER_DESC_OUT)-1:0] desc_held_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      desc_hold_q <= 1'b0;
      desc_held_q <= '0;
    end else begin
      `DYSHARP_ASSERT_I(a_tail_range, 32'(tcnt_q) + 32'(ntail_q) <= TailDepth,
        $sformatf("origin %0d, port %0d: more tail flits than the buffer holds", Origin, PortId))
      // The prefetch stages hold committed flits only, in order, and the output shows a flit
      // exactly while one is committed and not taken (as the flip-flop buffer's tcnt_q != 0 did).
      `DYSHARP_ASSERT_I(a_tail_staged, 32'(tail_staged) <= 32'(tcnt_q) && tail_stage_order,
        $sformatf("origin %0d, port %0d: a prefetched tail flit that is not committed",
                  Origin, PortId))
      `DYSHARP_ASSERT_I(a_tail_valid, tail_valid_o == (tcnt_q != '0),
        $sformatf("origin %0d, port %0d: tail_valid_o is not (a committed flit is waiting)",
                  Origin, PortId))
      if (desc_hold_q) begin
        `DYSHARP_ASSERT_I(a_desc_stable, desc_valid_o && `DYSHARP_PARSER_DESC_OUT == desc_held_q,
          $sformatf("origin %0d, port %0d: a stalled descriptor changed or went away",
                    Origin, PortId))
      end
      // Every good request has a destination.
      `DYSHARP_ASSERT_I(a_desc_dest, !(HasRoute && desc_valid_o) || desc_dmask_o != '0,
        $sformatf("origin %0d, port %0d: a request descriptor without a destination",
                  Origin, PortId))
      // A good frame's stored tail is exactly its target, byte-enable and payload flits.
      `DYSHARP_ASSERT_I(a_good_tail, !desc_push || 32'(chk_ntail_q) == tflits_hdr +
        (op_is_store(hdr_q[OpcodeLsb +: OpcodeWidth]) ? 1 : 0) +
        32'(chk_pay_q),
        $sformatf("origin %0d, port %0d: a good frame's tail is not its targets, byte enables and payload",
                  Origin, PortId))
      `DYSHARP_ASSERT_I(a_events, (!evt_err_o || chk_code_q != ErrNone) &&
        (32'(evt_payload_o) <= MaxLen),
        $sformatf("origin %0d, port %0d: a counter event out of range", Origin, PortId))
      // The check stage's push always finds room (reserved when its frame's last flit was taken).
      `DYSHARP_ASSERT_I(a_desc_room, !desc_push || desc_in_ready,
        $sformatf("origin %0d, port %0d: a descriptor pushed into a full queue", Origin, PortId))
      `DYSHARP_ASSERT_I(a_err_room, !err_push || err_in_ready,
        $sformatf("origin %0d, port %0d: an RSP_ERROR pushed into a full queue",
                  Origin, PortId))
      // A target flit is checked against the header captured one or more cycles before.
      `DYSHARP_ASSERT_I(a_tgt_after_hdr, !(fire && is_tgt) || idx_q != '0,
        $sformatf("origin %0d, port %0d: a target flit without its header", Origin, PortId))
      desc_hold_q <= desc_valid_o && !desc_ready_i;
      // Data only: read only while desc_hold_q.
      if (desc_valid_o && !desc_ready_i) begin
        desc_held_q <= `DYSHARP_PARSER_DESC_OUT;
      end
    end
  end

  // The tail and RSP_ERROR streams' stability (the descriptor's is above: its 250-odd bits as a
  // port connection would be built every cycle).
  dysharp_stream_chk #(
    .Width (FlitBits),
    .Name  ($sformatf("dysharp_parser (origin %0d, port %0d): a_tail_stable", Origin, PortId))
  ) u_tail_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (tail_valid_o),
    .ready_i (tail_ready_i),
    .data_i  (tail_data_o)
  );

  dysharp_stream_chk #(
    .Width (FlitBits),
    .Name  ($sformatf("dysharp_parser (origin %0d, port %0d): a_err_stable", Origin, PortId))
  ) u_err_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (err_valid_o),
    .ready_i (err_ready_i),
    .data_i  (err_data_o)
  );
`endif

endmodule
`undef DYSHARP_PARSER_DESC_OUT
