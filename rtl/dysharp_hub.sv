// dysharp_hub: the destination hub of one port (docs/spec.md §5, §7, §9; golden model
// sim/src/hub/mod.rs, whose memory accesses, responses and counters it reproduces exactly).
//
// Requests arrive legal and pruned from the switch (every target is local to this hub). The hub
// handles one packet at a time in arrival order and the targets of a DYN op in list order. Per
// target: AL-TLB lookup (counted hit or miss); on a miss a walk (one 16-byte read of the line
// holding the AL entry); on an invalid entry a Dispatch allocates (AL entry line write) while a
// Combine fails with ERR_UNMAPPED; then the `len` data lines (writes for stores, reads for loads).
// Non-DYN ops use identity translation (no TLB).
//
// This module only instantiates and connects the five stages (one flit in and one memory beat of
// up to MemLines lines per cycle in steady state):
//   dysharp_hub_rx    : NumSlots packet buffers, used in turn; packets are received while earlier
//                       ones are processed. The range check of a DYN op is computed from flit0.
//   dysharp_hub_walk  : T0 walks the targets of the oldest fully received packet, one per cycle;
//                       T1 looks them up in the AL-TLB (dysharp_al_tlb) and counts the lookup.
//                       After a miss, T1 stalls until the walk resolves (fill done), so every
//                       lookup sees every earlier fill, exactly as the sequential golden model.
//   dysharp_hub_issue : owns the memory request register; runs each job (walk, AL write, data
//                       lines) in order. A request is one beat of 1..MemLines consecutive 16-byte
//                       lines. Reads may be pipelined (up to TagDepth outstanding, tag FIFO);
//                       split into lines, the order of requests is the golden order.
//   dysharp_hub_rsp   : read beats return in order with their tag (walk word, raw data for
//                       RSP_READ, or f32 lane accumulation for load-reduces) -> payload FIFO.
//   dysharp_hub_out   : response headers (header queue) followed by their payload flits.
//
// The configuration is one hub_cfg_t (dysharp_hub_pkg). The memory port is packed arrays of lines
// (their number is MemLines, and a package cannot hold a parameterized type); inside, it is the
// mem_req_t / mem_rsp_t structs.

`include "dysharp_assert.svh"

module dysharp_hub import dysharp_pkg::*, dysharp_hub_pkg::*; #(
  parameter int unsigned ExpertsPerPort = 32,
  parameter int unsigned MaxTargets     = 32,
  parameter bit          DynamicOps     = 1'b1, // 0: static groups and unicast only (spec §5.7)
  parameter int unsigned TlbEntries     = 512,
  parameter int unsigned TlbWays        = 512,  // TlbEntries = fully associative (CAM)
  parameter int unsigned MemLines       = 4     // 16-byte lines per memory beat (1..MaxLen)
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  // Configuration (spec §7; changes only in reset).
  input  hub_cfg_t                cfg_i,
  // Requests from the switch.
  input  logic                    req_valid_i,
  output logic                    req_ready_o,
  input  flit_t                   req_data_i,
  input  logic                    req_last_i,
  // Responses to the switch (src_port 0: the switch stamps it).
  output logic                    rsp_valid_o,
  input  logic                    rsp_ready_i,
  output flit_t                   rsp_data_o,
  output logic                    rsp_last_o,
  // GPU memory port: a beat of mem_req_lines_o (1..MemLines) consecutive 16-byte lines from
  // mem_req_addr_o; line i at [128*i +: 128] of the data and [16*i +: 16] of the strobes (lines
  // past the count are zero). One read response beat per read, in order, laid out the same way.
  output logic                    mem_req_valid_o,
  input  logic                    mem_req_ready_i,
  output logic                    mem_req_we_o,
  output logic [47:0]             mem_req_addr_o,
  output logic [$clog2(MemLines+1)-1:0] mem_req_lines_o,
  output logic [MemLines-1:0][127:0] mem_req_wdata_o,  // line i at [i]
  output logic [MemLines-1:0][15:0]  mem_req_wstrb_o,
  input  logic                    mem_rsp_valid_i,
  output logic                    mem_rsp_ready_o,
  input  logic [MemLines-1:0][127:0] mem_rsp_rdata_i,
  // Counters.
  output logic [31:0]             tlb_hits_o,
  output logic [31:0]             tlb_misses_o,
  output logic [2:0][31:0]        err_count_o   // codes 11, 12, 13 at [c-11]
);

  // ---------------------------------------------------------------------------------------------
  // Inter-stage types sized by the parameters
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned LocalW = (ExpertsPerPort > 1) ? $clog2(ExpertsPerPort) : 1;
  localparam int unsigned TIdxW  = (MaxTargets > 1) ? $clog2(MaxTargets) : 1;
  localparam int unsigned LinesW = $clog2(MemLines + 1);  // lines in a beat (1..MemLines)

  typedef logic [LocalW-1:0] local_t;
  typedef logic [LinesW-1:0] nlines_t;

  // A target job (walk T0 -> T1 -> issue).
  typedef struct packed {
    slot_t     slot;
    job_kind_e kind;
    local_t    lcl;
    lidx_t     lidx;
    logic      first;
    logic      last;    // last job of the packet
  } job_t;

  // A read tag (issue -> response stage, in memory order).
  typedef struct packed {
    rd_kind_e              kind;
    line_t                 line;    // first line of the beat
    nlines_t               n;       // lines in the beat
    logic [DtypeWidth-1:0] dtype;
    logic [RopWidth-1:0]   rop;
    logic                  native;
  } rd_tag_t;

  // A payload beat (response -> output stage): n payload flits, flit i at [128*i +: 128].
  typedef struct packed {
    nlines_t                 n;
    logic [128*MemLines-1:0] data;
  } pay_beat_t;

  // The memory port.
  typedef struct packed {
    logic                    we;
    logic [47:0]             addr;
    nlines_t                 lines;
    logic [128*MemLines-1:0] wdata;
    logic [16*MemLines-1:0]  wstrb;
  } mem_req_t;

  typedef struct packed {
    logic [128*MemLines-1:0] rdata;
  } mem_rsp_t;

  // ---------------------------------------------------------------------------------------------
  // Signals between the stages
  // ---------------------------------------------------------------------------------------------
  logic [NumSlots-1:0]    slot_full;
  // T0's and T1's reads of the packet buffers.
  slot_t                  t_slot;
  logic [TIdxW-1:0]       t_idx;
  logic [OpcodeWidth-1:0] t_op;
  logic [TcountWidth-1:0] t_tcount;
  logic                   t_rerr;
  logic [15:0]            t_tgt;
  slot_t                  key_slot;
  aidx_t                  key_aidx;
  // Jobs (walk -> issue) and the issue stage's reads of the packet buffers.
  logic                   res_valid, res_ready;
  job_t                   res;
  logic [47:0]            res_maddr, res_off;
  aidx_t                  res_aidx;
  slot_t                  job_slot;
  slot_t                  pay_slot;
  line_t                  pay_line;
  hub_req_t               job_req;
  logic [47:0]            job_off;
  aidx_t                  job_aidx;
  flit_t                  job_be;
  logic [128*MemLines-1:0] job_pay;
  // Job control and TLB fill (issue -> receive, walk).
  logic                   rel, abort, unblock;
  logic                   fill;
  local_t                 fill_local;
  aidx_t                  fill_aidx;
  lidx_t                  fill_lidx;
  // Memory port.
  mem_req_t               mem_req;
  mem_rsp_t               mem_rsp;
  // Read tags, walk data, credits (issue <-> response).
  logic                   tag_valid, tag_ready;
  rd_tag_t                tag;
  logic [TagCntW-1:0]     tag_usage;
  logic                   walk_rsp;
  logic [127:0]           walk_line;
  logic                   credit_ok, credit_take;
  // Headers (issue -> output) and payload beats (response -> output).
  logic                   hdr_push, hdr_space;
  rsp_hdr_t               hdr;
  logic                   pay_valid, pay_ready;
  pay_beat_t              pay;

  // ---------------------------------------------------------------------------------------------
  // Stages
  // ---------------------------------------------------------------------------------------------
  dysharp_hub_rx #(
    .DynamicOps (DynamicOps),
    .MaxTargets (MaxTargets),
    .MemLines   (MemLines)
  ) u_rx (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .cfg_i       (cfg_i),
    .req_valid_i (req_valid_i),
    .req_ready_o (req_ready_o),
    .req_data_i  (req_data_i),
    .req_last_i  (req_last_i),
    .full_o      (slot_full),
    .rel_i       (rel),
    .rel_slot_i  (job_slot),
    .t_slot_i    (t_slot),
    .t_idx_i     (t_idx),
    .t_op_o      (t_op),
    .t_tcount_o  (t_tcount),
    .t_rerr_o    (t_rerr),
    .t_tgt_o     (t_tgt),
    .key_slot_i  (key_slot),
    .key_aidx_o  (key_aidx),
    .res_slot_i  (res.slot),
    .res_maddr_o (res_maddr),
    .res_off_o   (res_off),
    .res_aidx_o  (res_aidx),
    .job_slot_i  (job_slot),
    .pay_slot_i  (pay_slot),
    .pay_line_i  (pay_line),
    .job_req_o   (job_req),
    .job_off_o   (job_off),
    .job_aidx_o  (job_aidx),
    .job_be_o    (job_be),
    .job_pay_o   (job_pay)
  );

  dysharp_hub_walk #(
    .DynamicOps     (DynamicOps),
    .ExpertsPerPort (ExpertsPerPort),
    .MaxTargets     (MaxTargets),
    .TlbEntries     (TlbEntries),
    .TlbWays        (TlbWays),
    .job_t          (job_t)
  ) u_walk (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .full_i       (slot_full),
    .t_slot_o     (t_slot),
    .t_idx_o      (t_idx),
    .t_op_i       (t_op),
    .t_tcount_i   (t_tcount),
    .t_rerr_i     (t_rerr),
    .t_tgt_i      (t_tgt),
    .key_slot_o   (key_slot),
    .key_aidx_i   (key_aidx),
    .res_valid_o  (res_valid),
    .res_ready_i  (res_ready),
    .res_o        (res),
    .job_slot_i   (job_slot),
    .rel_i        (rel),
    .abort_i      (abort),
    .unblock_i    (unblock),
    .fill_i       (fill),
    .fill_local_i (fill_local),
    .fill_aidx_i  (fill_aidx),
    .fill_lidx_i  (fill_lidx),
    .tlb_hits_o   (tlb_hits_o),
    .tlb_misses_o (tlb_misses_o)
  );

  dysharp_hub_issue #(
    .DynamicOps     (DynamicOps),
    .ExpertsPerPort (ExpertsPerPort),
    .MemLines       (MemLines),
    .job_t          (job_t),
    .rd_tag_t       (rd_tag_t),
    .mem_req_t      (mem_req_t)
  ) u_issue (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .cfg_i           (cfg_i),
    .full_i          (slot_full),
    .res_valid_i     (res_valid),
    .res_ready_o     (res_ready),
    .res_i           (res),
    .res_maddr_i     (res_maddr),
    .res_off_i       (res_off),
    .res_aidx_i      (res_aidx),
    .job_slot_o      (job_slot),
    .pay_slot_o      (pay_slot),
    .pay_line_o      (pay_line),
    .job_req_i       (job_req),
    .job_off_i       (job_off),
    .job_aidx_i      (job_aidx),
    .job_be_i        (job_be),
    .job_pay_i       (job_pay),
    .rel_o           (rel),
    .abort_o         (abort),
    .unblock_o       (unblock),
    .fill_o          (fill),
    .fill_local_o    (fill_local),
    .fill_aidx_o     (fill_aidx),
    .fill_lidx_o     (fill_lidx),
    .mem_req_valid_o (mem_req_valid_o),
    .mem_req_ready_i (mem_req_ready_i),
    .mem_req_o       (mem_req),
    .tag_valid_o     (tag_valid),
    .tag_ready_i     (tag_ready),
    .tag_o           (tag),
    .tag_usage_o     (tag_usage),
    .walk_rsp_i      (walk_rsp),
    .walk_line_i     (walk_line),
    .credit_ok_i     (credit_ok),
    .credit_take_o   (credit_take),
    .hdr_push_o      (hdr_push),
    .hdr_space_i     (hdr_space),
    .hdr_o           (hdr),
    .err_count_o     (err_count_o)
  );

  assign mem_req_we_o    = mem_req.we;
  assign mem_req_addr_o  = mem_req.addr;
  assign mem_req_lines_o = mem_req.lines;
  assign mem_req_wdata_o = mem_req.wdata;
  assign mem_req_wstrb_o = mem_req.wstrb;
  assign mem_rsp.rdata   = mem_rsp_rdata_i;

  dysharp_hub_rsp #(
    .MemLines   (MemLines),
    .rd_tag_t   (rd_tag_t),
    .pay_beat_t (pay_beat_t),
    .mem_rsp_t  (mem_rsp_t)
  ) u_rsp (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .mem_rsp_valid_i (mem_rsp_valid_i),
    .mem_rsp_ready_o (mem_rsp_ready_o),
    .mem_rsp_i       (mem_rsp),
    .tag_valid_i     (tag_valid),
    .tag_ready_o     (tag_ready),
    .tag_i           (tag),
    .tag_usage_i     (tag_usage),
    .walk_rsp_o      (walk_rsp),
    .walk_line_o     (walk_line),
    .credit_take_i   (credit_take),
    .credit_ok_o     (credit_ok),
    .pay_valid_o     (pay_valid),
    .pay_ready_i     (pay_ready),
    .pay_o           (pay)
  );

  dysharp_hub_out #(
    .MemLines   (MemLines),
    .pay_beat_t (pay_beat_t)
  ) u_out (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .hdr_push_i  (hdr_push),
    .hdr_space_o (hdr_space),
    .hdr_i       (hdr),
    .pay_valid_i (pay_valid),
    .pay_ready_o (pay_ready),
    .pay_i       (pay),
    .rsp_valid_o (rsp_valid_o),
    .rsp_ready_i (rsp_ready_i),
    .rsp_data_o  (rsp_data_o),
    .rsp_last_o  (rsp_last_o)
  );

  // ---------------------------------------------------------------------------------------------
  // Assertions (each stage checks its own streams; these are the hub's parameters)
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_params, ExpertsPerPort >= 1 && MaxTargets >= 1,
    "ExpertsPerPort and MaxTargets must be at least 1")
  `DYSHARP_ASSERT_INIT(a_mem_lines, MemLines >= 1 && MemLines <= MaxLen, "MemLines must be 1..MaxLen")
  // err_count_o holds the hubs' codes of the package's table, in order.
  `DYSHARP_ASSERT_INIT(a_hub_codes, 32'(ErrUnmapped) == FirstHubErrCode &&
    32'(ErrAlloc) == LastHubErrCode && 32'(ErrRange) == FirstHubErrCode + 1,
    "the hub's error codes are not FirstHubErrCode..LastHubErrCode")
`endif

endmodule
