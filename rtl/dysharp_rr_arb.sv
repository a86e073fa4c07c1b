// dysharp_rr_arb: round-robin arbiter over N requesters with a hold (lock) input.
//
// Without lock_i the grant goes to the first requester at or after the priority pointer; ack_i
// (the granted requester was served this cycle) moves the pointer just past the granted index.
// With lock_i high the arbiter repeats the grant it last issued without lock (idx_o stays, gnt_o is
// that requester's bit while it requests): drive lock_i from a register that says "a packet is in
// progress" to make the arbitration packet-atomic, or "an offer was not yet accepted" to keep a
// granted valid/ready offer stable. Purely combinational from req_i/lock_i to the grant; the grant
// never depends on ack_i.

`include "dysharp_assert.svh"

module dysharp_rr_arb #(
  parameter int unsigned N = 2
) (
  input  logic                                   clk_i,
  // Asynchronous reset; the checks read it on the clock (a synchronous use).
  input  logic                                   rst_ni,
  input  logic [N-1:0]                           req_i,
  input  logic                                   lock_i,
  input  logic                                   ack_i,
  output logic [N-1:0]                           gnt_o,
  output logic [((N > 1) ? $clog2(N) : 1)-1:0]   idx_o,
  output logic                                   valid_o
);

  localparam int unsigned IdxW = (N > 1) ? $clog2(N) : 1;

  typedef logic [IdxW-1:0] idx_t;

  idx_t ptr_q, ptr_d;
  idx_t held_q, held_d;
  idx_t pick;
  logic found;

  function automatic idx_t idx_inc(input idx_t i);
    return (32'(i) >= N - 1) ? '0 : i + idx_t'(1);
  endfunction

  // First requester at or after the pointer.
  always_comb begin
    int unsigned c;
    pick  = ptr_q;
    found = 1'b0;
    for (int unsigned k = 0; k < N; k++) begin
      c = 32'(ptr_q) + k;
      if (c >= N) begin
        c = c - N;
      end
      if (!found && req_i[c[IdxW-1:0]]) begin
        found = 1'b1;
        pick  = c[IdxW-1:0];
      end
    end
  end

  always_comb begin
    if (lock_i) begin
      idx_o   = held_q;
      valid_o = req_i[held_q];
    end else begin
      idx_o   = pick;
      valid_o = found;
    end
    gnt_o = '0;
    if (valid_o) begin
      gnt_o[idx_o] = 1'b1;
    end
  end

  assign held_d = (!lock_i && found) ? pick : held_q;
  assign ptr_d  = ack_i ? idx_inc(idx_o) : ptr_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ptr_q  <= '0;
      held_q <= '0;
    end else begin
      ptr_q  <= ptr_d;
      held_q <= held_d;
    end
  end

`ifndef SYNTHESIS

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh).
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      `DYSHARP_ASSERT_I(a_gnt_onehot, $onehot0(gnt_o), "more than one grant")
      `DYSHARP_ASSERT_I(a_gnt_requested, (gnt_o & ~req_i) == '0, "a grant without a request")
      `DYSHARP_ASSERT_I(a_ack_granted, !ack_i || valid_o, "an acknowledge without a grant")
      `DYSHARP_ASSERT_I(a_ptr_range, 32'(ptr_q) < N && 32'(held_q) < N,
        "a pointer past the requesters")
    end
  end
`endif

endmodule
