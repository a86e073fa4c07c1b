// dysharp_hub_walk: target walk (T0) and AL-TLB lookup (T1) of the hub (docs/architecture.md,
// "dysharp_hub"; spec §7).
//
//   T0: walks the targets of the oldest fully received packet (buffers in turn), one per cycle,
//       into the key register (key_q): a lookup job per DYN target (a range-check failure job per
//       target if the packet failed the check; a load-reduce stops at its first), one identity
//       job for a non-DYN op, a no-op job for anything else.
//   T1: AL-TLB lookup of key_q (dysharp_al_tlb: hit or miss in the same cycle) into the result
//       register (res_q, the stream to the issue stage); the lookup is counted when the job moves
//       on. A hit's LIdx comes from the TLB's LIdx RAM, read as the job moves to res_q: its
//       registered output is the LIdx of res_q's hit while res_q holds it (no other lookup reads
//       the RAM before res_q is taken). After a miss T1 stalls until the walk resolves (unblock_i,
//       in the cycle the fill is written), so every lookup sees every earlier fill, exactly as the
//       sequential golden model.
// A failed load-reduce (abort_i) drops the rest of its packet: T0 skips its remaining targets and
// a key of it waiting behind the blocked T1 is dropped (never looked up, so never counted).

`include "dysharp_assert.svh"

module dysharp_hub_walk import dysharp_pkg::*, dysharp_hub_pkg::*; #(
  parameter  int unsigned ExpertsPerPort = 32,
  parameter  int unsigned MaxTargets     = 32,
  parameter  bit          DynamicOps     = 1'b1, // 0: static groups and unicast only (spec §5.7)
  parameter  int unsigned TlbEntries     = 512,
  parameter  int unsigned TlbWays        = 512,
  // A target job: struct {slot_t slot; job_kind_e kind; local_t lcl; lidx_t lidx; logic first;
  // logic last;} (dysharp_hub; local_t is LocalW bits).
  parameter  type         job_t          = logic,
  localparam int unsigned LocalW         = (ExpertsPerPort > 1) ? $clog2(ExpertsPerPort) : 1,
  localparam int unsigned TIdxW          = (MaxTargets > 1) ? $clog2(MaxTargets) : 1
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // Packet buffers (receive stage): which are full, and T0's read port.
  input  logic [NumSlots-1:0]    full_i,
  output slot_t                  t_slot_o,
  output logic [TIdxW-1:0]       t_idx_o,
  input  logic [OpcodeWidth-1:0] t_op_i,
  input  logic [TcountWidth-1:0] t_tcount_i,
  input  logic                   t_rerr_i,
  input  logic [15:0]            t_tgt_i,
  // T1's read port: the key's AIdx.
  output slot_t                  key_slot_o,
  input  aidx_t                  key_aidx_i,
  // Jobs to the issue stage.
  output logic                   res_valid_o,
  input  logic                   res_ready_i,
  output job_t                   res_o,
  // From the issue stage: the buffer of its job; that job is the packet's last and done
  // (rel_i), a failed load-reduce (abort_i), the walk resolved (unblock_i).
  input  slot_t                  job_slot_i,
  input  logic                   rel_i,
  input  logic                   abort_i,
  input  logic                   unblock_i,
  // TLB fill (from the issue stage, with the walk's or the allocation's LIdx).
  input  logic                   fill_i,
  input  logic [LocalW-1:0]      fill_local_i,
  input  aidx_t                  fill_aidx_i,
  input  lidx_t                  fill_lidx_i,
  // Counters.
  output logic [31:0]            tlb_hits_o,
  output logic [31:0]            tlb_misses_o
);

  typedef logic [LocalW-1:0] local_t;
  typedef logic [TIdxW-1:0]  tidx_t;

  // T0.
  slot_t               t_slot_q, t_slot_d;
  tidx_t               t_idx_q, t_idx_d;
  logic [NumSlots-1:0] tdone_q, tdone_d;  // T0 has emitted every job of the packet
  logic                t_act, t_tlast, t_load;
  job_t                t_job;

  // T1.
  logic                key_v_q, key_v_d;
  job_t                key_q, key_d;
  logic                key_adv;
  logic                blocked_q, blocked_d;
  logic                tlb_hit;
  lidx_t               tlb_lidx;
  logic                tlb_evict_unused;
  logic                res_v_q, res_v_d;
  job_t                res_q, res_d;
  job_t                res_out;           // res_q with a hit's LIdx from the TLB's RAM
  logic                res_pop;
  logic [31:0]         hits_q, hits_d, misses_q, misses_d;

  // ---------------------------------------------------------------------------------------------
  // T0: one job per target of the oldest received packet (one job for a non-DYN packet)
  // ---------------------------------------------------------------------------------------------
  assign t_slot_o = t_slot_q;
  assign t_idx_o  = t_idx_q;
  assign t_act    = full_i[t_slot_q] && !tdone_q[t_slot_q];
  assign t_tlast  = (32'(t_idx_q) + 1 >= 32'(t_tcount_i)) || (32'(t_idx_q) == MaxTargets - 1);

  always_comb begin
    t_job       = '0;
    t_job.slot  = t_slot_q;
    t_job.first = (t_idx_q == '0);
    t_job.lcl   = local_t'(32'(t_tgt_i) % ExpertsPerPort);
    if (!DynamicOps || !op_is_dyn(t_op_i)) begin
      t_job.kind = op_is_request(t_op_i) ? JobIdent : JobNop;
      t_job.last = 1'b1;
    end else if (t_tcount_i == '0) begin
      t_job.kind = JobNop;
      t_job.last = 1'b1;
    end else if (t_rerr_i) begin
      // Every target fails the range check; a load-reduce stops at its first target.
      t_job.kind = JobRange;
      t_job.last = t_tlast || is_op(t_op_i, OpDynLdReduce);
    end else begin
      t_job.kind = JobLookup;
      t_job.last = t_tlast;
    end
  end

  // A job moves to key_q when key_q is free or moves on; none from a packet being aborted.
  assign t_load = t_act && (!key_v_q || key_adv) && !(abort_i && (job_slot_i == t_slot_q));

  always_comb begin
    t_slot_d = t_slot_q;
    t_idx_d  = t_idx_q;
    tdone_d  = tdone_q;
    if (t_load) begin
      if (t_job.last) begin
        tdone_d[t_slot_q] = 1'b1;
        t_slot_d          = slot_inc(t_slot_q);
        t_idx_d           = '0;
      end else begin
        t_idx_d = t_idx_q + tidx_t'(1);
      end
    end
    if (abort_i) begin
      // A failed load-reduce: skip its remaining targets (if T0 is still inside that packet;
      // if it is done with it, T0 already waits for the next packet of that buffer).
      tdone_d[job_slot_i] = 1'b1;
      if (t_slot_q == job_slot_i && !tdone_q[job_slot_i]) begin
        t_slot_d = slot_inc(t_slot_q);
        t_idx_d  = '0;
      end
    end
    if (rel_i) begin
      tdone_d[job_slot_i] = 1'b0;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // T1: AL-TLB lookup, counted when the job moves to res_q
  // ---------------------------------------------------------------------------------------------
  assign key_slot_o = key_q.slot;

  // No AL-TLB without the dynamic operations (spec §5.7): every job is an identity or a no-op.
  if (DynamicOps) begin : gen_tlb
    dysharp_al_tlb #(
      .Entries    (TlbEntries),
      .Ways       (TlbWays),
      .LocalWidth (LocalW),
      .AidxWidth  (AidxW),
      .LidxWidth  (LidxW)
    ) u_tlb (
      .clk_i          (clk_i),
      .rst_ni         (rst_ni),
      // The key is presented from registers (the compare settles once per cycle); the lookup
      // commits (reads the LIdx RAM) when the job moves on.
      .query_i        (key_v_q && !blocked_q && (key_q.kind == JobLookup)),
      .lookup_i       (key_adv && (key_q.kind == JobLookup)),
      .lookup_local_i (key_q.lcl),
      .lookup_aidx_i  (key_aidx_i),
      .lookup_hit_o   (tlb_hit),
      .lookup_lidx_o  (tlb_lidx),
      .fill_i         (fill_i),
      .fill_local_i   (fill_local_i),
      .fill_aidx_i    (fill_aidx_i),
      .fill_lidx_i    (fill_lidx_i),
      .fill_evict_o   (tlb_evict_unused)
    );
  end else begin : gen_no_tlb
    assign tlb_hit          = 1'b0;
    assign tlb_lidx         = '0;
    assign tlb_evict_unused = 1'b0;
    logic unused_fill;
    assign unused_fill = ^{fill_i, fill_local_i, fill_aidx_i, fill_lidx_i, key_aidx_i, t_tgt_i,
                           t_rerr_i};
  end

  assign res_pop = res_v_q && res_ready_i;
  assign key_adv = key_v_q && !blocked_q && (!res_v_q || res_pop);

  always_comb begin
    key_v_d   = key_v_q;
    key_d     = key_q;
    res_v_d   = res_v_q;
    res_d     = res_q;
    blocked_d = blocked_q;
    hits_d    = hits_q;
    misses_d  = misses_q;
    if (res_pop) begin
      res_v_d = 1'b0;
    end
    if (key_adv) begin
      key_v_d = 1'b0;
      res_v_d = 1'b1;
      res_d   = key_q;
      if (DynamicOps && (key_q.kind == JobLookup)) begin
        if (tlb_hit) begin
          res_d.kind = JobHit;   // its LIdx: tlb_lidx from the next cycle on (res_out)
          hits_d     = hits_q + 32'd1;
        end else begin
          res_d.kind = JobMiss;
          misses_d   = misses_q + 32'd1;
          blocked_d  = 1'b1;
        end
      end
    end
    if (unblock_i) begin
      blocked_d = 1'b0;
    end
    if (abort_i && key_v_q && (key_q.slot == job_slot_i)) begin
      key_v_d = 1'b0;  // never looked up (T1 was blocked), so never counted
    end
    if (t_load) begin
      key_v_d = 1'b1;
      key_d   = t_job;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      t_slot_q  <= '0;
      t_idx_q   <= '0;
      tdone_q   <= '0;
      key_v_q   <= 1'b0;
      key_q     <= '0;
      res_v_q   <= 1'b0;
      res_q     <= '0;
      blocked_q <= 1'b0;
      hits_q    <= '0;
      misses_q  <= '0;
    end else begin
      t_slot_q  <= t_slot_d;
      t_idx_q   <= t_idx_d;
      tdone_q   <= tdone_d;
      key_v_q   <= key_v_d;
      key_q     <= key_d;
      res_v_q   <= res_v_d;
      res_q     <= res_d;
      blocked_q <= blocked_d;
      hits_q    <= hits_d;
      misses_q  <= misses_d;
    end
  end

  always_comb begin
    res_out = res_q;
    if (DynamicOps && (res_q.kind == JobHit)) begin
      res_out.lidx = tlb_lidx;
    end
  end

  assign res_valid_o  = res_v_q;
  assign res_o        = res_out;
  assign tlb_hits_o   = hits_q;
  assign tlb_misses_o = misses_q;

  // The TLB's eviction flag is read by nothing in the hub (named *unused*).
  logic unused_sig;
  assign unused_sig = tlb_evict_unused;

`ifndef SYNTHESIS

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh). The stability of a
  // stalled word: dysharp_stream_chk below.
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // Jobs and keys belong to received packets.
      `DYSHARP_ASSERT_I(a_res_slot, !res_v_q || full_i[res_q.slot])
      `DYSHARP_ASSERT_I(a_key_slot, !key_v_q || full_i[key_q.slot])
      // A fill and the unblocking happen only while T1 waits for a walk.
      `DYSHARP_ASSERT_I(a_fill_blocked, !fill_i || blocked_q)
      `DYSHARP_ASSERT_I(a_unblock, !unblock_i || blocked_q)
    end
  end

  // Job stream to the issue stage: valid stays high and the job stays stable until taken.
  dysharp_stream_chk #(
    .Width ($bits(res_o)),
    .Name  ("dysharp_hub_walk: a_res_stable")
  ) u_res_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (res_valid_o),
    .ready_i (res_ready_i),
    .data_i  (res_o)
  );

  // No job is lost: a key moves on (into res_q) or waits, unless its packet is aborted.
  dysharp_stream_chk #(
    .Width ($bits(key_q)),
    .Name  ("dysharp_hub_walk: a_key_kept")
  ) u_key_kept_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (key_v_q),
    .ready_i (key_adv || (abort_i && key_q.slot == job_slot_i)),
    .data_i  (key_q)
  );
`endif

endmodule
