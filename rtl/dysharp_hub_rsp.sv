// dysharp_hub_rsp: the read response stage of the hub (docs/architecture.md, "dysharp_hub";
// spec §9).
//
// Read beats return in order, one per read; each is registered (rsp_v_q, rsp_d_q) and paired
// with the oldest read tag of the issue stage, which it pops. By the tag: the walk word goes back
// to the issue stage in that cycle (walk_rsp_o); raw data (RSP_READ) goes to the payload FIFO;
// load-reduce lines are accumulated in f32 lanes (dysharp_fp_pkg, MemLines lines per cycle,
// targets in list order) into per-line accumulators, and the finished lines of the last input go
// to the payload FIFO (a one-queue dysharp_fifo_bank with FallThrough). The hub always takes read data: the
// issue stage takes a credit for every read that will push a payload beat (credit_ok_o: the
// FIFO's words and the credits in flight leave room).

`include "dysharp_assert.svh"

module dysharp_hub_rsp import dysharp_pkg::*, dysharp_fp_pkg::*, dysharp_hub_pkg::*; #(
  parameter  int unsigned MemLines   = 4,
  // A read tag (dysharp_hub_issue).
  parameter  type         rd_tag_t   = logic,
  // A payload beat: struct {nlines_t n; logic [128*MemLines-1:0] data;}, flit i at [128*i +: 128].
  parameter  type         pay_beat_t = logic,
  // A memory read response: struct {logic [128*MemLines-1:0] rdata;}.
  parameter  type         mem_rsp_t  = logic,
  // Payload FIFO of read beats (credited reads): a RAM of 64 lines' worth, at least 4 beats (16
  // beats at MemLines 4: the area flow's least macro), and the two output stages of
  // dysharp_fifo_bank (its RAM holds Depth - 2 words).
  localparam int unsigned PayDepth   = ((64 / MemLines > 4) ? 64 / MemLines : 4) + 2
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // Memory read responses (always taken).
  input  logic               mem_rsp_valid_i,
  output logic               mem_rsp_ready_o,
  input  mem_rsp_t           mem_rsp_i,
  // Read tags of the issue stage: the head is popped with its beat.
  input  logic               tag_valid_i,
  output logic               tag_ready_o,
  input  rd_tag_t            tag_i,
  input  logic [TagCntW-1:0] tag_usage_i,   // assertions only
  // The walk's read data (line 0 of its beat), valid in this cycle.
  output logic               walk_rsp_o,
  output logic [127:0]       walk_line_o,
  // Payload credits.
  input  logic               credit_take_i,
  output logic               credit_ok_o,
  // Payload beats to the output stage.
  output logic               pay_valid_o,
  input  logic               pay_ready_i,
  output pay_beat_t          pay_o
);

  localparam int unsigned PayCntW = $clog2(PayDepth + 1);

  logic                    rsp_v_q;
  logic [128*MemLines-1:0] rsp_d_q;
  // Accumulators in rows of MemLines lines (a beat's lines start at a multiple of MemLines): each
  // lane reads and writes its own column, a multiplexer over the rows, not over every line.
  localparam int unsigned AccRows = (MaxLen + MemLines - 1) / MemLines;
  logic [FpAccBits-1:0]    acc_q [AccRows][MemLines];
  logic [FpAccBits-1:0]    acc_new [MemLines];
  flit_t                   acc_fin [MemLines];
  localparam int unsigned AccRowW = (AccRows > 1) ? $clog2(AccRows) : 1;
  logic [AccRowW-1:0]      acc_row;
  logic                    acc_we;

  logic                    pay_push, pay_space, pay_last;
  pay_beat_t               pay_in;
  logic [PayCntW-1:0]      pay_usage;
  logic [PayCntW-1:0]      pay_infl_q, pay_infl_d;   // credits taken, beat not pushed yet

  assign mem_rsp_ready_o = 1'b1;
  assign tag_ready_o     = rsp_v_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rsp_v_q <= 1'b0;
    end else begin
      rsp_v_q <= mem_rsp_valid_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (mem_rsp_valid_i) begin
      rsp_d_q <= mem_rsp_i.rdata;
    end
  end

  // The walk's line (line 0 of its beat).
  assign walk_rsp_o  = rsp_v_q && (tag_i.kind == RdWalk);
  assign walk_line_o = rsp_d_q[127:0];

  // f32 lane accumulation of load-reduce lines (targets in list order, spec §9), one lane group
  // per line of the beat. Lines past the beat's count are not computed (left zero).
  assign acc_row = $bits(acc_row)'(32'(tag_i.line) / MemLines);

  logic first_in;
  assign first_in = tag_i.kind inside {RdFinInit, RdAccInit};
  for (genvar i = 0; i < MemLines; i++) begin : g_acc_line
    logic                 en;
    logic [FpAccBits-1:0] acc;
    assign en = rsp_v_q && i < 32'(tag_i.n) && !(tag_i.kind inside {RdWalk, RdRaw});
    // One dysharp_fp_acc_flit per line (the area flow synthesizes one flit once).
    dysharp_fp_acc_flit u_acc (
      .en_i     (en),
      .init_i   (first_in),
      .dtype_i  (tag_i.dtype),
      .rop_i    (tag_i.rop),
      .native_i (tag_i.native),
      .acc_i    (acc_q[acc_row][i]),
      .x_i      (rsp_d_q[128*i +: 128]),
      .acc_o    (acc)
    );
    assign acc_new[i] = en ? acc : '0;
    always_comb begin
      acc_fin[i] = '0;
      if (en) begin
        acc_fin[i] = fp_acc_finish(tag_i.dtype, acc);
      end
    end
  end

  assign acc_we   = rsp_v_q && (tag_i.kind inside {RdAccInit, RdAccStep});
  assign pay_push = rsp_v_q && (tag_i.kind inside {RdRaw, RdFinInit, RdFinStep});

  always_comb begin
    pay_in.n = tag_i.n;
    for (int unsigned i = 0; i < MemLines; i++) begin
      pay_in.data[128*i +: 128] = (tag_i.kind == RdRaw) ? rsp_d_q[128*i +: 128] : acc_fin[i];
    end
  end

  // Accumulators (data only: each is written by a reduction's first input before it is read).
  always_ff @(posedge clk_i) begin
    if (acc_we) begin
      for (int unsigned i = 0; i < MemLines; i++) begin
        if (i < 32'(tag_i.n)) begin
          acc_q[acc_row][i] <= acc_new[i];
        end
      end
    end
  end

  // Credits.
  always_comb begin
    pay_infl_d = pay_infl_q;
    if (credit_take_i && !pay_push) begin
      pay_infl_d = pay_infl_q + PayCntW'(1);
    end else if (pay_push && !credit_take_i) begin
      pay_infl_d = pay_infl_q - PayCntW'(1);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pay_infl_q <= '0;
    end else begin
      pay_infl_q <= pay_infl_d;
    end
  end

  assign credit_ok_o = (32'(pay_usage) + 32'(pay_infl_q)) < PayDepth;

  // A one-queue dysharp_fifo_bank that falls through when empty: a beat pushed into an empty FIFO is on the
  // output stage's input in the next cycle, as from a flip-flop FIFO.
  dysharp_fifo_bank #(
    .NumQ        (1),
    .Width       ($bits(pay_beat_t)),
    .Depth       (PayDepth),
    .FallThrough (1'b1)
  ) u_pay_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (pay_push),
    .in_ready_o  (pay_space),
    .in_data_i   (pay_in),
    .in_last_i   (1'b0),
    .out_valid_o (pay_valid_o),
    .out_ready_i (pay_ready_i),
    .out_data_o  (pay_o),
    .out_last_o  (pay_last),
    .usage_o     (pay_usage)
  );

  // The FIFO's ready is read only by the checks (room is reserved by the credits); its beats
  // carry no packet boundary.
  logic unused_sig;
  assign unused_sig = ^{pay_space, pay_last};

`ifndef SYNTHESIS

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh).
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // Memory read data only for an outstanding read, and every beat has its tag.
      `DYSHARP_ASSERT_I(a_rsp_has_tag, !rsp_v_q || tag_valid_i)
      `DYSHARP_ASSERT_I(a_mem_rsp_outstanding, !mem_rsp_valid_i || (32'(tag_usage_i) > 32'(rsp_v_q)))
      // A beat's lines start a row of the accumulators.
      `DYSHARP_ASSERT_I(a_acc_row, !rsp_v_q || (32'(tag_i.line) % MemLines == 0))
      // A walk is one line.
      `DYSHARP_ASSERT_I(a_walk_line, !walk_rsp_o || (32'(tag_i.n) == 1))
      // Read data never overflows the payload FIFO (no beat is dropped): credits cover it.
      `DYSHARP_ASSERT_I(a_credit, 32'(pay_usage) + 32'(pay_infl_q) <= PayDepth)
      `DYSHARP_ASSERT_I(a_pay_room, !pay_push || pay_space)
      `DYSHARP_ASSERT_I(a_infl_underflow, !pay_push || (pay_infl_q != '0 || credit_take_i))
      // A payload beat holds 1..MemLines flits (the upper bound always holds when MemLines is
      // the count's largest value).
      `DYSHARP_ASSERT_I(a_pay_beat, !pay_valid_o || (pay_o.n != '0 && 32'(pay_o.n) <= MemLines))
    end
  end
`endif

endmodule
