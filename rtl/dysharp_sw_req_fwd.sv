// dysharp_sw_req_fwd: request-class forwarder of one ingress port (spec §5.1-§5.5).
//
// Takes the checked frames of the port's request parser (descriptor + tail flits) and writes each
// into the request crosspoint queues of all its destination ports in parallel, one source flit per
// cycle. A packet starts only when every destination queue has room for its whole replica, so the
// writes never stall mid-packet (and never block a queue half-written).
//   - DYN_ST / DYN_LD_REDUCE: one replica per distinct port among target / ExpertsPerPort. The
//     replica for port q carries the target list pruned to q's targets in list order (unused lanes
//     of its last target flit 16'hFFFF), tcount = their number and a recomputed hcc. During the
//     source's target-flit phase each destination writes its own pruned target flits (fewer flits
//     for destinations with fewer targets); the byte-enable and payload flits go to all.
//   - WRITE / READ: port `route`.  MC_ST / MC_LD_REDUCE: every member of group `route`, unpruned.
//   - MC_LD_REDUCE / DYN_LD_REDUCE: a reduction entry is allocated first (alloc_req_o until
//     alloc_gnt_i); the replicas are written from the cycle of the grant on, so a partial can never
//     precede its entry.
// The parser has sorted a DYN op's targets by destination port once, at the packet's last flit
// (dysharp_parser: counting sort, per-port count, first position and replica hcc); target flit k of
// the replica for q is the window of sorted positions base[q] + TargetsPerFlit*k ..., a read per
// lane rather than a search over the list.
// DynamicOps = 0 (spec §5.7): no DYN op reaches the forwarder, every replica is the request as
// the parser stamped it, and the pruning logic is compiled out (desc_tgt/cnt/base/rhcc unused).

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
  input  logic [((MaxTargets+TargetsPerFlit-1)/TargetsPerFlit)*FlitBits-1:0] desc_tgt_i,
  input  logic [$clog2(MaxLen+2)-1:0]                                   desc_ntail_i,
  input  logic [NumPorts-1:0]                                           desc_dmask_i,
  input  logic [NumPorts-1:0][$clog2(MaxTargets+1)-1:0]                 desc_cnt_i,
  input  logic [NumPorts-1:0][$clog2(MaxTargets+1)-1:0]                 desc_base_i,
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
  int unsigned tcount, tflits, ntail, total, pos;
  int unsigned tq    [NumPorts];     // target flits of the replica for port q
  logic        space_ok, start_ok, active, last_src;
  pos_t        pos_q, pos_d;

  assign h      = hdr_t'(desc_hdr_i);
  assign is_dyn = DynamicOps && op_is_dyn(h.opcode);  // the parser let no DYN op through otherwise
  assign is_ldr = op_is_ld_reduce(h.opcode);
  assign tcount = is_dyn ? 32'(h.tcount) : 0;
  assign tflits = (tcount + TargetsPerFlit - 1) / TargetsPerFlit;
  assign ntail  = 32'(desc_ntail_i);
  assign total  = 1 + tflits + ntail;
  assign pos    = 32'(pos_q);

  for (genvar q = 0; q < NumPorts; q++) begin : gen_tq
    assign tq[q] = (32'(desc_cnt_i[q]) + TargetsPerFlit - 1) / TargetsPerFlit;
  end

  // Room for every replica (its exact length) in every destination queue.
  always_comb begin
    int unsigned len_q;
    space_ok = 1'b1;
    for (int unsigned q = 0; q < NumPorts; q++) begin
      len_q = 1 + (is_dyn ? tq[q] : 0) + ntail;
      if (desc_dmask_i[q] && (32'(xp_usage_i[q]) + len_q > XpDepth)) begin
        space_ok = 1'b0;
      end
    end
  end

  assign alloc_req_o   = desc_valid_i && (pos_q == '0) && is_ldr && space_ok;
  assign alloc_hdr_o   = desc_hdr_i;
  assign alloc_ports_o = desc_dmask_i;

  assign start_ok     = desc_valid_i && space_ok && (!is_ldr || alloc_gnt_i);
  assign active       = (pos_q != '0) || start_ok;
  assign last_src     = (pos == total - 1);
  assign desc_ready_o = active && last_src;
  assign tail_ready_o = active && (pos > tflits);
  assign pos_d        = !active ? pos_q : (last_src ? '0 : pos_q + pos_t'(1));

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pos_q <= '0;
    end else begin
      pos_q <= pos_d;
    end
  end

  // Per-destination flits: the replica header (DYN: tcount and hcc of the replica), its target
  // flits (a window of the sorted list; unused lanes 16'hFFFF), then the tail. Only a destination
  // being written gets its flit (operand isolation: the others show zeros, which no queue takes,
  // and a simulator skips their multiplexers, most of the destinations in most cycles).
  always_comb begin
    hdr_t        hq;
    flit_t       pruned;
    int unsigned k, r;
    k          = (pos > 0) ? pos - 1 : 0;
    r          = 0;
    hq         = h;
    pruned     = '1;
    xp_data_o  = '0;
    xp_valid_o = '0;
    xp_last_o  = '0;
    for (int unsigned q = 0; q < NumPorts; q++) begin
      if (active && desc_dmask_i[q]) begin
        if (pos == 0) begin
          hq        = h;
          hq.tcount = TcountWidth'(desc_cnt_i[q]);
          hq.hcc    = desc_rhcc_i[q];
          xp_data_o[q] = is_dyn ? flit_t'(hq) : desc_hdr_i;
          xp_valid_o[q]                     = 1'b1;
        end else if (pos <= tflits) begin
          for (int unsigned l = 0; l < TargetsPerFlit; l++) begin
            r                  = TargetsPerFlit * k + l;
            pruned[16*l +: 16] = 16'hFFFF;
            if (r < 32'(desc_cnt_i[q])) begin
              pruned[16*l +: 16] = desc_tgt_i[16*(32'(desc_base_i[q]) + r) +: 16];
            end
          end
          xp_data_o[q] = pruned;
          xp_valid_o[q]                     = (pos <= tq[q]);
        end else begin
          xp_data_o[q] = tail_data_i;
          xp_valid_o[q]                     = 1'b1;
        end
        // A replica without tail (DYN_LD_REDUCE) ends with its own last target flit.
        xp_last_o[q] = (ntail == 0) ? (pos == (is_dyn ? tq[q] : 0)) : last_src;
      end
    end
  end

  logic unused_h;
  assign unused_h = ^{h.rsvd, h.ecode, h.acc, h.rop, h.dtype, h.len, h.tag, h.src_port, h.maddr,
                      h.stage};

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_xp_depth, XpDepth >= MaxFrame, "XpDepth must hold the longest packet")

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
