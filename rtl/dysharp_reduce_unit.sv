// dysharp_reduce_unit: the switch's load-reduce table (docs/spec.md §5.3, §5.5, §5.6, §6, §9;
// docs/architecture.md "Reduction unit" and "Storage map"; golden model: `Switch::partial`).
//
// One entry per outstanding MC_LD_REDUCE / DYN_LD_REDUCE, keyed by (requester, tag). The table is
// split into one share per requester port (RedEntries / NumPorts entries each): requester q's
// ld_reduces allocate only in share q, through q's own allocation port, so one requester that
// fills its share stalls only itself (spec §5.3), and every port can allocate in the same cycle.
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
// first of the AccStages pipeline stages of dysharp_reduce_acc for a payload flit), and the flit
// is pushed to a small output FIFO AccStages - 1 cycles later. flit0 is RSP_ERROR with the code
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

module dysharp_reduce_unit
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned NumPorts   = 8,
  parameter int unsigned RedEntries = 256, // 32 per requester at 8 ports: 64 KB of partials per port
  parameter int unsigned RedTimeout = 65536, // cycles a partial may be missing (0 = wait for ever)
  parameter int unsigned AccStages  = 2     // pipeline stages of a payload flit's reduction
) (
  input  logic                                clk_i,
  // The SVA's `disable iff (!rst_ni)` makes Verilator see the async reset also used
  // synchronously; that use is verification-only.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                                rst_ni,
  /* verilator lint_on SYNCASYNCNET */
  // Allocation, one port per requester (from that port's request forwarder, before the replicas
  // leave). alloc_hdr_i[q].src_port must be q.
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

  localparam int unsigned Share  = RedEntries / NumPorts;          // entries per requester
  localparam int unsigned IdxW   = (Share > 1) ? $clog2(Share) : 1;
  localparam int unsigned PortW  = (NumPorts > 1) ? $clog2(NumPorts) : 1;
  localparam int unsigned SlotW  = $clog2(MaxLen);                 // payload flit index
  localparam int unsigned CntW   = $clog2(MaxLen + 1);             // 0..MaxLen
  localparam int unsigned Depth  = Share * MaxLen;                 // flits per bank
  localparam int unsigned AddrW  = (Depth > 1) ? $clog2(Depth) : 1;
  localparam int unsigned InfoD  = (Share > 1) ? Share : 2;        // the RAM needs two words
  localparam int unsigned InfoAW = (InfoD > 1) ? $clog2(InfoD) : 1;
  localparam int unsigned OutD   = 3 + AccStages;                  // output FIFO (flits)
  localparam bit          TmoOn  = RedTimeout != 0;
  localparam int unsigned EpochLen = TmoOn ? (RedTimeout + 1) / 2 : 1;   // cycles per age tick
  localparam int unsigned EpochW = (EpochLen > 1) ? $clog2(EpochLen) : 1;

  typedef logic [IdxW-1:0]     idx_t;
  typedef logic [AddrW-1:0]    addr_t;
  typedef logic [NumPorts-1:0] pmask_t;

  // The request fields kept in the info RAM.
  typedef struct packed {
    logic [MaddrWidth-1:0] maddr;
    logic [DtypeWidth-1:0] dtype;
    logic [RopWidth-1:0]   rop;
    logic                  acc;
    logic                  stage;
  } info_t;

  // Storage address of payload flit `slot` of entry `e` in a bank.
  function automatic addr_t addr_f(input idx_t e, input logic [SlotW-1:0] slot);
    return addr_t'(e) * addr_t'(MaxLen) + addr_t'(slot);
  endfunction

  // Lowest set bit of a port mask (0 if none).
  function automatic logic [PortW-1:0] lowest_f(input pmask_t m);
    logic [PortW-1:0] r;
    r = '0;
    for (int unsigned p = NumPorts; p > 0; p--) begin
      if (m[p-1]) begin
        r = PortW'(p - 1);
      end
    end
    return r;
  endfunction

  //////////////////////////////////
  // Entry keys (flip-flops)      //
  //////////////////////////////////

  logic [Share-1:0]      valid_q [NumPorts];
  logic [TagWidth-1:0]   tag_q   [NumPorts][Share];
  logic [LenWidth-1:0]   len_q   [NumPorts][Share];
  pmask_t                exp_q   [NumPorts][Share];   // ports expected to answer
  pmask_t                got_q   [NumPorts][Share];   // ports that have answered
  pmask_t                err_q   [NumPorts][Share];   // ports whose partial failed
  logic [1:0]            age_q   [NumPorts][Share];   // epochs since allocation (saturating)
  logic [Share-1:0]      zomb_q  [NumPorts];          // timed out, quarantined
  logic                  tick;                        // the epoch ends this cycle

  // Per-cycle events that change the keys (applied in the state update below).
  logic [NumPorts-1:0]   alloc_fire;
  idx_t                  alloc_idx  [NumPorts];
  logic [NumPorts-1:0]   free_v;                       // engine q frees an entry this cycle
  idx_t                  free_idx   [NumPorts];
  logic [NumPorts-1:0]   tmo_v;                        // engine q times an entry out
  logic [NumPorts-1:0]   rx_got_v;                     // port p's partial is complete
  logic [NumPorts-1:0]   rx_err_v;                     // port p's partial failed (at its flit0)
  logic [PortW-1:0]      rx_set_share [NumPorts];        // ... for this share
  idx_t                  rx_set_idx   [NumPorts];        // ... and entry

  ///////////////////
  // Allocation    //
  ///////////////////

  info_t                 alloc_info [NumPorts];
  hdr_t                  alloc_hdr  [NumPorts];

  for (genvar q = 0; q < NumPorts; q++) begin : g_alloc
    hdr_t       hdr;
    logic       has_free;
    logic       dup;
    assign hdr          = hdr_t'(alloc_hdr_i[q]);
    assign alloc_hdr[q] = hdr;

    always_comb begin
      has_free     = 1'b0;
      alloc_idx[q] = '0;
      dup          = 1'b0;
      for (int unsigned e = Share; e > 0; e--) begin   // lowest free entry wins
        if (!valid_q[q][e-1]) begin
          has_free     = 1'b1;
          alloc_idx[q] = idx_t'(e - 1);
        end
      end
      for (int unsigned e = 0; e < Share; e++) begin
        if (valid_q[q][e] && (tag_q[q][e] == hdr.tag)) begin
          dup = 1'b1;
        end
      end
    end

    // A second ld_reduce with a pending (requester, tag) waits for the first (spec §5.3).
    assign alloc_ready_o[q] = has_free && !dup;
    assign alloc_fire[q]    = alloc_valid_i[q] && alloc_ready_o[q];
`ifndef SYNTHESIS
    // Functional coverage (docs/verification.md): a full share, a same-tag wait, and every
    // ld_reduce op x dtype x reduce op x accumulation that allocates an entry.
    c_share_full: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_valid_i[q] && !has_free);
    c_same_tag_wait: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_valid_i[q] && has_free && dup);
    c_mc_bf16_add_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopAdd) && (hdr.acc == AccF32));
    c_mc_bf16_add_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopAdd) && (hdr.acc == AccNative));
    c_mc_bf16_min_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMin) && (hdr.acc == AccF32));
    c_mc_bf16_min_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMin) && (hdr.acc == AccNative));
    c_mc_bf16_max_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMax) && (hdr.acc == AccF32));
    c_mc_bf16_max_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMax) && (hdr.acc == AccNative));
    c_mc_f16_add_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopAdd) && (hdr.acc == AccF32));
    c_mc_f16_add_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopAdd) && (hdr.acc == AccNative));
    c_mc_f16_min_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMin) && (hdr.acc == AccF32));
    c_mc_f16_min_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMin) && (hdr.acc == AccNative));
    c_mc_f16_max_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMax) && (hdr.acc == AccF32));
    c_mc_f16_max_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMax) && (hdr.acc == AccNative));
    c_mc_f32_add_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopAdd) && (hdr.acc == AccF32));
    c_mc_f32_add_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopAdd) && (hdr.acc == AccNative));
    c_mc_f32_min_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMin) && (hdr.acc == AccF32));
    c_mc_f32_min_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMin) && (hdr.acc == AccNative));
    c_mc_f32_max_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMax) && (hdr.acc == AccF32));
    c_mc_f32_max_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpMcLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMax) && (hdr.acc == AccNative));
    c_dyn_bf16_add_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopAdd) && (hdr.acc == AccF32));
    c_dyn_bf16_add_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopAdd) && (hdr.acc == AccNative));
    c_dyn_bf16_min_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMin) && (hdr.acc == AccF32));
    c_dyn_bf16_min_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMin) && (hdr.acc == AccNative));
    c_dyn_bf16_max_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMax) && (hdr.acc == AccF32));
    c_dyn_bf16_max_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtBf16) && (hdr.rop == RopMax) && (hdr.acc == AccNative));
    c_dyn_f16_add_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopAdd) && (hdr.acc == AccF32));
    c_dyn_f16_add_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopAdd) && (hdr.acc == AccNative));
    c_dyn_f16_min_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMin) && (hdr.acc == AccF32));
    c_dyn_f16_min_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMin) && (hdr.acc == AccNative));
    c_dyn_f16_max_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMax) && (hdr.acc == AccF32));
    c_dyn_f16_max_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF16) && (hdr.rop == RopMax) && (hdr.acc == AccNative));
    c_dyn_f32_add_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopAdd) && (hdr.acc == AccF32));
    c_dyn_f32_add_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopAdd) && (hdr.acc == AccNative));
    c_dyn_f32_min_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMin) && (hdr.acc == AccF32));
    c_dyn_f32_min_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMin) && (hdr.acc == AccNative));
    c_dyn_f32_max_accf32: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMax) && (hdr.acc == AccF32));
    c_dyn_f32_max_accnative: cover property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire[q] &&
      (hdr.opcode == OpDynLdReduce) && (hdr.dtype == DtF32) && (hdr.rop == RopMax) && (hdr.acc == AccNative));
`endif

    always_comb begin
      alloc_info[q].maddr = hdr.maddr;
      alloc_info[q].dtype = hdr.dtype;
      alloc_info[q].rop   = hdr.rop;
      alloc_info[q].acc   = hdr.acc;
      alloc_info[q].stage = hdr.stage;
    end

    // Header fields of the allocation request the table does not keep.
    logic unused_hdr;
    assign unused_hdr = ^{hdr.hcc, hdr.rsvd, hdr.ecode, hdr.route, hdr.tcount, hdr.opcode,
                          hdr.src_port};
  end

  ///////////////////////////////
  // Partial receive (per port) //
  ///////////////////////////////

  // Bank write request of port p (it writes at most one bank per cycle).
  logic [NumPorts-1:0]   bw_v;
  logic [PortW-1:0]      bw_q    [NumPorts];
  addr_t                 bw_addr [NumPorts];
  flit_t                 bw_data [NumPorts];

  logic [NumPorts-1:0]   rx_busy_q;                   // inside a packet (flit0 already taken)
  logic [NumPorts-1:0]   rx_hit_q;                    // the current packet matched an entry
  logic [NumPorts-1:0]   rx_store_q;                  // ... and its payload is stored
  logic [PortW-1:0]      rx_q_q    [NumPorts];        // its share (requester)
  idx_t                  rx_i_q    [NumPorts];        // its entry
  logic [CntW-1:0]       rx_slot_q [NumPorts];        // next payload slot
  logic [NumPorts-1:0]   orphan_q;

  logic [NumPorts-1:0]   rx_fire;
  logic [NumPorts-1:0]   rx_first;
  logic [NumPorts-1:0]   rx_cand;                      // flit0 matches a live entry's keys
  logic [NumPorts-1:0]   rx_match;                     // ... that is not freed this cycle
  idx_t                  rx_match_i [NumPorts];
  logic [NumPorts-1:0]   rx_fail;                      // ... and the partial failed

  assign part_ready_o = '1;    // every port owns its banks: never a reason to stall

  for (genvar p = 0; p < NumPorts; p++) begin : g_rx
    hdr_t             ph;
    logic [PortW-1:0] rq;                              // the share `route` names
    logic             route_ok;
    flit_t            err_word;

    assign ph          = hdr_t'(part_data_i[p]);
    // Only route, tag, len and ecode of a partial's flit0 matter here; the rest is checked by
    // the parser or carried in the stored word.
    logic unused_ph;
    assign unused_ph = ^ph;
    assign route_ok    = 32'(ph.route) < NumPorts;
    assign rq          = PortW'(ph.route);
    assign rx_fire[p]  = part_valid_i[p] && part_ready_o[p];
    assign rx_first[p] = !rx_busy_q[p];

    // Match (route, tag) in share `route`: the port must be expected and not have answered yet
    // (golden model: otherwise the partial is an orphan).
    always_comb begin
      rx_cand[p]    = 1'b0;
      rx_match_i[p] = '0;
      if (route_ok) begin
        for (int unsigned e = 0; e < Share; e++) begin
          if (valid_q[rq][e] && (tag_q[rq][e] == ph.tag) && exp_q[rq][e][p] &&
              !got_q[rq][e][p]) begin
            rx_cand[p]    = 1'b1;
            rx_match_i[p] = idx_t'(e);
          end
        end
      end
      // An entry freed this cycle (a quarantine that expires) no longer takes partials.
      rx_match[p] = rx_cand[p] && !(route_ok && free_v[rq] && (free_idx[rq] == rx_match_i[p]));
      rx_fail[p] = (ph.ecode != '0) || (ph.len != len_q[rq][rx_match_i[p]]);
    end

    // The word stored in slot 0 of a failed partial: its flit0 with the failure code.
    always_comb begin
      err_word = part_data_i[p];
      if (ph.ecode == '0) begin
        err_word[EcodeLsb +: EcodeWidth] = EcodeWidth'(ErrLength);
      end
    end

    always_comb begin
      bw_v[p]    = 1'b0;
      bw_q[p]    = rx_q_q[p];
      bw_addr[p] = addr_f(rx_i_q[p], rx_slot_q[p][SlotW-1:0]);
      bw_data[p] = part_data_i[p];
      if (rx_fire[p] && rx_first[p]) begin
        bw_v[p]    = rx_match[p] && rx_fail[p];
        bw_q[p]    = rq;
        bw_addr[p] = addr_f(rx_match_i[p], '0);
        bw_data[p] = err_word;
      end else if (rx_fire[p] && rx_store_q[p] && (rx_slot_q[p] < CntW'(MaxLen))) begin
        bw_v[p] = 1'b1;
      end
    end

    // Key updates: `failed` at a matched failed flit0, `answered` at the partial's last flit.
    always_comb begin
      rx_err_v[p] = rx_fire[p] && rx_first[p] && rx_match[p] && rx_fail[p];
      rx_got_v[p] = rx_fire[p] && part_last_i[p] &&
                    (rx_first[p] ? rx_match[p] : rx_hit_q[p]);
      rx_set_share[p] = rx_first[p] ? rq : rx_q_q[p];
      rx_set_idx[p]   = rx_first[p] ? rx_match_i[p] : rx_i_q[p];
    end

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        rx_busy_q[p]  <= 1'b0;
        rx_hit_q[p]   <= 1'b0;
        rx_store_q[p] <= 1'b0;
        rx_q_q[p]     <= '0;
        rx_i_q[p]     <= '0;
        rx_slot_q[p]  <= '0;
        orphan_q[p]   <= 1'b0;
      end else begin
        orphan_q[p] <= rx_fire[p] && rx_first[p] && !rx_match[p];
        if (rx_fire[p]) begin
          rx_busy_q[p] <= !part_last_i[p];
          if (rx_first[p]) begin
            rx_hit_q[p]   <= rx_match[p];
            rx_store_q[p] <= rx_match[p] && !rx_fail[p];
            rx_q_q[p]     <= rq;
            rx_i_q[p]     <= rx_match_i[p];
            rx_slot_q[p]  <= '0;
          end else if (bw_v[p]) begin
            rx_slot_q[p] <= rx_slot_q[p] + CntW'(1);
          end
        end
      end
    end
  end

  assign orphan_o = orphan_q;
  assign take_o   = rx_fire & rx_first;

  // Entries with a partial half received (flit0 taken, last flit not yet): never timed out or
  // freed. A decoder per port of the entry it is inside, so linear in ports x entries.
  logic [Share-1:0] inflight [NumPorts];
  always_comb begin
    for (int unsigned q = 0; q < NumPorts; q++) begin
      inflight[q] = '0;
    end
    for (int unsigned p = 0; p < NumPorts; p++) begin
      if (rx_busy_q[p] && rx_hit_q[p]) begin
        inflight[rx_q_q[p]][rx_i_q[p]] = 1'b1;
      end
    end
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

  ///////////////////////////////////
  // Result engines (per requester) //
  ///////////////////////////////////

  for (genvar q = 0; q < NumPorts; q++) begin : g_eng
    // Completed entries of share q.
    logic [Share-1:0]    rdy;
    logic [Share-1:0]    unused_gnt;
    logic                unused_pick_valid;
    idx_t                pick_i;
    logic                pick_v;

    // Stage I: the entry being issued.
    logic                busy_q;                      // issuing the payload of cur_i_q
    idx_t                cur_i_q, cur_i_d;
    logic [LenWidth-1:0] cur_len_q, cur_len_d;
    pmask_t              cur_exp_q, cur_exp_d;
    logic                cur_err_q, cur_err_d;
    logic                cur_tmo_q, cur_tmo_d;        // a timeout answer
    logic [PortW-1:0]    cur_ep_q, cur_ep_d;          // lowest failed port
    logic [CntW-1:0]     op_q;                        // next payload slot + 1 (busy)
    logic                can_issue, issue, issue_hdr, issue_last, fifo_in_ready;
    logic [SlotW-1:0]    rd_slot;
    idx_t                rd_i;
    logic [$clog2(OutD+1)-1:0] fifo_usage;

    // Stage C: the op whose RAM data is on the banks' outputs. Its flit leaves the reduction
    // pipeline AccStages - 1 cycles later (stage O; flit0, last, valid carried alongside).
    logic                c_v_q, c_hdr_q, c_last_q;
    flit_t [NumPorts-1:0] b_rdata;
    info_t               info_rdata;
    hdr_t                f0;
    flit_t               payload;
    logic                o_v, o_hdr, o_last;
    flit_t               o_f0;
    logic [$clog2(AccStages+1)-1:0] acc_infl;     // ops in stage C and the reduction pipeline

    // Ready: every expected port has answered (a result, or the end of a quarantine), or old
    // with no partial half received (a timeout, or a quarantine that expires).
    always_comb begin
      for (int unsigned e = 0; e < Share; e++) begin
        rdy[e] = valid_q[q][e] && ((got_q[q][e] == exp_q[q][e]) ||
                 (TmoOn && (age_q[q][e] == 2'd3) && !inflight[q][e]));
      end
    end

    // Credits: the ops in stage C and the reduction pipeline and the FIFO's words must leave
    // room for this one.
    assign can_issue = 32'(fifo_usage) + 32'(acc_infl) < OutD;
    assign pick_v    = !busy_q && (|rdy) && can_issue;

    // What the picked entry needs: its result, a timeout answer, or (quarantined) only its free.
    logic   p_done, p_zomb, pick_res, pick_tmo, pick_free;
    pmask_t p_missing;
    assign p_done    = got_q[q][pick_i] == exp_q[q][pick_i];
    assign p_zomb    = zomb_q[q][pick_i];
    assign p_missing = exp_q[q][pick_i] & ~got_q[q][pick_i];
    assign pick_res  = pick_v && !p_zomb && p_done;
    assign pick_tmo  = pick_v && !p_zomb && !p_done;
    assign pick_free = pick_v && p_zomb;
    assign tmo_v[q]  = pick_tmo;

    assign tmo_o[q]      = pick_tmo;
    assign expire_o[q]   = pick_free && !p_done;
    assign evt_tag_o[q]  = tag_q[q][pick_i];
    assign evt_port_o[q] = SrcPortWidth'(lowest_f(p_missing));

    if (Share > 1) begin : g_pick_rr
      dysharp_rr_arb #(
        .N (Share)
      ) u_pick (
        .clk_i   (clk_i),
        .rst_ni  (rst_ni),
        .req_i   (rdy),
        .lock_i  (1'b0),
        .ack_i   (pick_v),
        .gnt_o   (unused_gnt),
        .idx_o   (pick_i),
        .valid_o (unused_pick_valid)
      );
    end else begin : g_pick_one
      assign pick_i            = '0;
      assign unused_gnt        = rdy;
      assign unused_pick_valid = 1'b0;
    end

    assign issue_hdr  = pick_res || pick_tmo;
    assign issue      = issue_hdr || (busy_q && can_issue);
    assign rd_i       = busy_q ? cur_i_q : pick_i;
    assign rd_slot    = busy_q ? SlotW'(op_q - CntW'(1)) : '0;

    always_comb begin
      cur_i_d   = cur_i_q;
      cur_len_d = cur_len_q;
      cur_exp_d = cur_exp_q;
      cur_err_d = cur_err_q;
      cur_tmo_d = cur_tmo_q;
      cur_ep_d  = cur_ep_q;
      if (issue_hdr) begin
        cur_i_d   = pick_i;
        cur_len_d = len_q[q][pick_i];
        cur_exp_d = exp_q[q][pick_i];
        cur_err_d = pick_tmo || (err_q[q][pick_i] != '0);
        cur_tmo_d = pick_tmo;
        cur_ep_d  = pick_tmo ? lowest_f(p_missing) : lowest_f(err_q[q][pick_i]);
      end
      // flit0 of a failed or timed-out entry is its only flit; otherwise the last payload flit
      // ends it.
      issue_last = issue_hdr ? (pick_tmo || (err_q[q][pick_i] != '0))
                             : (busy_q && (op_q == CntW'(cur_len_q)));
    end

    // A result frees its entry with its last flit; a timeout keeps it (quarantined).
    assign free_v[q]   = pick_free || (issue && issue_last && !pick_tmo);
    assign free_idx[q] = rd_i;

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        busy_q    <= 1'b0;
        op_q      <= '0;
        cur_i_q   <= '0;
        cur_len_q <= '0;
        cur_exp_q <= '0;
        cur_err_q <= 1'b0;
        cur_tmo_q <= 1'b0;
        cur_ep_q  <= '0;
        c_v_q     <= 1'b0;
        c_hdr_q   <= 1'b0;
        c_last_q  <= 1'b0;
      end else begin
        cur_i_q   <= cur_i_d;
        cur_len_q <= cur_len_d;
        cur_exp_q <= cur_exp_d;
        cur_err_q <= cur_err_d;
        cur_tmo_q <= cur_tmo_d;
        cur_ep_q  <= cur_ep_d;
        if (issue) begin
          busy_q <= !issue_last;
          op_q   <= pick_v ? CntW'(1) : op_q + CntW'(1);
        end
        c_v_q    <= issue;
        c_hdr_q  <= issue_hdr;
        c_last_q <= issue && issue_last;
      end
    end

    // Banks of share q: port p's partials, read at (entry, slot) by this engine.
    for (genvar p = 0; p < NumPorts; p++) begin : g_bank
      dysharp_ram_1r1w #(
        .Width (FlitBits),
        .Depth (Depth)
      ) u_bank (
        .clk_i   (clk_i),
        .we_i    (bw_v[p] && (bw_q[p] == PortW'(q))),
        .waddr_i (bw_addr[p]),
        .wdata_i (bw_data[p]),
        .re_i    (issue),
        .raddr_i (addr_f(rd_i, rd_slot)),
        .rdata_o (b_rdata[p])
      );
    end

    // Request fields of share q's entries; read with flit0, held for the payload.
    logic [$bits(info_t)-1:0] info_word;
    dysharp_ram_1r1w #(
      .Width ($bits(info_t)),
      .Depth (InfoD)
    ) u_info (
      .clk_i   (clk_i),
      .we_i    (alloc_fire[q]),
      .waddr_i (InfoAW'(alloc_idx[q])),
      .wdata_i (alloc_info[q]),
      .re_i    (issue_hdr),
      .raddr_i (InfoAW'(pick_i)),
      .rdata_o (info_word)
    );
    assign info_rdata = info_t'(info_word);

    // flit0 of the result (compare `response()` / `error_response()` in sim/src/hub/mod.rs).
    always_comb begin
      f0 = '0;
      f0.maddr = info_rdata.maddr;
      f0.tag   = tag_q[q][cur_i_q];
      f0.route = RouteWidth'(q);
      if (cur_err_q) begin
        f0.opcode   = OpRspError;
        f0.ecode    = cur_tmo_q ? EcodeWidth'(ErrTimeout)
                                : b_rdata[cur_ep_q][EcodeLsb +: EcodeWidth];
        f0.src_port = SrcPortWidth'(cur_ep_q);
      end else begin
        f0.opcode   = OpRspReduce;
        f0.stage    = info_rdata.stage;
        f0.len      = cur_len_q;
        f0.dtype    = info_rdata.dtype;
        f0.rop      = info_rdata.rop;
        f0.acc      = info_rdata.acc;
        f0.src_port = SrcPortWidth'(q);
      end
      f0.hcc = hcc_f(flit_t'(f0));
    end

    // A payload flit: the expected ports' stored flits reduced in ascending port order, in
    // AccStages pipeline stages.
    dysharp_reduce_acc #(
      .NumPorts (NumPorts),
      .Stages   (AccStages)
    ) u_acc (
      .clk_i     (clk_i),
      .dtype_i   (info_rdata.dtype),
      .rop_i     (info_rdata.rop),
      .acc_i     (info_rdata.acc),
      .exp_i     (cur_exp_q),
      .data_i    (b_rdata),
      .payload_o (payload)
    );

    // What goes with the flit through the reduction pipeline: valid, flit0 (computed in stage C,
    // from the cur_* registers a new entry overwrites), last.
    if (AccStages > 1) begin : g_acc_pipe
      logic [AccStages-2:0] pv_q, ph_q, pl_q;
      flit_t                pf_q [AccStages-1];
      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          pv_q <= '0;
        end else begin
          pv_q[0] <= c_v_q;
          for (int unsigned s = 1; s < AccStages - 1; s++) begin
            pv_q[s] <= pv_q[s-1];
          end
        end
      end
      // Data only: read while the matching pv_q bit is set.
      always_ff @(posedge clk_i) begin
        ph_q[0] <= c_hdr_q;
        pl_q[0] <= c_last_q;
        pf_q[0] <= flit_t'(f0);
        for (int unsigned s = 1; s < AccStages - 1; s++) begin
          ph_q[s] <= ph_q[s-1];
          pl_q[s] <= pl_q[s-1];
          pf_q[s] <= pf_q[s-1];
        end
      end
      assign o_v    = pv_q[AccStages-2];
      assign o_hdr  = ph_q[AccStages-2];
      assign o_last = pl_q[AccStages-2];
      assign o_f0   = pf_q[AccStages-2];
      always_comb begin
        acc_infl = $bits(acc_infl)'(c_v_q);
        for (int unsigned s = 0; s < AccStages - 1; s++) begin
          acc_infl = acc_infl + $bits(acc_infl)'(pv_q[s]);
        end
      end
    end else begin : g_acc_comb
      assign o_v      = c_v_q;
      assign o_hdr    = c_hdr_q;
      assign o_last   = c_last_q;
      assign o_f0     = flit_t'(f0);
      assign acc_infl = $bits(acc_infl)'(c_v_q);
    end

    logic [FlitBits:0] out_word;
    dysharp_fifo #(
      .Width (FlitBits + 1),
      .Depth (OutD)
    ) u_out (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .in_valid_i  (o_v),
      .in_ready_o  (fifo_in_ready),
      .in_data_i   ({o_last, o_hdr ? o_f0 : payload}),
      .out_valid_o (res_valid_o[q]),
      .out_ready_i (res_ready_i[q]),
      .out_data_o  (out_word),
      .usage_o     (fifo_usage)
    );
    assign res_data_o[q] = out_word[FlitBits-1:0];
    assign res_last_o[q] = out_word[FlitBits];

`ifndef SYNTHESIS
    // The credit rule keeps room for every op in flight.
    a_fifo_room: assert property (@(posedge clk_i) disable iff (!rst_ni)
        o_v |-> fifo_in_ready)
      else $error("reduce_unit: result FIFO %0d overflows", q);
    // The tag of a result is read from the keys: the entry must still hold it in stage C, so an
    // entry is never reallocated within a cycle of its last flit's issue.
    a_busy_valid: assert property (@(posedge clk_i) disable iff (!rst_ni)
        busy_q |-> valid_q[q][cur_i_q] && rdy[cur_i_q])
      else $error("reduce_unit: engine %0d lost its entry mid-packet", q);
`else
    logic unused_fifo_ready;
    assign unused_fifo_ready = fifo_in_ready;
`endif
  end

  ///////////////////////////
  // Entry state update    //
  ///////////////////////////

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned q = 0; q < NumPorts; q++) begin
        valid_q[q] <= '0;
        for (int unsigned e = 0; e < Share; e++) begin
          tag_q[q][e] <= '0;
          len_q[q][e] <= '0;
          exp_q[q][e] <= '0;
          got_q[q][e] <= '0;
          err_q[q][e] <= '0;
          age_q[q][e] <= '0;
        end
        zomb_q[q] <= '0;
      end
    end else begin
      if (tick) begin
        for (int unsigned q = 0; q < NumPorts; q++) begin
          for (int unsigned e = 0; e < Share; e++) begin
            if (valid_q[q][e] && (age_q[q][e] != 2'd3)) begin
              age_q[q][e] <= age_q[q][e] + 2'd1;
            end
          end
        end
      end
      for (int unsigned p = 0; p < NumPorts; p++) begin
        if (rx_got_v[p]) begin
          got_q[rx_set_share[p]][rx_set_idx[p]][p] <= 1'b1;
        end
        if (rx_err_v[p]) begin
          err_q[rx_set_share[p]][rx_set_idx[p]][p] <= 1'b1;
        end
      end
      for (int unsigned q = 0; q < NumPorts; q++) begin
        if (tmo_v[q]) begin
          zomb_q[q][free_idx[q]]  <= 1'b1;
          age_q[q][free_idx[q]]   <= '0;
        end
        if (free_v[q]) begin
          valid_q[q][free_idx[q]] <= 1'b0;
          got_q[q][free_idx[q]]   <= '0;
          err_q[q][free_idx[q]]   <= '0;
          zomb_q[q][free_idx[q]]  <= 1'b0;
          age_q[q][free_idx[q]]   <= '0;
        end
        if (alloc_fire[q]) begin
          valid_q[q][alloc_idx[q]] <= 1'b1;
          tag_q[q][alloc_idx[q]]   <= alloc_hdr[q].tag;
          len_q[q][alloc_idx[q]]   <= alloc_hdr[q].len;
          exp_q[q][alloc_idx[q]]   <= alloc_ports_i[q];
          got_q[q][alloc_idx[q]]   <= '0;
          err_q[q][alloc_idx[q]]   <= '0;
          zomb_q[q][alloc_idx[q]]  <= 1'b0;
          age_q[q][alloc_idx[q]]   <= '0;
        end
      end
    end
  end

  ////////////////
  // Assertions //
  ////////////////

`ifndef SYNTHESIS
  if (NumPorts < 1 || RedEntries % NumPorts != 0 || RedEntries < NumPorts) begin : g_param_check
    $error("dysharp_reduce_unit: RedEntries must be a non-zero multiple of NumPorts");
  end
  if (RedTimeout == 1) begin : g_tmo_check
    $error("dysharp_reduce_unit: RedTimeout must be 0 (off) or at least 2");
  end

  // Packet length checker per result stream.
  logic [CntW-1:0] sva_res_cnt_q [NumPorts];   // flits of the current packet already accepted
  logic [CntW-1:0] sva_res_len_q [NumPorts];   // its expected flit count minus one

  for (genvar q = 0; q < NumPorts; q++) begin : g_sva_res
    hdr_t            res_hdr;
    logic [CntW-1:0] want;   // expected flit count minus one of the packet in flight
    assign res_hdr = hdr_t'(res_data_o[q]);
    assign want    = (sva_res_cnt_q[q] == '0) ?
                     ((res_hdr.opcode == OpRspReduce) ? CntW'(res_hdr.len) : '0) :
                     sva_res_len_q[q];

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        sva_res_cnt_q[q] <= '0;
        sva_res_len_q[q] <= '0;
      end else if (res_valid_o[q] && res_ready_i[q]) begin
        sva_res_len_q[q] <= want;
        sva_res_cnt_q[q] <= res_last_o[q] ? '0 : sva_res_cnt_q[q] + CntW'(1);
      end
    end

    // Shadow registers of the previous cycle. No $past / $stable in generate loops: the pinned
    // simulator (Verilator 5.048) mixes up their sampled values between the loop's iterations.
    logic                stalled_q;    // the previous cycle offered a flit that was not taken
    logic [FlitBits-1:0] stall_data_q;
    logic                stall_last_q;
    always_ff @(posedge clk_i) begin
      stalled_q    <= res_valid_o[q] && !res_ready_i[q];
      stall_data_q <= res_data_o[q];
      stall_last_q <= res_last_o[q];
    end

    // No drop, no change under stall.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        stalled_q |->
        res_valid_o[q] && (res_data_o[q] == stall_data_q) && (res_last_o[q] == stall_last_q))
      else $error("reduce_unit: result stream %0d changed under stall", q);

    // Each packet is flit0 (+ len payload flits for RSP_REDUCE).
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        res_valid_o[q] |-> (res_last_o[q] == (sva_res_cnt_q[q] == want)))
      else $error("reduce_unit: result packet on stream %0d has the wrong flit count", q);

    // flit0 is a well-formed response to requester q.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        res_valid_o[q] && (sva_res_cnt_q[q] == '0) |->
        ((res_hdr.opcode == OpRspReduce) || (res_hdr.opcode == OpRspError)) &&
        (res_hdr.route == RouteWidth'(q)) && (res_hdr.rsvd == '0) && (res_hdr.tcount == '0) &&
        (res_hdr.hcc == hcc_f(flit_t'(res_hdr))) &&
        ((res_hdr.opcode == OpRspError) ? (res_hdr.ecode != '0) && (res_hdr.len == '0)
                                        : (res_hdr.ecode == '0) && (res_hdr.len != '0)))
      else $error("reduce_unit: malformed result flit0 on stream %0d", q);

    // Allocation: share q takes only requester q's requests, never into a live entry, and the
    // offer stays until accepted.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        alloc_valid_i[q] |-> (alloc_ports_i[q] != '0) &&
        (32'(alloc_hdr[q].src_port) == q))
      else $error("reduce_unit: allocation on port %0d with no ports or another requester", q);
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        alloc_fire[q] |-> !valid_q[q][alloc_idx[q]])
      else $error("reduce_unit: share %0d allocated a live entry", q);
    // No entry is freed or timed out while a port is inside one of its partials, and a timeout
    // answers an entry that really misses a partial.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        (free_v[q] || tmo_v[q]) |-> !inflight[q][free_idx[q]])
      else $error("reduce_unit: share %0d freed an entry with a partial half received", q);
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        tmo_v[q] |-> TmoOn && valid_q[q][free_idx[q]] && !zomb_q[q][free_idx[q]] &&
        (age_q[q][free_idx[q]] == 2'd3) && (got_q[q][free_idx[q]] != exp_q[q][free_idx[q]]))
      else $error("reduce_unit: share %0d timed out an entry that was not due", q);

    // Entry invariants of share q.
    for (genvar e = 0; e < Share; e++) begin : g_ent
      assert property (@(posedge clk_i) disable iff (!rst_ni)
          ((got_q[q][e] | err_q[q][e]) & ~exp_q[q][e]) == '0)
        else $error("reduce_unit: entry %0d/%0d answered by an unexpected port", q, e);
      assert property (@(posedge clk_i) disable iff (!rst_ni)
          !valid_q[q][e] |-> (got_q[q][e] == '0) && (err_q[q][e] == '0) && !zomb_q[q][e] &&
          (age_q[q][e] == '0))
        else $error("reduce_unit: free entry %0d/%0d has state", q, e);
    end
  end

  for (genvar p = 0; p < NumPorts; p++) begin : g_sva_rx
    logic first_fire_q;
    always_ff @(posedge clk_i) begin
      first_fire_q <= rx_fire[p] && rx_first[p];
    end

    assert property (@(posedge clk_i) disable iff (!rst_ni)
        orphan_o[p] |-> first_fire_q)
      else $error("reduce_unit: orphan pulse without a partial on port %0d", p);

    // A stored payload flit goes to a live entry that still waits for this port.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        rx_busy_q[p] && rx_hit_q[p] |->
        valid_q[rx_q_q[p]][rx_i_q[p]] && exp_q[rx_q_q[p]][rx_i_q[p]][p] &&
        !got_q[rx_q_q[p]][rx_i_q[p]][p])
      else $error("reduce_unit: port %0d writes a freed or answered entry", p);

    // Only RSP_PARTIAL packets arrive here.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        part_valid_i[p] && rx_first[p] |->
        part_data_i[p][OpcodeLsb +: OpcodeWidth] == OpRspPartial)
      else $error("reduce_unit: port %0d delivered a non-partial", p);

    // A stored partial never has more than MaxLen payload flits (the parser checks len).
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        rx_fire[p] && !rx_first[p] && rx_store_q[p] |-> rx_slot_q[p] < CntW'(MaxLen))
      else $error("reduce_unit: port %0d partial longer than MaxLen payload flits", p);
  end
`endif

endmodule
