// dysharp_fp_acc_flit: one input flit of a lane-parallel reduction (docs/spec.md §9; golden
// model `sim/src/numerics.rs`, `reduce_lanes`): with en_i, acc_o = fp_acc_init(dtype_i, x_i) if
// init_i, else fp_acc_step(dtype_i, rop_i, native_i, acc_i, x_i); without en_i, acc_o = acc_i.
// The FP harness checks it against those functions (verif/tests/fp.rs).
//
// The FpAccLanes f32 lanes of the flit are the package functions' (each lane widens its own input,
// fp_flit_lane; an f32 accumulator's upper lanes stay zero). Used by dysharp_reduce_acc (one per
// port of a result engine) and dysharp_hub_rsp (one per line of a beat): hundreds of instances,
// which is why this is a module of its own and the lanes are not.
//   - The area flow synthesizes the flit once and counts every instance (docs/area.md).
//   - Without en_i the lanes are not evaluated (operand isolation; rtl/dysharp.vlt keeps the
//     functions as calls in simulation, docs/perf.md, "The flit reduction as one call").

module dysharp_fp_acc_flit
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
(
  input  logic                 en_i,
  input  logic                 init_i,
  input  logic [1:0]           dtype_i,
  input  logic [1:0]           rop_i,
  input  logic                 native_i,
  input  logic [FpAccBits-1:0] acc_i,
  input  flit_t                x_i,
  output logic [FpAccBits-1:0] acc_o
);

  always_comb begin
    acc_o = acc_i;
    if (en_i) begin
      if (init_i) begin
        acc_o = fp_acc_init(dtype_i, x_i);
      end else begin
        acc_o = fp_acc_step(dtype_i, rop_i, native_i, acc_i, x_i);
      end
    end
  end

endmodule
