// dysharp_sw_req_fwd: request-class forwarder of one ingress port (spec §5.1-§5.5).
//
// Takes the checked frames of the port's request parser (descriptor + tail flits) and writes each
// into the request crosspoint queues of all its destination ports in parallel, one source flit per
// cycle. A packet starts only when every destination queue has room for its whole replica, so the
// writes never stall mid-packet (and never block a queue half-written).
//   - DYN_ST / DYN_LD_REDUCE: one replica per distinct port among target / ExpertsPerPort. The
//     replica's header is the request's with tcount and hcc of the pruned replica for port q
//     (the parser's per-port count and hcc); its target flits are the request's, whole: the
//     egress of port q prunes them to q's targets as the replica streams out (dysharp_sw_prune).
//     In the crosspoint queue the header's rsvd field carries the number of target flits that
//     follow (the egress clears it; the hcc is that of rsvd = 0). So the list is read once, from
//     the parser's tail buffer, and nothing here holds it or prunes it per destination.
//   - WRITE / READ: port `route`.  MC_ST / MC_LD_REDUCE: every member of group `route`.
//   - MC_LD_REDUCE / DYN_LD_REDUCE: a reduction entry is allocated first (alloc_req_o until
//     alloc_gnt_i); the replicas are written from the cycle of the grant on, so a partial can never
//     precede its entry.
// DynamicOps = 0 (spec §5.7): no DYN op reaches the forwarder, every replica is the request as
// the parser stamped it (desc_cnt/rhcc unused).

`include "dysharp_assert.svh"

module dysharp_sw_req_fwd
  import dysharp_pkg::*;
#(
  parameter int unsigned NumPorts       = 8,
  parameter int unsigned MaxTargets     = 32,
  parameter bit          DynamicOps     = 1'b1, // 0: static groups and unicast only (spec §5.7)
  parameter int unsigned XpDepth        = 128
) (
  input  logic                                                          clk_i,
  input  logic                                                          rst_ni,
  // Checked frames from the request parser.
  input  logic                                                          desc_valid_i,
  output logic                                                          desc_ready_o,
  input  flit_t                                                         desc_hdr_i,
  // Tail flits of the frame (target flits, byte enables, payload).
  input  logic [$clog2(MaxLen+2+(MaxTargets+TargetsPerFlit-1)/TargetsPerFlit)-1:0] desc_ntail_i,
  input  logic [NumPorts-1:0]                                           desc_dmask_i,
  input  logic [NumPorts-1:0][$clog2(MaxTargets+1)-1:0]                 desc_cnt_i,
  input  logic [NumPorts-1:0][7:0]                                      desc_rhcc_i,
  input  logic                                                          tail_valid_i,
  output logic                                                          tail_ready_o,
  input  flit_t                                                         tail_data_i,
  // Reduction-entry allocation (ld_reduce requests).
  output logic                                                          alloc_req_o,
  input  logic                                                          alloc_gnt_i,
  output flit_t                                                         alloc_hdr_o,
  output logic [NumPorts-1:0]                                           alloc_ports_o,
  // Request crosspoint queues of this ingress, one per egress port q.
  input  logic [NumPorts-1:0][$clog2(XpDepth+1)-1:0]                    xp_usage_i,
  input  logic [NumPorts-1:0]                                           xp_ready_i,
  output logic [NumPorts-1:0]                                           xp_valid_o,
  output flit_t [NumPorts-1:0]                                          xp_data_o,
  output logic [NumPorts-1:0]                                           xp_last_o
);

  localparam int unsigned TgtFlits = (MaxTargets + TargetsPerFlit - 1) / TargetsPerFlit;
  localparam int unsigned MaxFrame = 1 + TgtFlits + 1 + MaxLen;
  localparam int unsigned PosW     = $clog2(MaxFrame);

  typedef logic [PosW-1:0]  pos_t;

  hdr_t        h;
  logic        is_dyn, is_ldr;
  int unsigned tflits, ntail, pos;
  int unsigned tq    [NumPorts];     // target flits of the pruned replica for port q
  logic        space_ok, start_ok, active, last_src;
  pos_t        pos_q, pos_d;

  assign h      = hdr_t'(desc_hdr_i);
  assign is_dyn = DynamicOps && op_is_dyn(h.opcode);  // the parser let no DYN op through otherwise
  assign is_ldr = op_is_ld_reduce(h.opcode);
  assign tflits = is_dyn ? (32'(h.tcount) + TargetsPerFlit - 1) / TargetsPerFlit : 0;
  assign ntail  = 32'(desc_ntail_i);
  assign pos    = 32'(pos_q);

  for (genvar q = 0; q < NumPorts; q++) begin : gen_tq
    assign tq[q] = (32'(desc_cnt_i[q]) + TargetsPerFlit - 1) / TargetsPerFlit;
  end

  // Room for the replica (the request's length: its list is pruned at the egress) in every
  // destination queue.
  always_comb begin
    space_ok = 1'b1;
    for (int unsigned q = 0; q < NumPorts; q++) begin
      if (desc_dmask_i[q] && (32'(xp_usage_i[q]) + 1 + ntail > XpDepth)) begin
        space_ok = 1'b0;
      end
    end
  end

  assign alloc_req_o   = desc_valid_i && (pos_q == '0) && is_ldr && space_ok;
  assign alloc_hdr_o   = desc_hdr_i;
  assign alloc_ports_o = desc_dmask_i;

  assign start_ok     = desc_valid_i && space_ok && (!is_ldr || alloc_gnt_i);
  assign active       = (pos_q != '0) || start_ok;
  assign last_src     = (pos == ntail);
  assign desc_ready_o = active && last_src;
  assign tail_ready_o = active && (pos != 0);
  assign pos_d        = !active ? pos_q : (last_src ? '0 : pos_q + pos_t'(1));

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pos_q <= '0;
    end else begin
      pos_q <= pos_d;
    end
  end

  // Per-destination flits: the replica header (DYN: tcount and hcc of the pruned replica, rsvd =
  // the request's target flits), then the tail flits, the same to every destination. Only a
  // destination being written gets its flit (operand isolation: the others show zeros, which no
  // queue takes).
  always_comb begin
    hdr_t  hq;
    flit_t body;
    hq         = h;
    body       = (pos == 0) ? desc_hdr_i : tail_data_i;
    xp_data_o  = '0;
    xp_valid_o = '0;
    xp_last_o  = '0;
    for (int unsigned q = 0; q < NumPorts; q++) begin
      if (active && desc_dmask_i[q]) begin
        hq.tcount = TcountWidth'(desc_cnt_i[q]);
        hq.hcc    = desc_rhcc_i[q];
        hq.rsvd   = RsvdWidth'(tflits);
        xp_data_o[q]  = (is_dyn && (pos == 0)) ? flit_t'(hq) : body;
        xp_valid_o[q] = 1'b1;
        xp_last_o[q]  = last_src;
      end
    end
  end

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_xp_depth, XpDepth >= MaxFrame, "XpDepth must hold the longest packet")
  `DYSHARP_ASSERT_INIT(a_rsvd_width, TgtFlits < (1 << RsvdWidth),
    "rsvd must hold a request's target-flit count")

  // Functional coverage (docs/verification.md): every request opcode forwarded, a start held
  // back by a full crosspoint queue, and replicas carrying each number of target flits.
  `DYSHARP_COVER(c_fwd_write, start_ok && (pos_q == '0) && (h.opcode == OpWrite))
  `DYSHARP_COVER(c_fwd_read, start_ok && (pos_q == '0) && (h.opcode == OpRead))
  `DYSHARP_COVER(c_fwd_mc_st, start_ok && (pos_q == '0) && (h.opcode == OpMcSt))
  `DYSHARP_COVER(c_fwd_mc_ld_reduce, start_ok && (pos_q == '0) && (h.opcode == OpMcLdReduce))
  `DYSHARP_COVER(c_fwd_dyn_st, start_ok && (pos_q == '0) && (h.opcode == OpDynSt))
  `DYSHARP_COVER(c_fwd_dyn_ld_reduce, start_ok && (pos_q == '0) && (h.opcode == OpDynLdReduce))
  `DYSHARP_COVER(c_xp_full, desc_valid_i && (pos_q == '0) && !space_ok)
  function automatic logic replica_flits_f(input int unsigned n);
    logic r;
    r = 1'b0;
    for (int unsigned q = 0; q < NumPorts; q++) begin
      r |= desc_dmask_i[q] && (tq[q] == n);
    end
    return r;
  endfunction
  // One point per count, each its own statement: points of a generate loop would merge into one.
  if (TgtFlits >= 1) begin : gen_c_tflits_1
    `DYSHARP_COVER(c_replica_tflits_1, start_ok && (pos_q == '0) && is_dyn &&
      replica_flits_f(1))
  end
  if (TgtFlits >= 2) begin : gen_c_tflits_2
    `DYSHARP_COVER(c_replica_tflits_2, start_ok && (pos_q == '0) && is_dyn &&
      replica_flits_f(2))
  end
  if (TgtFlits >= 3) begin : gen_c_tflits_3
    `DYSHARP_COVER(c_replica_tflits_3, start_ok && (pos_q == '0) && is_dyn &&
      replica_flits_f(3))
  end
  if (TgtFlits >= 4) begin : gen_c_tflits_4
    `DYSHARP_COVER(c_replica_tflits_4, start_ok && (pos_q == '0) && is_dyn &&
      replica_flits_f(4))
  end

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh). The stability of a
  // stalled word: dysharp_stream_chk below.
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // Writes only into queues with room (reserved at the packet's start).
      `DYSHARP_ASSERT_I(a_xp_room, (xp_valid_o & ~xp_ready_i) == '0)
      // Tail flits of a checked frame are all present once it is being forwarded.
      `DYSHARP_ASSERT_I(a_tail_present, !tail_ready_o || tail_valid_i)
      `DYSHARP_ASSERT_I(a_desc_present, !active || desc_valid_i)
      `DYSHARP_ASSERT_I(a_alloc_gnt, !alloc_gnt_i || alloc_req_o)
      // Every good frame has at least one destination.
      `DYSHARP_ASSERT_I(a_dest, !desc_valid_i || (desc_dmask_i != '0))
      // A DYN op's tail holds its target flits.
      `DYSHARP_ASSERT_I(a_dyn_tail, !desc_valid_i || !is_dyn || (ntail >= tflits))
    end
  end

  // An allocation request is held, unchanged, until granted.
  dysharp_stream_chk #(
    .Width ($bits({alloc_hdr_o, alloc_ports_o})),
    .Name  ("dysharp_sw_req_fwd: a_alloc_stable")
  ) u_alloc_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (alloc_req_o),
    .ready_i (alloc_gnt_i),
    .data_i  ({alloc_hdr_o, alloc_ports_o})
  );
`endif

endmodule
