// dysharp_sw_rsp_fwd: response-class forwarder of one ingress port (spec §5.6).
//
// Takes the checked frames of the port's response parser (responses from the port's hub):
//   - RSP_READ / RSP_ERROR: written into the response crosspoint queue towards port `route`, one
//     flit per cycle, started only when the queue has room for the whole packet;
//   - RSP_PARTIAL: streamed, one flit per cycle, to the reduction unit's partial input of this
//     port (flow controlled by part_ready_i).

`include "dysharp_assert.svh"

module dysharp_sw_rsp_fwd
  import dysharp_pkg::*;
#(
  parameter int unsigned NumPorts = 8,
  parameter int unsigned XpDepth  = 128
) (
  input  logic                                  clk_i,
  // Asynchronous reset (the checks' as well).
  input  logic                                  rst_ni,
  // Checked frames from the response parser.
  input  logic                                  desc_valid_i,
  output logic                                  desc_ready_o,
  input  flit_t                                 desc_hdr_i,
  input  logic [$clog2(MaxLen+2)-1:0]           desc_ntail_i,
  input  logic                                  tail_valid_i,
  output logic                                  tail_ready_o,
  input  flit_t                                 tail_data_i,
  // Response crosspoint queues of this ingress, one per egress port q.
  input  logic [NumPorts-1:0][$clog2(XpDepth+1)-1:0] xp_usage_i,
  input  logic [NumPorts-1:0]                   xp_ready_i,
  output logic [NumPorts-1:0]                   xp_valid_o,
  output flit_t [NumPorts-1:0]                  xp_data_o,
  output logic [NumPorts-1:0]                   xp_last_o,
  // RSP_PARTIAL packets to the reduction unit.
  output logic                                  part_valid_o,
  input  logic                                  part_ready_i,
  output flit_t                                 part_data_o,
  output logic                                  part_last_o
);

  localparam int unsigned MaxFrame = 1 + MaxLen;
  localparam int unsigned PosW     = $clog2(MaxFrame);

  typedef logic [PosW-1:0] pos_t;

  hdr_t        h;
  logic        is_part;
  int unsigned total, pos;
  logic [NumPorts-1:0] dmask;
  logic        space_ok, offer, advance, last_src;
  flit_t       flit;
  pos_t        pos_q, pos_d;

  assign h       = hdr_t'(desc_hdr_i);
  assign is_part = (h.opcode == OpRspPartial);
  assign total   = 1 + 32'(desc_ntail_i);
  assign pos     = 32'(pos_q);

  always_comb begin
    dmask    = '0;
    space_ok = 1'b1;
    for (int unsigned q = 0; q < NumPorts; q++) begin
      dmask[q] = !is_part && (32'(h.route) == q);
      if (dmask[q] && (32'(xp_usage_i[q]) + total > XpDepth)) begin
        space_ok = 1'b0;
      end
    end
  end

  assign last_src = (pos == total - 1);
  assign flit     = (pos == 0) ? desc_hdr_i : tail_data_i;
  // Offer the current flit: from the descriptor (flit0) or the tail buffer (all present).
  assign offer    = desc_valid_i && ((pos == 0) ? 1'b1 : tail_valid_i);

  // Crosspoint path: starts with room for the whole packet, then never stalls.
  // Partial path: flit by flit, as the reduction unit accepts.
  assign advance      = is_part ? (offer && part_ready_i) : (offer && ((pos != 0) || space_ok));
  assign desc_ready_o = advance && last_src;
  assign tail_ready_o = advance && (pos != 0);
  assign pos_d        = !advance ? pos_q : (last_src ? '0 : pos_q + pos_t'(1));

  assign part_valid_o = offer && is_part;
  assign part_data_o  = flit;
  assign part_last_o  = last_src;

  always_comb begin
    for (int unsigned q = 0; q < NumPorts; q++) begin
      xp_valid_o[q]                     = advance && dmask[q];
      xp_data_o[q] = flit;
      xp_last_o[q]                      = last_src;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pos_q <= '0;
    end else begin
      pos_q <= pos_d;
    end
  end

  logic unused_h;
  assign unused_h = ^{h.hcc, h.rsvd, h.ecode, h.acc, h.rop, h.dtype, h.len, h.tag, h.src_port,
                      h.tcount, h.maddr, h.stage};

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_xp_depth, XpDepth >= MaxFrame, "XpDepth must hold the longest response")

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh). The stability of
  // the partial stream: dysharp_stream_chk below.
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      `DYSHARP_ASSERT_I(a_xp_room, (xp_valid_o & ~xp_ready_i) == '0, "a crosspoint write without room")
      `DYSHARP_ASSERT_I(a_tail_present, !(desc_valid_i && (pos_q != '0)) || tail_valid_i,
        "a response's tail flit missing mid-packet")
      `DYSHARP_ASSERT_I(a_dest, !(desc_valid_i && !is_part) || $onehot(dmask),
        "a response without exactly one destination")
    end
  end

  dysharp_stream_chk #(
    .Width (FlitBits + 1),
    .Name  ("dysharp_sw_rsp_fwd: a_part_stable")
  ) u_part_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (part_valid_o),
    .ready_i (part_ready_i),
    .data_i  ({part_last_o, part_data_o})
  );
`endif

endmodule
