// dysharp_xp_bank_harness: a dysharp_xp_bank beside NumQ dysharp_fifo_ram instances of the same
// word (flit + last) and depth, driven by the same inputs (verif/tests/blocks.rs,
// `xp_bank_matches_fifo_ram`). The bank's contract is that each of its queues behaves exactly as a
// dysharp_fifo_ram (no FallThrough): the bench compares every output of both every cycle, and
// dysharp_fifo_ram is itself checked against a reference queue by its own bench.

module dysharp_xp_bank_harness
  import dysharp_pkg::*;
#(
  parameter int unsigned NumQ  = 4,
  parameter int unsigned Depth = 8,
  localparam int unsigned UsW  = $clog2(Depth + 1)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic [NumQ-1:0]        in_valid_i,
  input  logic [NumQ*128-1:0]    in_data_i,
  input  logic [NumQ-1:0]        in_last_i,
  input  logic [NumQ-1:0]        out_ready_i,
  // The bank.
  output logic [NumQ-1:0]        in_ready_o,
  output logic [NumQ-1:0]        out_valid_o,
  output logic [NumQ*128-1:0]    out_data_o,
  output logic [NumQ-1:0]        out_last_o,
  output logic [NumQ*UsW-1:0]    usage_o,
  // The reference queues.
  output logic [NumQ-1:0]        ref_in_ready_o,
  output logic [NumQ-1:0]        ref_out_valid_o,
  output logic [NumQ*128-1:0]    ref_out_data_o,
  output logic [NumQ-1:0]        ref_out_last_o,
  output logic [NumQ*UsW-1:0]    ref_usage_o
);

  flit_t [NumQ-1:0]          in_data, out_data;
  logic  [NumQ-1:0][UsW-1:0] usage;

  assign in_data    = in_data_i;
  assign out_data_o = out_data;
  assign usage_o    = usage;

  dysharp_xp_bank #(
    .NumQ  (NumQ),
    .Depth (Depth)
  ) u_bank (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (in_valid_i),
    .in_ready_o  (in_ready_o),
    .in_data_i   (in_data),
    .in_last_i   (in_last_i),
    .out_valid_o (out_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  (out_data),
    .out_last_o  (out_last_o),
    .usage_o     (usage)
  );

  for (genvar i = 0; i < NumQ; i++) begin : gen_ref
    logic [128:0] word;

    dysharp_fifo_ram #(
      .Width (129),
      .Depth (Depth)
    ) u_fifo (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .in_valid_i  (in_valid_i[i]),
      .in_ready_o  (ref_in_ready_o[i]),
      .in_data_i   ({in_last_i[i], in_data_i[128*i +: 128]}),
      .out_valid_o (ref_out_valid_o[i]),
      .out_ready_i (out_ready_i[i]),
      .out_data_o  (word),
      .usage_o     (ref_usage_o[UsW*i +: UsW])
    );
    assign ref_out_data_o[128*i +: 128] = word[127:0];
    assign ref_out_last_o[i]            = word[128];
  end

endmodule
