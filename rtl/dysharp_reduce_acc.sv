// dysharp_reduce_acc: one payload flit of a load-reduce result (docs/spec.md §9; golden model
// `sim/src/numerics.rs` through `Switch::partial`): the expected ports' stored flits reduced in
// ASCENDING PORT ORDER with fp_acc_init / fp_acc_step / fp_acc_finish of dysharp_fp_pkg, so the
// result does not depend on the order in which the partials arrived.
//
// Combinational: one per result engine of dysharp_reduce_unit (stage C). Its own module so that
// synthesis takes the NumPorts - 1 chained steps of an engine as one block (docs/area.md).

module dysharp_reduce_acc
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned NumPorts = 8
) (
  input  logic [1:0]           dtype_i,
  input  logic [1:0]           rop_i,
  input  logic                 acc_i,     // AccNative: accumulate in the data type
  input  logic [NumPorts-1:0]  exp_i,     // the ports whose flits are reduced
  input  flit_t [NumPorts-1:0] data_i,    // port p's stored flit
  output flit_t                payload_o
);

  logic [FpAccBits-1:0] acc_v;
  logic                 started;

  always_comb begin
    acc_v   = '0;
    started = 1'b0;
    for (int unsigned p = 0; p < NumPorts; p++) begin
      if (exp_i[p]) begin
        if (started) begin
          acc_v = fp_acc_step(dtype_i, rop_i, acc_i, acc_v, data_i[p]);
        end else begin
          acc_v = fp_acc_init(dtype_i, data_i[p]);
        end
        started = 1'b1;
      end
    end
    payload_o = fp_acc_finish(dtype_i, acc_v);
  end

endmodule
