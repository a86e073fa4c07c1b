// dysharp_fifo_bank_harness: a dysharp_fifo_bank of NumQ queues of crosspoint flits (with their
// `last` flags) beside NumQ one-queue dysharp_fifo_banks of the same word and depth, driven by the same
// inputs (verif/tests/blocks.rs, `fifo_bank_queues_are_independent`): every queue of the bank
// behaves exactly as a bank of one queue, whatever the other queues do. A one-queue bank is
// itself checked against a reference queue by its own bench (`fifo_bank_random_traffic_matches_
// reference`).

module dysharp_fifo_bank_harness
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

  dysharp_fifo_bank #(
    .NumQ    (NumQ),
    .Width   (FlitBits),
    .Depth   (Depth),
    .HasLast (1'b1)
  ) u_bank (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (in_valid_i),
    .in_ready_o  (in_ready_o),
    .in_data_i   (in_data_i),
    .in_last_i   (in_last_i),
    .out_valid_o (out_valid_o),
    .out_ready_i (out_ready_i),
    .out_data_o  (out_data_o),
    .out_last_o  (out_last_o),
    .usage_o     (usage_o)
  );

  for (genvar i = 0; i < NumQ; i++) begin : gen_ref
    dysharp_fifo_bank #(
      .NumQ    (1),
      .Width   (FlitBits),
      .Depth   (Depth),
      .HasLast (1'b1)
    ) u_fifo (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .in_valid_i  (in_valid_i[i]),
      .in_ready_o  (ref_in_ready_o[i]),
      .in_data_i   (in_data_i[FlitBits*i +: FlitBits]),
      .in_last_i   (in_last_i[i]),
      .out_valid_o (ref_out_valid_o[i]),
      .out_ready_i (out_ready_i[i]),
      .out_data_o  (ref_out_data_o[FlitBits*i +: FlitBits]),
      .out_last_o  (ref_out_last_o[i]),
      .usage_o     (ref_usage_o[UsW*i +: UsW])
    );
  end

endmodule
