// dysharp_fifo: generic synchronous FIFO with valid/ready on both sides.
//
// Registered storage, no fall-through: a word pushed on one clock edge is visible at the output
// from the next cycle on. in_ready_o depends only on the fill level (never on in_valid_i), so it
// may feed a producer's arbitration. usage_o is the number of words held (0..Depth); a producer that
// must reserve room for a whole packet compares Depth - usage_o with the packet length (usage_o
// only decreases while that producer is not pushing).

module dysharp_fifo #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 2
) (
  input  logic                       clk_i,
  // The SVA `disable iff (!rst_ni)` samples the asynchronous reset on the clock; not a flop.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                       rst_ni,
  /* verilator lint_on SYNCASYNCNET */
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

  assign push = in_valid_i && in_ready_o;
  assign pop  = out_valid_o && out_ready_i;

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
  if (Depth < 1) begin : gen_depth_check
    $error("dysharp_fifo: Depth must be at least 1");
  end

  // Never overflows, never underflows.
  a_no_overflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
    push |-> 32'(cnt_q) < Depth);
  a_no_underflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
    pop |-> cnt_q != '0);
  a_cnt_range: assert property (@(posedge clk_i) disable iff (!rst_ni)
    32'(cnt_q) <= Depth);
  // Output stream: valid stays high and data stays stable until accepted.
  a_out_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
    out_valid_o && !out_ready_i |=> out_valid_o && $stable(out_data_o));
  // Input stream (producer's obligation): an offered word is held until accepted.
  a_in_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
    in_valid_i && !in_ready_o |=> in_valid_i && $stable(in_data_i));
`endif

endmodule
