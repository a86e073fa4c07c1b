// dysharp_reduce_unit: the switch's load-reduce table (docs/spec.md §5.3, §5.5, §6, §9).
//
// One entry per outstanding MC_LD_REDUCE / DYN_LD_REDUCE, keyed by (requester, tag). The ingress
// allocates an entry before the request's replicas leave, naming the ports that will each return
// exactly one RSP_PARTIAL. Every port p has its own partial input stream and its own storage column
// (RedEntries x MaxLen flits plus one error code per entry), so all ports accept one flit per
// cycle at the same time. When every expected port of an entry has answered, the entry is queued
// (in completion order) for the result engine of its requester: one engine per requester port,
// each emitting one flit per cycle on its own result stream. A payload flit of RSP_REDUCE is
// computed combinationally from the stored partials of the expected ports in ASCENDING PORT ORDER
// (fp_acc_init / fp_acc_step / fp_acc_finish of dysharp_fp_pkg), so the result does not depend on
// the order the partials arrived in (§9). If any partial carried an error, one RSP_ERROR with the
// code of the lowest-numbered failing port is sent instead (golden model: `Switch::partial`).
//
// A partial that matches no pending entry (route, tag), or whose port is not expected or has
// already answered, is consumed and dropped; orphan_o[p] pulses once per such packet (one cycle
// after its flit0 was accepted). A full table, or a pending entry with the same (requester, tag),
// holds alloc_ready_o low: nothing is dropped.

module dysharp_reduce_unit
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned NumPorts   = 8,
  parameter int unsigned RedEntries = 256  // 64 KB of partials per port (the paper)
) (
  input  logic                         clk_i,
  // The SVA's `disable iff (!rst_ni)` makes Verilator see the async reset also used
  // synchronously; that use is verification-only.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                         rst_ni,
  /* verilator lint_on SYNCASYNCNET */
  // Allocation (from the ingress, before the replicas leave).
  input  logic                         alloc_valid_i,
  output logic                         alloc_ready_o,
  input  flit_t                        alloc_hdr_i,
  input  logic [NumPorts-1:0]          alloc_ports_i,
  // RSP_PARTIAL packets from port p's hub (already checked by the parser).
  input  logic [NumPorts-1:0]          part_valid_i,
  output logic [NumPorts-1:0]          part_ready_o,
  input  logic [NumPorts*FlitBits-1:0] part_data_i,
  input  logic [NumPorts-1:0]          part_last_i,
  // Results (RSP_REDUCE / RSP_ERROR) for requester q on stream q.
  output logic [NumPorts-1:0]          res_valid_o,
  input  logic [NumPorts-1:0]          res_ready_i,
  output logic [NumPorts*FlitBits-1:0] res_data_o,
  output logic [NumPorts-1:0]          res_last_o,
  // One-cycle pulse per dropped (orphan) partial on port p.
  output logic [NumPorts-1:0]          orphan_o
);

  localparam int unsigned IdxW  = (RedEntries > 1) ? $clog2(RedEntries) : 1;
  localparam int unsigned SlotW = $clog2(MaxLen);          // payload flit index within a partial
  localparam int unsigned CntW  = $clog2(MaxLen + 1);      // 0..MaxLen
  localparam int unsigned Depth = RedEntries * MaxLen;     // flits per port column
  localparam int unsigned AddrW = $clog2(Depth);

  typedef logic [IdxW-1:0]  idx_t;
  typedef logic [AddrW-1:0] addr_t;

  // The request fields an entry keeps (from the ld_reduce's flit0).
  typedef struct packed {
    logic [SrcPortWidth-1:0] requester;
    logic [TagWidth-1:0]     tag;
    logic [MaddrWidth-1:0]   maddr;
    logic [LenWidth-1:0]     len;
    logic [DtypeWidth-1:0]   dtype;
    logic [RopWidth-1:0]     rop;
    logic                    acc;
    logic                    stage;
  } ent_t;

  // Storage address of payload flit `slot` of entry `e` in a port column.
  function automatic addr_t addr_f(input idx_t e, input logic [SlotW-1:0] slot);
    return addr_t'(e) * addr_t'(MaxLen) + addr_t'(slot);
  endfunction

  //////////////////////
  // Entry table      //
  //////////////////////

  logic [RedEntries-1:0] valid_q, valid_d;        // entry allocated
  logic [RedEntries-1:0] rdy_q, rdy_d;            // all expected partials in, result queued
  ent_t                  ent_q [RedEntries];
  ent_t                  ent_d [RedEntries];
  logic [NumPorts-1:0]   exp_q [RedEntries];      // ports expected to answer
  logic [NumPorts-1:0]   exp_d [RedEntries];
  logic [NumPorts-1:0]   got_q [RedEntries];      // ports that have answered
  logic [NumPorts-1:0]   got_d [RedEntries];
  // older_q[e][j]: entry j completed before entry e (meaningful while both are rdy).
  logic [RedEntries-1:0] older_q [RedEntries];
  logic [RedEntries-1:0] older_d [RedEntries];

  // Per-port storage columns: payload flits and the error code of each entry's partial.
  flit_t                 mem_q   [NumPorts][Depth];
  logic [EcodeWidth-1:0] ecode_q [NumPorts][RedEntries];

  ///////////////////
  // Allocation    //
  ///////////////////

  hdr_t                  alloc_hdr;
  logic [RedEntries-1:0] alloc_dup;                // pending entry with the same key
  logic                  alloc_has_free;
  idx_t                  alloc_idx;
  logic                  alloc_fire;

  assign alloc_hdr = hdr_t'(alloc_hdr_i);

  always_comb begin
    alloc_has_free = 1'b0;
    alloc_idx      = '0;
    for (int unsigned e = RedEntries; e > 0; e--) begin   // lowest free entry wins
      if (!valid_q[e-1]) begin
        alloc_has_free = 1'b1;
        alloc_idx      = idx_t'(e - 1);
      end
    end
    for (int unsigned e = 0; e < RedEntries; e++) begin
      alloc_dup[e] = valid_q[e] && (ent_q[e].requester == alloc_hdr.src_port) &&
                     (ent_q[e].tag == alloc_hdr.tag);
    end
  end

  assign alloc_ready_o = alloc_has_free && !(|alloc_dup);
  assign alloc_fire    = alloc_valid_i && alloc_ready_o;

  ///////////////////////////////
  // Partial receive (per port) //
  ///////////////////////////////

  logic [NumPorts-1:0]   rx_busy_q;                // inside a packet (flit0 already taken)
  logic [NumPorts-1:0]   rx_hit_q;                 // the current packet matched an entry
  idx_t                  rx_idx_q  [NumPorts];     // its entry
  logic [CntW-1:0]       rx_slot_q [NumPorts];     // next payload slot (MaxLen = full)
  logic [NumPorts-1:0]   orphan_q;

  logic [NumPorts-1:0]   rx_fire;
  logic [NumPorts-1:0]   rx_first;                 // this flit is a flit0
  logic [NumPorts-1:0]   rx_match_any;             // flit0 matches an entry (valid at rx_first)
  idx_t                  rx_match_idx [NumPorts];
  logic [NumPorts-1:0]   ec_we;                    // write the error code (matched flit0)
  logic [NumPorts-1:0]   mem_we;                   // write a payload flit
  addr_t                 mem_waddr [NumPorts];
  logic [RedEntries-1:0] got_set [NumPorts];       // port p's partial for entry e complete

  assign part_ready_o = '1;    // every port owns its storage column: never a reason to stall

  for (genvar p = 0; p < NumPorts; p++) begin : g_rx
    logic [RouteWidth-1:0] rx_route;
    logic [TagWidth-1:0]   rx_tag;
    assign rx_route    = part_data_i[FlitBits*p + RouteLsb +: RouteWidth];
    assign rx_tag      = part_data_i[FlitBits*p + TagLsb +: TagWidth];
    assign rx_fire[p]  = part_valid_i[p] && part_ready_o[p];
    assign rx_first[p] = !rx_busy_q[p];

    // Match (route, tag) against the pending entries; the port must be expected and not have
    // answered yet (golden model: otherwise the partial is an orphan).
    always_comb begin
      rx_match_any[p] = 1'b0;
      rx_match_idx[p] = '0;
      for (int unsigned e = 0; e < RedEntries; e++) begin
        if (valid_q[e] && (rx_route == RouteWidth'(ent_q[e].requester)) &&
            (rx_tag == ent_q[e].tag) && exp_q[e][p] && !got_q[e][p]) begin
          rx_match_any[p] = 1'b1;
          rx_match_idx[p] = idx_t'(e);
        end
      end
    end

    always_comb begin
      ec_we[p]     = rx_fire[p] && rx_first[p] && rx_match_any[p];
      mem_we[p]    = rx_fire[p] && !rx_first[p] && rx_hit_q[p] && (rx_slot_q[p] < CntW'(MaxLen));
      mem_waddr[p] = addr_f(rx_idx_q[p], rx_slot_q[p][SlotW-1:0]);
      got_set[p]   = '0;
      if (rx_fire[p] && part_last_i[p]) begin
        if (rx_first[p] && rx_match_any[p]) begin
          got_set[p][rx_match_idx[p]] = 1'b1;    // error partial (flit0 only)
        end else if (!rx_first[p] && rx_hit_q[p]) begin
          got_set[p][rx_idx_q[p]] = 1'b1;        // last payload flit stored
        end
      end
    end

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        rx_busy_q[p] <= 1'b0;
        rx_hit_q[p]  <= 1'b0;
        rx_idx_q[p]  <= '0;
        rx_slot_q[p] <= '0;
        orphan_q[p]  <= 1'b0;
      end else begin
        orphan_q[p] <= rx_fire[p] && rx_first[p] && !rx_match_any[p];
        if (rx_fire[p]) begin
          if (rx_first[p]) begin
            rx_busy_q[p] <= !part_last_i[p];
            rx_hit_q[p]  <= rx_match_any[p];
            rx_idx_q[p]  <= rx_match_idx[p];
            rx_slot_q[p] <= '0;
          end else begin
            rx_busy_q[p] <= !part_last_i[p];
            if (mem_we[p]) begin
              rx_slot_q[p] <= rx_slot_q[p] + CntW'(1);
            end
          end
        end
      end
    end
  end

  assign orphan_o = orphan_q;

  // Storage columns: port p writes only column p. Data storage, no reset.
  always_ff @(posedge clk_i) begin
    for (int unsigned p = 0; p < NumPorts; p++) begin
      if (mem_we[p]) begin
        mem_q[p][mem_waddr[p]] <= part_data_i[FlitBits*p +: FlitBits];
      end
      if (ec_we[p]) begin
        ecode_q[p][rx_match_idx[p]] <= part_data_i[FlitBits*p + EcodeLsb +: EcodeWidth];
      end
    end
  end

  ///////////////////////////////////
  // Result engines (per requester) //
  ///////////////////////////////////

  logic [NumPorts-1:0]   res_valid_q;
  flit_t                 res_data_q [NumPorts];
  logic [NumPorts-1:0]   res_last_q;
  logic [CntW-1:0]       res_cnt_q [NumPorts];     // flits of the current packet emitted so far
  logic [NumPorts-1:0]   free_v;                   // engine q frees its head entry this cycle
  idx_t                  free_idx [NumPorts];
  logic [NumPorts-1:0]   eng_has_head;
  idx_t                  eng_head [NumPorts];

  for (genvar q = 0; q < NumPorts; q++) begin : g_eng
    logic [RedEntries-1:0] cand;     // queued results for requester q
    logic [RedEntries-1:0] head;     // the oldest of them (one-hot or zero)
    idx_t                  h;
    ent_t                  he;
    logic [NumPorts-1:0]   hexp;
    logic                  err;
    logic [SrcPortWidth-1:0] err_port;
    logic [EcodeWidth-1:0] err_code;
    hdr_t                  f0;
    flit_t                 payload;
    logic [255:0]          acc_v;
    logic                  started;
    logic [SlotW-1:0]      slot;
    logic                  is_last;
    logic                  load;

    always_comb begin
      for (int unsigned e = 0; e < RedEntries; e++) begin
        cand[e] = rdy_q[e] && (ent_q[e].requester == SrcPortWidth'(q));
      end
      h = '0;
      for (int unsigned e = 0; e < RedEntries; e++) begin
        head[e] = cand[e] && ((older_q[e] & cand) == '0);
        if (head[e]) begin
          h = idx_t'(e);
        end
      end
    end

    assign eng_has_head[q] = |head;
    assign eng_head[q]     = h;
    assign he              = ent_q[h];
    assign hexp            = exp_q[h];

    // Lowest-numbered failing expected port.
    always_comb begin
      err      = 1'b0;
      err_port = '0;
      err_code = '0;
      for (int unsigned p = 0; p < NumPorts; p++) begin
        if (!err && hexp[p] && (ecode_q[p][h] != '0)) begin
          err      = 1'b1;
          err_port = SrcPortWidth'(p);
          err_code = ecode_q[p][h];
        end
      end
    end

    // flit0 of the result (compare `response()` / `error_response()` in sim/src/hub/mod.rs).
    always_comb begin
      f0 = '0;
      f0.maddr = he.maddr;
      f0.tag   = he.tag;
      f0.route = RouteWidth'(he.requester);
      if (err) begin
        f0.opcode   = OpRspError;
        f0.ecode    = err_code;
        f0.src_port = err_port;
      end else begin
        f0.opcode   = OpRspReduce;
        f0.stage    = he.stage;
        f0.len      = he.len;
        f0.dtype    = he.dtype;
        f0.rop      = he.rop;
        f0.acc      = he.acc;
        f0.src_port = he.requester;
      end
      f0.hcc = hcc_f(flit_t'(f0));
    end

    // Payload flit (res_cnt_q - 1): the expected ports' stored flits, ascending port order.
    assign slot = SlotW'(res_cnt_q[q] - CntW'(1));

    always_comb begin
      acc_v   = '0;
      started = 1'b0;
      for (int unsigned p = 0; p < NumPorts; p++) begin
        if (hexp[p]) begin
          if (started) begin
            acc_v = fp_acc_step(he.dtype, he.rop, he.acc, acc_v, mem_q[p][addr_f(h, slot)]);
          end else begin
            acc_v = fp_acc_init(he.dtype, mem_q[p][addr_f(h, slot)]);
          end
          started = 1'b1;
        end
      end
      payload = fp_acc_finish(he.dtype, acc_v);
    end

    assign is_last   = err || (res_cnt_q[q] == CntW'(he.len));
    assign load      = eng_has_head[q] && (!res_valid_q[q] || res_ready_i[q]);
    assign free_v[q] = load && is_last;
    assign free_idx[q] = h;

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        res_valid_q[q] <= 1'b0;
        res_data_q[q]  <= '0;
        res_last_q[q]  <= 1'b0;
        res_cnt_q[q]   <= '0;
      end else begin
        if (load) begin
          res_valid_q[q] <= 1'b1;
          res_data_q[q]  <= (res_cnt_q[q] == '0) ? flit_t'(f0) : payload;
          res_last_q[q]  <= is_last;
          res_cnt_q[q]   <= is_last ? '0 : res_cnt_q[q] + CntW'(1);
        end else if (res_ready_i[q]) begin
          res_valid_q[q] <= 1'b0;
        end
      end
    end

    assign res_valid_o[q]                      = res_valid_q[q];
    assign res_data_o[FlitBits*q +: FlitBits] = res_data_q[q];
    assign res_last_o[q]                       = res_last_q[q];
  end

  ///////////////////////////
  // Entry state update    //
  ///////////////////////////

  logic [RedEntries-1:0] cmpl;      // entry becomes ready this cycle

  always_comb begin
    for (int unsigned e = 0; e < RedEntries; e++) begin
      cmpl[e] = valid_q[e] && !rdy_q[e] && (got_q[e] == exp_q[e]);
    end

    valid_d = valid_q;
    rdy_d   = rdy_q | cmpl;
    for (int unsigned e = 0; e < RedEntries; e++) begin
      ent_d[e] = ent_q[e];
      exp_d[e] = exp_q[e];
      got_d[e] = got_q[e];
      for (int unsigned p = 0; p < NumPorts; p++) begin
        if (got_set[p][e]) begin
          got_d[e][p] = 1'b1;
        end
      end
      // Completion order: an entry completing now is younger than every ready entry and than
      // the lower-numbered entries completing in the same cycle.
      if (cmpl[e]) begin
        for (int unsigned j = 0; j < RedEntries; j++) begin
          older_d[e][j] = rdy_q[j] || (cmpl[j] && (j < e));
        end
      end else begin
        older_d[e] = older_q[e] & ~cmpl;
      end
    end

    for (int unsigned q = 0; q < NumPorts; q++) begin
      if (free_v[q]) begin
        valid_d[free_idx[q]] = 1'b0;
        rdy_d[free_idx[q]]   = 1'b0;
        got_d[free_idx[q]]   = '0;
      end
    end

    if (alloc_fire) begin
      valid_d[alloc_idx]           = 1'b1;
      rdy_d[alloc_idx]             = 1'b0;
      exp_d[alloc_idx]             = alloc_ports_i;
      got_d[alloc_idx]             = '0;
      ent_d[alloc_idx].requester   = alloc_hdr.src_port;
      ent_d[alloc_idx].tag         = alloc_hdr.tag;
      ent_d[alloc_idx].maddr       = alloc_hdr.maddr;
      ent_d[alloc_idx].len         = alloc_hdr.len;
      ent_d[alloc_idx].dtype       = alloc_hdr.dtype;
      ent_d[alloc_idx].rop         = alloc_hdr.rop;
      ent_d[alloc_idx].acc         = alloc_hdr.acc;
      ent_d[alloc_idx].stage       = alloc_hdr.stage;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
      rdy_q   <= '0;
      for (int unsigned e = 0; e < RedEntries; e++) begin
        ent_q[e]   <= '0;
        exp_q[e]   <= '0;
        got_q[e]   <= '0;
        older_q[e] <= '0;
      end
    end else begin
      valid_q <= valid_d;
      rdy_q   <= rdy_d;
      for (int unsigned e = 0; e < RedEntries; e++) begin
        ent_q[e]   <= ent_d[e];
        exp_q[e]   <= exp_d[e];
        got_q[e]   <= got_d[e];
        older_q[e] <= older_d[e];
      end
    end
  end

  // Header fields of the allocation request the table does not keep.
  logic unused_alloc_hdr;
  assign unused_alloc_hdr = ^{alloc_hdr.hcc, alloc_hdr.rsvd, alloc_hdr.ecode, alloc_hdr.route,
                              alloc_hdr.tcount, alloc_hdr.opcode};

  ////////////////
  // Assertions //
  ////////////////

`ifndef SYNTHESIS
  // Independent model of "a pending entry accepts this partial" for the orphan check.
  logic [NumPorts-1:0] sva_matchable;
  always_comb begin
    for (int unsigned p = 0; p < NumPorts; p++) begin
      sva_matchable[p] = 1'b0;
      for (int unsigned e = 0; e < RedEntries; e++) begin
        if (valid_q[e] && !rdy_q[e] && exp_q[e][p] && !got_q[e][p] &&
            (part_data_i[FlitBits*p + RouteLsb +: RouteWidth] == RouteWidth'(ent_q[e].requester)) &&
            (part_data_i[FlitBits*p + TagLsb +: TagWidth] == ent_q[e].tag)) begin
          sva_matchable[p] = 1'b1;
        end
      end
    end
  end

  // Packet length checker per result stream.
  logic [CntW-1:0] sva_res_cnt_q [NumPorts];   // flits of the current packet already accepted
  logic [CntW-1:0] sva_res_len_q [NumPorts];   // its expected flit count minus one

  for (genvar q = 0; q < NumPorts; q++) begin : g_sva_res
    hdr_t            res_hdr;
    logic [CntW-1:0] want;   // expected flit count minus one of the packet in flight
    assign res_hdr = hdr_t'(res_data_o[FlitBits*q +: FlitBits]);
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
    idx_t                head_q;       // the engine's head entry in the previous cycle
    always_ff @(posedge clk_i) begin
      stalled_q    <= res_valid_o[q] && !res_ready_i[q];
      stall_data_q <= res_data_o[FlitBits*q +: FlitBits];
      stall_last_q <= res_last_o[q];
      head_q       <= eng_head[q];
    end

    // No drop, no change under stall.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        stalled_q |->
        res_valid_o[q] && (res_data_o[FlitBits*q +: FlitBits] == stall_data_q) &&
        (res_last_o[q] == stall_last_q))
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

    // The head of an engine does not change in the middle of a packet.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        res_cnt_q[q] != '0 |-> eng_has_head[q] && (eng_head[q] == head_q))
      else $error("reduce_unit: engine %0d lost its entry mid-packet", q);

    assert property (@(posedge clk_i) disable iff (!rst_ni) $onehot0(g_eng[q].head))
      else $error("reduce_unit: engine %0d has several heads", q);
  end

  for (genvar p = 0; p < NumPorts; p++) begin : g_sva_rx
    // Previous-cycle shadows (no $past in generate loops, see g_sva_res).
    logic first_fire_q, matchable_q;
    always_ff @(posedge clk_i) begin
      first_fire_q <= rx_fire[p] && rx_first[p];
      matchable_q  <= sva_matchable[p];
    end

    // Orphan never for a partial a pending entry accepts; always for one it does not.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        first_fire_q |-> orphan_o[p] == !matchable_q)
      else $error("reduce_unit: orphan flag wrong on port %0d", p);

    assert property (@(posedge clk_i) disable iff (!rst_ni)
        orphan_o[p] |-> first_fire_q)
      else $error("reduce_unit: orphan pulse without a partial on port %0d", p);

    // A payload write goes to a live entry that still waits for this port.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        rx_busy_q[p] && rx_hit_q[p] |->
        valid_q[rx_idx_q[p]] && !rdy_q[rx_idx_q[p]] && exp_q[rx_idx_q[p]][p] &&
        !got_q[rx_idx_q[p]][p])
      else $error("reduce_unit: port %0d writes a freed or answered entry", p);

    // A matched flit0 names a live entry (a freed entry is never matched).
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        rx_fire[p] && rx_first[p] && rx_match_any[p] |-> valid_q[rx_match_idx[p]])
      else $error("reduce_unit: port %0d matched a free entry", p);

    // Only RSP_PARTIAL packets arrive here.
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        part_valid_i[p] && rx_first[p] |->
        part_data_i[FlitBits*p + OpcodeLsb +: OpcodeWidth] == OpRspPartial)
      else $error("reduce_unit: port %0d delivered a non-partial", p);

    // Storage slot never overflows (a legal partial has at most MaxLen payload flits).
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        rx_fire[p] && !rx_first[p] && rx_hit_q[p] |-> rx_slot_q[p] < CntW'(MaxLen))
      else $error("reduce_unit: port %0d partial longer than MaxLen payload flits", p);
  end

  for (genvar e = 0; e < RedEntries; e++) begin : g_sva_ent
    assert property (@(posedge clk_i) disable iff (!rst_ni) (got_q[e] & ~exp_q[e]) == '0)
      else $error("reduce_unit: entry %0d answered by an unexpected port", e);
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        !valid_q[e] |-> !rdy_q[e] && (got_q[e] == '0))
      else $error("reduce_unit: free entry %0d has state", e);
    assert property (@(posedge clk_i) disable iff (!rst_ni)
        rdy_q[e] |-> got_q[e] == exp_q[e])
      else $error("reduce_unit: entry %0d queued before all partials arrived", e);
    for (genvar j = e + 1; j < RedEntries; j++) begin : g_key
      assert property (@(posedge clk_i) disable iff (!rst_ni)
          !(valid_q[e] && valid_q[j] && (ent_q[e].requester == ent_q[j].requester) &&
            (ent_q[e].tag == ent_q[j].tag)))
        else $error("reduce_unit: entries %0d and %0d share a key", e, j);
    end
  end

  // No entry allocated twice; legal allocation requests.
  assert property (@(posedge clk_i) disable iff (!rst_ni) alloc_fire |-> !valid_q[alloc_idx])
    else $error("reduce_unit: allocated a live entry");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
      alloc_valid_i |-> (alloc_ports_i != '0) && (32'(alloc_hdr.src_port) < NumPorts))
    else $error("reduce_unit: allocation with no ports or a bad requester");
  // Allocation handshake: the request stays until accepted.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
      alloc_valid_i && !alloc_ready_o |=> alloc_valid_i && $stable(alloc_hdr_i) &&
      $stable(alloc_ports_i))
    else $error("reduce_unit: allocation request changed under stall");
  // Two engines never free the same entry.
  for (genvar a = 0; a < NumPorts; a++) begin : g_sva_free
    for (genvar b = a + 1; b < NumPorts; b++) begin : g_pair
      assert property (@(posedge clk_i) disable iff (!rst_ni)
          free_v[a] && free_v[b] |-> free_idx[a] != free_idx[b])
        else $error("reduce_unit: engines %0d and %0d free the same entry", a, b);
    end
  end
`endif

endmodule
