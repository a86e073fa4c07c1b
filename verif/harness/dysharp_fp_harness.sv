// Verification harness (not product RTL): exposes the functions of dysharp_fp_pkg on flat ports
// so that the Rust bridge can check them bit for bit against sim/src/numerics.rs.
//
// Purely combinational; clk_i exists only because the bridge drives one clock per call.
module dysharp_fp_harness
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
(
  /* verilator lint_off UNUSEDSIGNAL */
  // The harness has no state; the clock is only there for the bridge's per-cycle call.
  input  logic         clk_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic [1:0]   dtype_i,
  input  logic [1:0]   rop_i,
  input  logic         native_i,
  input  logic         en_i,          // dysharp_fp_acc_flit's enable
  input  logic         init_i,        // ... and first input
  input  logic [255:0] acc_i,
  input  logic [127:0] x_i,
  input  logic [31:0]  a_i,
  input  logic [31:0]  b_i,
  output logic [255:0] acc_init_o,    // fp_acc_init(dtype_i, x_i)
  output logic [255:0] acc_step_o,    // fp_acc_step(dtype_i, rop_i, native_i, acc_i, x_i)
  output logic [127:0] acc_finish_o,  // fp_acc_finish(dtype_i, acc_i)
  output logic [255:0] acc_flit_o,    // dysharp_fp_acc_flit (the module the RTL instantiates)
  output logic [31:0]  add_o,         // fp_add(a_i, b_i)
  output logic [31:0]  min_o,         // fp_min(a_i, b_i)
  output logic [31:0]  max_o,         // fp_max(a_i, b_i)
  output logic [31:0]  widen_o,       // fp_widen(dtype_i, a_i)
  output logic [31:0]  narrow_o       // fp_narrow(dtype_i, a_i)
);

  dysharp_fp_acc_flit u_flit (
    .en_i     (en_i),
    .init_i   (init_i),
    .dtype_i  (dtype_i),
    .rop_i    (rop_i),
    .native_i (native_i),
    .acc_i    (acc_i),
    .x_i      (x_i),
    .acc_o    (acc_flit_o)
  );

  always_comb begin
    acc_init_o   = fp_acc_init(dtype_i, x_i);
    acc_step_o   = fp_acc_step(dtype_i, rop_i, native_i, acc_i, x_i);
    acc_finish_o = fp_acc_finish(dtype_i, acc_i);
    add_o        = fp_add(a_i, b_i);
    min_o        = fp_min(a_i, b_i);
    max_o        = fp_max(a_i, b_i);
    widen_o      = fp_widen(dtype_i, a_i);
    narrow_o     = fp_narrow(dtype_i, a_i);
  end

endmodule
