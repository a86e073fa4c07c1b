// dysharp_stream_chk: the stability rule of one valid/ready stream, as a simulation check
// (docs/verification.md, "Assertions"): a word offered (valid_i) and not taken (!ready_i) at a
// clock edge is offered again, unchanged, at the next edge. The word is copied only while it is
// stalled and compared only in the cycle after, so an idle or flowing stream costs a simulator one
// test per cycle (docs/perf.md, "Sampling and per-instance code"). A failure prints
// `<Name>: a stalled word changed or went away` as the message of the check a_stream_stable
// (rtl/dysharp_assert.svh). Instantiated only outside SYNTHESIS; it has no outputs.
//
// For a rule whose "stall" is not a handshake (a word that must wait unchanged), valid_i is "a
// word is there" and ready_i is "it may move on".

`include "dysharp_assert.svh"

module dysharp_stream_chk #(
  parameter int unsigned Width = 1,
  parameter string       Name  = "dysharp_stream_chk"  // the module and rule, for the message
) (
  input logic             clk_i,
  input logic             rst_ni,   // asynchronous; no rule is checked in reset
  input logic             valid_i,
  input logic             ready_i,
  input logic [Width-1:0] data_i
);

`ifndef SYNTHESIS
  logic             hold_q;  // the stream was stalled at the last edge
  logic [Width-1:0] held_q;  // its word then

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hold_q <= 1'b0;
      held_q <= '0;
    end else begin
      `DYSHARP_ASSERT_I(a_stream_stable, !hold_q || (valid_i && data_i == held_q),
        $sformatf("%s: a stalled word changed or went away", Name))
      hold_q <= valid_i && !ready_i;
      // Data only: read only while hold_q.
      if (valid_i && !ready_i) begin
        held_q <= data_i;
      end
    end
  end
`else
  logic unused;
  assign unused = ^{clk_i, rst_ni, valid_i, ready_i, data_i};
`endif

endmodule
