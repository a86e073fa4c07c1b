// dysharp_top: one dysharp_switch and one dysharp_hub per port (docs/architecture.md).
//
// SM p's requests enter the switch at req_in p; the switch's req_out p feeds hub p, whose
// responses return on the switch's rsp_in p; the switch's rsp_out p goes to SM p. Hub p owns GPU
// memory port p. Every per-port port is a packed array indexed by port ([p]).
// err_count_o: per port NumErrCodes counters, code c at [p][c-1]; codes
// FirstHubErrCode..LastHubErrCode (11..13) come from hub p, the others from the switch (ingress
// checks, orphan partials, load-reduce timeouts). The benches observe the switch-to-hub request
// streams through the verification wrapper verif/harness/dysharp_top_tb.sv.

`include "dysharp_assert.svh"

module dysharp_top import dysharp_pkg::*; #(
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
  parameter int unsigned RedFpStages    = 10,   // switch: pipeline stages of a reduction's flit step
  parameter int unsigned RedUnits       = (NumPorts + 3) / 4  // switch: flit reductions, shared
) (
  input  logic                              clk_i,
  // Asynchronous reset; also read as data where a memory's ports are held idle in reset
  // (dysharp_parser's tail RAM: `we_i = rst_ni && store_tail`) and by the checks.
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
  input  flit_t [NumPorts-1:0]              sm_req_data_i,
  input  logic [NumPorts-1:0]               sm_req_last_i,
  // Responses to the SMs.
  output logic [NumPorts-1:0]               sm_rsp_valid_o,
  input  logic [NumPorts-1:0]               sm_rsp_ready_i,
  output flit_t [NumPorts-1:0]              sm_rsp_data_o,
  output logic [NumPorts-1:0]               sm_rsp_last_o,
  // Hub memory ports: beats of 1..MemLines consecutive 16-byte lines (dysharp_hub); port p's
  // line i at [p][i].
  output logic [NumPorts-1:0]               mem_req_valid_o,
  input  logic [NumPorts-1:0]               mem_req_ready_i,
  output logic [NumPorts-1:0]               mem_req_we_o,
  output logic [NumPorts-1:0][47:0]         mem_req_addr_o,
  output logic [NumPorts-1:0][$clog2(MemLines+1)-1:0] mem_req_lines_o,
  output logic [NumPorts-1:0][MemLines-1:0][127:0] mem_req_wdata_o,
  output logic [NumPorts-1:0][MemLines-1:0][15:0]  mem_req_wstrb_o,
  input  logic [NumPorts-1:0]               mem_rsp_valid_i,
  output logic [NumPorts-1:0]               mem_rsp_ready_o,
  input  logic [NumPorts-1:0][MemLines-1:0][127:0] mem_rsp_rdata_i,
  // Counters.
  output logic [NumPorts-1:0][NumErrCodes-1:0][31:0] err_count_o,
  output logic [NumPorts-1:0][31:0]         up_flits_o,
  output logic [NumPorts-1:0][31:0]         dn_flits_o,
  output logic [NumPorts-1:0][31:0]         up_payload_flits_o,
  output logic [NumPorts-1:0][31:0]         dn_payload_flits_o,
  output logic [NumPorts-1:0][31:0]         tlb_hits_o,
  output logic [NumPorts-1:0][31:0]         tlb_misses_o
);

  localparam int unsigned HubErrCodes  = LastHubErrCode - FirstHubErrCode + 1;

  // Switch <-> hubs.
  logic  [NumPorts-1:0]                   req_out_valid, req_out_ready, req_out_last;
  flit_t [NumPorts-1:0]                   req_out_data;
  logic  [NumPorts-1:0]                   rsp_in_valid, rsp_in_ready, rsp_in_last;
  flit_t [NumPorts-1:0]                   rsp_in_data;
  logic  [NumPorts-1:0][NumErrCodes-1:0][31:0] sw_err_count;
  logic  [NumPorts-1:0][HubErrCodes-1:0][31:0] hub_err_count;

  // The hubs' configuration (one for every hub).
  dysharp_hub_pkg::hub_cfg_t         hub_cfg;

  assign hub_cfg = '{
    mbase:           cfg_mbase_i,
    al_base:         cfg_al_base_i,
    data_base:       cfg_data_base_i,
    log2_bsize:      cfg_log2_bsize_i,
    log2_al_entries: cfg_log2_al_entries_i,
    log2_slots:      cfg_log2_slots_i
  };
  // The load-reduce events are telemetry; the top-level bench does not need them (a timeout
  // reaches the SM as an RSP_ERROR and is counted).
  logic [NumPorts-1:0]              unused_red_take, unused_red_timeout, unused_red_expire;
  logic [NumPorts-1:0][TagWidth-1:0]     unused_red_tag;
  logic [NumPorts-1:0][SrcPortWidth-1:0] unused_red_port;

  dysharp_switch #(
    .NumPorts       (NumPorts),
    .ExpertsPerPort (ExpertsPerPort),
    .MaxTargets     (MaxTargets),
    .DynamicOps     (DynamicOps),
    .NumGroups      (NumGroups),
    .RedEntries     (RedEntries),
    .XpDepth        (XpDepth),
    .RedTimeout     (RedTimeout),
    .RedFpStages    (RedFpStages),
    .RedUnits       (RedUnits)
  ) u_switch (
    .clk_i                (clk_i),
    .rst_ni               (rst_ni),
    .cfg_group_mask_i     (cfg_group_mask_i),
    .req_in_valid_i       (sm_req_valid_i),
    .req_in_ready_o       (sm_req_ready_o),
    .req_in_data_i        (sm_req_data_i),
    .req_in_last_i        (sm_req_last_i),
    .rsp_in_valid_i       (rsp_in_valid),
    .rsp_in_ready_o       (rsp_in_ready),
    .rsp_in_data_i        (rsp_in_data),
    .rsp_in_last_i        (rsp_in_last),
    .req_out_valid_o      (req_out_valid),
    .req_out_ready_i      (req_out_ready),
    .req_out_data_o       (req_out_data),
    .req_out_last_o       (req_out_last),
    .rsp_out_valid_o      (sm_rsp_valid_o),
    .rsp_out_ready_i      (sm_rsp_ready_i),
    .rsp_out_data_o       (sm_rsp_data_o),
    .rsp_out_last_o       (sm_rsp_last_o),
    .err_count_o          (sw_err_count),
    .up_flits_o           (up_flits_o),
    .dn_flits_o           (dn_flits_o),
    .up_payload_flits_o   (up_payload_flits_o),
    .dn_payload_flits_o   (dn_payload_flits_o),
    .red_take_o           (unused_red_take),
    .red_timeout_o        (unused_red_timeout),
    .red_expire_o         (unused_red_expire),
    .red_evt_tag_o        (unused_red_tag),
    .red_evt_port_o       (unused_red_port)
  );

  for (genvar p = 0; p < NumPorts; p++) begin : gen_hub
    dysharp_hub #(
      .ExpertsPerPort (ExpertsPerPort),
      .MaxTargets     (MaxTargets),
      .DynamicOps     (DynamicOps),
      .TlbEntries     (TlbEntries),
      .TlbWays        (TlbWays),
      .MemLines       (MemLines)
    ) u_hub (
      .clk_i                 (clk_i),
      .rst_ni                (rst_ni),
      .cfg_i                 (hub_cfg),
      .req_valid_i           (req_out_valid[p]),
      .req_ready_o           (req_out_ready[p]),
      .req_data_i            (req_out_data[p]),
      .req_last_i            (req_out_last[p]),
      .rsp_valid_o           (rsp_in_valid[p]),
      .rsp_ready_i           (rsp_in_ready[p]),
      .rsp_data_o            (rsp_in_data[p]),
      .rsp_last_o            (rsp_in_last[p]),
      .mem_req_valid_o       (mem_req_valid_o[p]),
      .mem_req_ready_i       (mem_req_ready_i[p]),
      .mem_req_we_o          (mem_req_we_o[p]),
      .mem_req_addr_o        (mem_req_addr_o[p]),
      .mem_req_lines_o       (mem_req_lines_o[p]),
      .mem_req_wdata_o       (mem_req_wdata_o[p]),
      .mem_req_wstrb_o       (mem_req_wstrb_o[p]),
      .mem_rsp_valid_i       (mem_rsp_valid_i[p]),
      .mem_rsp_ready_o       (mem_rsp_ready_o[p]),
      .mem_rsp_rdata_i       (mem_rsp_rdata_i[p]),
      .tlb_hits_o            (tlb_hits_o[p]),
      .tlb_misses_o          (tlb_misses_o[p]),
      .err_count_o           (hub_err_count[p])
    );

    // The hub's codes from the hub, the others from the switch.
    for (genvar c = 1; c <= NumErrCodes; c++) begin : gen_err
      if (c < FirstHubErrCode || c > LastHubErrCode) begin : gen_sw
        assign err_count_o[p][c-1] = sw_err_count[p][c-1];
      end else begin : gen_hub_code
        assign err_count_o[p][c-1] = hub_err_count[p][c-FirstHubErrCode];
      end
    end
  end

  // The switch leaves the hubs' codes at zero (named *unused* on purpose).
  logic unused_sw_err;
  always_comb begin
    unused_sw_err = 1'b0;
    for (int unsigned p = 0; p < NumPorts; p++) begin
      for (int unsigned c = FirstHubErrCode; c <= LastHubErrCode; c++) begin
        unused_sw_err = unused_sw_err ^ (^sw_err_count[p][c-1]);
      end
    end
  end

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_num_ports, NumPorts >= 1 && NumPorts <= 32, "NumPorts must be 1..32")
  `DYSHARP_ASSERT_INIT(a_num_experts, NumPorts * ExpertsPerPort <= 65535, "at most 65535 experts")
`endif

endmodule
