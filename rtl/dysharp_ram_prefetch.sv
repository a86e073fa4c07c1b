// dysharp_ram_prefetch: the read side of a queue held in a dysharp_ram_1r1w (docs/architecture.md,
// "Storage map"): it reads the RAM ahead of the consumer so that the queue's output is a stream
// with no bubbles, as a flip-flop queue's would be. Used by dysharp_fifo_ram and by the parser's
// tail buffer, which own the RAM and its pointers.
//
// Two word stages:
//   rd  the RAM's own read register (rdata_i, held while re_o is low); rv_q: it holds a word that
//       has not left yet. A read issued in cycle c fills it in cycle c+1.
//   out an output register (out_q, ov_q), always older than rd's word.
// The output shows out_q if it is valid, else rd. out_q only ever takes rd's word when a read
// replaces it, and rd is refilled in the same cycle, so out_q holds a word only while rd holds the
// next one (ov_q implies rv_q): the stages are empty, rd, or rd and out. A read is issued whenever
// the RAM holds a word not yet read (avail_i) and the two stages are not both full (registered
// state and avail_i only; out_ready_i does not reach the RAM). A read that would
// overwrite an unaccepted rd word moves that word into out_q first. The caller advances its read
// pointer on re_o. A word read in cycle c is on the output from cycle c+1 on.
//
// Bypass (a queue's fall-through): with Bypass = 1 the caller may put a word straight into out_q
// (byp_i, byp_data_i) instead of the RAM, when the queue holds nothing else after this cycle's pop
// (so no read is issued in that cycle). Then out_q may hold a word with rd empty ("out only"); a read in that state
// fills rd behind it, and the order (out older than rd) still holds.
//
// Flip-flops: one word (out_q) and two valid bits; the rd stage is the RAM's read register.

module dysharp_ram_prefetch #(
  parameter int unsigned Width  = 8,
  parameter bit          Bypass = 1'b0
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  // The RAM: a word not yet read is at the caller's read pointer; read it (registered read).
  input  logic             avail_i,
  output logic             re_o,
  input  logic [Width-1:0] rdata_i,
  // Bypass (Bypass = 1 only): this word goes straight into out_q.
  input  logic             byp_i,
  input  logic [Width-1:0] byp_data_i,
  // Output stream.
  output logic             out_valid_o,
  input  logic             out_ready_i,
  output logic [Width-1:0] out_data_o,
  // Words in the two stages (read from the RAM, not yet accepted): 0..2.
  output logic [1:0]       stage_cnt_o,
  // ov_q implies rv_q (the stage order above; Bypass = 1: also "out only"), and a bypass word
  // meets no read and an empty out_q; for the caller's checks.
  output logic             stage_order_ok_o
);


  logic             ov_q, ov_d;   // out_q holds a word
  logic             rv_q, rv_d;   // the RAM's read register holds a word
  logic [Width-1:0] out_q;
  logic             pop, rd_taken, move;

  assign out_valid_o = ov_q || rv_q;
  assign out_data_o  = ov_q ? out_q : rdata_i;
  assign pop         = out_valid_o && out_ready_i;

  // The RAM has no reset, and needs no rst_ni here: in reset the caller's pointers and fill level
  // are reset, so avail_i is low and no read is issued, from the first clock edge of reset on (at
  // that edge a random initial state may issue one, which is harmless; the RAM's address checks
  // start at the second edge). No combinational path from rst_ni.
  logic no_read;
  assign no_read  = !avail_i || (ov_q && rv_q);
  assign re_o     = !no_read;
  // rd's word leaves through the output (out_q empty), or moves to out_q because the read of this
  // cycle replaces it.
  assign rd_taken = pop && !ov_q;
  assign move     = rv_q && !ov_q && !pop && re_o;

  assign ov_d = (Bypass && byp_i) || (ov_q ? !pop : move);
  assign rv_d = re_o || (rv_q && !rd_taken);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ov_q <= 1'b0;
      rv_q <= 1'b0;
    end else begin
      ov_q <= ov_d;
      rv_q <= rv_d;
    end
  end

  // Data only: read only while ov_q says it holds a word.
  always_ff @(posedge clk_i) begin
    if (Bypass && byp_i) begin
      out_q <= byp_data_i;
    end else if (move) begin
      out_q <= rdata_i;
    end
  end

  assign stage_cnt_o      = 2'(ov_q) + 2'(rv_q);
  assign stage_order_ok_o = (!ov_q || rv_q || Bypass) &&
                            !(Bypass && byp_i && (re_o || (32'(stage_cnt_o) != 32'(pop))));

endmodule
