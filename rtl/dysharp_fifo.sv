// dysharp_fifo: generic synchronous FIFO with valid/ready on both sides.
//
// Registered storage, no fall-through: a word pushed on one clock edge is visible at the output
// from the next cycle on. in_ready_o depends only on the fill level (never on in_valid_i), so it
// may feed a producer's arbitration. usage_o is the number of words held (0..Depth); a producer that
// must reserve room for a whole packet compares Depth - usage_o with the packet length (usage_o
// only decreases while that producer is not pushing).

// Checks (simulation only) are immediate assertions without %m, for the reason given in
// dysharp_fifo_ram.sv.
`include "dysharp_assert.svh"

module dysharp_fifo #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 2
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  // Write side.
  input  logic                       in_valid_i,
  output logic                       in_ready_o,
  input  logic [Width-1:0]           in_data_i,
  // Read side.
  output logic                       out_valid_o,
  input  logic                       out_ready_i,
  output logic [Width-1:0]           out_data_o,
  // Fill level.
  output logic [$clog2(Depth+1)-1:0] usage_o
);

  // One copy of the code for every instance (see dysharp_fifo_ram.sv).

  // The handshake inputs through copies of the module's own (see dysharp_fifo_ram.sv).
  logic in_valid;
  logic out_ready;
  assign in_valid  = in_valid_i;
  assign out_ready = out_ready_i;

  localparam int unsigned PtrW = (Depth > 1) ? $clog2(Depth) : 1;
  localparam int unsigned CntW = $clog2(Depth + 1);

  typedef logic [PtrW-1:0] ptr_t;
  typedef logic [CntW-1:0] cnt_t;

  logic [Width-1:0] mem_q [Depth];
  ptr_t             wr_ptr_q, wr_ptr_d;
  ptr_t             rd_ptr_q, rd_ptr_d;
  cnt_t             cnt_q, cnt_d;
  logic             push, pop;

  function automatic ptr_t ptr_inc(input ptr_t p);
    return (32'(p) == Depth - 1) ? '0 : p + ptr_t'(1);
  endfunction

  assign in_ready_o  = (32'(cnt_q) != Depth);
  assign out_valid_o = (cnt_q != '0);
  assign out_data_o  = mem_q[rd_ptr_q];
  assign usage_o     = cnt_q;

  assign push = in_valid && in_ready_o;
  assign pop  = out_valid_o && out_ready;

  always_comb begin
    wr_ptr_d = push ? ptr_inc(wr_ptr_q) : wr_ptr_q;
    rd_ptr_d = pop ? ptr_inc(rd_ptr_q) : rd_ptr_q;
    cnt_d    = cnt_q;
    if (push && !pop) begin
      cnt_d = cnt_q + cnt_t'(1);
    end else if (pop && !push) begin
      cnt_d = cnt_q - cnt_t'(1);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_ptr_q <= '0;
      rd_ptr_q <= '0;
      cnt_q    <= '0;
    end else begin
      wr_ptr_q <= wr_ptr_d;
      rd_ptr_q <= rd_ptr_d;
      cnt_q    <= cnt_d;
    end
  end

  // Storage: no reset needed (read only where cnt_q says a word is held).
  always_ff @(posedge clk_i) begin
    if (push) begin
      mem_q[wr_ptr_q] <= in_data_i;
    end
  end

`ifndef SYNTHESIS
  // A FIFO of fewer than one word cannot work.
  `DYSHARP_ASSERT_INIT(a_depth, Depth >= 1, "Depth must be at least 1")

  // Never overflows, never underflows. Output stream: valid stays high and data stays stable
  // until accepted. Input stream (the producer's obligation): an offered word is held until
  // accepted.
  logic             out_hold_q;  // the output was stalled at the previous edge
  logic             in_hold_q;   // the input was stalled at the previous edge
  logic [Width-1:0] out_held_q, in_held_q;
  logic             chk_active;  // a cycle in which any rule below can fail

  // Checked whenever the FIFO holds or is offered a word or was stalled; in any other cycle
  // nothing moves, the fill level is zero and the hold flags are already clear.
  assign chk_active = in_valid || (cnt_q != '0) || in_hold_q || out_hold_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      out_hold_q <= 1'b0;
      in_hold_q  <= 1'b0;
    end else if (chk_active) begin
      `DYSHARP_ASSERT_I(a_no_overflow, !push || 32'(cnt_q) < Depth, "pushed while full")
      `DYSHARP_ASSERT_I(a_no_underflow, !pop || cnt_q != '0, "popped while empty")
      `DYSHARP_ASSERT_I(a_cnt_range, 32'(cnt_q) <= Depth, "fill level above Depth")
      `DYSHARP_ASSERT_I(a_out_stable, !out_hold_q || (out_valid_o && out_data_o == out_held_q),
        "a stalled output changed or went away")
      `DYSHARP_ASSERT_I(a_in_stable, !in_hold_q || (in_valid && in_data_i == in_held_q),
        "a stalled input changed or went away")
      out_hold_q <= out_valid_o && !out_ready;
      in_hold_q  <= in_valid && !in_ready_o;
    end
  end

  // Data only: read only while out_hold_q / in_hold_q, which reset clears.
  always_ff @(posedge clk_i) begin
    if (out_valid_o && !out_ready) begin
      out_held_q <= out_data_o;
    end
    if (in_valid && !in_ready_o) begin
      in_held_q <= in_data_i;
    end
  end
`endif

endmodule
