// dysharp_reduce_acc: one payload flit of a load-reduce result (docs/spec.md §9; golden model
// `sim/src/numerics.rs` through `Switch::partial`): the expected ports' stored flits reduced in
// ASCENDING PORT ORDER with fp_acc_init / fp_acc_step / fp_acc_finish of dysharp_fp_pkg, so the
// result does not depend on the order in which the partials arrived.
//
// One per unit of dysharp_reduce_pool (from an engine's stage C). A chain, one flit per cycle
// sustained, payload_o fp_red_latency(NumPorts, FpStages) cycles after the inputs:
//   - an input register (the banks' outputs come from RAM through the pool's routing);
//   - port 0's fp_acc_init (a widening, no adder), registered;
//   - for each later port a dysharp_fp_step of FpStages stages: the first expected port
//     initialises the accumulator, every later one steps it, the others pass it. The order is
//     architectural, so the chain is cut, not rebalanced as a tree; each step carries the
//     operation and the flits of the ports still to come (its side data);
//   - fp_acc_finish (rounding every lane to the data type), registered.
// Without valid_i nothing is reduced (no lane is enabled, payload_o is 0 at the end): operand
// isolation, which also spares a simulator every lane of every idle cycle.

`include "dysharp_assert.svh"

module dysharp_reduce_acc
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned NumPorts = 8,
  parameter int unsigned FpStages = 10    // pipeline stages of one flit step, 1..FpPhases
) (
  input  logic                 clk_i,
  input  logic                 valid_i,   // the inputs are a payload flit's to reduce
  input  logic [1:0]           dtype_i,
  input  logic [1:0]           rop_i,
  input  logic                 acc_i,     // AccNative: accumulate in the data type
  input  logic [NumPorts-1:0]  exp_i,     // the ports whose flits are reduced
  input  flit_t [NumPorts-1:0] data_i,    // port p's stored flit
  output flit_t                payload_o  // fp_red_latency(NumPorts, FpStages) cycles later
);

  typedef struct packed {
    logic                v;
    logic [1:0]          dtype;
    logic [1:0]          rop;
    logic                acc;
    logic [NumPorts-1:0] exp;
    logic                started;   // an earlier port initialised the accumulator
  } op_t;

  // Input register.
  op_t                  in_op_q;
  flit_t [NumPorts-1:0] in_data_q;
  always_ff @(posedge clk_i) begin
    in_op_q   <= '{v: valid_i, dtype: dtype_i, rop: rop_i, acc: acc_i,
                   exp: valid_i ? exp_i : '0, started: 1'b0};
    in_data_q <= valid_i ? data_i : '0;
  end

  // Port 0: initialise (the first port has nothing to step).
  op_t                  p0_op_q;
  logic [FpAccBits-1:0] p0_acc_q;
  flit_t [NumPorts-1:0] p0_data_q;   // ports 1.. are meaningful
  always_ff @(posedge clk_i) begin
    p0_op_q         <= in_op_q;
    p0_op_q.started <= in_op_q.exp[0];
    p0_acc_q        <= in_op_q.exp[0] ? fp_acc_init(in_op_q.dtype, in_data_q[0]) : '0;
    p0_data_q       <= in_data_q;
    p0_data_q[0]    <= '0;
  end

  // Port p's step: before it the operation, the accumulator and the flits of ports p.. (the side
  // data of a step is its operation and the flits of the ports after it); after it the same for
  // port p + 1.
  for (genvar p = 1; p < NumPorts; p++) begin : g_port
    localparam int unsigned Later = NumPorts - 1 - p;            // ports after p
    localparam int unsigned SideW = $bits(op_t) + ((Later > 0) ? Later * FlitBits : 0);
    op_t                  op_in, op_n, op_out;
    logic                 v_out;
    logic [FpAccBits-1:0] acc_in, acc_out;
    flit_t                x;
    logic [SideW-1:0]     side_in, side_out;
    if (p == 1) begin : g_first
      assign op_in  = p0_op_q;
      assign acc_in = p0_acc_q;
      assign x      = p0_data_q[1];
      if (Later > 0) begin : g_later
        assign side_in = {op_n, p0_data_q[NumPorts-1:2]};
      end else begin : g_last
        assign side_in = op_n;
      end
    end else begin : g_next
      assign op_in  = g_port[p-1].op_out;
      assign acc_in = g_port[p-1].acc_out;
      assign x      = g_port[p-1].side_out[0 +: FlitBits];
      if (Later > 0) begin : g_later
        assign side_in = {op_n, g_port[p-1].side_out[FlitBits +: Later * FlitBits]};
      end else begin : g_last
        assign side_in = op_n;
      end
    end
    always_comb begin
      op_n         = op_in;
      op_n.started = op_in.started || op_in.exp[p];
    end
    dysharp_fp_step #(
      .Stages (FpStages),
      .SideW  (SideW)
    ) u_step (
      .clk_i    (clk_i),
      .valid_i  (op_in.v),
      .en_i     (op_in.exp[p]),
      .init_i   (!op_in.started),
      .dtype_i  (op_in.dtype),
      .rop_i    (op_in.rop),
      .native_i (op_in.acc),
      .acc_i    (acc_in),
      .x_i      (x),
      .side_i   (side_in),
      .acc_o    (acc_out),
      .side_o   (side_out),
      .valid_o  (v_out)
    );
    // The operation's validity travels beside it (the data registers hold behind an idle slot).
    always_comb begin
      op_out   = side_out[SideW-1 -: $bits(op_t)];
      op_out.v = v_out;
    end
  end

  op_t                  op_end;
  logic [FpAccBits-1:0] acc_end;
  assign op_end  = g_port[NumPorts-1].op_out;
  assign acc_end = g_port[NumPorts-1].acc_out;

  logic unused_p0;
  assign unused_p0 = ^p0_data_q[0];

  // Finish, registered.
  always_ff @(posedge clk_i) begin
    payload_o <= op_end.v ? fp_acc_finish(op_end.dtype, acc_end) : '0;
  end

  logic unused_end;
  assign unused_end = ^{op_end.rop, op_end.acc, op_end.exp, op_end.started};

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_ports, NumPorts >= 2, "a reduction chain has at least two ports")
  `DYSHARP_ASSERT_INIT(a_stages, FpStages >= 1 && FpStages <= FpPhases,
    "FpStages must be 1..10 (the phases of a step)")
`endif

endmodule
