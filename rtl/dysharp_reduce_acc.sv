// dysharp_reduce_acc: one payload flit of a load-reduce result (docs/spec.md §9; golden model
// `sim/src/numerics.rs` through `Switch::partial`): the expected ports' stored flits reduced in
// ASCENDING PORT ORDER with fp_acc_init / fp_acc_step / fp_acc_finish of dysharp_fp_pkg, so the
// result does not depend on the order in which the partials arrived.
//
// One per result engine of dysharp_reduce_unit (from its stage C). Its own module so that
// synthesis takes an engine's chained steps as one block (docs/area.md).
//
// Pipelined over the ports (the order is architectural, so the chain is cut, not rebalanced as a
// tree): Stages stages, stage s reducing ports [s*PortsPerStage, (s+1)*PortsPerStage) into the
// accumulator it received from stage s-1. Between stages a register holds the accumulator, whether
// a port has been taken yet, the operation, and the flits of the ports still to come; the
// pipeline advances every cycle (the caller reserves room for what leaves it), so payload_o is the
// result of the inputs of Stages - 1 cycles before. Stages = 1: combinational, NumPorts - 1
// chained steps in one cycle.

module dysharp_reduce_acc
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned NumPorts = 8,
  parameter int unsigned Stages   = 1     // 1..NumPorts
) (
  input  logic                 clk_i,     // the pipeline registers (Stages > 1)
  input  logic [1:0]           dtype_i,
  input  logic [1:0]           rop_i,
  input  logic                 acc_i,     // AccNative: accumulate in the data type
  input  logic [NumPorts-1:0]  exp_i,     // the ports whose flits are reduced
  input  flit_t [NumPorts-1:0] data_i,    // port p's stored flit
  output flit_t                payload_o  // Stages - 1 cycles after the inputs
);

  localparam int unsigned PortsPerStage = (NumPorts + Stages - 1) / Stages;

  typedef struct packed {
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
      assign op         = '{dtype: dtype_i, rop: rop_i, acc: acc_i, exp: exp_i};
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

    always_comb begin
      acc_out     = acc_in;
      started_out = started_in;
      for (int unsigned p = Lo; p < Hi; p++) begin
        if (op.exp[p]) begin
          if (started_out) begin
            acc_out = fp_acc_step(op.dtype, op.rop, op.acc, acc_out, data[p]);
          end else begin
            acc_out = fp_acc_init(op.dtype, data[p]);
          end
          started_out = 1'b1;
        end
      end
    end
  end

  assign payload_o = fp_acc_finish(g_stage[Stages-1].op.dtype, g_stage[Stages-1].acc_out);

  if (Stages == 1) begin : g_no_clk
    logic unused_clk;
    assign unused_clk = clk_i;
  end

`ifndef SYNTHESIS
  if (Stages < 1 || Stages > NumPorts) begin : gen_stages_check
    $error("dysharp_reduce_acc: Stages must be 1..NumPorts");
  end
`endif

endmodule
