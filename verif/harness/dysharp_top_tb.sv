// dysharp_top_tb: the verification wrapper of dysharp_top (the Verilator models top_p4, top_p8,
// top_p16 and the cocotb bench build this; synthesis and the product take dysharp_top).
//
// The same parameters and ports as dysharp_top, plus one observation tap that only the benches
// use: the request flits each hub accepts from the switch (hub_req_mon_valid_o = a handshake this
// cycle), read from inside dysharp_top by hierarchical reference. verif/src/tb.rs, the cocotb bench
// and examples/golden/SIGNALS.toml compare every request a hub receives with the golden model's.
// The parameter and port lists repeat dysharp_top's (a wrapper must declare what it passes on);
// they cannot drift apart unnoticed: a renamed port fails elaboration, a port left out fails the
// lint test (verif/tests/lint.rs lints this wrapper with -Wall: PINMISSING), and a parameter that
// differs in name, type, default or order, or is not passed on, fails
// `top_harness_takes_the_tops_parameters` (verif/tests/lint.rs).

module dysharp_top_tb import dysharp_pkg::*; #(
  parameter int unsigned NumPorts       = 8,
  parameter int unsigned ExpertsPerPort = 32,
  parameter int unsigned MaxTargets     = 32,
  parameter bit          DynamicOps     = 1'b1, // 0: static groups and unicast only (spec §5.7)
  parameter int unsigned NumGroups      = 16,
  parameter int unsigned RedEntries     = 256,  // 64 KB of partials per port (the paper)
  parameter int unsigned TlbEntries     = 512,
  parameter int unsigned TlbWays        = 512,
  parameter int unsigned XpDepth        = 128,  // flits: 8 packets per crosspoint queue
  parameter int unsigned MemLines       = 4,    // 16-byte lines per hub memory beat
  parameter int unsigned RedTimeout     = 65536, // switch: cycles a partial may be missing (0: none)
  parameter int unsigned RedAccStages   = 2     // switch: pipeline stages of a result's reduction
) (
  input  logic                              clk_i,
  input  logic                              rst_ni,
  // Static NVLS groups: group g mask at [NumPorts*g +: NumPorts].
  input  logic [NumGroups*NumPorts-1:0]     cfg_group_mask_i,
  // Hub configuration (spec §7; change only in reset).
  input  logic [47:0]                       cfg_mbase_i,
  input  logic [47:0]                       cfg_al_base_i,
  input  logic [47:0]                       cfg_data_base_i,
  input  logic [4:0]                        cfg_log2_bsize_i,
  input  logic [4:0]                        cfg_log2_al_entries_i,
  input  logic [4:0]                        cfg_log2_slots_i,
  // SM requests into the switch.
  input  logic [NumPorts-1:0]               sm_req_valid_i,
  output logic [NumPorts-1:0]               sm_req_ready_o,
  input  logic [NumPorts*FlitBits-1:0]      sm_req_data_i,
  input  logic [NumPorts-1:0]               sm_req_last_i,
  // Responses to the SMs.
  output logic [NumPorts-1:0]               sm_rsp_valid_o,
  input  logic [NumPorts-1:0]               sm_rsp_ready_i,
  output logic [NumPorts*FlitBits-1:0]      sm_rsp_data_o,
  output logic [NumPorts-1:0]               sm_rsp_last_o,
  // Hub memory ports: beats of 1..MemLines consecutive 16-byte lines (dysharp_hub). Port p's
  // line count at [LinesW*p +: LinesW], its data at [128*MemLines*p +: 128*MemLines] (line i at
  // offset 128*i), its strobes at [16*MemLines*p +: 16*MemLines].
  output logic [NumPorts-1:0]               mem_req_valid_o,
  input  logic [NumPorts-1:0]               mem_req_ready_i,
  output logic [NumPorts-1:0]               mem_req_we_o,
  output logic [NumPorts*48-1:0]            mem_req_addr_o,
  output logic [NumPorts*$clog2(MemLines+1)-1:0] mem_req_lines_o,
  output logic [NumPorts*128*MemLines-1:0]  mem_req_wdata_o,
  output logic [NumPorts*16*MemLines-1:0]   mem_req_wstrb_o,
  input  logic [NumPorts-1:0]               mem_rsp_valid_i,
  output logic [NumPorts-1:0]               mem_rsp_ready_o,
  input  logic [NumPorts*128*MemLines-1:0]  mem_rsp_rdata_i,
  // Counters.
  output logic [NumPorts*NumErrCodes*32-1:0] err_count_o,
  output logic [NumPorts*32-1:0]            up_flits_o,
  output logic [NumPorts*32-1:0]            dn_flits_o,
  output logic [NumPorts*32-1:0]            up_payload_flits_o,
  output logic [NumPorts*32-1:0]            dn_payload_flits_o,
  output logic [NumPorts*32-1:0]            tlb_hits_o,
  output logic [NumPorts*32-1:0]            tlb_misses_o,
  // Verification tap: the request flits hub p accepts (port p at [FlitBits*p +: FlitBits]).
  output logic [NumPorts-1:0]               hub_req_mon_valid_o,
  output logic [NumPorts*FlitBits-1:0]      hub_req_mon_data_o,
  output logic [NumPorts-1:0]               hub_req_mon_last_o
);

  dysharp_top #(
    .NumPorts       (NumPorts),
    .ExpertsPerPort (ExpertsPerPort),
    .MaxTargets     (MaxTargets),
    .DynamicOps     (DynamicOps),
    .NumGroups      (NumGroups),
    .RedEntries     (RedEntries),
    .TlbEntries     (TlbEntries),
    .TlbWays        (TlbWays),
    .XpDepth        (XpDepth),
    .MemLines       (MemLines),
    .RedTimeout     (RedTimeout),
    .RedAccStages   (RedAccStages)
  ) u_dut (
    .clk_i                 (clk_i),
    .rst_ni                (rst_ni),
    .cfg_group_mask_i      (cfg_group_mask_i),
    .cfg_mbase_i           (cfg_mbase_i),
    .cfg_al_base_i         (cfg_al_base_i),
    .cfg_data_base_i       (cfg_data_base_i),
    .cfg_log2_bsize_i      (cfg_log2_bsize_i),
    .cfg_log2_al_entries_i (cfg_log2_al_entries_i),
    .cfg_log2_slots_i      (cfg_log2_slots_i),
    .sm_req_valid_i        (sm_req_valid_i),
    .sm_req_ready_o        (sm_req_ready_o),
    .sm_req_data_i         (sm_req_data_i),
    .sm_req_last_i         (sm_req_last_i),
    .sm_rsp_valid_o        (sm_rsp_valid_o),
    .sm_rsp_ready_i        (sm_rsp_ready_i),
    .sm_rsp_data_o         (sm_rsp_data_o),
    .sm_rsp_last_o         (sm_rsp_last_o),
    .mem_req_valid_o       (mem_req_valid_o),
    .mem_req_ready_i       (mem_req_ready_i),
    .mem_req_we_o          (mem_req_we_o),
    .mem_req_addr_o        (mem_req_addr_o),
    .mem_req_lines_o       (mem_req_lines_o),
    .mem_req_wdata_o       (mem_req_wdata_o),
    .mem_req_wstrb_o       (mem_req_wstrb_o),
    .mem_rsp_valid_i       (mem_rsp_valid_i),
    .mem_rsp_ready_o       (mem_rsp_ready_o),
    .mem_rsp_rdata_i       (mem_rsp_rdata_i),
    .err_count_o           (err_count_o),
    .up_flits_o            (up_flits_o),
    .dn_flits_o            (dn_flits_o),
    .up_payload_flits_o    (up_payload_flits_o),
    .dn_payload_flits_o    (dn_payload_flits_o),
    .tlb_hits_o            (tlb_hits_o),
    .tlb_misses_o          (tlb_misses_o)
  );

  assign hub_req_mon_valid_o = u_dut.req_out_valid & u_dut.req_out_ready;
  assign hub_req_mon_data_o  = u_dut.req_out_data;
  assign hub_req_mon_last_o  = u_dut.req_out_last;

endmodule
