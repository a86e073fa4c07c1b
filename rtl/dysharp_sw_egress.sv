// dysharp_sw_egress: egress of one switch port (architecture.md, dysharp_switch).
//
// Two class arbiters, round robin over the sources of each class and packet-atomic (a grant is
// held from a packet's first flit to its last): request class = the request crosspoint queues
// towards this port; response class = the response crosspoint queues, the parsers' RSP_ERROR
// queues and the reduction unit's result stream of this port. A link arbiter then moves at most
// one flit per cycle into either the request output FIFO (to the hub) or the response output FIFO
// (to the SM), round robin at flit granularity between the classes that have a flit and FIFO room.
// The classes never share a queue, so a stalled hub cannot block responses and a stalled SM cannot
// block requests. Between the request class arbiter and the link, dysharp_sw_prune prunes each
// DYN replica's target list to this port's targets (DynamicOps = 0: no pruning stage). Counts the
// downlink's flits and payload flits.

`include "dysharp_assert.svh"

module dysharp_sw_egress
  import dysharp_pkg::*;
#(
  parameter int unsigned NumReqSrc      = 8,
  parameter int unsigned NumRspSrc      = 11,
  parameter int unsigned OutDepth       = 2,
  parameter int unsigned PortId         = 0,
  parameter int unsigned ExpertsPerPort = 32,
  parameter int unsigned MaxTargets     = 32,
  parameter bit          DynamicOps     = 1'b1  // 0: no DYN replica, no pruning (spec §5.7)
) (
  input  logic                            clk_i,
  // Asynchronous reset (the checks' as well).
  input  logic                            rst_ni,
  // Request-class sources.
  input  logic [NumReqSrc-1:0]            req_src_valid_i,
  output logic [NumReqSrc-1:0]            req_src_ready_o,
  input  flit_t [NumReqSrc-1:0]           req_src_data_i,
  input  logic [NumReqSrc-1:0]            req_src_last_i,
  // Response-class sources.
  input  logic [NumRspSrc-1:0]            rsp_src_valid_i,
  output logic [NumRspSrc-1:0]            rsp_src_ready_o,
  input  flit_t [NumRspSrc-1:0]           rsp_src_data_i,
  input  logic [NumRspSrc-1:0]            rsp_src_last_i,
  // Downlink: requests to the hub, responses to the SM.
  output logic                            req_out_valid_o,
  input  logic                            req_out_ready_i,
  output flit_t                           req_out_data_o,
  output logic                            req_out_last_o,
  output logic                            rsp_out_valid_o,
  input  logic                            rsp_out_ready_i,
  output flit_t                           rsp_out_data_o,
  output logic                            rsp_out_last_o,
  // Counters (wrap around).
  output logic [31:0]                     dn_flits_o,
  output logic [31:0]                     dn_payload_flits_o
);

  localparam int unsigned ReqIdxW = (NumReqSrc > 1) ? $clog2(NumReqSrc) : 1;
  localparam int unsigned RspIdxW = (NumRspSrc > 1) ? $clog2(NumRspSrc) : 1;
  localparam int unsigned OutW    = FlitBits + 1;

  // Class arbitration.
  logic [NumReqSrc-1:0] req_gnt;
  logic [ReqIdxW-1:0]   req_idx;
  logic [NumRspSrc-1:0] rsp_gnt;
  logic [RspIdxW-1:0]   rsp_idx;
  logic [1:0]           sel_valid, sel_last, inpkt_q, inpkt_d, move, take;
  flit_t                sel_data [2];
  // The request class after pruning: what the link moves.
  logic                 pr_valid, pr_last, outpkt_q;
  flit_t                pr_data;

  // Link arbitration and output FIFOs.
  logic [1:0]           link_req, link_gnt;
  logic                 link_valid;
  logic                 unused_link_idx;
  logic [1:0]           out_in_ready;
  logic [OutW-1:0]      req_out_word, rsp_out_word;
  logic [$clog2(OutDepth+1)-1:0] unused_req_usage, unused_rsp_usage;

  logic [31:0]          dn_flits_q, dn_payload_q;
  logic [OpcodeWidth-1:0] mv_op;
  logic [EcodeWidth-1:0]  mv_ecode;
  logic [LenWidth-1:0]    mv_len;
  logic                 mv_head;

  dysharp_rr_arb #(
    .N (NumReqSrc)
  ) u_req_arb (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .req_i   (req_src_valid_i),
    .lock_i  (inpkt_q[0]),
    .ack_i   (take[0]),
    .gnt_o   (req_gnt),
    .idx_o   (req_idx),
    .valid_o (sel_valid[0])
  );

  dysharp_rr_arb #(
    .N (NumRspSrc)
  ) u_rsp_arb (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .req_i   (rsp_src_valid_i),
    .lock_i  (inpkt_q[1]),
    .ack_i   (move[1]),
    .gnt_o   (rsp_gnt),
    .idx_o   (rsp_idx),
    .valid_o (sel_valid[1])
  );

  assign sel_data[0] = req_src_data_i[req_idx];
  assign sel_last[0] = req_src_last_i[req_idx];
  assign sel_data[1] = rsp_src_data_i[rsp_idx];
  assign sel_last[1] = rsp_src_last_i[rsp_idx];

  if (DynamicOps) begin : gen_prune
    logic pr_in_ready;
    dysharp_sw_prune #(
      .PortId         (PortId),
      .ExpertsPerPort (ExpertsPerPort),
      .MaxTargets     (MaxTargets)
    ) u_prune (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .in_valid_i  (sel_valid[0]),
      .in_ready_o  (pr_in_ready),
      .in_data_i   (sel_data[0]),
      .in_last_i   (sel_last[0]),
      .out_valid_o (pr_valid),
      .out_ready_i (move[0]),
      .out_data_o  (pr_data),
      .out_last_o  (pr_last)
    );
    assign take[0] = sel_valid[0] && pr_in_ready;
  end else begin : gen_no_prune
    assign pr_valid = sel_valid[0];
    assign pr_data  = sel_data[0];
    assign pr_last  = sel_last[0];
    assign take[0]  = move[0];
  end
  assign take[1] = move[1];

  assign link_req = {sel_valid[1], pr_valid} & out_in_ready;

  dysharp_rr_arb #(
    .N (2)
  ) u_link_arb (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .req_i   (link_req),
    .lock_i  (1'b0),
    .ack_i   (link_valid),
    .gnt_o   (link_gnt),
    .idx_o   (unused_link_idx),
    .valid_o (link_valid)
  );

  assign move            = link_gnt;
  assign req_src_ready_o = take[0] ? req_gnt : '0;
  assign rsp_src_ready_o = move[1] ? rsp_gnt : '0;

  // A packet is in progress from its first taken flit to its last.
  always_comb begin
    inpkt_d = inpkt_q;
    for (int unsigned c = 0; c < 2; c++) begin
      if (take[c]) begin
        inpkt_d[c] = !sel_last[c];
      end
    end
  end

  dysharp_fifo #(
    .Width (OutW),
    .Depth (OutDepth)
  ) u_req_out (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (move[0]),
    .in_ready_o  (out_in_ready[0]),
    .in_data_i   ({pr_last, pr_data}),
    .out_valid_o (req_out_valid_o),
    .out_ready_i (req_out_ready_i),
    .out_data_o  (req_out_word),
    .usage_o     (unused_req_usage)
  );

  dysharp_fifo #(
    .Width (OutW),
    .Depth (OutDepth)
  ) u_rsp_out (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (move[1]),
    .in_ready_o  (out_in_ready[1]),
    .in_data_i   ({sel_last[1], sel_data[1]}),
    .out_valid_o (rsp_out_valid_o),
    .out_ready_i (rsp_out_ready_i),
    .out_data_o  (rsp_out_word),
    .usage_o     (unused_rsp_usage)
  );

  assign req_out_data_o = req_out_word[FlitBits-1:0];
  assign req_out_last_o = req_out_word[FlitBits];
  assign rsp_out_data_o = rsp_out_word[FlitBits-1:0];
  assign rsp_out_last_o = rsp_out_word[FlitBits];

  // Downlink counters: every moved flit; payload flits of a packet counted at its flit0 (the
  // request class's packets as they leave the pruning stage).
  assign mv_op    = move[1] ? sel_data[1][OpcodeLsb +: OpcodeWidth]
                           : pr_data[OpcodeLsb +: OpcodeWidth];
  assign mv_ecode = move[1] ? sel_data[1][EcodeLsb +: EcodeWidth]
                           : pr_data[EcodeLsb +: EcodeWidth];
  assign mv_len   = move[1] ? sel_data[1][LenLsb +: LenWidth] : pr_data[LenLsb +: LenWidth];
  assign mv_head  = move[1] ? !inpkt_q[1] : !outpkt_q;

  function automatic logic [31:0] payload_flits(input logic [OpcodeWidth-1:0] op,
                                                input logic [EcodeWidth-1:0]  ecode,
                                                input logic [LenWidth-1:0]    len);
    return op_carries_payload(op, ecode) ? 32'(len) : 32'd0;
  endfunction

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      inpkt_q      <= '0;
      outpkt_q     <= 1'b0;
      dn_flits_q   <= '0;
      dn_payload_q <= '0;
    end else begin
      inpkt_q <= inpkt_d;
      if (move[0]) begin
        outpkt_q <= !pr_last;
      end
      if (move != '0) begin
        dn_flits_q <= dn_flits_q + 32'd1;
        if (mv_head) begin
          dn_payload_q <= dn_payload_q + payload_flits(mv_op, mv_ecode, mv_len);
        end
      end
    end
  end

  assign dn_flits_o         = dn_flits_q;
  assign dn_payload_flits_o = dn_payload_q;

`ifndef SYNTHESIS
  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh). The stability of
  // the output streams: two dysharp_stream_chk below.
  logic [NumReqSrc-1:0] req_src_stall_q;   // offered and not taken at the last edge
  logic [NumRspSrc-1:0] rsp_src_stall_q;
  logic [31:0]          chk_dn_q, chk_prev_pay_q;  // moved flits; the payload count before

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      req_src_stall_q <= '0;
      rsp_src_stall_q <= '0;
      chk_dn_q        <= '0;
      chk_prev_pay_q  <= '0;
    end else begin
      `DYSHARP_ASSERT_I(a_one_move, $onehot0(move), "more than one flit moved")
      // Sources keep an offered flit until it is taken.
      `DYSHARP_ASSERT_I(a_req_src_stable, (req_src_stall_q & ~req_src_valid_i) == '0,
        "a request source withdrew an offered flit")
      `DYSHARP_ASSERT_I(a_rsp_src_stable, (rsp_src_stall_q & ~rsp_src_valid_i) == '0,
        "a response source withdrew an offered flit")
      // Counters: every moved flit counted; at most one packet's payload per cycle.
      `DYSHARP_ASSERT_I(a_dn_flits, dn_flits_q == chk_dn_q, "a moved flit not counted")
      `DYSHARP_ASSERT_I(a_dn_payload, (dn_payload_q - chk_prev_pay_q) <= 32'(MaxLen),
        "more than one packet's payload in a cycle")
      req_src_stall_q <= req_src_valid_i & ~req_src_ready_o;
      rsp_src_stall_q <= rsp_src_valid_i & ~rsp_src_ready_o;
      chk_dn_q        <= chk_dn_q + 32'(move != '0);
      chk_prev_pay_q  <= dn_payload_q;
    end
  end

  // Output streams: valid held and data/last stable until accepted.
  dysharp_stream_chk #(
    .Width (FlitBits + 1),
    .Name  ("dysharp_sw_egress: a_req_out_stable")
  ) u_req_out_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (req_out_valid_o),
    .ready_i (req_out_ready_i),
    .data_i  ({req_out_last_o, req_out_data_o})
  );

  dysharp_stream_chk #(
    .Width (FlitBits + 1),
    .Name  ("dysharp_sw_egress: a_rsp_out_stable")
  ) u_rsp_out_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (rsp_out_valid_o),
    .ready_i (rsp_out_ready_i),
    .data_i  ({rsp_out_last_o, rsp_out_data_o})
  );
`endif

endmodule
