// dysharp_switch: the DySHARP switch core (docs/spec.md §5, §6; docs/architecture.md).
//
// Per port p:
//   ingress  link arbiter (one flit per cycle over req_in from SM p and rsp_in from hub p, round
//            robin at flit granularity between the classes offering a flit with buffer room),
//            a parser per class (dysharp_parser: store-and-forward, spec §6 checks, src_port
//            stamping, RSP_ERROR for bad frames) and a forwarder per class
//            (dysharp_sw_req_fwd: routing, replication with whole target lists, ld_reduce entry
//            allocation; dysharp_sw_rsp_fwd: responses to the crosspoints, RSP_PARTIAL to the
//            reduction unit);
//   crosspoints  one queue per (ingress i, egress q, class), written in parallel by ingress i;
//   egress   dysharp_sw_egress: class arbiters (request: crosspoints i->q; response: crosspoints
//            i->q, the two parsers' RSP_ERROR queues of port q, the reduction unit's result stream
//            q), link arbiter, request FIFO (req_out, to hub q) and response FIFO (rsp_out, to SM q).
// One dysharp_reduce_unit (load-reduce table) serves all ports: each requester port has its own
// share of the table and its own allocation port, so every port can allocate in the same cycle
// and a requester whose share is full stalls only itself (spec §5.3).
// Crosspoint queues: one dysharp_fifo_bank per egress port and class (a RAM per queue, its read
// register and an output register).
//
// Counters (32-bit, wrap around): err_count_o codes 1..10 counted at the ingress port of the bad
// frame (plus ERR_OPCODE for orphan partials), ERR_TIMEOUT (14) at the lowest port that did not
// answer a timed-out load-reduce; the hubs' codes (FirstHubErrCode..LastHubErrCode) stay 0.
// Load-reduce events (red_*_o, one-cycle pulses): telemetry of the bounded wait for the system, and
// what the switch-level bench orders its golden model by (dysharp_reduce_unit).
// up_flits_o: every accepted uplink flit; up_payload_flits_o: payload flits of good frames.
// dn_flits_o / dn_payload_flits_o: the same on the downlink (both classes).

`include "dysharp_assert.svh"

module dysharp_switch
  import dysharp_pkg::*;
#(
  parameter int unsigned NumPorts       = 8,
  parameter int unsigned ExpertsPerPort = 32,
  parameter int unsigned MaxTargets     = 32,
  parameter bit          DynamicOps     = 1'b1, // 0: static groups and unicast only (spec §5.7)
  parameter int unsigned NumGroups      = 16,
  parameter int unsigned RedEntries     = 256,  // 64 KB of partials per port (the paper)
  parameter int unsigned XpDepth        = 128,
  parameter int unsigned RedTimeout     = 65536, // cycles a partial may be missing (0 = no limit)
  parameter int unsigned RedFpStages    = 10,   // pipeline stages of one flit step of a reduction
  parameter int unsigned RedUnits       = (NumPorts + 3) / 4  // flit reductions, shared
) (
  input  logic                                clk_i,
  input  logic                                rst_ni,
  input  logic [NumGroups*NumPorts-1:0]       cfg_group_mask_i,
  // Requests from each SM (uplink, request class).
  input  logic [NumPorts-1:0]                 req_in_valid_i,
  output logic [NumPorts-1:0]                 req_in_ready_o,
  input  flit_t [NumPorts-1:0]                req_in_data_i,
  input  logic [NumPorts-1:0]                 req_in_last_i,
  // Responses from each hub (uplink, response class).
  input  logic [NumPorts-1:0]                 rsp_in_valid_i,
  output logic [NumPorts-1:0]                 rsp_in_ready_o,
  input  flit_t [NumPorts-1:0]                rsp_in_data_i,
  input  logic [NumPorts-1:0]                 rsp_in_last_i,
  // Requests to each hub (downlink, request class).
  output logic [NumPorts-1:0]                 req_out_valid_o,
  input  logic [NumPorts-1:0]                 req_out_ready_i,
  output flit_t [NumPorts-1:0]                req_out_data_o,
  output logic [NumPorts-1:0]                 req_out_last_o,
  // Responses to each SM (downlink, response class).
  output logic [NumPorts-1:0]                 rsp_out_valid_o,
  input  logic [NumPorts-1:0]                 rsp_out_ready_i,
  output flit_t [NumPorts-1:0]                rsp_out_data_o,
  output logic [NumPorts-1:0]                 rsp_out_last_o,
  // Counters (wrap-around 32-bit).
  output logic [NumPorts-1:0][NumErrCodes-1:0][31:0] err_count_o,  // [p][c-1]: code c
  output logic [NumPorts-1:0][31:0]           up_flits_o,
  output logic [NumPorts-1:0][31:0]           dn_flits_o,
  output logic [NumPorts-1:0][31:0]           up_payload_flits_o,
  output logic [NumPorts-1:0][31:0]           dn_payload_flits_o,
  // Load-reduce events: red_take_o[p] the reduction unit takes the flit0 of a partial from hub p;
  // red_timeout_o[q] / red_expire_o[q] an entry of requester q times out / leaves quarantine
  // unanswered, with its tag and the lowest port that has not answered.
  output logic [NumPorts-1:0]                 red_take_o,
  output logic [NumPorts-1:0]                 red_timeout_o,
  output logic [NumPorts-1:0]                 red_expire_o,
  output logic [NumPorts-1:0][TagWidth-1:0]  red_evt_tag_o,
  output logic [NumPorts-1:0][SrcPortWidth-1:0] red_evt_port_o
);

  localparam int unsigned TgtFlits  = (MaxTargets + TargetsPerFlit - 1) / TargetsPerFlit;
  localparam int unsigned NtW       = $clog2(MaxLen + 2 + TgtFlits);
  localparam int unsigned PayW      = $clog2(MaxLen + 1);
  localparam int unsigned UsW       = $clog2(XpDepth + 1);
  localparam int unsigned NumRspSrc = NumPorts + 3;
  localparam int unsigned NumSwErr  = 10;                        // codes 1..10 counted here

  // ---------------------------------------------------------------------------------------------
  // Crosspoint queues of the request (rxp) and response (sxp) classes. Write side indexed [i][q]
  // (ingress i to egress q), read side [q][i] (egress q from ingress i).
  typedef logic [NumPorts-1:0][NumPorts-1:0] xp_bits_t;
  xp_bits_t                                  rxp_wvalid, rxp_wready, rxp_wlast;
  flit_t [NumPorts-1:0][NumPorts-1:0]        rxp_wdata;
  logic  [NumPorts-1:0][NumPorts-1:0][UsW-1:0] rxp_usage;
  xp_bits_t                                  rxp_rvalid, rxp_rready, rxp_rlast;
  flit_t [NumPorts-1:0][NumPorts-1:0]        rxp_rdata;

  xp_bits_t                                  sxp_wvalid, sxp_wready, sxp_wlast;
  flit_t [NumPorts-1:0][NumPorts-1:0]        sxp_wdata;
  logic  [NumPorts-1:0][NumPorts-1:0][UsW-1:0] sxp_usage;
  xp_bits_t                                  sxp_rvalid, sxp_rready, sxp_rlast;
  flit_t [NumPorts-1:0][NumPorts-1:0]        sxp_rdata;

  // Parser RSP_ERROR queues per port: [p] from the request parser, [p] from the response parser.
  logic  [NumPorts-1:0] rq_err_valid, rq_err_ready, rs_err_valid, rs_err_ready;
  flit_t [NumPorts-1:0] rq_err_data, rs_err_data;

  // Reduction unit: one allocation port per requester.
  logic [NumPorts-1:0]                alloc_req, alloc_ready, alloc_gnt;
  flit_t [NumPorts-1:0]               alloc_hdr;
  logic [NumPorts-1:0][NumPorts-1:0]  alloc_ports;
  logic [NumPorts-1:0]                part_valid, part_ready, part_last;
  flit_t [NumPorts-1:0]               part_data;
  logic [NumPorts-1:0]                res_valid, res_ready, res_last;
  flit_t [NumPorts-1:0]               res_data;
  logic [NumPorts-1:0]                orphan;
  logic [NumPorts-1:0]                red_tmo;
  logic [NumPorts-1:0][TagWidth-1:0]  red_tag;
  logic [NumPorts-1:0][SrcPortWidth-1:0] red_port;

  assign alloc_gnt = alloc_req & alloc_ready;

  for (genvar p = 0; p < NumPorts; p++) begin : gen_port
    // -------------------------------------------------------------------------------------------
    // Ingress link arbiter: [0] request class (SM), [1] response class (hub).
    logic [1:0]          in_req, in_gnt;
    logic                in_any;
    logic                unused_in_idx;
    logic                rq_ready, rs_ready;
    logic                rq_evt_err, rs_evt_err;
    logic [EcodeWidth-1:0] rq_evt_code, rs_evt_code;
    logic [PayW-1:0]     rq_evt_pay, rs_evt_pay;

    // Request parser -> request forwarder.
    logic                rq_desc_valid, rq_desc_ready;
    flit_t               rq_desc_hdr;
    logic [NtW-1:0]      rq_desc_ntail;
    logic [NumPorts-1:0] rq_desc_dmask;
    logic [NumPorts-1:0][$clog2(MaxTargets+1)-1:0] rq_desc_cnt;
    logic [NumPorts-1:0][7:0] rq_desc_rhcc;
    logic                rq_tail_valid, rq_tail_ready;
    flit_t               rq_tail_data;
    // Response parser -> response forwarder.
    logic                rs_desc_valid, rs_desc_ready;
    flit_t               rs_desc_hdr;
    logic [NtW-1:0]      rs_desc_ntail;
    // Responses carry no targets and go where their route says (always 0).
    logic [NumPorts-1:0] unused_rs_desc_dmask;
    logic [NumPorts-1:0][$clog2(MaxTargets+1)-1:0] unused_rs_desc_cnt;
    logic [NumPorts-1:0][7:0] unused_rs_desc_rhcc;
    logic                rs_tail_valid, rs_tail_ready;
    flit_t               rs_tail_data;

    assign in_req = {rsp_in_valid_i[p] && rs_ready, req_in_valid_i[p] && rq_ready};

    dysharp_rr_arb #(
      .N (2)
    ) u_in_arb (
      .clk_i   (clk_i),
      .rst_ni  (rst_ni),
      .req_i   (in_req),
      .lock_i  (1'b0),
      .ack_i   (in_any),
      .gnt_o   (in_gnt),
      .idx_o   (unused_in_idx),
      .valid_o (in_any)
    );

    assign req_in_ready_o[p] = in_gnt[0];
    assign rsp_in_ready_o[p] = in_gnt[1];

    dysharp_parser #(
      .Origin         (0),
      .DynamicOps     (DynamicOps),
      .PortId         (p),
      .NumPorts       (NumPorts),
      .ExpertsPerPort (ExpertsPerPort),
      .MaxTargets     (MaxTargets),
      .NumGroups      (NumGroups)
    ) u_req_parser (
      .clk_i            (clk_i),
      .rst_ni           (rst_ni),
      .cfg_group_mask_i (cfg_group_mask_i),
      .in_valid_i       (in_gnt[0]),
      .in_ready_o       (rq_ready),
      .in_data_i        (req_in_data_i[p]),
      .in_last_i        (req_in_last_i[p]),
      .desc_valid_o     (rq_desc_valid),
      .desc_ready_i     (rq_desc_ready),
      .desc_hdr_o       (rq_desc_hdr),
      .desc_ntail_o     (rq_desc_ntail),
      .desc_dmask_o     (rq_desc_dmask),
      .desc_cnt_o       (rq_desc_cnt),
      .desc_rhcc_o      (rq_desc_rhcc),
      .tail_valid_o     (rq_tail_valid),
      .tail_ready_i     (rq_tail_ready),
      .tail_data_o      (rq_tail_data),
      .err_valid_o      (rq_err_valid[p]),
      .err_ready_i      (rq_err_ready[p]),
      .err_data_o       (rq_err_data[p]),
      .evt_err_o        (rq_evt_err),
      .evt_code_o       (rq_evt_code),
      .evt_payload_o    (rq_evt_pay)
    );

    dysharp_parser #(
      .Origin         (1),
      .PortId         (p),
      .NumPorts       (NumPorts),
      .ExpertsPerPort (ExpertsPerPort),
      .MaxTargets     (MaxTargets),
      .NumGroups      (NumGroups)
    ) u_rsp_parser (
      .clk_i            (clk_i),
      .rst_ni           (rst_ni),
      .cfg_group_mask_i (cfg_group_mask_i),
      .in_valid_i       (in_gnt[1]),
      .in_ready_o       (rs_ready),
      .in_data_i        (rsp_in_data_i[p]),
      .in_last_i        (rsp_in_last_i[p]),
      .desc_valid_o     (rs_desc_valid),
      .desc_ready_i     (rs_desc_ready),
      .desc_hdr_o       (rs_desc_hdr),
      .desc_ntail_o     (rs_desc_ntail),
      .desc_dmask_o     (unused_rs_desc_dmask),
      .desc_cnt_o       (unused_rs_desc_cnt),
      .desc_rhcc_o      (unused_rs_desc_rhcc),
      .tail_valid_o     (rs_tail_valid),
      .tail_ready_i     (rs_tail_ready),
      .tail_data_o      (rs_tail_data),
      .err_valid_o      (rs_err_valid[p]),
      .err_ready_i      (rs_err_ready[p]),
      .err_data_o       (rs_err_data[p]),
      .evt_err_o        (rs_evt_err),
      .evt_code_o       (rs_evt_code),
      .evt_payload_o    (rs_evt_pay)
    );

    dysharp_sw_req_fwd #(
      .NumPorts       (NumPorts),
      .DynamicOps     (DynamicOps),
      .MaxTargets     (MaxTargets),
      .XpDepth        (XpDepth)
    ) u_req_fwd (
      .clk_i            (clk_i),
      .rst_ni           (rst_ni),
      .desc_valid_i     (rq_desc_valid),
      .desc_ready_o     (rq_desc_ready),
      .desc_hdr_i       (rq_desc_hdr),
      .desc_ntail_i     (rq_desc_ntail),
      .desc_dmask_i     (rq_desc_dmask),
      .desc_cnt_i       (rq_desc_cnt),
      .desc_rhcc_i      (rq_desc_rhcc),
      .tail_valid_i     (rq_tail_valid),
      .tail_ready_o     (rq_tail_ready),
      .tail_data_i      (rq_tail_data),
      .alloc_req_o      (alloc_req[p]),
      .alloc_gnt_i      (alloc_gnt[p]),
      .alloc_hdr_o      (alloc_hdr[p]),
      .alloc_ports_o    (alloc_ports[p]),
      .xp_usage_i       (rxp_usage[p]),
      .xp_ready_i       (rxp_wready[p]),
      .xp_valid_o       (rxp_wvalid[p]),
      .xp_data_o        (rxp_wdata[p]),
      .xp_last_o        (rxp_wlast[p])
    );

    dysharp_sw_rsp_fwd #(
      .NumPorts (NumPorts),
      .XpDepth  (XpDepth)
    ) u_rsp_fwd (
      .clk_i        (clk_i),
      .rst_ni       (rst_ni),
      .desc_valid_i (rs_desc_valid),
      .desc_ready_o (rs_desc_ready),
      .desc_hdr_i   (rs_desc_hdr),
      .desc_ntail_i (rs_desc_ntail),
      .tail_valid_i (rs_tail_valid),
      .tail_ready_o (rs_tail_ready),
      .tail_data_i  (rs_tail_data),
      .xp_usage_i   (sxp_usage[p]),
      .xp_ready_i   (sxp_wready[p]),
      .xp_valid_o   (sxp_wvalid[p]),
      .xp_data_o    (sxp_wdata[p]),
      .xp_last_o    (sxp_wlast[p]),
      .part_valid_o (part_valid[p]),
      .part_ready_i (part_ready[p]),
      .part_data_o  (part_data[p]),
      .part_last_o  (part_last[p])
    );

    // -------------------------------------------------------------------------------------------
    // Crosspoint queues i -> p of both classes: one bank per class, queue i written by ingress i.
    logic  [NumPorts-1:0]          rb_in_valid, rb_in_ready, rb_in_last;
    logic  [NumPorts-1:0]          sb_in_valid, sb_in_ready, sb_in_last;
    flit_t [NumPorts-1:0]          rb_in_data, sb_in_data;
    logic  [NumPorts-1:0][UsW-1:0] rb_usage, sb_usage;

    for (genvar i = 0; i < NumPorts; i++) begin : gen_xp
      assign rb_in_valid[i]   = rxp_wvalid[i][p];
      assign rb_in_data[i]    = rxp_wdata[i][p];
      assign rb_in_last[i]    = rxp_wlast[i][p];
      assign rxp_wready[i][p] = rb_in_ready[i];
      assign rxp_usage[i][p]  = rb_usage[i];
      assign sb_in_valid[i]   = sxp_wvalid[i][p];
      assign sb_in_data[i]    = sxp_wdata[i][p];
      assign sb_in_last[i]    = sxp_wlast[i][p];
      assign sxp_wready[i][p] = sb_in_ready[i];
      assign sxp_usage[i][p]  = sb_usage[i];
    end

    dysharp_fifo_bank #(
      .NumQ    (NumPorts),
      .Width   (FlitBits),
      .Depth   (XpDepth),
      .HasLast (1'b1)
    ) u_req_xp (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .in_valid_i  (rb_in_valid),
      .in_ready_o  (rb_in_ready),
      .in_data_i   (rb_in_data),
      .in_last_i   (rb_in_last),
      .out_valid_o (rxp_rvalid[p]),
      .out_ready_i (rxp_rready[p]),
      .out_data_o  (rxp_rdata[p]),
      .out_last_o  (rxp_rlast[p]),
      .usage_o     (rb_usage)
    );

    dysharp_fifo_bank #(
      .NumQ    (NumPorts),
      .Width   (FlitBits),
      .Depth   (XpDepth),
      .HasLast (1'b1)
    ) u_rsp_xp (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .in_valid_i  (sb_in_valid),
      .in_ready_o  (sb_in_ready),
      .in_data_i   (sb_in_data),
      .in_last_i   (sb_in_last),
      .out_valid_o (sxp_rvalid[p]),
      .out_ready_i (sxp_rready[p]),
      .out_data_o  (sxp_rdata[p]),
      .out_last_o  (sxp_rlast[p]),
      .usage_o     (sb_usage)
    );

    // -------------------------------------------------------------------------------------------
    // Egress of port p. Response sources: crosspoints i->p, then the request parser's and the
    // response parser's RSP_ERROR queues, then the reduction unit's result stream.
    logic [NumRspSrc-1:0]          eg_rsp_valid, eg_rsp_ready, eg_rsp_last;
    flit_t [NumRspSrc-1:0]         eg_rsp_data;

    assign eg_rsp_valid = {res_valid[p], rs_err_valid[p], rq_err_valid[p],
                           sxp_rvalid[p]};
    assign eg_rsp_last  = {res_last[p], 1'b1, 1'b1, sxp_rlast[p]};
    assign eg_rsp_data  = {res_data[p], rs_err_data[p], rq_err_data[p], sxp_rdata[p]};
    assign sxp_rready[p]                      = eg_rsp_ready[NumPorts-1:0];
    assign rq_err_ready[p]                    = eg_rsp_ready[NumPorts];
    assign rs_err_ready[p]                    = eg_rsp_ready[NumPorts+1];
    assign res_ready[p]                       = eg_rsp_ready[NumPorts+2];

    dysharp_sw_egress #(
      .NumReqSrc      (NumPorts),
      .NumRspSrc      (NumRspSrc),
      .PortId         (p),
      .ExpertsPerPort (ExpertsPerPort),
      .MaxTargets     (MaxTargets),
      .DynamicOps     (DynamicOps)
    ) u_egress (
      .clk_i              (clk_i),
      .rst_ni             (rst_ni),
      .req_src_valid_i    (rxp_rvalid[p]),
      .req_src_ready_o    (rxp_rready[p]),
      .req_src_data_i     (rxp_rdata[p]),
      .req_src_last_i     (rxp_rlast[p]),
      .rsp_src_valid_i    (eg_rsp_valid),
      .rsp_src_ready_o    (eg_rsp_ready),
      .rsp_src_data_i     (eg_rsp_data),
      .rsp_src_last_i     (eg_rsp_last),
      .req_out_valid_o    (req_out_valid_o[p]),
      .req_out_ready_i    (req_out_ready_i[p]),
      .req_out_data_o     (req_out_data_o[p]),
      .req_out_last_o     (req_out_last_o[p]),
      .rsp_out_valid_o    (rsp_out_valid_o[p]),
      .rsp_out_ready_i    (rsp_out_ready_i[p]),
      .rsp_out_data_o     (rsp_out_data_o[p]),
      .rsp_out_last_o     (rsp_out_last_o[p]),
      .dn_flits_o         (dn_flits_o[p]),
      .dn_payload_flits_o (dn_payload_flits_o[p])
    );

    // -------------------------------------------------------------------------------------------
    // Uplink and error counters of port p.
    logic [31:0] up_flits_q, up_payload_q;
    logic [31:0] err_q [NumSwErr];

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        up_flits_q   <= '0;
        up_payload_q <= '0;
      end else begin
        if (in_any) begin
          up_flits_q <= up_flits_q + 32'd1;
        end
        up_payload_q <= up_payload_q + 32'(rq_evt_pay) + 32'(rs_evt_pay);
      end
    end

    for (genvar c = 1; c <= NumSwErr; c++) begin : gen_err
      logic [1:0] inc;
      assign inc = 2'(rq_evt_err && (32'(rq_evt_code) == c)) +
                   2'(rs_evt_err && (32'(rs_evt_code) == c)) +
                   2'((c == int'(ErrOpcode)) && orphan[p]);
      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          err_q[c-1] <= '0;
        end else begin
          err_q[c-1] <= err_q[c-1] + 32'(inc);
        end
      end
      assign err_count_o[p][c-1] = err_q[c-1];
    end
    for (genvar c = NumSwErr + 1; c <= NumErrCodes; c++) begin : gen_err_hi
      if (c >= FirstHubErrCode && c <= LastHubErrCode) begin : gen_hub
        assign err_count_o[p][c-1] = '0;   // counted by the hubs
      end else begin : gen_tmo
        // ERR_TIMEOUT: each requester's result engine times out at most one entry per cycle,
        // each naming one port.
        logic [31:0] tmo_q;
        logic [$clog2(NumPorts+1)-1:0] inc;
        always_comb begin
          inc = '0;
          for (int unsigned q = 0; q < NumPorts; q++) begin
            inc = inc + $bits(inc)'(red_tmo[q] && (32'(red_port[q]) == p));
          end
        end
        always_ff @(posedge clk_i or negedge rst_ni) begin
          if (!rst_ni) begin
            tmo_q <= '0;
          end else begin
            tmo_q <= tmo_q + 32'(inc);
          end
        end
        assign err_count_o[p][c-1] = tmo_q;
        `DYSHARP_ASSERT_INIT(a_switch_codes, c == int'(ErrTimeout),
          "a switch error code above the hubs' other than ERR_TIMEOUT")
      end
    end

    assign up_flits_o[p]         = up_flits_q;
    assign up_payload_flits_o[p] = up_payload_q;

`ifndef SYNTHESIS
    // At most one uplink flit per cycle, and every accepted flit is counted (history registers,
    // rtl/dysharp_assert.svh). The output streams are checked inside dysharp_sw_egress.
    logic [31:0] chk_up_q;
    logic [1:0]  chk_end_q;   // a frame of class c ended in the previous cycle
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        chk_up_q  <= '0;
        chk_end_q <= '0;
      end else begin
        chk_up_q  <= chk_up_q + 32'(req_in_valid_i[p] && req_in_ready_o[p]) +
                     32'(rsp_in_valid_i[p] && rsp_in_ready_o[p]);
        chk_end_q <= {in_gnt[1] && rsp_in_last_i[p], in_gnt[0] && req_in_last_i[p]};
      end
    end
    // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh).
    always_ff @(posedge clk_i) begin
      if (rst_ni) begin
        `DYSHARP_ASSERT_I(a_in_one, !(req_in_valid_i[p] && req_in_ready_o[p] && rsp_in_valid_i[p] &&
          rsp_in_ready_o[p]),
          $sformatf("port %0d: two uplink flits in a cycle", p))
        `DYSHARP_ASSERT_I(a_up_flits, up_flits_q == chk_up_q,
          $sformatf("port %0d: the uplink counter is not the handshake count", p))
        // Payload flits are only counted for frames that ended in the previous cycle (the
        // parsers' check stage).
        `DYSHARP_ASSERT_I(a_up_payload, (rq_evt_pay == '0 || chk_end_q[0]) &&
          (rs_evt_pay == '0 || chk_end_q[1]),
          $sformatf("port %0d: payload counted for no frame that ended", p))
      end
    end
    // Functional coverage (docs/verification.md): each error code at each place it is detected.
    `DYSHARP_COVER(c_req_err_hcc, rq_evt_err && (rq_evt_code == ErrHcc))
    `DYSHARP_COVER(c_req_err_opcode, rq_evt_err && (rq_evt_code == ErrOpcode))
    `DYSHARP_COVER(c_req_err_length, rq_evt_err && (rq_evt_code == ErrLength))
    `DYSHARP_COVER(c_req_err_tcount, rq_evt_err && (rq_evt_code == ErrTcount))
    `DYSHARP_COVER(c_req_err_frame, rq_evt_err && (rq_evt_code == ErrFrame))
    `DYSHARP_COVER(c_req_err_format, rq_evt_err && (rq_evt_code == ErrFormat))
    `DYSHARP_COVER(c_req_err_align, rq_evt_err && (rq_evt_code == ErrAlign))
    `DYSHARP_COVER(c_req_err_route, rq_evt_err && (rq_evt_code == ErrRoute))
    `DYSHARP_COVER(c_req_err_expert, rq_evt_err && (rq_evt_code == ErrExpert))
    `DYSHARP_COVER(c_req_err_dup, rq_evt_err && (rq_evt_code == ErrDup))
    `DYSHARP_COVER(c_rsp_err_hcc, rs_evt_err && (rs_evt_code == ErrHcc))
    `DYSHARP_COVER(c_rsp_err_opcode, rs_evt_err && (rs_evt_code == ErrOpcode))
    `DYSHARP_COVER(c_rsp_err_length, rs_evt_err && (rs_evt_code == ErrLength))
    `DYSHARP_COVER(c_rsp_err_tcount, rs_evt_err && (rs_evt_code == ErrTcount))
    `DYSHARP_COVER(c_rsp_err_frame, rs_evt_err && (rs_evt_code == ErrFrame))
    `DYSHARP_COVER(c_rsp_err_format, rs_evt_err && (rs_evt_code == ErrFormat))
    `DYSHARP_COVER(c_rsp_err_align, rs_evt_err && (rs_evt_code == ErrAlign))
    `DYSHARP_COVER(c_rsp_err_route, rs_evt_err && (rs_evt_code == ErrRoute))
    `DYSHARP_COVER(c_orphan, orphan[p])
    `DYSHARP_COVER(c_timeout, red_tmo[p])
    `DYSHARP_COVER(c_quarantine_end, red_expire_o[p])
`endif
  end

  // -----------------------------------------------------------------------------------------------
  dysharp_reduce_unit #(
    .NumPorts   (NumPorts),
    .RedEntries (RedEntries),
    .RedTimeout (RedTimeout),
    .FpStages   (RedFpStages),
    .Units      (RedUnits)
  ) u_reduce (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .alloc_valid_i (alloc_req),
    .alloc_ready_o (alloc_ready),
    .alloc_hdr_i   (alloc_hdr),
    .alloc_ports_i (alloc_ports),
    .part_valid_i  (part_valid),
    .part_ready_o  (part_ready),
    .part_data_i   (part_data),
    .part_last_i   (part_last),
    .res_valid_o   (res_valid),
    .res_ready_i   (res_ready),
    .res_data_o    (res_data),
    .res_last_o    (res_last),
    .orphan_o      (orphan),
    .take_o        (red_take_o),
    .tmo_o         (red_tmo),
    .expire_o      (red_expire_o),
    .evt_tag_o     (red_tag),
    .evt_port_o    (red_port)
  );
  assign red_timeout_o  = red_tmo;
  assign red_evt_tag_o  = red_tag;
  assign red_evt_port_o = red_port;

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_num_ports, NumPorts >= 1 && NumPorts <= 32, "NumPorts must be in 1..32")
  `DYSHARP_ASSERT_INIT(a_num_experts, NumPorts * ExpertsPerPort <= 65535,
    "NumPorts * ExpertsPerPort must be at most 65535")
  // Reset while the switch offers a flit on an output (packets in flight are lost by design).
  // (Never disabled: the point is the edge into reset.)
  `DYSHARP_COVER(c_reset_in_flight, $fell(rst_ni) && $past(|{req_out_valid_o, rsp_out_valid_o}),
    clk_i, 1'b1)

`endif

endmodule
