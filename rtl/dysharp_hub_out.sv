// dysharp_hub_out: the output stage of the hub (docs/architecture.md, "dysharp_hub"; spec §5.6).
//
// Response headers wait in the header queue (HdrDepth entries, pushed by the issue stage with the
// first read of their job, or alone for an error). Each response is its header flit, then its
// npay payload flits taken from the head payload beats (MemLines flits per beat, the last beat of
// a response may hold fewer), one flit per cycle; the last flit carries rsp_last_o.

`include "dysharp_assert.svh"

module dysharp_hub_out import dysharp_pkg::*, dysharp_hub_pkg::*; #(
  parameter int unsigned MemLines   = 4,
  // A payload beat (dysharp_hub_rsp).
  parameter type         pay_beat_t = logic
) (
  input  logic     clk_i,
  input  logic     rst_ni,
  // Response headers (pushed only while hdr_space_o).
  input  logic     hdr_push_i,
  output logic     hdr_space_o,
  input  rsp_hdr_t hdr_i,
  // Payload beats.
  input  logic     pay_valid_i,
  output logic     pay_ready_o,
  input  pay_beat_t pay_i,
  // Responses to the switch (src_port 0: the switch stamps it).
  output logic     rsp_valid_o,
  input  logic     rsp_ready_i,
  output flit_t    rsp_data_o,
  output logic     rsp_last_o
);

  localparam int unsigned LinesW  = $clog2(MemLines + 1);
  localparam int unsigned HdrCntW = $clog2(HdrDepth + 1);

  typedef logic [LinesW-1:0] nlines_t;

  logic                hq_out_v, hq_pop;
  rsp_hdr_t            hq_out;
  logic [HdrCntW-1:0]  hq_usage_unused;
  logic                out_pay_q, out_pay_d;    // sending the payload of the head response
  logic [LenWidth-1:0] out_rem_q, out_rem_d;    // its payload flits left
  nlines_t             pay_idx_q, pay_idx_d;    // next flit of the head beat

  dysharp_fifo #(
    .Width ($bits(rsp_hdr_t)),
    .Depth (HdrDepth)
  ) u_hdr_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (hdr_push_i),
    .in_ready_o  (hdr_space_o),
    .in_data_i   (hdr_i),
    .out_valid_o (hq_out_v),
    .out_ready_i (hq_pop),
    .out_data_o  (hq_out),
    .usage_o     (hq_usage_unused)
  );

  always_comb begin
    out_pay_d   = out_pay_q;
    out_rem_d   = out_rem_q;
    hq_pop      = 1'b0;
    pay_ready_o = 1'b0;
    pay_idx_d   = pay_idx_q;
    if (!out_pay_q) begin
      rsp_valid_o = hq_out_v;
      rsp_data_o  = hq_out.flit;
      rsp_last_o  = (hq_out.npay == '0);
      if (hq_out_v && rsp_ready_i) begin
        hq_pop    = 1'b1;
        out_pay_d = (hq_out.npay != '0);
        out_rem_d = hq_out.npay;
      end
    end else begin
      rsp_valid_o = pay_valid_i;
      rsp_data_o  = pay_i.data[128*pay_idx_q +: 128];
      rsp_last_o  = (out_rem_q == LenWidth'(1));
      if (pay_valid_i && rsp_ready_i) begin
        // The head beat leaves after its last flit.
        pay_ready_o = (32'(pay_idx_q) + 1 >= 32'(pay_i.n));
        pay_idx_d   = pay_ready_o ? '0 : pay_idx_q + nlines_t'(1);
        out_rem_d   = out_rem_q - LenWidth'(1);
        out_pay_d   = (out_rem_q != LenWidth'(1));
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      out_pay_q <= 1'b0;
      out_rem_q <= '0;
      pay_idx_q <= '0;
    end else begin
      out_pay_q <= out_pay_d;
      out_rem_q <= out_rem_d;
      pay_idx_q <= pay_idx_d;
    end
  end

  // The header queue's fill level is not needed (named *unused*).
  logic unused_sig;
  assign unused_sig = ^hq_usage_unused;

`ifndef SYNTHESIS

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh). The stability of a
  // stalled word: dysharp_stream_chk below.
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // Headers are pushed only with room (no header is dropped).
      `DYSHARP_ASSERT_I(a_hdr_room, !hdr_push_i || hdr_space_o)
      // Payload of a response only after its header, and from whole beats: the flit index is
      // inside the head beat.
      `DYSHARP_ASSERT_I(a_pay_order, !pay_ready_o || out_pay_q)
      `DYSHARP_ASSERT_I(a_pay_idx, !pay_valid_i || (pay_idx_q < pay_i.n))
    end
  end

  // Output stream: valid stays high and data/last stay stable until accepted.
  dysharp_stream_chk #(
    .Width (FlitBits + 1),
    .Name  ("dysharp_hub_out: a_rsp_stable")
  ) u_rsp_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (rsp_valid_o),
    .ready_i (rsp_ready_i),
    .data_i  ({rsp_last_o, rsp_data_o})
  );
`endif

endmodule
