// dysharp_reduce_acc: one payload flit of a load-reduce result (docs/spec.md §9; golden model
// `sim/src/numerics.rs` through `Switch::partial`): the expected ports' stored flits reduced in
// ASCENDING PORT ORDER with fp_acc_init / fp_acc_step / fp_acc_finish of dysharp_fp_pkg, so the
// result does not depend on the order in which the partials arrived.
//
// One per result engine of dysharp_reduce_unit (from its stage C). Its own module so that
// synthesis takes an engine's chained steps as one block (docs/area.md); each step is a
// dysharp_fp_acc_flit, synthesized once.
//
// Pipelined over the ports (the order is architectural, so the chain is cut, not rebalanced as a
// tree): Stages stages, stage s reducing ports [s*PortsPerStage, (s+1)*PortsPerStage) into the
// accumulator it received from stage s-1. Between stages a register holds the accumulator, whether
// a port has been taken yet, the operation, and the flits of the ports still to come; the
// pipeline advances every cycle (the caller reserves room for what leaves it), so payload_o is the
// result of the inputs of Stages - 1 cycles before. Stages = 1: combinational, NumPorts - 1
// chained steps in one cycle. Without valid_i nothing is reduced (no lane is enabled, payload_o
// is 0 Stages - 1 cycles later): operand isolation, which also spares a simulator every lane of
// every idle cycle.

`include "dysharp_assert.svh"

module dysharp_reduce_acc
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned NumPorts = 8,
  parameter int unsigned Stages   = 1     // 1..NumPorts
) (
  input  logic                 clk_i,     // the pipeline registers (Stages > 1)
  input  logic                 valid_i,   // the inputs are a payload flit's to reduce
  input  logic [1:0]           dtype_i,
  input  logic [1:0]           rop_i,
  input  logic                 acc_i,     // AccNative: accumulate in the data type
  input  logic [NumPorts-1:0]  exp_i,     // the ports whose flits are reduced
  input  flit_t [NumPorts-1:0] data_i,    // port p's stored flit
  output flit_t                payload_o  // Stages - 1 cycles after the inputs
);

  localparam int unsigned PortsPerStage = (NumPorts + Stages - 1) / Stages;

  typedef struct packed {
    logic                v;
    logic [1:0]          dtype;
    logic [1:0]          rop;
    logic                acc;
    logic [NumPorts-1:0] exp;
  } op_t;

  for (genvar s = 0; s < Stages; s++) begin : g_stage
    localparam int unsigned Lo = s * PortsPerStage;
    localparam int unsigned Hi = ((s + 1) * PortsPerStage < NumPorts) ? (s + 1) * PortsPerStage
                                                                       : NumPorts;
    op_t                  op;
    logic [FpAccBits-1:0] acc_in, acc_out;
    logic                 started_in, started_out;
    flit_t [NumPorts-1:0] data;      // ports Lo.. are meaningful

    if (s == 0) begin : g_first
      assign op         = '{v: valid_i, dtype: dtype_i, rop: rop_i, acc: acc_i,
                              exp: valid_i ? exp_i : '0};
      assign acc_in     = '0;
      assign started_in = 1'b0;
      assign data       = data_i;
    end else begin : g_reg
      // Data only: the pipeline's validity is the caller's.
      always_ff @(posedge clk_i) begin
        op         <= g_stage[s-1].op;
        acc_in     <= g_stage[s-1].acc_out;
        started_in <= g_stage[s-1].started_out;
        // Ports reduced in earlier stages are not carried (constant, removed in synthesis).
        for (int unsigned p = 0; p < NumPorts; p++) begin
          data[p] <= (p >= Lo) ? g_stage[s-1].data[p] : '0;
        end
      end
    end

    // Port p's flit (one dysharp_fp_acc_flit per port: the area flow synthesizes one flit once):
    // the first expected port initialises the accumulator, every later one steps it.
    logic [FpAccBits-1:0] acc_c     [Lo:Hi];  // after the ports before p
    logic                 started_c [Lo:Hi];
    // Port 0 can only start a reduction (no step: no adder), the others start or step it.
    localparam int unsigned StepLo = (s == 0) ? 1 : Lo;
    if (s == 0) begin : g_port0
      assign acc_c[1]     = op.exp[0] ? fp_acc_init(op.dtype, data[0]) : acc_in;
      assign started_c[1] = op.exp[0];
      logic unused_started0;
      assign unused_started0 = started_in;   // 0 in the first stage
    end
    assign acc_c[Lo]     = acc_in;
    assign started_c[Lo] = started_in;
    for (genvar p = StepLo; p < Hi; p++) begin : g_port
      dysharp_fp_acc_flit u_step (
        .en_i     (op.exp[p]),
        .init_i   (!started_c[p]),
        .dtype_i  (op.dtype),
        .rop_i    (op.rop),
        .native_i (op.acc),
        .acc_i    (acc_c[p]),
        .x_i      (data[p]),
        .acc_o    (acc_c[p+1])
      );
      assign started_c[p+1] = started_c[p] || op.exp[p];
    end
    assign acc_out     = acc_c[Hi];
    assign started_out = started_c[Hi];

    // The ports of earlier stages (zero here), and the last stage's `started`.
    if (Lo > 0) begin : g_unused_lo
      logic unused_lo;
      assign unused_lo = ^data[Lo-1:0];
    end
    if (s == Stages - 1) begin : g_unused_started
      logic unused_started;
      assign unused_started = started_out;
    end
  end

  always_comb begin
    payload_o = '0;
    if (g_stage[Stages-1].op.v) begin
      payload_o = fp_acc_finish(g_stage[Stages-1].op.dtype, g_stage[Stages-1].acc_out);
    end
  end

  if (Stages == 1) begin : g_no_clk
    logic unused_clk;
    assign unused_clk = clk_i;
  end

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_stages, Stages >= 1 && Stages <= NumPorts, "Stages must be 1..NumPorts")
`endif

endmodule
