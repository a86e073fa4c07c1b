// dysharp_reduce_share: one requester's share of the switch's load-reduce table, and its result
// engine (docs/spec.md §5.3, §5.5, §5.6, §6, §9; docs/architecture.md "Reduction unit"; golden
// model: `Switch::partial`). dysharp_reduce_unit holds one per requester port q_i, and one
// dysharp_reduce_rx per port that returns partials; the behaviour is described there.
//
// Here: the entries' keys of share q_i in flip-flops (valid, tag, len, expected / answered /
// failed ports, age, quarantine), the allocation port of requester q_i (the lowest free entry; a
// pending (requester, tag) waits), the key updates of the partial receivers, the banks bank[q_i][p]
// (written by port p's receiver, read by this engine) and the info RAM, and the result engine
// (pick round robin among the completed entries, stage I, stage C, the output FIFO). A payload
// flit's reduction is done by a unit of the pool the engines share (dysharp_reduce_pool): the
// engine reads its banks for a payload flit only in a cycle in which the pool grants it a unit,
// hands the unit the banks' outputs in stage C, and gets the reduced flit back AccStages - 1
// cycles later. Its own module so that synthesis does one share once
// (docs/area.md); q_i is a port, not a parameter, so that every share is the same module.

`include "dysharp_assert.svh"

module dysharp_reduce_share
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned NumPorts   = 8,
  parameter int unsigned RedEntries = 256,
  parameter int unsigned RedTimeout = 65536,
  parameter int unsigned AccStages  = 2,
  localparam int unsigned Share     = RedEntries / NumPorts,
  localparam int unsigned IdxW      = (Share > 1) ? $clog2(Share) : 1,
  localparam int unsigned PortW     = (NumPorts > 1) ? $clog2(NumPorts) : 1,
  localparam int unsigned AddrW     = (Share * MaxLen > 1) ? $clog2(Share * MaxLen) : 1
) (
  input  logic                                 clk_i,
  input  logic                                 rst_ni,
  input  logic [PortW-1:0]                     q_i,          // the requester (a constant)
  input  logic                                 tick_i,       // the bounded wait's epoch ends
  // Allocation (requester q_i's request forwarder). alloc_hdr_i.src_port must be q_i.
  input  logic                                 alloc_valid_i,
  output logic                                 alloc_ready_o,
  input  flit_t                                alloc_hdr_i,
  input  logic [NumPorts-1:0]                  alloc_ports_i,
  // Key updates of every port's receiver (applied when the share is q_i).
  input  logic [NumPorts-1:0]                  rx_got_v_i,   // port p's partial is complete
  input  logic [NumPorts-1:0]                  rx_err_v_i,   // port p's partial failed
  input  logic [NumPorts-1:0][PortW-1:0]       rx_share_i,
  input  logic [NumPorts-1:0][IdxW-1:0]        rx_idx_i,
  // Port p is inside a matched partial (flit0 taken, last flit not yet) of entry
  // (rx_in_share_i[p], rx_in_idx_i[p]) (registered: never freed or timed out meanwhile).
  input  logic [NumPorts-1:0]                  rx_inside_i,
  input  logic [NumPorts-1:0][PortW-1:0]       rx_in_share_i,
  input  logic [NumPorts-1:0][IdxW-1:0]        rx_in_idx_i,
  // Bank writes of every port's receiver (to bank[q_i][p] when bw_q_i[p] is q_i).
  input  logic [NumPorts-1:0]                  bw_v_i,
  input  logic [NumPorts-1:0][PortW-1:0]       bw_q_i,
  input  logic [NumPorts-1:0][AddrW-1:0]       bw_addr_i,
  input  flit_t [NumPorts-1:0]                 bw_data_i,
  // The keys, for the receivers' match.
  output logic [Share-1:0]                     valid_o,
  output logic [Share-1:0][TagWidth-1:0]       tag_o,
  output logic [Share-1:0][LenWidth-1:0]       len_o,
  output logic [Share-1:0][NumPorts-1:0]       exp_o,
  output logic [Share-1:0][NumPorts-1:0]       got_o,
  // An entry is freed this cycle (a partial's flit0 that meets it is an orphan).
  output logic                                 free_v_o,
  output logic [IdxW-1:0]                      free_idx_o,
  // The pool of flit reductions (dysharp_reduce_pool): a unit asked for and granted in stage I;
  // the operation and the banks' flits in stage C; the reduced flit AccStages - 1 cycles later.
  output logic                                 acc_req_o,
  input  logic                                 acc_gnt_i,
  output logic                                 acc_v_o,
  output logic [1:0]                           acc_dtype_o,
  output logic [1:0]                           acc_rop_o,
  output logic                                 acc_acc_o,
  output logic [NumPorts-1:0]                  acc_exp_o,
  output flit_t [NumPorts-1:0]                 acc_data_o,
  input  flit_t                                acc_payload_i,
  // Results (RSP_REDUCE / RSP_ERROR) for requester q_i.
  output logic                                 res_valid_o,
  input  logic                                 res_ready_i,
  output flit_t                                res_data_o,
  output logic                                 res_last_o,
  // Events, as dysharp_reduce_unit's tmo_o / expire_o / evt_tag_o / evt_port_o for q_i.
  output logic                                 tmo_o,
  output logic                                 expire_o,
  output logic [TagWidth-1:0]                  evt_tag_o,
  output logic [SrcPortWidth-1:0]              evt_port_o
);

  localparam int unsigned SlotW  = $clog2(MaxLen);                 // payload flit index
  localparam int unsigned CntW   = $clog2(MaxLen + 1);             // 0..MaxLen
  localparam int unsigned Depth  = Share * MaxLen;                 // flits per bank
  localparam int unsigned InfoD  = (Share > 1) ? Share : 2;        // the RAM needs two words
  localparam int unsigned InfoAW = (InfoD > 1) ? $clog2(InfoD) : 1;
  localparam int unsigned OutD   = 4 + AccStages;                  // output FIFO (flits)
  localparam int unsigned PipeD  = AccStages - 1;                  // stage C to stage O, cycles
  localparam int unsigned PipeW  = (PipeD > 1) ? $clog2(PipeD) : 1;
  localparam bit          TmoOn  = RedTimeout != 0;

  typedef logic [IdxW-1:0]     idx_t;
  typedef logic [AddrW-1:0]    addr_t;
  typedef logic [NumPorts-1:0] pmask_t;

  // The request fields kept in the info RAM.
  typedef struct packed {
    logic [MaddrWidth-1:0] maddr;
    logic [DtypeWidth-1:0] dtype;
    logic [RopWidth-1:0]   rop;
    logic                  acc;
    logic                  stage;
  } info_t;

  // Storage address of payload flit `slot` of entry `e` in a bank.
  function automatic addr_t addr_f(input idx_t e, input logic [SlotW-1:0] slot);
    return addr_t'(e) * addr_t'(MaxLen) + addr_t'(slot);
  endfunction

  // Lowest set bit of a port mask (0 if none).
  function automatic logic [PortW-1:0] lowest_f(input pmask_t m);
    logic [PortW-1:0] r;
    r = '0;
    for (int unsigned p = NumPorts; p > 0; p--) begin
      if (m[p-1]) begin
        r = PortW'(p - 1);
      end
    end
    return r;
  endfunction

  //////////////////////////////////
  // Entry keys (flip-flops)      //
  //////////////////////////////////

  // Packed vectors, the next state built in one process (_d) and registered whole: a simulator
  // copies a few words per cycle instead of tracking a delayed write per entry.
  logic [Share-1:0]                valid_q, valid_d;
  logic [Share-1:0][TagWidth-1:0]  tag_q, tag_d;
  logic [Share-1:0][LenWidth-1:0]  len_q, len_d;
  pmask_t [Share-1:0]              exp_q, exp_d;   // ports expected to answer
  pmask_t [Share-1:0]              got_q, got_d;   // ports that have answered
  pmask_t [Share-1:0]              err_q, err_d;   // ports whose partial failed
  logic [Share-1:0][1:0]           age_q, age_d;   // epochs since allocation (saturating)
  logic [Share-1:0]                zomb_q, zomb_d; // timed out, quarantined
  logic                  tick;

  logic                  alloc_fire;
  idx_t                  alloc_idx;
  info_t                 alloc_info;
  logic                  free_v;            // the engine frees an entry this cycle
  idx_t                  free_idx;
  logic                  tmo_v;             // the engine times an entry out

  assign tick = tick_i;
  always_comb begin
    for (int unsigned e = 0; e < Share; e++) begin
      tag_o[e] = tag_q[e];
      len_o[e] = len_q[e];
      exp_o[e] = exp_q[e];
      got_o[e] = got_q[e];
    end
  end
  assign valid_o    = valid_q;
  assign free_v_o   = free_v;
  assign free_idx_o = free_idx;

  // Entries of this share that a receiver is inside a partial of (half received: never timed
  // out or freed). One search for the timeout logic below and for the check at a free.
  function automatic logic [Share-1:0] inflight_f();
    logic [Share-1:0] r;
    r = '0;
    for (int unsigned p = 0; p < NumPorts; p++) begin
      if (rx_inside_i[p] && (rx_in_share_i[p] == q_i)) begin
        r[rx_in_idx_i[p]] = 1'b1;
      end
    end
    return r;
  endfunction

  // For the check at a free or a timeout: its own search (`inflight` is zero while no entry is
  // old, and an entry is freed at any age).
  function automatic logic inflight_at_f(input idx_t e);
    logic [Share-1:0] r;
    r = inflight_f();
    return r[e];
  endfunction

  // Only an old entry's bit (age 3, the only ones a timeout or an expiry can pick) is ever used,
  // so the receivers are searched only while the share has one (operand isolation; a simulator
  // skips the search in the other cycles, nearly all of them).
  logic [Share-1:0] old, inflight;
  always_comb begin
    for (int unsigned e = 0; e < Share; e++) begin
      old[e] = valid_q[e] && (age_q[e] == 2'd3);
    end
    inflight = (TmoOn && (old != '0)) ? inflight_f() : '0;
  end

  ///////////////////
  // Allocation    //
  ///////////////////

  hdr_t       hdr;
  logic       has_free;
  logic       dup;
  assign hdr = hdr_t'(alloc_hdr_i);

  // Searched only for a request (operand isolation; a simulator skips both loops otherwise).
  always_comb begin
    has_free  = 1'b0;
    alloc_idx = '0;
    dup       = 1'b0;
    if (alloc_valid_i) begin
      for (int unsigned e = Share; e > 0; e--) begin   // lowest free entry wins
        if (!valid_q[e-1]) begin
          has_free  = 1'b1;
          alloc_idx = idx_t'(e - 1);
        end
      end
      for (int unsigned e = 0; e < Share; e++) begin
        if (valid_q[e] && (tag_q[e] == hdr.tag)) begin
          dup = 1'b1;
        end
      end
    end
  end

  // A second ld_reduce with a pending (requester, tag) waits for the first (spec §5.3).
  assign alloc_ready_o = has_free && !dup;
  assign alloc_fire    = alloc_valid_i && alloc_ready_o;
`ifndef SYNTHESIS
  // Functional coverage (docs/verification.md): a full share, a same-tag wait, and every
  // ld_reduce op x dtype x reduce op x accumulation that allocates an entry.
  `DYSHARP_COVER(c_share_full, alloc_valid_i && !has_free)
  `DYSHARP_COVER(c_same_tag_wait, alloc_valid_i && has_free && dup)
  `DYSHARP_COVER(c_mc_bf16_add_accf32, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopAdd) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_mc_bf16_add_accnative, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopAdd) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_mc_bf16_min_accf32, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMin) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_mc_bf16_min_accnative, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMin) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_mc_bf16_max_accf32, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMax) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_mc_bf16_max_accnative, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMax) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_mc_f16_add_accf32, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopAdd) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_mc_f16_add_accnative, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopAdd) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_mc_f16_min_accf32, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMin) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_mc_f16_min_accnative, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMin) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_mc_f16_max_accf32, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMax) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_mc_f16_max_accnative, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMax) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_mc_f32_add_accf32, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopAdd) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_mc_f32_add_accnative, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopAdd) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_mc_f32_min_accf32, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMin) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_mc_f32_min_accnative, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMin) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_mc_f32_max_accf32, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMax) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_mc_f32_max_accnative, alloc_fire &&
    (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMax) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_dyn_bf16_add_accf32, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopAdd) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_dyn_bf16_add_accnative, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopAdd) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_dyn_bf16_min_accf32, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMin) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_dyn_bf16_min_accnative, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMin) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_dyn_bf16_max_accf32, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMax) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_dyn_bf16_max_accnative, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMax) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_dyn_f16_add_accf32, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopAdd) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_dyn_f16_add_accnative, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopAdd) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_dyn_f16_min_accf32, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMin) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_dyn_f16_min_accnative, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMin) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_dyn_f16_max_accf32, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMax) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_dyn_f16_max_accnative, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMax) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_dyn_f32_add_accf32, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopAdd) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_dyn_f32_add_accnative, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopAdd) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_dyn_f32_min_accf32, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMin) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_dyn_f32_min_accnative, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMin) && (hdr.acc == AccNative))
  `DYSHARP_COVER(c_dyn_f32_max_accf32, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMax) && (hdr.acc == AccF32))
  `DYSHARP_COVER(c_dyn_f32_max_accnative, alloc_fire &&
    (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMax) && (hdr.acc == AccNative))
`endif

  always_comb begin
    alloc_info.maddr = hdr.maddr;
    alloc_info.dtype = hdr.dtype;
    alloc_info.rop   = hdr.rop;
    alloc_info.acc   = hdr.acc;
    alloc_info.stage = hdr.stage;
  end

  // Header fields of the allocation request the table does not keep.
  logic unused_hdr;
  assign unused_hdr = ^{hdr.hcc, hdr.rsvd, hdr.ecode, hdr.route, hdr.tcount, hdr.opcode,
                        hdr.src_port};

  ///////////////////
  // Result engine //
  ///////////////////

  // Completed entries of share q.
  logic [Share-1:0]    rdy;
  logic [Share-1:0]    unused_gnt;
  logic                unused_pick_valid;
  idx_t                pick_i;
  logic                pick_v;

  // Stage I: the entry being issued.
  logic                busy_q;                      // issuing the payload of cur_i_q
  idx_t                cur_i_q, cur_i_d;
  logic [LenWidth-1:0] cur_len_q, cur_len_d;
  pmask_t              cur_exp_q, cur_exp_d;
  logic                cur_err_q, cur_err_d;
  logic                cur_tmo_q, cur_tmo_d;        // a timeout answer
  logic [PortW-1:0]    cur_ep_q, cur_ep_d;          // lowest failed port
  logic [CntW-1:0]     op_q;                        // next payload slot + 1 (busy)
  logic                can_issue, issue, issue_hdr, issue_last, fifo_in_ready;
  logic [SlotW-1:0]    rd_slot;
  idx_t                rd_i;
  logic [$clog2(OutD+1)-1:0] fifo_usage;

  // Stage C: the op whose RAM data is on the banks' outputs. Its flit leaves the reduction
  // pipeline AccStages - 1 cycles later (stage O; flit0, last, valid carried alongside).
  logic                c_v_q, c_hdr_q, c_last_q;
  flit_t [NumPorts-1:0] b_rdata;
  info_t               info_rdata;
  hdr_t                f0;
  flit_t               payload;
  logic                o_v, o_hdr, o_last;
  flit_t               o_f0;
  logic [$clog2(AccStages+1)-1:0] acc_infl;     // ops in stage C and the reduction pipeline
  logic [$clog2(AccStages+1)-1:0] pipe_cnt_q;   // ops in the reduction pipeline

  // Ready: every expected port has answered (a result, or the end of a quarantine), or old
  // with no partial half received (a timeout, or a quarantine that expires).
  always_comb begin
    for (int unsigned e = 0; e < Share; e++) begin
      rdy[e] = valid_q[e] && ((got_q[e] == exp_q[e]) ||
               (TmoOn && old[e] && !inflight[e]));
    end
  end

  // Credits: the ops in stage C and the reduction pipeline and the FIFO's words must leave
  // room for this one.
  assign can_issue = 32'(fifo_usage) + 32'(acc_infl) < OutD;
  assign pick_v    = !busy_q && (|rdy) && can_issue;

  // What the picked entry needs: its result, a timeout answer, or (quarantined) only its free.
  logic   p_done, p_zomb, pick_res, pick_tmo, pick_free;
  pmask_t p_missing;
  assign p_done    = got_q[pick_i] == exp_q[pick_i];
  assign p_zomb    = zomb_q[pick_i];
  assign p_missing = exp_q[pick_i] & ~got_q[pick_i];
  assign pick_res  = pick_v && !p_zomb && p_done;
  assign pick_tmo  = pick_v && !p_zomb && !p_done;
  assign pick_free = pick_v && p_zomb;
  assign tmo_v  = pick_tmo;

  assign tmo_o      = pick_tmo;
  assign expire_o   = pick_free && !p_done;
  assign evt_tag_o  = tag_q[pick_i];
  assign evt_port_o = SrcPortWidth'(lowest_f(p_missing));

  if (Share > 1) begin : g_pick_rr
    dysharp_rr_arb #(
      .N (Share)
    ) u_pick (
      .clk_i   (clk_i),
      .rst_ni  (rst_ni),
      .req_i   (rdy),
      .lock_i  (1'b0),
      .ack_i   (pick_v),
      .gnt_o   (unused_gnt),
      .idx_o   (pick_i),
      .valid_o (unused_pick_valid)
    );
  end else begin : g_pick_one
    assign pick_i            = '0;
    assign unused_gnt        = rdy;
    assign unused_pick_valid = 1'b0;
  end

  // A payload flit is read only with a unit of the pool granted for it.
  assign acc_req_o  = busy_q && can_issue;
  assign issue_hdr  = pick_res || pick_tmo;
  assign issue      = issue_hdr || (acc_req_o && acc_gnt_i);
  assign rd_i       = busy_q ? cur_i_q : pick_i;
  assign rd_slot    = busy_q ? SlotW'(op_q - CntW'(1)) : '0;

  always_comb begin
    cur_i_d   = cur_i_q;
    cur_len_d = cur_len_q;
    cur_exp_d = cur_exp_q;
    cur_err_d = cur_err_q;
    cur_tmo_d = cur_tmo_q;
    cur_ep_d  = cur_ep_q;
    if (issue_hdr) begin
      cur_i_d   = pick_i;
      cur_len_d = len_q[pick_i];
      cur_exp_d = exp_q[pick_i];
      cur_err_d = pick_tmo || (err_q[pick_i] != '0);
      cur_tmo_d = pick_tmo;
      cur_ep_d  = pick_tmo ? lowest_f(p_missing) : lowest_f(err_q[pick_i]);
    end
    // flit0 of a failed or timed-out entry is its only flit; otherwise the last payload flit
    // ends it.
    issue_last = issue_hdr ? (pick_tmo || (err_q[pick_i] != '0))
                           : (busy_q && (op_q == CntW'(cur_len_q)));
  end

  // A result frees its entry with its last flit; a timeout keeps it (quarantined).
  assign free_v   = pick_free || (issue && issue_last && !pick_tmo);
  assign free_idx = rd_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q    <= 1'b0;
      op_q      <= '0;
      cur_i_q   <= '0;
      cur_len_q <= '0;
      cur_exp_q <= '0;
      cur_err_q <= 1'b0;
      cur_tmo_q <= 1'b0;
      cur_ep_q  <= '0;
      c_v_q     <= 1'b0;
      c_hdr_q   <= 1'b0;
      c_last_q  <= 1'b0;
    end else begin
      cur_i_q   <= cur_i_d;
      cur_len_q <= cur_len_d;
      cur_exp_q <= cur_exp_d;
      cur_err_q <= cur_err_d;
      cur_tmo_q <= cur_tmo_d;
      cur_ep_q  <= cur_ep_d;
      if (issue) begin
        busy_q <= !issue_last;
        op_q   <= pick_v ? CntW'(1) : op_q + CntW'(1);
      end
      c_v_q    <= issue;
      c_hdr_q  <= issue_hdr;
      c_last_q <= issue && issue_last;
    end
  end

  // Banks of share q: port p's partials, read at (entry, slot) by this engine.
  for (genvar p = 0; p < NumPorts; p++) begin : g_bank
    dysharp_ram_1r1w #(
      .Width (FlitBits),
      .Depth (Depth)
    ) u_bank (
      .clk_i   (clk_i),
      .we_i    (bw_v_i[p] && (bw_q_i[p] == q_i)),
      .waddr_i (bw_addr_i[p]),
      .wdata_i (bw_data_i[p]),
      .re_i    (issue),
      .raddr_i (addr_f(rd_i, rd_slot)),
      .rdata_o (b_rdata[p])
    );
  end

  // Request fields of share q's entries; read with flit0, held for the payload.
  logic [$bits(info_t)-1:0] info_word;
  dysharp_ram_1r1w #(
    .Width ($bits(info_t)),
    .Depth (InfoD)
  ) u_info (
    .clk_i   (clk_i),
    .we_i    (alloc_fire),
    .waddr_i (InfoAW'(alloc_idx)),
    .wdata_i (alloc_info),
    .re_i    (issue_hdr),
    .raddr_i (InfoAW'(pick_i)),
    .rdata_o (info_word)
  );
  assign info_rdata = info_t'(info_word);

  // flit0 of the result (compare `response()` / `error_response()` in sim/src/hub/mod.rs).
  // Built only while stage C holds a flit0 (c_hdr_q): the pipeline carries it alongside and reads
  // it only then (operand isolation; a simulator skips the header and its hcc in other cycles).
  always_comb begin
    f0 = '0;
    if (c_hdr_q) begin
      f0.maddr = info_rdata.maddr;
      f0.tag   = tag_q[cur_i_q];
      f0.route = RouteWidth'(q_i);
      if (cur_err_q) begin
        f0.opcode   = OpRspError;
        f0.ecode    = cur_tmo_q ? EcodeWidth'(ErrTimeout)
                                : b_rdata[cur_ep_q][EcodeLsb +: EcodeWidth];
        f0.src_port = SrcPortWidth'(cur_ep_q);
      end else begin
        f0.opcode   = OpRspReduce;
        f0.stage    = info_rdata.stage;
        f0.len      = cur_len_q;
        f0.dtype    = info_rdata.dtype;
        f0.rop      = info_rdata.rop;
        f0.acc      = info_rdata.acc;
        f0.src_port = SrcPortWidth'(q_i);
      end
      f0.hcc = hcc_f(flit_t'(f0));
    end
  end

  // A payload flit: the expected ports' stored flits, reduced in ascending port order by the
  // pool's unit granted in stage I (a header's flit0 is built beside it, without a unit).
  assign acc_v_o     = c_v_q && !c_hdr_q;
  assign acc_dtype_o = info_rdata.dtype;
  assign acc_rop_o   = info_rdata.rop;
  assign acc_acc_o   = info_rdata.acc;
  assign acc_exp_o   = cur_exp_q;
  assign acc_data_o  = b_rdata;
  assign payload     = acc_payload_i;

  // What goes with the flit through the reduction pipeline, PipeD cycles from stage C to stage O:
  // valid (flip-flops, reset), and flit0 (computed in stage C, from the cur_* registers a new
  // entry overwrites), header and last in a RAM written in stage C at wptr_q and read one cycle
  // before stage O (a delay line: the slot written PipeD cycles before, wptr_q + 1).
  logic [PipeD-1:0] pv_q;
  logic [PipeW-1:0] wptr_q, rptr;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pv_q       <= '0;
      wptr_q     <= '0;
      pipe_cnt_q <= '0;
    end else begin
      pv_q       <= {pv_q[PipeD-2:0], c_v_q};
      wptr_q     <= (32'(wptr_q) == PipeD - 1) ? '0 : wptr_q + 1'b1;
      pipe_cnt_q <= pipe_cnt_q + $bits(pipe_cnt_q)'(c_v_q) - $bits(pipe_cnt_q)'(pv_q[PipeD-1]);
    end
  end
  assign rptr = (32'(wptr_q) == PipeD - 1) ? '0 : wptr_q + 1'b1;
  logic [FlitBits+1:0] pipe_rdata;
  dysharp_ram_1r1w #(
    .Width (FlitBits + 2),
    .Depth (PipeD)
  ) u_pipe (
    .clk_i   (clk_i),
    .we_i    (c_v_q),
    .waddr_i (wptr_q),
    .wdata_i ({c_hdr_q, c_last_q, flit_t'(f0)}),
    .re_i    (pv_q[PipeD-2]),
    .raddr_i (rptr),
    .rdata_o (pipe_rdata)
  );
  assign o_v      = pv_q[PipeD-1];
  assign o_hdr    = pipe_rdata[FlitBits+1];
  assign o_last   = pipe_rdata[FlitBits];
  assign o_f0     = pipe_rdata[FlitBits-1:0];
  assign acc_infl = $bits(acc_infl)'(c_v_q) + pipe_cnt_q;

  // The output FIFO: an SRAM-shaped queue (OutD flits of 129 bits, over 1 KB at the default).
  logic [FlitBits:0] out_word;
  logic              unused_out_last;
  dysharp_fifo_bank #(
    .NumQ  (1),
    .Width (FlitBits + 1),
    .Depth (OutD)
  ) u_out (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (o_v),
    .in_ready_o  (fifo_in_ready),
    .in_data_i   ({o_last, o_hdr ? o_f0 : payload}),
    .in_last_i   (1'b0),
    .out_valid_o (res_valid_o),
    .out_ready_i (res_ready_i),
    .out_data_o  (out_word),
    .out_last_o  (unused_out_last),
    .usage_o     (fifo_usage)
  );
  assign res_data_o = out_word[FlitBits-1:0];
  assign res_last_o = out_word[FlitBits];

`ifndef SYNTHESIS
  // The credit rule keeps room for every op in flight (checked with the others below).
`else
  logic unused_fifo_ready;
  assign unused_fifo_ready = fifo_in_ready;
`endif

  ///////////////////////////
  // Entry state update    //
  ///////////////////////////

  always_comb begin
    valid_d = valid_q;
    tag_d   = tag_q;
    len_d   = len_q;
    exp_d   = exp_q;
    got_d   = got_q;
    err_d   = err_q;
    age_d   = age_q;
    zomb_d  = zomb_q;
    if (tick) begin
      for (int unsigned e = 0; e < Share; e++) begin
        if (valid_q[e] && (age_q[e] != 2'd3)) begin
          age_d[e] = age_q[e] + 2'd1;
        end
      end
    end
    for (int unsigned p = 0; p < NumPorts; p++) begin
      if (rx_got_v_i[p] && (rx_share_i[p] == q_i)) begin
        got_d[rx_idx_i[p]][p] = 1'b1;
      end
      if (rx_err_v_i[p] && (rx_share_i[p] == q_i)) begin
        err_d[rx_idx_i[p]][p] = 1'b1;
      end
    end
    if (tmo_v) begin
      zomb_d[free_idx] = 1'b1;
      age_d[free_idx]  = '0;
    end
    if (free_v) begin
      valid_d[free_idx] = 1'b0;
      got_d[free_idx]   = '0;
      err_d[free_idx]   = '0;
      zomb_d[free_idx]  = 1'b0;
      age_d[free_idx]   = '0;
    end
    if (alloc_fire) begin
      valid_d[alloc_idx] = 1'b1;
      tag_d[alloc_idx]   = hdr.tag;
      len_d[alloc_idx]   = hdr.len;
      exp_d[alloc_idx]   = alloc_ports_i;
      got_d[alloc_idx]   = '0;
      err_d[alloc_idx]   = '0;
      zomb_d[alloc_idx]  = 1'b0;
      age_d[alloc_idx]   = '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
      tag_q   <= '0;
      len_q   <= '0;
      exp_q   <= '0;
      got_q   <= '0;
      err_q   <= '0;
      age_q   <= '0;
      zomb_q  <= '0;
    end else begin
      valid_q <= valid_d;
      tag_q   <= tag_d;
      len_q   <= len_d;
      exp_q   <= exp_d;
      got_q   <= got_d;
      err_q   <= err_d;
      age_q   <= age_d;
      zomb_q  <= zomb_d;
    end
  end

  ////////////////
  // Assertions //
  ////////////////

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_acc_stages, AccStages >= 3,
    "the reduction pipeline is at least two cycles deep (its delay line reads a cycle ahead)")

  // Packet length checker of the result stream.
  logic [CntW-1:0] sva_res_cnt_q;   // flits of the current packet already accepted
  logic [CntW-1:0] sva_res_len_q;   // its expected flit count minus one

  hdr_t            res_hdr;
  logic [CntW-1:0] want;   // expected flit count minus one of the packet in flight
  assign res_hdr = hdr_t'(res_data_o);
  assign want    = (sva_res_cnt_q == '0) ?
                   ((res_hdr.opcode == OpRspReduce) ? CntW'(res_hdr.len) : '0) :
                   sva_res_len_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      sva_res_cnt_q <= '0;
      sva_res_len_q <= '0;
    end else if (res_valid_o && res_ready_i) begin
      sva_res_len_q <= want;
      sva_res_cnt_q <= res_last_o ? '0 : sva_res_cnt_q + CntW'(1);
    end
  end

  // History registers of the previous cycle (rtl/dysharp_assert.svh).
  logic                stalled_q;    // the previous cycle offered a flit that was not taken
  logic [FlitBits-1:0] stall_data_q;
  logic                stall_last_q;
  always_ff @(posedge clk_i) begin
    stalled_q <= res_valid_o && !res_ready_i;
    // Data only: read only while stalled_q.
    if (res_valid_o && !res_ready_i) begin
      stall_data_q <= res_data_o;
      stall_last_q <= res_last_o;
    end
  end

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh).
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      `DYSHARP_ASSERT_I(a_fifo_room, !o_v || fifo_in_ready,
        $sformatf("result FIFO %0d overflows", q_i))
      // The tag of a result is read from the keys: the entry must still hold it in stage C, so
      // an entry is never reallocated within a cycle of its last flit's issue.
      `DYSHARP_ASSERT_I(a_busy_valid, !busy_q || (valid_q[cur_i_q] && rdy[cur_i_q]),
        $sformatf("engine %0d lost its entry mid-packet", q_i))
      // No drop, no change under stall.
      if (stalled_q) begin
        `DYSHARP_ASSERT_I(a_res_stable, res_valid_o && (res_data_o == stall_data_q) &&
          (res_last_o == stall_last_q),
          $sformatf("result stream %0d changed under stall", q_i))
      end
      // Each packet is flit0 (+ len payload flits for RSP_REDUCE).
      `DYSHARP_ASSERT_I(a_res_len, !res_valid_o || (res_last_o == (sva_res_cnt_q == want)),
        $sformatf("result packet on stream %0d has the wrong flit count", q_i))
      // flit0 is a well-formed response to requester q.
      `DYSHARP_ASSERT_I(a_res_flit0, !(res_valid_o && (sva_res_cnt_q == '0)) ||
        (((res_hdr.opcode == OpRspReduce) || (res_hdr.opcode == OpRspError)) &&
        (res_hdr.route == RouteWidth'(q_i)) && (res_hdr.rsvd == '0) &&
        (res_hdr.tcount == '0) && (res_hdr.hcc == hcc_f(flit_t'(res_hdr))) &&
        ((res_hdr.opcode == OpRspError) ? (res_hdr.ecode != '0) && (res_hdr.len == '0)
        : (res_hdr.ecode == '0) && (res_hdr.len != '0))),
        $sformatf("malformed result flit0 on stream %0d", q_i))
      // Allocation: share q takes only requester q's requests, never into a live entry.
      `DYSHARP_ASSERT_I(a_alloc_port, !alloc_valid_i || ((alloc_ports_i != '0) &&
        (hdr.src_port == SrcPortWidth'(q_i))),
        $sformatf("allocation on port %0d with no ports or another requester", q_i))
      `DYSHARP_ASSERT_I(a_alloc_free, !alloc_fire || !valid_q[alloc_idx],
        $sformatf("share %0d allocated a live entry", q_i))
      // No entry is freed or timed out while a port is inside one of its partials, and a
      // timeout answers an entry that really misses a partial.
      if (free_v || tmo_v) begin
        `DYSHARP_ASSERT_I(a_free_whole, !inflight_at_f(free_idx),
          $sformatf("share %0d freed an entry with a partial half received", q_i))
      end
      `DYSHARP_ASSERT_I(a_timeout_due, !tmo_v || (TmoOn && valid_q[free_idx] && !zomb_q[free_idx] &&
        (age_q[free_idx] == 2'd3) &&
        (got_q[free_idx] != exp_q[free_idx])),
        $sformatf("share %0d timed out an entry that was not due", q_i))
      // Entry invariants of share q.
      for (int unsigned e = 0; e < Share; e++) begin
        `DYSHARP_ASSERT_I(a_answer_port, ((got_q[e] | err_q[e]) & ~exp_q[e]) == '0,
          $sformatf("entry %0d/%0d answered by an unexpected port", q_i, e))
        `DYSHARP_ASSERT_I(a_free_clean, valid_q[e] || ((got_q[e] == '0) && (err_q[e] == '0) &&
          !zomb_q[e] && (age_q[e] == '0)),
          $sformatf("free entry %0d/%0d has state", q_i, e))
      end
    end
  end
`endif

endmodule
