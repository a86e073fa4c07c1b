// dysharp_fp_acc_lane: one f32 lane of the flit accumulator (docs/spec.md §9; golden model
// `sim/src/numerics.rs`, `reduce_lanes`): the first input of a reduction (init_i) is x_i with a
// NaN made canonical (as fp_acc_init); a later one is acc_i op x_i (fp_lane_step, the lane of
// fp_acc_step). x_i is the lane already widened to f32 (fp_flit_lane).
//
// Its own module so that the area flow synthesizes one lane once and counts every copy
// (docs/area.md): the reduction unit's result engines and the hubs' response stages hold
// hundreds of them. In Verilator the work is done only when en_i is set.

module dysharp_fp_acc_lane
  import dysharp_fp_pkg::*;
(
  input  logic        en_i,      // this input takes part (otherwise acc_o = acc_i)
  input  logic        init_i,    // the reduction's first input
  input  logic [1:0]  dtype_i,
  input  logic [1:0]  rop_i,
  input  logic        native_i,  // AccNative: round to dtype after the step
  input  logic [31:0] acc_i,
  input  logic [31:0] x_i,
  output logic [31:0] acc_o
);

  always_comb begin
    acc_o = acc_i;
    if (en_i) begin
      if (init_i) begin
        acc_o = fp_canon(x_i);
      end else begin
        acc_o = fp_lane_step(dtype_i, rop_i, native_i, acc_i, x_i);
      end
    end
  end

endmodule
