// dysharp_parser: ingress frame parser of one switch port and one traffic class (spec §5.1, §6).
//
// Store-and-forward. Flits of the frame being received are captured as they arrive: flit0 and the
// target-extension flits into registers, every later flit (byte enables, payload: the "tail") into
// a circular tail buffer. When the frame's last flit arrives, the spec §6 checks 1..10 run in order
// on the captured frame (combinationally, the last flit merged in), exactly as `decode` in
// sim/src/packet/mod.rs:
//   - good frame: one descriptor (flit0 with src_port := PortId, rsvd := 0, hcc recomputed; the raw
//     target flits; the number of tail flits) is pushed, and its tail flits become readable;
//   - bad frame: its tail flits are discarded (the tail write pointer rolls back to the frame
//     start), the error is reported on evt_*, and unless it is ERR_HCC one RSP_ERROR flit (spec
//     §5.1) for this port's SM is pushed on the err stream.
// Frames are delimited by in_last_i only, so the next frame is parsed normally whatever the length
// fields said. Flits beyond the longest legal packet are counted, not stored.
//
// Throughput: a new frame is received while earlier ones are forwarded (DescDepth descriptors,
// TailDepth tail flits in flight), one flit per cycle in and out.
//
// Origin 0: the port's SM (request class, requests 0x1-0x6 legal, targets captured).
// Origin 1: the port's hub (response class, RSP_READ / RSP_PARTIAL / RSP_ERROR legal, no targets).

module dysharp_parser
  import dysharp_pkg::*;
#(
  parameter int unsigned Origin         = 0,
  parameter int unsigned PortId         = 0,
  parameter int unsigned NumPorts       = 8,
  parameter int unsigned ExpertsPerPort = 32,
  parameter int unsigned MaxTargets     = 32,
  parameter int unsigned NumGroups      = 16,
  parameter int unsigned DescDepth      = 4,
  parameter int unsigned TailDepth      = 2 * (1 + MaxLen)
) (
  input  logic                                                          clk_i,
  // The SVA `disable iff (!rst_ni)` samples the asynchronous reset on the clock; not a flop.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                                                          rst_ni,
  /* verilator lint_on SYNCASYNCNET */
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
  output logic [((MaxTargets+TargetsPerFlit-1)/TargetsPerFlit)*FlitBits-1:0] desc_tgt_o,
  output logic [$clog2(MaxLen+2)-1:0]                                   desc_ntail_o,
  // Tail flits (byte enables, payload) of good frames, in order.
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
  localparam int unsigned MaxTail   = 1 + MaxLen;                // byte-enable flit + payload
  localparam int unsigned MaxFrame  = 1 + TgtFlits + MaxTail;
  localparam int unsigned IdxW      = $clog2(MaxFrame + 1);      // 0..MaxFrame (saturating)
  localparam int unsigned NtW       = $clog2(MaxTail + 1);
  localparam int unsigned PayW      = $clog2(MaxLen + 1);
  localparam int unsigned TPtrW     = (TailDepth > 1) ? $clog2(TailDepth) : 1;
  localparam int unsigned TCntW     = $clog2(TailDepth + 1);
  localparam int unsigned Experts   = NumPorts * ExpertsPerPort;
  localparam bit          StoreTgt  = (Origin == 0);
  localparam int unsigned DescTgtW  = StoreTgt ? TgtFlits * FlitBits : 0;
  localparam int unsigned DescW     = FlitBits + NtW + DescTgtW;

  typedef logic [IdxW-1:0]  idx_t;
  typedef logic [NtW-1:0]   nt_t;
  typedef logic [TPtrW-1:0] tptr_t;
  typedef logic [TCntW-1:0] tcnt_t;

  // ---------------------------------------------------------------------------------------------
  // Opcode classes (spec §3).
  function automatic logic op_is_dyn(input logic [OpcodeWidth-1:0] op);
    return (op == OpDynSt) || (op == OpDynLdReduce);
  endfunction

  function automatic logic op_is_store(input logic [OpcodeWidth-1:0] op);
    return (op == OpWrite) || (op == OpMcSt) || (op == OpDynSt);
  endfunction

  function automatic logic op_carries_payload(input logic [OpcodeWidth-1:0] op,
                                              input logic [EcodeWidth-1:0] ecode);
    return (op == OpWrite) || (op == OpMcSt) || (op == OpDynSt) || (op == OpRspRead) ||
           (op == OpRspReduce) || ((op == OpRspPartial) && (ecode == '0));
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Frame capture state.
  idx_t     idx_q, idx_d;        // index of the next flit within the current frame (saturating)
  flit_t    hdr_q;               // flit0 of the current frame
  nt_t      ntail_q, ntail_d;    // tail flits of the current frame stored so far
  flit_t    hdr_cur;             // flit0 with the incoming flit merged in
  flit_t    tgt_cur [TgtFlits];  // target flits with the incoming flit merged in
  hdr_t     hq;                  // captured flit0 (for the target-flit count)
  int unsigned tflits_hdr;       // target flits the captured flit0 announces (request class)
  logic     is_hdr, is_tgt, is_tail;
  logic     fire, frame_end, store_tail;
  nt_t      ntail_cur;

  // Tail buffer (circular, with roll-back of the frame being received).
  flit_t    tmem_q [TailDepth];
  tptr_t    tstart_q, tstart_d;  // write position of the current frame's first tail flit
  tptr_t    trd_q, trd_d;        // read position
  tcnt_t    tcnt_q, tcnt_d;      // committed (readable) tail flits
  tptr_t    twr;
  logic     tail_space, tail_pop;

  // Output queues.
  logic     desc_push, desc_in_ready;
  logic     err_push, err_in_ready;
  logic [DescW-1:0] desc_wdata, desc_rdata;
  logic [$clog2(DescDepth+1)-1:0] unused_desc_usage;
  logic [$clog2(2+1)-1:0]         unused_err_usage;

  // Check results.
  ecode_e   code;
  int unsigned want_tail;        // tail flits (byte enables + payload) the flit0 announces
  logic     unused_chk;          // flit0 fields the checks do not look at
  logic     good;
  flit_t    hdr_stamped, err_flit;
  logic [PayW-1:0] payload_flits;

  function automatic tptr_t tptr_add(input tptr_t p, input int unsigned n);
    int unsigned s;
    s = 32'(p) + n;
    if (s >= TailDepth) begin
      s = s - TailDepth;
    end
    return s[TPtrW-1:0];
  endfunction

  assign hq     = hdr_t'(hdr_q);
  assign is_hdr = (idx_q == '0);

  always_comb begin
    tflits_hdr = 0;
    if (StoreTgt && op_is_dyn(hq.opcode) && (hq.tcount != '0) && (32'(hq.tcount) <= MaxTargets)) begin
      tflits_hdr = (32'(hq.tcount) + TargetsPerFlit - 1) / TargetsPerFlit;
    end
  end

  assign is_tgt     = !is_hdr && (32'(idx_q) <= tflits_hdr);
  assign is_tail    = !is_hdr && !is_tgt;
  assign tail_space = (32'(tcnt_q) + 32'(ntail_q)) < TailDepth;
  assign in_ready_o = tail_space && desc_in_ready && err_in_ready;
  assign fire       = in_valid_i && in_ready_o;
  assign frame_end  = fire && in_last_i;
  assign store_tail = fire && is_tail && (32'(ntail_q) < MaxTail);
  assign ntail_cur  = ntail_q + nt_t'(store_tail);
  assign hdr_cur    = is_hdr ? in_data_i : hdr_q;

  if (StoreTgt) begin : gen_tgt
    flit_t tgt_q [TgtFlits];
    for (genvar k = 0; k < TgtFlits; k++) begin : gen_flit
      assign tgt_cur[k] = (is_tgt && (32'(idx_q) == k + 1)) ? in_data_i : tgt_q[k];
      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          tgt_q[k] <= '0;
        end else if (fire && is_tgt && (32'(idx_q) == k + 1)) begin
          tgt_q[k] <= in_data_i;
        end
      end
    end
  end else begin : gen_no_tgt
    for (genvar k = 0; k < TgtFlits; k++) begin : gen_flit
      assign tgt_cur[k] = '0;
    end
  end

  // All target IDs as one vector, for the duplicate check.
  logic [TgtFlits*FlitBits-1:0] tgt_all;
  for (genvar k = 0; k < TgtFlits; k++) begin : gen_tgt_all
    assign tgt_all[k*FlitBits +: FlitBits] = tgt_cur[k];
  end

  // True if two of the first n target IDs are equal. Kept as a call in Verilator
  // (no_inline_task): inlined, its MaxTargets^2/2 comparisons dominate the C++ size.
  function automatic logic dup_f(input logic [TgtFlits*FlitBits-1:0] ids, input int unsigned n);
    /* verilator no_inline_task */
    logic bad;
    bad = 1'b0;
    for (int unsigned i = 0; i < MaxTargets; i++) begin
      for (int unsigned j = i + 1; j < MaxTargets; j++) begin
        if ((j < n) && (ids[16*i +: 16] == ids[16*j +: 16])) begin
          bad = 1'b1;
        end
      end
    end
    return bad;
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Spec §6 checks 1..10, first failing wins (decode() in sim/src/packet/mod.rs).
  always_comb begin
    hdr_t        h;
    logic [15:0] tid [MaxTargets];
    int unsigned tcount, len, want, nflits, tfl;
    logic        op_ok, len_checked, tcount_ok, route_ok, expert_bad, dup_bad;
    logic [NumPorts-1:0] gmask;

    h      = hdr_t'(hdr_cur);
    tcount = 32'(h.tcount);
    len    = 32'(h.len);
    nflits = 32'(idx_q) + 1;

    for (int unsigned i = 0; i < MaxTargets; i++) begin
      tid[i] = tgt_cur[i / TargetsPerFlit][16 * (i % TargetsPerFlit) +: 16];
    end

    // Opcode legality for the origin, and stage (requests only; responses copy the request's).
    if (Origin == 0) begin
      op_ok = (h.opcode >= OpWrite) && (h.opcode <= OpDynLdReduce) &&
              (h.stage == ((h.opcode == OpDynLdReduce) ? 1'b1 : 1'b0));
    end else begin
      op_ok = (h.opcode == OpRspRead) || (h.opcode == OpRspPartial) || (h.opcode == OpRspError);
    end

    len_checked = !((h.opcode == OpRspError) || ((h.opcode == OpRspPartial) && (h.ecode != '0)));

    if (op_is_dyn(h.opcode)) begin
      tcount_ok = (tcount != 0) && (tcount <= MaxTargets);
    end else begin
      tcount_ok = (tcount == 0);
    end

    tfl  = op_is_dyn(h.opcode) ? (tcount + TargetsPerFlit - 1) / TargetsPerFlit : 0;
    want = 1 + tfl + (op_is_store(h.opcode) ? 1 : 0) +
           (op_carries_payload(h.opcode, h.ecode) ? len : 0);
    want_tail = want - 1 - tfl;

    gmask = '0;
    for (int unsigned g = 0; g < NumGroups; g++) begin
      if (32'(h.route) == g) begin
        gmask = cfg_group_mask_i[NumPorts*g +: NumPorts];
      end
    end
    if ((h.opcode == OpMcSt) || (h.opcode == OpMcLdReduce)) begin
      route_ok = (32'(h.route) < NumGroups) && (gmask != '0);
    end else if (op_is_dyn(h.opcode)) begin
      route_ok = 1'b1;
    end else begin
      route_ok = 32'(h.route) < NumPorts;
    end

    expert_bad = 1'b0;
    for (int unsigned i = 0; i < MaxTargets; i++) begin
      if ((i < tcount) && (32'(tid[i]) >= Experts)) begin
        expert_bad = 1'b1;
      end
    end
    dup_bad = dup_f(tgt_all, tcount);

    unused_chk = ^{h.rsvd, h.acc, h.tag, h.src_port};

    if (h.hcc != hcc_f(hdr_cur)) begin
      code = ErrHcc;
    end else if (!op_ok) begin
      code = ErrOpcode;
    end else if (len_checked && ((len == 0) || (len > MaxLen))) begin
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
  end

  assign good = (code == ErrNone);

  // Good frame: stamp src_port, clear rsvd, recompute hcc.
  // Bad frame: RSP_ERROR with the frame's maddr and tag (golden: Switch::ingress_frame).
  always_comb begin
    hdr_t hs, he, h;
    h           = hdr_t'(hdr_cur);
    hs          = h;
    hs.src_port = SrcPortWidth'(PortId);
    hs.rsvd     = '0;
    hs.hcc      = hcc_f(flit_t'(hs));
    hdr_stamped = flit_t'(hs);

    he          = '0;
    he.opcode   = OpRspError;
    he.maddr    = h.maddr;
    he.tag      = h.tag;
    he.route    = RouteWidth'(PortId);
    he.ecode    = code;
    he.src_port = SrcPortWidth'(PortId);
    he.hcc      = hcc_f(flit_t'(he));
    err_flit    = flit_t'(he);

    payload_flits = op_carries_payload(h.opcode, h.ecode) ? h.len : '0;
  end

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
  assign tstart_d = (frame_end && good) ? tptr_add(tstart_q, 32'(ntail_cur)) : tstart_q;
  assign trd_d    = tail_pop ? tptr_add(trd_q, 1) : trd_q;

  always_comb begin
    tcnt_d = tcnt_q;
    if (tail_pop) begin
      tcnt_d = tcnt_d - tcnt_t'(1);
    end
    if (frame_end && good) begin
      tcnt_d = tcnt_d + tcnt_t'(ntail_cur);
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

  always_ff @(posedge clk_i) begin
    if (store_tail) begin
      tmem_q[twr] <= in_data_i;
    end
  end

  assign tail_valid_o = (tcnt_q != '0);
  assign tail_data_o  = tmem_q[trd_q];

  // ---------------------------------------------------------------------------------------------
  // Descriptor and error queues.
  assign desc_push = frame_end && good;
  assign err_push  = frame_end && !good && (code != ErrHcc);

  if (StoreTgt) begin : gen_desc_tgt
    logic [DescTgtW-1:0] tgt_flat;
    for (genvar k = 0; k < TgtFlits; k++) begin : gen_flat
      assign tgt_flat[k*FlitBits +: FlitBits] = tgt_cur[k];
    end
    assign desc_wdata = {tgt_flat, ntail_cur, hdr_stamped};
    assign desc_tgt_o = desc_rdata[FlitBits+NtW +: DescTgtW];
  end else begin : gen_desc_no_tgt
    assign desc_wdata = {ntail_cur, hdr_stamped};
    assign desc_tgt_o = '0;
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
    .usage_o     (unused_desc_usage)
  );

  dysharp_fifo #(
    .Width (FlitBits),
    .Depth (2)
  ) u_err_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (err_push),
    .in_ready_o  (err_in_ready),
    .in_data_i   (err_flit),
    .out_valid_o (err_valid_o),
    .out_ready_i (err_ready_i),
    .out_data_o  (err_data_o),
    .usage_o     (unused_err_usage)
  );

  assign evt_err_o     = frame_end && !good;
  assign evt_code_o    = code;
  assign evt_payload_o = (frame_end && good) ? payload_flits : '0;

  // Fields of the captured flit0 not needed for the target-flit count.
  logic unused_hq;
  assign unused_hq = ^{hq.hcc, hq.rsvd, hq.ecode, hq.route, hq.acc, hq.rop, hq.dtype, hq.len,
                       hq.tag, hq.src_port, hq.maddr, hq.stage};

`ifndef SYNTHESIS
  if (TailDepth < MaxTail + 1) begin : gen_tail_check
    $error("dysharp_parser: TailDepth must hold one longest tail plus one flit");
  end

  a_tail_range: assert property (@(posedge clk_i) disable iff (!rst_ni)
    32'(tcnt_q) + 32'(ntail_q) <= TailDepth);
  a_tail_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
    tail_valid_o && !tail_ready_i |=> tail_valid_o && $stable(tail_data_o));
  a_desc_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
    desc_valid_o && !desc_ready_i |=> desc_valid_o && $stable(desc_hdr_o) &&
    $stable(desc_tgt_o) && $stable(desc_ntail_o));
  a_err_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
    err_valid_o && !err_ready_i |=> err_valid_o && $stable(err_data_o));
  // A good frame's stored tail is exactly its byte-enable and payload flits.
  a_good_tail: assert property (@(posedge clk_i) disable iff (!rst_ni)
    desc_push |-> 32'(ntail_cur) == want_tail);
  a_events: assert property (@(posedge clk_i) disable iff (!rst_ni)
    (evt_err_o |-> code != ErrNone) && (32'(evt_payload_o) <= MaxLen));
`endif

endmodule
