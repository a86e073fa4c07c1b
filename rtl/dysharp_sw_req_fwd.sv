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
// The pruned lists are computed combinationally from the descriptor's target list: target i goes to
// port tport[i] at position rank[i] (the number of earlier targets on the same port).

module dysharp_sw_req_fwd
  import dysharp_pkg::*;
#(
  parameter int unsigned NumPorts       = 8,
  parameter int unsigned ExpertsPerPort = 32,
  parameter int unsigned MaxTargets     = 32,
  parameter int unsigned NumGroups      = 16,
  parameter int unsigned XpDepth        = 128
) (
  input  logic                                                          clk_i,
  // The SVA `disable iff (!rst_ni)` samples the asynchronous reset on the clock; not a flop.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                                                          rst_ni,
  /* verilator lint_on SYNCASYNCNET */
  input  logic [NumGroups*NumPorts-1:0]                                 cfg_group_mask_i,
  // Checked frames from the request parser.
  input  logic                                                          desc_valid_i,
  output logic                                                          desc_ready_o,
  input  flit_t                                                         desc_hdr_i,
  input  logic [((MaxTargets+TargetsPerFlit-1)/TargetsPerFlit)*FlitBits-1:0] desc_tgt_i,
  input  logic [$clog2(MaxLen+2)-1:0]                                   desc_ntail_i,
  input  logic                                                          tail_valid_i,
  output logic                                                          tail_ready_o,
  input  flit_t                                                         tail_data_i,
  // Reduction-entry allocation (ld_reduce requests).
  output logic                                                          alloc_req_o,
  input  logic                                                          alloc_gnt_i,
  output flit_t                                                         alloc_hdr_o,
  output logic [NumPorts-1:0]                                           alloc_ports_o,
  // Request crosspoint queues of this ingress, one per egress port q.
  input  logic [NumPorts*$clog2(XpDepth+1)-1:0]                         xp_usage_i,
  input  logic [NumPorts-1:0]                                           xp_ready_i,
  output logic [NumPorts-1:0]                                           xp_valid_o,
  output logic [NumPorts*FlitBits-1:0]                                  xp_data_o,
  output logic [NumPorts-1:0]                                           xp_last_o
);

  localparam int unsigned TgtFlits = (MaxTargets + TargetsPerFlit - 1) / TargetsPerFlit;
  localparam int unsigned MaxFrame = 1 + TgtFlits + 1 + MaxLen;
  localparam int unsigned PosW     = $clog2(MaxFrame);
  localparam int unsigned UsW      = $clog2(XpDepth + 1);
  localparam int unsigned PortW    = (NumPorts > 1) ? $clog2(NumPorts) : 1;
  localparam int unsigned RankW    = $clog2(MaxTargets + 1);

  typedef logic [PosW-1:0]  pos_t;
  typedef logic [PortW-1:0] port_t;
  typedef logic [RankW-1:0] rank_t;

  hdr_t        h;
  logic        is_dyn, is_ldr;
  int unsigned tcount, tflits, ntail, total, pos;
  logic [15:0] tid   [MaxTargets];
  logic        tvalid[MaxTargets];
  port_t       tport [MaxTargets];
  rank_t       rank  [MaxTargets];
  rank_t       cnt   [NumPorts];     // targets per port (the replica's tcount)
  int unsigned tq    [NumPorts];     // target flits of the replica for port q
  logic [NumPorts-1:0] dmask;
  logic        space_ok, start_ok, active, last_src;
  pos_t        pos_q, pos_d;

  assign h      = hdr_t'(desc_hdr_i);
  assign is_dyn = (h.opcode == OpDynSt) || (h.opcode == OpDynLdReduce);
  assign is_ldr = (h.opcode == OpDynLdReduce) || (h.opcode == OpMcLdReduce);
  assign tcount = is_dyn ? 32'(h.tcount) : 0;
  assign tflits = (tcount + TargetsPerFlit - 1) / TargetsPerFlit;
  assign ntail  = 32'(desc_ntail_i);
  assign total  = 1 + tflits + ntail;
  assign pos    = 32'(pos_q);

  // Targets: port and rank (position within that port's pruned list).
  always_comb begin
    for (int unsigned q = 0; q < NumPorts; q++) begin
      cnt[q] = '0;
    end
    for (int unsigned i = 0; i < MaxTargets; i++) begin
      tid[i]    = desc_tgt_i[16*i +: 16];
      tvalid[i] = (i < tcount);
      tport[i]  = port_t'(32'(tid[i]) / ExpertsPerPort);
      rank[i]   = '0;
      for (int unsigned q = 0; q < NumPorts; q++) begin
        if (tvalid[i] && (32'(tport[i]) == q)) begin
          rank[i] = cnt[q];
          cnt[q]  = cnt[q] + rank_t'(1);
        end
      end
    end
    for (int unsigned q = 0; q < NumPorts; q++) begin
      tq[q] = (32'(cnt[q]) + TargetsPerFlit - 1) / TargetsPerFlit;
    end
  end

  // Destination ports.
  always_comb begin
    dmask = '0;
    if (is_dyn) begin
      for (int unsigned q = 0; q < NumPorts; q++) begin
        dmask[q] = (cnt[q] != '0);
      end
    end else if ((h.opcode == OpMcSt) || (h.opcode == OpMcLdReduce)) begin
      for (int unsigned g = 0; g < NumGroups; g++) begin
        if (32'(h.route) == g) begin
          dmask = cfg_group_mask_i[NumPorts*g +: NumPorts];
        end
      end
    end else begin
      for (int unsigned q = 0; q < NumPorts; q++) begin
        dmask[q] = (32'(h.route) == q);
      end
    end
  end

  // Room for every replica (its exact length) in every destination queue.
  always_comb begin
    int unsigned len_q;
    space_ok = 1'b1;
    for (int unsigned q = 0; q < NumPorts; q++) begin
      len_q = 1 + (is_dyn ? tq[q] : 0) + ntail;
      if (dmask[q] && (32'(xp_usage_i[UsW*q +: UsW]) + len_q > XpDepth)) begin
        space_ok = 1'b0;
      end
    end
  end

  assign alloc_req_o   = desc_valid_i && (pos_q == '0) && is_ldr && space_ok;
  assign alloc_hdr_o   = desc_hdr_i;
  assign alloc_ports_o = dmask;

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

  // Per-destination flits.
  always_comb begin
    hdr_t        hq;
    flit_t       tcx;
    flit_t       pruned;
    int unsigned k;
    k = (pos > 0) ? pos - 1 : 0;
    for (int unsigned q = 0; q < NumPorts; q++) begin
      // Header of the replica for q: tcount := cnt[q], hcc fixed up. The CRC is linear (init 0,
      // no final XOR): hcc(h ^ d) = hcc(h) ^ hcc(d), with d nonzero only in the tcount field.
      tcx                            = '0;
      tcx[TcountLsb +: TcountWidth]  = h.tcount ^ TcountWidth'(cnt[q]);
      hq                             = h;
      hq.tcount                      = TcountWidth'(cnt[q]);
      hq.hcc                         = h.hcc ^ hcc_f(tcx);
      // Pruned target flit k of the replica for q.
      for (int unsigned l = 0; l < TargetsPerFlit; l++) begin
        pruned[16*l +: 16] = 16'hFFFF;
        for (int unsigned i = 0; i < MaxTargets; i++) begin
          if (tvalid[i] && (32'(tport[i]) == q) &&
              (32'(rank[i]) == TargetsPerFlit * k + l)) begin
            pruned[16*l +: 16] = tid[i];
          end
        end
      end

      if (pos == 0) begin
        xp_data_o[FlitBits*q +: FlitBits] = is_dyn ? flit_t'(hq) : desc_hdr_i;
        xp_valid_o[q]                     = active && dmask[q];
      end else if (pos <= tflits) begin
        xp_data_o[FlitBits*q +: FlitBits] = pruned;
        xp_valid_o[q]                     = active && dmask[q] && (pos <= tq[q]);
      end else begin
        xp_data_o[FlitBits*q +: FlitBits] = tail_data_i;
        xp_valid_o[q]                     = active && dmask[q];
      end
      // A replica without tail (DYN_LD_REDUCE) ends with its own last target flit.
      xp_last_o[q] = (ntail == 0) ? (pos == (is_dyn ? tq[q] : 0)) : last_src;
    end
  end

  logic unused_h;
  assign unused_h = ^{h.rsvd, h.ecode, h.acc, h.rop, h.dtype, h.len, h.tag, h.src_port, h.maddr,
                      h.stage};

`ifndef SYNTHESIS
  if (XpDepth < MaxFrame) begin : gen_depth_check
    $error("dysharp_sw_req_fwd: XpDepth must hold the longest packet");
  end

  // Writes only into queues with room (reserved at the packet's start).
  a_xp_room: assert property (@(posedge clk_i) disable iff (!rst_ni)
    (xp_valid_o & ~xp_ready_i) == '0);
  // Tail flits of a checked frame are all present once it is being forwarded.
  a_tail_present: assert property (@(posedge clk_i) disable iff (!rst_ni)
    tail_ready_o |-> tail_valid_i);
  a_desc_present: assert property (@(posedge clk_i) disable iff (!rst_ni)
    active |-> desc_valid_i);
  // An allocation request is held, unchanged, until granted.
  a_alloc_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
    alloc_req_o && !alloc_gnt_i |=> alloc_req_o && $stable(alloc_hdr_o) &&
    $stable(alloc_ports_o));
  a_alloc_gnt: assert property (@(posedge clk_i) disable iff (!rst_ni)
    alloc_gnt_i |-> alloc_req_o);
  // Every good frame has at least one destination.
  a_dest: assert property (@(posedge clk_i) disable iff (!rst_ni)
    desc_valid_i |-> dmask != '0);
`endif

endmodule
