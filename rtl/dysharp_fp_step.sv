// dysharp_fp_step: one input flit of a lane-parallel reduction, pipelined (docs/spec.md §9;
// golden model `sim/src/numerics.rs`, `reduce_lanes`). Its output is, Stages cycles after its
// inputs, what dysharp_fp_acc_flit computes in one cycle: fp_acc_init(dtype, x) if init, else
// fp_acc_step(dtype, rop, native, acc, x); without en, acc.
//
// Each lane goes through the phases of dysharp_fp_pkg's fp_lane_phase (widen the flit's lane,
// min/max or the adder's swap, align, the sum's two halves, leading zeros, normalising shift,
// round, round to dtype, widen back), whose
// composition is fp_acc_step itself, so the pipeline is bit-exact by construction. Stages sets
// how many registers cut them (fp_step_cuts: after the phases the depths call for; the last
// phase's result is always registered). side_i comes out as side_o with the same latency: the
// caller's operation and the flits of its later steps travel with the accumulator.
//
// The data registers load only behind a valid operation (valid_i, which travels beside it, no
// reset: the caller's own valid bits decide when the output counts); a lane that passes (en_i
// low) or is done early (an init) is not evaluated by later phases.

`include "dysharp_assert.svh"

module dysharp_fp_step
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned Stages = 10,  // 1 ..= FpPhases (10: 150 MHz in sky130, docs/area.md)
  parameter int unsigned SideW  = 1
) (
  input  logic                 clk_i,
  input  logic                 valid_i,   // an operation enters (the data registers load)
  input  logic                 en_i,
  input  logic                 init_i,
  input  logic [1:0]           dtype_i,
  input  logic [1:0]           rop_i,
  input  logic                 native_i,
  input  logic [FpAccBits-1:0] acc_i,
  input  flit_t                x_i,
  input  logic [SideW-1:0]     side_i,
  output logic [FpAccBits-1:0] acc_o,   // Stages cycles after the inputs
  output logic [SideW-1:0]     side_o,
  output logic                 valid_o    // valid_i, Stages cycles later
);

  localparam logic [FpPhases-2:0] Cuts = fp_step_cuts(Stages);

  typedef fp_lane_t lanes_t [FpAccLanes];

  fp_ctl_t ctl0;
  lanes_t  st0;
  assign ctl0 = '{en: en_i, init: init_i, dtype: dtype_i, rop: rop_i, native: native_i};
  always_comb begin
    for (int unsigned i = 0; i < FpAccLanes; i++) begin
      st0[i] = fp_lane_in(ctl0, acc_i, x_i, i);
    end
  end

  // Phase k: its inputs (the previous phase's outputs, registered or not), its outputs.
  for (genvar k = 0; k < FpPhases; k++) begin : g_phase
    fp_ctl_t          c_in, c_out;
    lanes_t           s_in, s_out, nx;
    logic [SideW-1:0] d_in, d_out;
    logic             v_in, v_out;
    if (k == 0) begin : g_first
      assign v_in = valid_i;
      assign c_in = ctl0;
      assign s_in = st0;
      assign d_in = side_i;
    end else begin : g_next
      assign v_in = g_phase[k-1].v_out;
      assign c_in = g_phase[k-1].c_out;
      assign s_in = g_phase[k-1].s_out;
      assign d_in = g_phase[k-1].d_out;
    end
    always_comb begin
      for (int unsigned i = 0; i < FpAccLanes; i++) begin
        // a lane that is done (a pass, an init) or not valid is not evaluated
        nx[i] = (!v_in || s_in[i].done) ? s_in[i] : fp_lane_phase(k, c_in, i, s_in[i]);
      end
    end
    if (k == FpPhases - 1 || Cuts[k]) begin : g_reg
      always_ff @(posedge clk_i) begin
        v_out <= v_in;
        if (v_in) begin
          c_out <= c_in;
          s_out <= nx;
          d_out <= d_in;
        end
      end
    end else begin : g_wire
      assign v_out = v_in;
      assign c_out = c_in;
      assign s_out = nx;
      assign d_out = d_in;
    end
  end

  always_comb begin
    for (int unsigned i = 0; i < FpAccLanes; i++) begin
      acc_o[32*i +: 32] = g_phase[FpPhases-1].s_out[i].r;
    end
  end
  assign side_o  = g_phase[FpPhases-1].d_out;
  assign valid_o = g_phase[FpPhases-1].v_out;

  logic unused_ctl;
  assign unused_ctl = ^g_phase[FpPhases-1].c_out;

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_stages, Stages >= 1 && Stages <= FpPhases,
    "Stages must be 1..10 (the phases of a step)")
`endif

endmodule
