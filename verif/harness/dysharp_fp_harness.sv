// Verification harness (not product RTL): exposes the functions of dysharp_fp_pkg on flat ports
// so that the Rust bridge can check them bit for bit against sim/src/numerics.rs.
//
// Combinational, but for dysharp_fp_step (FpStages registers), which takes the same inputs as
// dysharp_fp_acc_flit and gives its result FpStages clock cycles later, with tag_i beside it.
module dysharp_fp_harness
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned FpStages = 10
) (
  input  logic         clk_i,
  input  logic [1:0]   dtype_i,
  input  logic [1:0]   rop_i,
  input  logic         native_i,
  input  logic         en_i,          // dysharp_fp_acc_flit's enable
  input  logic         init_i,        // ... and first input
  input  logic [255:0] acc_i,
  input  logic [127:0] x_i,
  input  logic [31:0]  a_i,
  input  logic [31:0]  b_i,
  input  logic [31:0]  tag_i,         // dysharp_fp_step's side data
  output logic [255:0] acc_init_o,    // fp_acc_init(dtype_i, x_i)
  output logic [255:0] acc_step_o,    // fp_acc_step(dtype_i, rop_i, native_i, acc_i, x_i)
  output logic [127:0] acc_finish_o,  // fp_acc_finish(dtype_i, acc_i)
  output logic [255:0] acc_flit_o,    // dysharp_fp_acc_flit (the module the RTL instantiates)
  output logic [255:0] step_o,        // dysharp_fp_step: acc_flit_o of FpStages cycles before
  output logic [31:0]  tag_o,         // ... and its tag_i
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

  dysharp_fp_step #(
    .Stages (FpStages),
    .SideW  (32)
  ) u_step (
    .clk_i    (clk_i),
    .valid_i  (1'b1),
    .en_i     (en_i),
    .init_i   (init_i),
    .dtype_i  (dtype_i),
    .rop_i    (rop_i),
    .native_i (native_i),
    .acc_i    (acc_i),
    .x_i      (x_i),
    .side_i   (tag_i),
    .acc_o    (step_o),
    .side_o   (tag_o),
    .valid_o  (step_valid)
  );
  logic step_valid;   // always: every cycle's inputs are an operation
  logic unused_step_valid;
  assign unused_step_valid = step_valid;

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
