// dysharp_reduce_unit: the switch's load-reduce table (docs/spec.md §5.3, §5.5, §5.6, §6, §9;
// docs/architecture.md "Reduction unit" and "Storage map"; golden model: `Switch::partial`).
//
// One entry per outstanding MC_LD_REDUCE / DYN_LD_REDUCE, keyed by (requester, tag). The table is
// split into one share per requester port (RedEntries / NumPorts entries each): requester q's
// ld_reduces allocate only in share q, through q's own allocation port, so one requester that
// fills its share stalls only itself (spec §5.3), and every port can allocate in the same cycle.
//
// Structure: one dysharp_reduce_share per requester q (share q's keys, its allocation port, its
// banks, its info RAM and its result engine) and one dysharp_reduce_rx per port p (the receiver
// of port p's partials), so that synthesis does one of each once (docs/area.md); here only the
// epoch counter of the bounded wait and the wiring between them.
//
// Storage (every array of 1 KB or more is a dysharp_ram_1r1w, the shape of an SRAM macro):
//   bank[q][p]  the partials that port p returned to requester q: Share x MaxLen flits. Written
//               only by port p's receiver, read only by requester q's result engine, so each bank
//               has one write and one (registered) read port.
//   info[q]     the request fields of share q's entries that only the result needs (maddr, stage,
//               dtype, rop, acc): written at allocation, read when the result starts.
// In flip-flops, per entry: the match keys (valid, tag, expected / answered / failed ports) and len
// (the partial-length check). No logic compares entries with each other: allocation takes the
// lowest free entry of a share, a partial searches only the share its `route` names, and the
// result engine picks among the share's completed entries round robin (the order in which one
// requester's results leave is not architectural: spec §5.3).
//
// Receive (port p, one flit per cycle, never stalls): a partial's flit0 is matched by (route, tag)
// against share `route`; the port must be expected and not have answered yet, otherwise the
// partial is an orphan: consumed, dropped, orphan_o[p] pulses once (one cycle after its flit0).
// A matched partial with ecode != 0, or with ecode == 0 and a `len` other than the request's
// (ERR_LENGTH, spec §5.6), is a failed partial: the code is stored in slot 0 of its bank and its
// payload (if any) is discarded. Otherwise the payload flits are stored in slots 0..len-1.
//
// Result engine (requester q, one flit per cycle): when every expected port has answered, the
// entry may be picked. Pick and the read of flit0's data happen in one cycle (stage I), the
// banks' and the info RAM's registered outputs are combined in the next (stage C: flit0, and the
// first cycle of a dysharp_reduce_acc's chain for a payload flit), and the flit is pushed to a
// small output FIFO AccStages - 1 cycles later (AccStages - 1 = fp_red_latency(NumPorts,
// FpStages): FpStages pipeline stages per flit step). The reductions are a pool of
// Units dysharp_reduce_acc shared by the engines (dysharp_reduce_pool): an engine reads a payload
// flit only in a cycle in which the pool grants it a unit (up to Units engines per cycle, round
// robin). flit0 is RSP_ERROR with the code
// of the lowest-numbered failed port if any
// port failed (no payload), else RSP_REDUCE followed by len payload flits, each the reduction of the
// expected ports' stored flits in ASCENDING PORT ORDER (fp_acc_init / fp_acc_step / fp_acc_finish of
// dysharp_fp_pkg), so the result does not depend on the order the partials arrived in (§9). The
// entry is freed when its last flit is issued.
//
// Bounded wait (spec §5.3, RedTimeout cycles; 0 = off): a global epoch counter ticks every
// ceil(RedTimeout/2) cycles and every live entry keeps a 2-bit age (cleared at allocation,
// saturating at 3), so an entry is *old* between RedTimeout and 3*ceil(RedTimeout/2)+1 cycles
// after it was allocated. An old entry that still misses a partial (and has none half received)
// is picked by its result engine like a completed one and answered with one RSP_ERROR flit,
// ERR_TIMEOUT, src_port the lowest port that has not answered (tmo_o / evt_port_o: the switch
// counts it there). It then stays in the table as a quarantined ("zombie") entry: still valid,
// so a new ld_reduce with the same (requester, tag) waits (alloc dup check), and a late partial
// from a port that had not answered still matches it and is consumed (payload discarded, no
// count). Its age restarts; the engine frees it when every expected port has answered or when
// it is old again (expire_o: a partial that arrives afterwards is an orphan). A flit0 that
// arrives in the very cycle its entry is freed is an orphan too (the free wins). An entry is
// never freed while a port is inside one of its partials.

`include "dysharp_assert.svh"

module dysharp_reduce_unit
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned NumPorts   = 8,
  parameter int unsigned RedEntries = 256, // 32 per requester at 8 ports: 64 KB of partials per port
  parameter int unsigned RedTimeout = 65536, // cycles a partial may be missing (0 = wait for ever)
  parameter int unsigned FpStages   = 10,   // pipeline stages of one flit step of a reduction
  parameter int unsigned Units      = (NumPorts + 3) / 4  // flit reductions shared by the engines
) (
  input  logic                                clk_i,
  input  logic                                rst_ni,
  // Allocation, one port per requester (from that port's request forwarder, before the replicas
  // leave). alloc_hdr_i[q].src_port must be q. alloc_ready_o[q] is meaningful with
  // alloc_valid_i[q] only (the entry search runs for a request; 0 otherwise).
  input  logic [NumPorts-1:0]                 alloc_valid_i,
  output logic [NumPorts-1:0]                 alloc_ready_o,
  input  flit_t [NumPorts-1:0]                alloc_hdr_i,
  input  logic [NumPorts-1:0][NumPorts-1:0]   alloc_ports_i,
  // RSP_PARTIAL packets from port p's hub (already checked by the parser).
  input  logic [NumPorts-1:0]                 part_valid_i,
  output logic [NumPorts-1:0]                 part_ready_o,
  input  flit_t [NumPorts-1:0]                part_data_i,
  input  logic [NumPorts-1:0]                 part_last_i,
  // Results (RSP_REDUCE / RSP_ERROR) for requester q on stream q.
  output logic [NumPorts-1:0]                 res_valid_o,
  input  logic [NumPorts-1:0]                 res_ready_i,
  output flit_t [NumPorts-1:0]                res_data_o,
  output logic [NumPorts-1:0]                 res_last_o,
  // One-cycle pulse per dropped (orphan) partial on port p.
  output logic [NumPorts-1:0]                 orphan_o,
  // Events (same cycle, combinational): take_o[p] the flit0 of a partial from port p is taken;
  // tmo_o[q] an entry of requester q times out; expire_o[q] a quarantined entry of requester q is
  // freed before every port answered. evt_tag_o[q] / evt_port_o[q]: that entry's tag and the
  // lowest port that has not answered.
  output logic [NumPorts-1:0]                 take_o,
  output logic [NumPorts-1:0]                 tmo_o,
  output logic [NumPorts-1:0]                 expire_o,
  output logic [NumPorts-1:0][TagWidth-1:0]   evt_tag_o,
  output logic [NumPorts-1:0][SrcPortWidth-1:0] evt_port_o
);

  // A payload flit's reduced flit leaves the pool AccStages - 1 cycles after its stage C.
  localparam int unsigned AccStages = fp_red_latency(NumPorts, FpStages) + 1;

  localparam int unsigned Share    = RedEntries / NumPorts;          // entries per requester
  localparam int unsigned IdxW     = (Share > 1) ? $clog2(Share) : 1;
  localparam int unsigned PortW    = (NumPorts > 1) ? $clog2(NumPorts) : 1;
  localparam int unsigned AddrW    = (Share * MaxLen > 1) ? $clog2(Share * MaxLen) : 1;
  localparam bit          TmoOn    = RedTimeout != 0;
  localparam int unsigned EpochLen = TmoOn ? (RedTimeout + 1) / 2 : 1;   // cycles per age tick
  localparam int unsigned EpochW   = (EpochLen > 1) ? $clog2(EpochLen) : 1;

  logic tick;   // the epoch ends this cycle

  // The shares' keys (for the receivers; of expected / answered, port p's receiver sees bit p).
  logic [NumPorts-1:0][Share-1:0]                valid;
  logic [NumPorts-1:0][Share-1:0][TagWidth-1:0]  tag;
  logic [NumPorts-1:0][Share-1:0][LenWidth-1:0]  len;
  logic [NumPorts-1:0][Share-1:0][NumPorts-1:0]  exp, got;
  logic [NumPorts-1:0]                           free_v;
  logic [NumPorts-1:0][IdxW-1:0]                 free_idx;

  // The receivers' bank writes and key updates.
  logic [NumPorts-1:0]                           bw_v;
  logic [NumPorts-1:0][PortW-1:0]                bw_q;
  logic [NumPorts-1:0][AddrW-1:0]                bw_addr;
  flit_t [NumPorts-1:0]                          bw_data;
  logic [NumPorts-1:0]                           rx_got_v, rx_err_v, rx_inside;
  logic [NumPorts-1:0][PortW-1:0]                rx_share;
  logic [NumPorts-1:0][IdxW-1:0]                 rx_idx;
  logic [NumPorts-1:0][PortW-1:0]                rx_in_share;
  logic [NumPorts-1:0][IdxW-1:0]                 rx_in_idx;

  // The result engines and the pool of flit reductions they share.
  logic [NumPorts-1:0]                           acc_req, acc_gnt, acc_v, acc_acc;
  logic [NumPorts-1:0][1:0]                      acc_dtype, acc_rop;
  logic [NumPorts-1:0][NumPorts-1:0]             acc_exp;
  flit_t [NumPorts-1:0][NumPorts-1:0]            acc_data;
  flit_t [NumPorts-1:0]                          acc_payload;

  assign part_ready_o = '1;    // every port owns its banks: never a reason to stall

  ///////////////////////////////
  // Partial receive (per port) //
  ///////////////////////////////

  for (genvar p = 0; p < NumPorts; p++) begin : g_rx
    // Port p's column of the expected / answered masks.
    logic [NumPorts-1:0][Share-1:0] exp_p, got_p;
    always_comb begin
      for (int unsigned q = 0; q < NumPorts; q++) begin
        for (int unsigned e = 0; e < Share; e++) begin
          exp_p[q][e] = exp[q][e][p];
          got_p[q][e] = got[q][e][p];
        end
      end
    end

    dysharp_reduce_rx #(
      .NumPorts   (NumPorts),
      .RedEntries (RedEntries)
    ) u_rx (
      .clk_i        (clk_i),
      .rst_ni       (rst_ni),
      .p_i          (PortW'(p)),
      .part_valid_i (part_valid_i[p]),
      .part_data_i  (part_data_i[p]),
      .part_last_i  (part_last_i[p]),
      .valid_i      (valid),
      .tag_i        (tag),
      .len_i        (len),
      .exp_i        (exp_p),
      .got_i        (got_p),
      .free_v_i     (free_v),
      .free_idx_i   (free_idx),
      .bw_v_o       (bw_v[p]),
      .bw_q_o       (bw_q[p]),
      .bw_addr_o    (bw_addr[p]),
      .bw_data_o    (bw_data[p]),
      .got_v_o      (rx_got_v[p]),
      .err_v_o      (rx_err_v[p]),
      .share_o      (rx_share[p]),
      .idx_o        (rx_idx[p]),
      .inside_o     (rx_inside[p]),
      .in_share_o   (rx_in_share[p]),
      .in_idx_o     (rx_in_idx[p]),
      .orphan_o     (orphan_o[p]),
      .take_o       (take_o[p])
    );
  end

  // The epoch counter of the bounded wait.
  if (TmoOn) begin : g_epoch
    logic [EpochW-1:0] ep_q;
    assign tick = ep_q == EpochW'(EpochLen - 1);
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        ep_q <= '0;
      end else begin
        ep_q <= tick ? '0 : ep_q + EpochW'(1);
      end
    end
  end else begin : g_no_epoch
    assign tick = 1'b0;
  end

  /////////////////////////////////////////////
  // Shares and result engines (per requester) //
  /////////////////////////////////////////////

  for (genvar q = 0; q < NumPorts; q++) begin : g_share
    dysharp_reduce_share #(
      .NumPorts   (NumPorts),
      .RedEntries (RedEntries),
      .RedTimeout (RedTimeout),
      .AccStages  (AccStages)
    ) u_share (
      .clk_i         (clk_i),
      .rst_ni        (rst_ni),
      .q_i           (PortW'(q)),
      .tick_i        (tick),
      .alloc_valid_i (alloc_valid_i[q]),
      .alloc_ready_o (alloc_ready_o[q]),
      .alloc_hdr_i   (alloc_hdr_i[q]),
      .alloc_ports_i (alloc_ports_i[q]),
      .rx_got_v_i    (rx_got_v),
      .rx_err_v_i    (rx_err_v),
      .rx_share_i    (rx_share),
      .rx_idx_i      (rx_idx),
      .rx_inside_i   (rx_inside),
      .rx_in_share_i (rx_in_share),
      .rx_in_idx_i   (rx_in_idx),
      .bw_v_i        (bw_v),
      .bw_q_i        (bw_q),
      .bw_addr_i     (bw_addr),
      .bw_data_i     (bw_data),
      .valid_o       (valid[q]),
      .tag_o         (tag[q]),
      .len_o         (len[q]),
      .exp_o         (exp[q]),
      .got_o         (got[q]),
      .free_v_o      (free_v[q]),
      .free_idx_o    (free_idx[q]),
      .acc_req_o     (acc_req[q]),
      .acc_gnt_i     (acc_gnt[q]),
      .acc_v_o       (acc_v[q]),
      .acc_dtype_o   (acc_dtype[q]),
      .acc_rop_o     (acc_rop[q]),
      .acc_acc_o     (acc_acc[q]),
      .acc_exp_o     (acc_exp[q]),
      .acc_data_o    (acc_data[q]),
      .acc_payload_i (acc_payload[q]),
      .res_valid_o   (res_valid_o[q]),
      .res_ready_i   (res_ready_i[q]),
      .res_data_o    (res_data_o[q]),
      .res_last_o    (res_last_o[q]),
      .tmo_o         (tmo_o[q]),
      .expire_o      (expire_o[q]),
      .evt_tag_o     (evt_tag_o[q]),
      .evt_port_o    (evt_port_o[q])
    );
  end

  dysharp_reduce_pool #(
    .NumPorts  (NumPorts),
    .Units     (Units),
    .FpStages  (FpStages)
  ) u_pool (
    .clk_i     (clk_i),
    .rst_ni    (rst_ni),
    .req_i     (acc_req),
    .gnt_o     (acc_gnt),
    .v_i       (acc_v),
    .dtype_i   (acc_dtype),
    .rop_i     (acc_rop),
    .acc_i     (acc_acc),
    .exp_i     (acc_exp),
    .data_i    (acc_data),
    .payload_o (acc_payload)
  );

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_entries, NumPorts >= 1 && RedEntries % NumPorts == 0 && RedEntries >= NumPorts,
    "RedEntries must be a non-zero multiple of NumPorts")
  `DYSHARP_ASSERT_INIT(a_timeout, RedTimeout != 1, "RedTimeout must be 0 (off) or at least 2")
`endif

endmodule
