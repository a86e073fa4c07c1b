// dysharp_fp_acc_flit: one input flit of a lane-parallel reduction (docs/spec.md §9; golden
// model `sim/src/numerics.rs`, `reduce_lanes`): with en_i, acc_o = fp_acc_init(dtype_i, x_i) if
// init_i, else fp_acc_step(dtype_i, rop_i, native_i, acc_i, x_i); without en_i, acc_o = acc_i.
// The FP harness checks it against those functions (verif/tests/fp.rs).
//
// FpAccLanes dysharp_fp_acc_lane instances on the lanes of the flit (each lane widens its own
// input, as fp_flit_lane does, only when it takes part); the f32 accumulator's upper lanes stay
// zero. Used by dysharp_reduce_acc (one per port of a result
// engine) and dysharp_hub_rsp (one per line of a beat).

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

  for (genvar i = 0; i < FpAccLanes; i++) begin : g_lane
    // The lane's bits as either type (fp_flit_lane: an f32 flit has FpAccLanes / 2 lanes).
    logic [15:0] x16;
    logic [31:0] x32, r;
    assign x16 = x_i[16*i +: 16];
    if (i < FpAccLanes / 2) begin : g_f32
      assign x32 = x_i[32*i +: 32];
    end else begin : g_no_f32
      assign x32 = '0;
    end

    dysharp_fp_acc_lane u_lane (
      .en_i     (en_i),
      .init_i   (init_i),
      .dtype_i  (dtype_i),
      .rop_i    (rop_i),
      .native_i (native_i),
      .acc_i    (acc_i[32*i +: 32]),
      .x16_i    (x16),
      .x32_i    (x32),
      .acc_o    (r)
    );

    // An f32 flit has FpAccLanes / 2 lanes; the accumulator's others stay zero when it takes part.
    if (i >= FpAccLanes / 2) begin : g_upper
      assign acc_o[32*i +: 32] = (en_i && !fp_is16(dtype_i)) ? 32'h0 : r;
    end else begin : g_lower
      assign acc_o[32*i +: 32] = r;
    end
  end

endmodule
