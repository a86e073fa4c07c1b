// dysharp_fp_acc_lane: one f32 lane of the flit accumulator (docs/spec.md §9; golden model
// `sim/src/numerics.rs`, `reduce_lanes`): the lane's input x (x16_i widened for a 16-bit dtype,
// else x32_i: fp_flit_lane) starts a reduction (init_i: x with a NaN made canonical, as
// fp_acc_init) or steps it (acc_i op x: fp_lane_step, the lane of fp_acc_step).
//
// Its own module so that the area flow synthesizes one lane once and counts every copy
// (docs/area.md): the reduction unit's result engines and the hubs' response stages hold
// hundreds of them. All the work, the widening included, is done only when en_i is set (and a
// simulator evaluates it only then).

module dysharp_fp_acc_lane
  import dysharp_fp_pkg::*;
(
  input  logic        en_i,      // this input takes part (otherwise acc_o = acc_i)
  input  logic        init_i,    // the reduction's first input
  input  logic [1:0]  dtype_i,
  input  logic [1:0]  rop_i,
  input  logic        native_i,  // AccNative: round to dtype after the step
  input  logic [31:0] acc_i,
  input  logic [15:0] x16_i,     // the lane's 16 bits of the flit (bf16, f16)
  input  logic [31:0] x32_i,     // the lane's 32 bits of the flit (f32; zero past its lanes)
  output logic [31:0] acc_o
);

  logic [31:0] x;

  always_comb begin
    acc_o = acc_i;
    x     = '0;
    if (en_i) begin
      x = fp_is16(dtype_i) ? fp_widen(dtype_i, {16'h0, x16_i}) : x32_i;
      if (init_i) begin
        acc_o = fp_canon(x);
      end else begin
        acc_o = fp_lane_step(dtype_i, rop_i, native_i, acc_i, x);
      end
    end
  end

endmodule
