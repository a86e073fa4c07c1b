// dysharp_hub: the destination hub of one port (docs/spec.md §5, §7, §9; golden model
// sim/src/hub/mod.rs, whose memory accesses, responses and counters it reproduces exactly).
//
// Requests arrive legal and pruned from the switch (every target is local to this hub). The hub
// handles one packet at a time in arrival order and the targets of a DYN op in list order. Per
// target: AL-TLB lookup (counted hit or miss); on a miss a walk (one 16-byte read of the line
// holding the AL entry); on an invalid entry a Dispatch allocates (AL entry line write) while a
// Combine fails with ERR_UNMAPPED; then the `len` data lines (writes for stores, reads for loads).
// Non-DYN ops use identity translation (no TLB).
//
// Pipeline (one flit in and one memory beat of up to MemLines lines per cycle in steady state):
//   receive  : NumSlots packet buffers, used in turn; packets are received while earlier ones are
//              processed (three buffers keep short packets at line rate). The range check of a
//              DYN op (the same for every target) is computed from flit0.
//   T0       : walks the targets of the oldest fully received packet, one per cycle -> key_q.
//   T1       : AL-TLB lookup of key_q (combinational CAM) -> res_q; the lookup is counted here.
//              After a miss, T1 stalls until the walk resolves (fill done), so every lookup sees
//              every earlier fill, exactly as the sequential golden model.
//   issue (I): owns the memory request register; runs each job (walk, AL write, data lines) in
//              order. A request is one beat of 1..MemLines consecutive 16-byte lines (a walk
//              and an AL write are one line; data lines go MemLines at a time). Reads may be
//              pipelined (up to TagDepth outstanding); split into lines, the order of requests
//              on the memory port is the golden order.
//   response : read beats return in order with a tag (walk word, raw data for RSP_READ, or f32
//              lane accumulation for load-reduces, dysharp_fp_pkg, MemLines lines per cycle)
//              -> payload FIFO of beats. The walk word is used in the cycle it arrives.
//   output   : response headers (header queue) followed by their payload flits.

module dysharp_hub import dysharp_pkg::*, dysharp_fp_pkg::*, dysharp_hub_pkg::*; #(
  parameter int unsigned ExpertsPerPort = 32,
  parameter int unsigned MaxTargets     = 32,
  parameter int unsigned TlbEntries     = 512,
  parameter int unsigned TlbWays        = 512,  // TlbEntries = fully associative (CAM)
  parameter int unsigned MemLines       = 4     // 16-byte lines per memory beat (1..MaxLen)
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  // Configuration (spec §7; changes only in reset).
  input  hub_cfg_t                cfg_i,
  // Requests from the switch.
  input  logic                    req_valid_i,
  output logic                    req_ready_o,
  input  flit_t                   req_data_i,
  input  logic                    req_last_i,
  // Responses to the switch (src_port 0: the switch stamps it).
  output logic                    rsp_valid_o,
  input  logic                    rsp_ready_i,
  output flit_t                   rsp_data_o,
  output logic                    rsp_last_o,
  // GPU memory port: a beat of mem_req_lines_o (1..MemLines) consecutive 16-byte lines from
  // mem_req_addr_o; line i at [128*i +: 128] of the data and [16*i +: 16] of the strobes (lines
  // past the count are zero). One read response beat per read, in order, laid out the same way.
  output logic                    mem_req_valid_o,
  input  logic                    mem_req_ready_i,
  output logic                    mem_req_we_o,
  output logic [47:0]             mem_req_addr_o,
  output logic [$clog2(MemLines+1)-1:0] mem_req_lines_o,
  output logic [128*MemLines-1:0] mem_req_wdata_o,
  output logic [16*MemLines-1:0]  mem_req_wstrb_o,
  input  logic                    mem_rsp_valid_i,
  output logic                    mem_rsp_ready_o,
  input  logic [128*MemLines-1:0] mem_rsp_rdata_i,
  // Counters.
  output logic [31:0]             tlb_hits_o,
  output logic [31:0]             tlb_misses_o,
  output logic [3*32-1:0]         err_count_o   // codes 11, 12, 13 at [32*(c-11) +: 32]
);

  // ---------------------------------------------------------------------------------------------
  // Parameters and types
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned LocalW    = (ExpertsPerPort > 1) ? $clog2(ExpertsPerPort) : 1;
  localparam int unsigned TIdxW     = (MaxTargets > 1) ? $clog2(MaxTargets) : 1;
  localparam int unsigned MaxTFlits = (MaxTargets + TargetsPerFlit - 1) / TargetsPerFlit;
  localparam int unsigned RxCntW    = $clog2(MaxTFlits + MaxLen + 1);
  localparam int unsigned LinesW    = $clog2(MemLines + 1); // lines in a beat (1..MemLines)
  // Payload FIFO of read beats (credited reads): 32 lines' worth, at least 4 beats.
  localparam int unsigned PayDepth  = (32 / MemLines > 4) ? 32 / MemLines : 4;
  localparam int unsigned PayCntW   = $clog2(PayDepth + 1);
  localparam int unsigned HdrCntW   = $clog2(HdrDepth + 1);

  typedef logic [LocalW-1:0] local_t;
  typedef logic [TIdxW-1:0]  tidx_t;
  typedef logic [LinesW-1:0] nlines_t;

  typedef struct packed {
    slot_t     slot;
    job_kind_e kind;
    local_t    lcl;
    lidx_t     lidx;
    logic      first;
    logic      last;    // last job of the packet
  } job_t;

  typedef struct packed {
    rd_kind_e              kind;
    line_t                 line;    // first line of the beat
    nlines_t               n;       // lines in the beat
    logic [DtypeWidth-1:0] dtype;
    logic [RopWidth-1:0]   rop;
    logic                  native;
  } rd_tag_t;

  // Payload FIFO entry: a beat of n payload flits, flit i at [128*i +: 128].
  typedef struct packed {
    nlines_t                     n;
    logic [128*MemLines-1:0]     data;
  } pay_beat_t;

  typedef enum logic [1:0] {RxHdr, RxTgt, RxBe, RxPay} rx_sec_e;

  typedef enum logic [2:0] {
    IsIdle     = 3'd0,
    IsLines    = 3'd1,
    IsWalk     = 3'd2,
    IsWalkWait = 3'd3,
    IsAllocWr  = 3'd4,
    IsFinish   = 3'd5
  } is_state_e;

  // ---------------------------------------------------------------------------------------------
  // Helper functions
  // ---------------------------------------------------------------------------------------------
  // VAddr = DataBase + (((local << Log2Slots) + LIdx) << Log2Bsize) + off.
  function automatic logic [47:0] vaddr_f(input local_t lcl, input lidx_t lidx,
                                          input logic [47:0] off, input logic [47:0] data_base,
                                          input logic [4:0] l2s, input logic [4:0] l2b);
    logic [47:0] slot;
    slot = (48'(lcl) << l2s) + 48'(lidx);
    return data_base + (slot << l2b) + off;
  endfunction

  // Byte strobes of payload line `line`: BE bit i enables bytes 2i and 2i+1.
  function automatic logic [15:0] be_strb_f(input flit_t be, input line_t line);
    logic [7:0]  b;
    logic [15:0] s;
    b = be[8*line +: 8];
    for (int unsigned h = 0; h < 8; h++) begin
      s[2*h +: 2] = {2{b[h]}};
    end
    return s;
  endfunction

  // Response header (hub/mod.rs response(), partial(), error_response()) for request r, built
  // from the package's field table: no targets, src_port 0 (the switch stamps it), route = the
  // requester, rsvd 0; RSP_ERROR carries stage 0, len 0 and dtype/rop/acc 0.
  function automatic flit_t rsp_hdr_f(input hub_req_t r, input opcode_e op, input ecode_e ecode);
    flit_t f;
    logic  full;
    full                            = (op != OpRspError);
    f                               = '0;
    f[OpcodeLsb +: OpcodeWidth]     = op;
    f[StageLsb +: StageWidth]       = full ? r.stage : 1'b0;
    f[MaddrLsb +: MaddrWidth]       = r.maddr;
    f[TcountLsb +: TcountWidth]     = '0;
    f[SrcPortLsb +: SrcPortWidth]   = '0;
    f[TagLsb +: TagWidth]           = r.tag;
    f[LenLsb +: LenWidth]           = full ? r.len : '0;
    f[DtypeLsb +: DtypeWidth]       = full ? r.dtype : '0;
    f[RopLsb +: RopWidth]           = full ? r.rop : '0;
    f[AccLsb +: AccWidth]           = (full && r.acc) ? AccNative : AccF32;
    f[RouteLsb +: RouteWidth]       = RouteWidth'(r.src_port);
    f[EcodeLsb +: EcodeWidth]       = ecode;
    f[RsvdLsb +: RsvdWidth]         = '0;
    f[HccLsb +: HccWidth]           = hcc_f(f);
    // r.opcode and r.tcount do not appear in a response (named *unused* on purpose).
    begin : b_unused
      logic unused_fields;
      unused_fields = ^{r.opcode, r.tcount};
    end
    return f;
  endfunction

  // Read kind of a load line (by op and the target's position in the list).
  function automatic rd_kind_e rd_kind_f(input logic [OpcodeWidth-1:0] op, input logic first,
                                         input logic last);
    rd_kind_e k;
    if (is_op(op, OpRead)) begin
      k = RdRaw;
    end else if (!is_op(op, OpDynLdReduce)) begin
      k = RdFinInit;
    end else if (first) begin
      k = last ? RdFinInit : RdAccInit;
    end else begin
      k = last ? RdFinStep : RdAccStep;
    end
    return k;
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Signals
  // ---------------------------------------------------------------------------------------------
  // Packet buffers.
  hub_req_t            slot_req_q  [NumSlots];
  logic [15:0]     slot_tgt_q  [NumSlots][MaxTargets];
  flit_t           slot_be_q   [NumSlots];
  flit_t           slot_pay_q  [NumSlots][MaxLen];
  aidx_t           slot_aidx_q [NumSlots];
  logic [47:0]     slot_off_q  [NumSlots];
  logic [NumSlots-1:0] slot_rerr_q;
  logic [NumSlots-1:0] slot_full_q, slot_full_d;    // packet completely received, not yet released
  logic [NumSlots-1:0] slot_tdone_q, slot_tdone_d;  // T0 has emitted every job of the packet

  // Receive.
  slot_t           rx_slot_q, rx_slot_d;
  rx_sec_e         rx_sec_q, rx_sec_d;
  logic [RxCntW-1:0] rx_cnt_q, rx_cnt_d;
  logic            rx_fire;
  hub_req_t            rx_hdr;
  logic [47:0]     rx_rel, rx_aidx_full, rx_off;
  logic [48:0]     rx_bsize, rx_end;
  logic            rx_rerr;
  logic            rx_wr_hdr, rx_wr_tgt, rx_wr_be, rx_wr_pay;

  // T0.
  slot_t           t_slot_q, t_slot_d;
  tidx_t           t_idx_q, t_idx_d;
  logic [OpcodeWidth-1:0] t_op;
  logic [TcountWidth-1:0] t_tcount;
  logic            t_act, t_tlast, t_load;
  job_t            t_job;

  // T1.
  logic            key_v_q, key_v_d;
  job_t            key_q, key_d;
  logic            key_adv;
  logic            blocked_q, blocked_d;
  logic            tlb_hit;
  lidx_t           tlb_lidx;
  logic            tlb_fill;
  lidx_t           tlb_fill_lidx;
  logic            tlb_evict_unused;
  logic            res_v_q, res_v_d;
  job_t            res_q, res_d;
  logic            res_pop;
  logic [31:0]     hits_q, hits_d, misses_q, misses_d;

  // Issue.
  is_state_e       is_q, is_d;
  slot_t           job_slot_q, job_slot_d;
  local_t          job_local_q, job_local_d;
  logic            job_first_q, job_first_d;
  logic            job_last_q, job_last_d;
  line_t           line_q, line_d;
  logic [47:0]     addr_q, addr_d;
  logic [47:0]     walk_addr_q, walk_addr_d;
  logic [3:0]      walk_lane_q, walk_lane_d;
  logic            walk_rsp;      // the walk's read data is in rsp_d_q this cycle
  logic [31:0]     walk_word;
  logic [31:0]     alloc_word_q, alloc_word_d;
  ecode_e          err_code_q, err_code_d;
  hub_req_t            j_req;
  logic            j_we, j_hpush, j_credit, j_line_last;
  logic [LineW:0]  j_rem;         // data lines left in the job
  nlines_t         j_nb;          // lines in the next data beat
  rd_kind_e        j_rdkind;
  logic            can_pop, job_done, unblock, abort;
  logic            ctr_full;
  logic [31:0]     ctr_q [ExpertsPerPort];
  logic            ctr_inc;
  logic [31:0]     err_q [3];
  logic            err_inc;

  // Memory request register.
  logic            mreq_v_q, mreq_v_d;
  logic            mreq_we_q, mreq_we_d;
  logic [47:0]     mreq_addr_q, mreq_addr_d;
  nlines_t         mreq_lines_q, mreq_lines_d;
  logic [128*MemLines-1:0] mreq_wdata_q, mreq_wdata_d;
  logic [16*MemLines-1:0]  mreq_wstrb_q, mreq_wstrb_d;
  logic            mreq_free, mreq_load;

  // Read tags, read data, accumulators.
  logic            tagq_push, tagq_space, tagq_out_v;
  rd_tag_t         tagq_in, tagq_out;
  logic [TagCntW-1:0] tagq_usage;
  logic            rsp_v_q;
  logic [128*MemLines-1:0] rsp_d_q;
  logic [FpAccBits-1:0] acc_q [MaxLen];
  logic [FpAccBits-1:0] acc_new [MemLines];
  flit_t           acc_fin [MemLines];
  line_t           acc_idx [MemLines];
  logic            acc_we;

  // Payload FIFO (beats) and credits (beats).
  logic            pay_push, pay_space, pay_out_v, pay_pop;
  pay_beat_t       pay_in, pay_out;
  logic [PayCntW-1:0] pay_usage;
  nlines_t         pay_idx_q, pay_idx_d;   // next flit of the head beat
  logic [PayCntW-1:0] pay_infl_q, pay_infl_d;
  logic            credit_ok, credit_take;

  // Header queue and output.
  logic            hq_push, hq_space, hq_out_v, hq_pop;
  rsp_hdr_t        hq_in, hq_out;
  logic [HdrCntW-1:0] hq_usage_unused;
  logic            out_pay_q, out_pay_d;
  logic [LenWidth-1:0] out_rem_q, out_rem_d;

  // ---------------------------------------------------------------------------------------------
  // Receive: flit0, target flits, BE, payload into packet buffer rx_slot_q
  // ---------------------------------------------------------------------------------------------
  assign req_ready_o = !slot_full_q[rx_slot_q];
  assign rx_fire     = req_valid_i && req_ready_o;

  // flit0 fields and the range check of spec §7 (the same for every target of the packet).
  always_comb begin
    rx_hdr.opcode   = req_data_i[OpcodeLsb +: OpcodeWidth];
    rx_hdr.stage    = req_data_i[StageLsb +: StageWidth];
    rx_hdr.maddr    = req_data_i[MaddrLsb +: MaddrWidth];
    rx_hdr.tcount   = req_data_i[TcountLsb +: TcountWidth];
    rx_hdr.src_port = req_data_i[SrcPortLsb +: SrcPortWidth];
    rx_hdr.tag      = req_data_i[TagLsb +: TagWidth];
    rx_hdr.len      = req_data_i[LenLsb +: LenWidth];
    rx_hdr.dtype    = req_data_i[DtypeLsb +: DtypeWidth];
    rx_hdr.rop      = req_data_i[RopLsb +: RopWidth];
    rx_hdr.acc      = (req_data_i[AccLsb +: AccWidth] == AccNative);
    rx_rel          = rx_hdr.maddr - cfg_i.mbase;
    rx_aidx_full    = rx_rel >> cfg_i.log2_bsize;
    rx_bsize        = 49'(1) << cfg_i.log2_bsize;
    rx_off          = rx_rel & (rx_bsize[47:0] - 48'd1);
    rx_end          = 49'(rx_off) + 49'({rx_hdr.len, 4'b0});
    rx_rerr         = (rx_hdr.maddr < cfg_i.mbase) ||
                      ((rx_aidx_full >> cfg_i.log2_al_entries) != '0) || (rx_end > rx_bsize);
  end

  always_comb begin
    logic [RxCntW-1:0] ntf;
    ntf       = RxCntW'((32'(slot_req_q[rx_slot_q].tcount) + TargetsPerFlit - 1) / TargetsPerFlit);
    rx_sec_d  = rx_sec_q;
    rx_cnt_d  = rx_cnt_q;
    rx_slot_d = rx_slot_q;
    rx_wr_hdr = 1'b0;
    rx_wr_tgt = 1'b0;
    rx_wr_be  = 1'b0;
    rx_wr_pay = 1'b0;
    if (rx_fire) begin
      rx_cnt_d = '0;
      unique case (rx_sec_q)
        RxHdr: begin
          rx_wr_hdr = 1'b1;
          if (is_dyn_op(rx_hdr.opcode) && rx_hdr.tcount != '0) begin
            rx_sec_d = RxTgt;
          end else if (is_store_op(rx_hdr.opcode)) begin
            rx_sec_d = RxBe;
          end else begin
            rx_sec_d = RxPay;
          end
        end
        RxTgt: begin
          rx_wr_tgt = 1'b1;
          rx_cnt_d  = rx_cnt_q + RxCntW'(1);
          if (rx_cnt_q + RxCntW'(1) >= ntf) begin
            rx_sec_d = is_store_op(slot_req_q[rx_slot_q].opcode) ? RxBe : RxPay;
            rx_cnt_d = '0;
          end
        end
        RxBe: begin
          rx_wr_be = 1'b1;
          rx_sec_d = RxPay;
        end
        RxPay: begin
          // Flits beyond MaxLen (never sent by the switch) are not stored.
          rx_wr_pay = 32'(rx_cnt_q) < MaxLen;
          rx_cnt_d  = rx_wr_pay ? rx_cnt_q + RxCntW'(1) : rx_cnt_q;
        end
        default: rx_sec_d = RxHdr;
      endcase
      if (req_last_i) begin
        rx_sec_d  = RxHdr;
        rx_cnt_d  = '0;
        rx_slot_d = slot_inc(rx_slot_q);
      end
    end
  end

  // Packet buffer storage (no reset: read only while slot_full_q says the packet is there).
  always_ff @(posedge clk_i) begin
    if (rx_wr_hdr) begin
      slot_req_q[rx_slot_q]  <= rx_hdr;
      slot_aidx_q[rx_slot_q] <= rx_aidx_full[AidxW-1:0];
      slot_off_q[rx_slot_q]  <= rx_off;
    end
    if (rx_wr_tgt) begin
      for (int unsigned l = 0; l < TargetsPerFlit; l++) begin
        if (32'(rx_cnt_q) * TargetsPerFlit + l < MaxTargets) begin
          slot_tgt_q[rx_slot_q][TIdxW'(32'(rx_cnt_q) * TargetsPerFlit + l)] <=
              req_data_i[16*l +: 16];
        end
      end
    end
    if (rx_wr_be) begin
      slot_be_q[rx_slot_q] <= req_data_i;
    end
    if (rx_wr_pay) begin
      slot_pay_q[rx_slot_q][line_t'(rx_cnt_q)] <= req_data_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      slot_rerr_q <= '0;
    end else if (rx_wr_hdr) begin
      slot_rerr_q[rx_slot_q] <= rx_rerr;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // T0: one job per target of the oldest received packet (one job for a non-DYN packet)
  // ---------------------------------------------------------------------------------------------
  assign t_op     = slot_req_q[t_slot_q].opcode;
  assign t_tcount = slot_req_q[t_slot_q].tcount;
  assign t_act   = slot_full_q[t_slot_q] && !slot_tdone_q[t_slot_q];
  assign t_tlast = (32'(t_idx_q) + 1 >= 32'(t_tcount)) || (32'(t_idx_q) == MaxTargets - 1);

  always_comb begin
    t_job       = '0;
    t_job.slot  = t_slot_q;
    t_job.first = (t_idx_q == '0);
    t_job.lcl   = local_t'(32'(slot_tgt_q[t_slot_q][t_idx_q]) % ExpertsPerPort);
    if (!is_dyn_op(t_op)) begin
      t_job.kind = is_req_op(t_op) ? JobIdent : JobNop;
      t_job.last = 1'b1;
    end else if (t_tcount == '0) begin
      t_job.kind = JobNop;
      t_job.last = 1'b1;
    end else if (slot_rerr_q[t_slot_q]) begin
      // Every target fails the range check; a load-reduce stops at its first target.
      t_job.kind = JobRange;
      t_job.last = t_tlast || is_op(t_op, OpDynLdReduce);
    end else begin
      t_job.kind = JobLookup;
      t_job.last = t_tlast;
    end
  end

  // A job moves to key_q when key_q is free or moves on; none from a packet being aborted.
  assign t_load = t_act && (!key_v_q || key_adv) && !(abort && (job_slot_q == t_slot_q));

  always_comb begin
    t_slot_d     = t_slot_q;
    t_idx_d      = t_idx_q;
    slot_tdone_d = slot_tdone_q;
    if (t_load) begin
      if (t_job.last) begin
        slot_tdone_d[t_slot_q] = 1'b1;
        t_slot_d               = slot_inc(t_slot_q);
        t_idx_d                = '0;
      end else begin
        t_idx_d = t_idx_q + tidx_t'(1);
      end
    end
    if (abort) begin
      // A failed load-reduce: skip its remaining targets (if T0 is still inside that packet;
      // if it is done with it, T0 already waits for the next packet of that buffer).
      slot_tdone_d[job_slot_q] = 1'b1;
      if (t_slot_q == job_slot_q && !slot_tdone_q[job_slot_q]) begin
        t_slot_d = slot_inc(t_slot_q);
        t_idx_d  = '0;
      end
    end
    if (job_done && job_last_q) begin
      slot_tdone_d[job_slot_q] = 1'b0;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // T1: AL-TLB lookup, counted when the job moves to res_q
  // ---------------------------------------------------------------------------------------------
  dysharp_al_tlb #(
    .Entries    (TlbEntries),
    .Ways       (TlbWays),
    .LocalWidth (LocalW),
    .AidxWidth  (AidxW),
    .LidxWidth  (LidxW)
  ) u_tlb (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .lookup_local_i (key_q.lcl),
    .lookup_aidx_i  (slot_aidx_q[key_q.slot]),
    .lookup_hit_o   (tlb_hit),
    .lookup_lidx_o  (tlb_lidx),
    .fill_i         (tlb_fill),
    .fill_local_i   (job_local_q),
    .fill_aidx_i    (slot_aidx_q[job_slot_q]),
    .fill_lidx_i    (tlb_fill_lidx),
    .fill_evict_o   (tlb_evict_unused)
  );

  assign key_adv = key_v_q && !blocked_q && (!res_v_q || res_pop);

  always_comb begin
    key_v_d   = key_v_q;
    key_d     = key_q;
    res_v_d   = res_v_q;
    res_d     = res_q;
    blocked_d = blocked_q;
    hits_d    = hits_q;
    misses_d  = misses_q;
    if (res_pop) begin
      res_v_d = 1'b0;
    end
    if (key_adv) begin
      key_v_d = 1'b0;
      res_v_d = 1'b1;
      res_d   = key_q;
      if (key_q.kind == JobLookup) begin
        if (tlb_hit) begin
          res_d.kind = JobHit;
          res_d.lidx = tlb_lidx;
          hits_d     = hits_q + 32'd1;
        end else begin
          res_d.kind = JobMiss;
          misses_d   = misses_q + 32'd1;
          blocked_d  = 1'b1;
        end
      end
    end
    if (unblock) begin
      blocked_d = 1'b0;
    end
    if (abort && key_v_q && (key_q.slot == job_slot_q)) begin
      key_v_d = 1'b0;  // never looked up (T1 was blocked), so never counted
    end
    if (t_load) begin
      key_v_d = 1'b1;
      key_d   = t_job;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Issue: walks, AL entry writes and data lines, in the golden order
  // ---------------------------------------------------------------------------------------------
  assign j_req       = slot_req_q[job_slot_q];
  assign j_we        = is_store_op(j_req.opcode);
  assign j_rdkind    = rd_kind_f(j_req.opcode, job_first_q, job_last_q);
  assign j_hpush     = !j_we && (!is_op(j_req.opcode, OpDynLdReduce) || job_last_q);
  assign j_credit    = !j_we && (j_rdkind inside {RdRaw, RdFinInit, RdFinStep});
  assign j_rem       = (LineW+1)'(j_req.len) - (LineW+1)'(line_q);
  assign j_nb        = (32'(j_rem) >= MemLines) ? nlines_t'(MemLines) : nlines_t'(j_rem);
  assign j_line_last = (32'(j_rem) <= MemLines);
  assign mreq_free   = !mreq_v_q || mem_req_ready_i;
  assign credit_ok   = (32'(pay_usage) + 32'(pay_infl_q)) < PayDepth;
  assign ctr_full    = {1'b0, ctr_q[job_local_q]} >= (33'd1 << cfg_i.log2_slots);

  always_comb begin
    logic [47:0] ea;
    ea            = '0;
    is_d          = is_q;
    job_slot_d    = job_slot_q;
    job_local_d   = job_local_q;
    job_first_d   = job_first_q;
    job_last_d    = job_last_q;
    line_d        = line_q;
    addr_d        = addr_q;
    walk_addr_d   = walk_addr_q;
    walk_lane_d   = walk_lane_q;
    alloc_word_d  = alloc_word_q;
    err_code_d    = err_code_q;
    mreq_load     = 1'b0;
    mreq_we_d     = mreq_we_q;
    mreq_addr_d   = mreq_addr_q;
    mreq_lines_d  = mreq_lines_q;
    mreq_wdata_d  = mreq_wdata_q;
    mreq_wstrb_d  = mreq_wstrb_q;
    tagq_push     = 1'b0;
    tagq_in       = '0;
    credit_take   = 1'b0;
    hq_push       = 1'b0;
    hq_in         = '0;
    can_pop       = 1'b0;
    job_done      = 1'b0;
    unblock       = 1'b0;
    abort         = 1'b0;
    tlb_fill      = 1'b0;
    tlb_fill_lidx = walk_word[LidxW-1:0];
    ctr_inc       = 1'b0;
    err_inc       = 1'b0;

    unique case (is_q)
      IsIdle: begin
        can_pop = 1'b1;
      end

      IsLines: begin
        if (mreq_free && (j_we || tagq_space) && (!j_credit || credit_ok) &&
            (!(j_hpush && line_q == '0) || hq_space)) begin
          mreq_load    = 1'b1;
          mreq_we_d    = j_we;
          mreq_addr_d  = addr_q;
          mreq_lines_d = j_nb;
          mreq_wdata_d = '0;
          mreq_wstrb_d = '0;
          if (j_we) begin
            for (int unsigned i = 0; i < MemLines; i++) begin
              if (i < 32'(j_nb)) begin
                mreq_wdata_d[128*i +: 128] = slot_pay_q[job_slot_q][line_t'(32'(line_q) + i)];
                mreq_wstrb_d[16*i +: 16]   = be_strb_f(slot_be_q[job_slot_q],
                                                       line_t'(32'(line_q) + i));
              end
            end
          end else begin
            tagq_push   = 1'b1;
            tagq_in     = '{kind: j_rdkind, line: line_q, n: j_nb, dtype: j_req.dtype,
                            rop: j_req.rop, native: j_req.acc};
            credit_take = j_credit;
          end
          if (j_hpush && line_q == '0) begin
            hq_push = 1'b1;
            hq_in   = '{npay: j_req.len,
                        flit: rsp_hdr_f(j_req, is_op(j_req.opcode, OpRead) ? OpRspRead :
                                        OpRspPartial, ErrNone)};
          end
          addr_d = addr_q + {44'(j_nb), 4'b0000};
          line_d = line_t'(32'(line_q) + 32'(j_nb));
          if (j_line_last) begin
            job_done = 1'b1;
            is_d     = IsIdle;
            can_pop  = 1'b1;
          end
        end
      end

      IsWalk: begin
        if (mreq_free && tagq_space) begin
          mreq_load    = 1'b1;
          mreq_we_d    = 1'b0;
          mreq_addr_d  = walk_addr_q;
          mreq_lines_d = nlines_t'(1);
          mreq_wdata_d = '0;
          mreq_wstrb_d = '0;
          tagq_push    = 1'b1;
          tagq_in      = '{kind: RdWalk, line: '0, n: nlines_t'(1), dtype: '0, rop: '0,
                           native: 1'b0};
          is_d         = IsWalkWait;
        end
      end

      IsWalkWait: begin
        if (walk_rsp) begin
          unblock = 1'b1;
          line_d  = '0;
          if (walk_word[31]) begin
            // Valid entry: fill, then the data lines.
            tlb_fill = 1'b1;
            addr_d   = vaddr_f(job_local_q, walk_word[LidxW-1:0], slot_off_q[job_slot_q],
                               cfg_i.data_base, cfg_i.log2_slots, cfg_i.log2_bsize);
            is_d     = IsLines;
          end else if (is_op(j_req.opcode, OpDynSt)) begin
            if (ctr_full) begin
              err_code_d = ErrAlloc;
              is_d       = IsFinish;
            end else begin
              // Allocate LIdx = counter[local]++, write the entry, fill.
              ctr_inc       = 1'b1;
              tlb_fill      = 1'b1;
              tlb_fill_lidx = ctr_q[job_local_q][LidxW-1:0];
              alloc_word_d  = {1'b1, ctr_q[job_local_q][30:0]};
              addr_d        = vaddr_f(job_local_q, ctr_q[job_local_q][LidxW-1:0],
                                      slot_off_q[job_slot_q], cfg_i.data_base,
                                      cfg_i.log2_slots, cfg_i.log2_bsize);
              is_d          = IsAllocWr;
            end
          end else begin
            // Combine of an entry never written: the packet ends here.
            err_code_d = ErrUnmapped;
            abort      = 1'b1;
            job_last_d = 1'b1;
            is_d       = IsFinish;
          end
        end
      end

      IsAllocWr: begin
        if (mreq_free) begin
          mreq_load    = 1'b1;
          mreq_we_d    = 1'b1;
          mreq_addr_d  = walk_addr_q;
          mreq_lines_d = nlines_t'(1);
          mreq_wdata_d = (128*MemLines)'(128'(alloc_word_q) << {walk_lane_q, 3'b000});
          mreq_wstrb_d = (16*MemLines)'(16'hF << walk_lane_q);
          is_d         = IsLines;
        end
      end

      IsFinish: begin
        if (err_code_q == ErrNone || hq_space) begin
          if (err_code_q != ErrNone) begin
            err_inc = 1'b1;
            hq_push = 1'b1;
            if (is_op(j_req.opcode, OpDynSt)) begin
              hq_in = '{npay: '0, flit: rsp_hdr_f(j_req, OpRspError, err_code_q)};
            end else begin
              hq_in = '{npay: '0, flit: rsp_hdr_f(j_req, OpRspPartial, err_code_q)};
            end
          end
          job_done = 1'b1;
          is_d     = IsIdle;
        end
      end

      default: is_d = IsIdle;
    endcase

    // Start the next job (in the cycle the previous one issues its last line, or when idle).
    res_pop = can_pop && res_v_q;
    if (res_pop) begin
      job_slot_d  = res_q.slot;
      job_local_d = res_q.lcl;
      job_first_d = res_q.first;
      job_last_d  = res_q.last;
      line_d      = '0;
      err_code_d  = ErrNone;
      unique case (res_q.kind)
        JobIdent: begin
          addr_d = slot_req_q[res_q.slot].maddr;
          is_d   = IsLines;
        end
        JobHit: begin
          addr_d = vaddr_f(res_q.lcl, res_q.lidx, slot_off_q[res_q.slot], cfg_i.data_base,
                           cfg_i.log2_slots, cfg_i.log2_bsize);
          is_d   = IsLines;
        end
        JobMiss: begin
          // AL entry ALBase + 4*(local << Log2AlEntries | AIdx): its line and byte lane.
          ea          = cfg_i.al_base + (((48'(res_q.lcl) << cfg_i.log2_al_entries) +
                                          48'(slot_aidx_q[res_q.slot])) << 2);
          walk_addr_d = {ea[47:4], 4'b0000};
          walk_lane_d = ea[3:0];
          is_d        = IsWalk;
        end
        JobRange: begin
          err_code_d = ErrRange;
          is_d       = IsFinish;
        end
        default: begin  // JobNop
          is_d = IsFinish;
        end
      endcase
    end
  end

  // The walk's line (line 0 of its beat) and the AL entry in it.
  assign walk_rsp  = rsp_v_q && (tagq_out.kind == RdWalk);
  assign walk_word = 32'(rsp_d_q[127:0] >> {walk_lane_q, 3'b000});

  // Slot release: a packet's buffer is free once its last job is done.
  always_comb begin
    slot_full_d = slot_full_q;
    if (rx_fire && req_last_i) begin
      slot_full_d[rx_slot_q] = 1'b1;
    end
    if (job_done && job_last_q) begin
      slot_full_d[job_slot_q] = 1'b0;
    end
  end

  always_comb begin
    mreq_v_d = mreq_v_q;
    if (mreq_load) begin
      mreq_v_d = 1'b1;
    end else if (mem_req_ready_i) begin
      mreq_v_d = 1'b0;
    end
  end

  assign mem_req_valid_o = mreq_v_q;
  assign mem_req_we_o    = mreq_we_q;
  assign mem_req_addr_o  = mreq_addr_q;
  assign mem_req_lines_o = mreq_lines_q;
  assign mem_req_wdata_o = mreq_wdata_q;
  assign mem_req_wstrb_o = mreq_wstrb_q;

  // ---------------------------------------------------------------------------------------------
  // Read tags and read data
  // ---------------------------------------------------------------------------------------------
  dysharp_fifo #(
    .Width ($bits(rd_tag_t)),
    .Depth (TagDepth)
  ) u_tag_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (tagq_push),
    .in_ready_o  (tagq_space),
    .in_data_i   (tagq_in),
    .out_valid_o (tagq_out_v),
    .out_ready_i (rsp_v_q),
    .out_data_o  (tagq_out),
    .usage_o     (tagq_usage)
  );

  // The hub always takes read data (payload FIFO room is reserved when a read is issued).
  assign mem_rsp_ready_o = 1'b1;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rsp_v_q <= 1'b0;
    end else begin
      rsp_v_q <= mem_rsp_valid_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (mem_rsp_valid_i) begin
      rsp_d_q <= mem_rsp_rdata_i;
    end
  end

  // f32 lane accumulation of load-reduce lines (targets in list order, spec §9), one lane group
  // per line of the beat. Lines past the beat's count are not computed (left zero).
  always_comb begin
    logic first_in;
    first_in = tagq_out.kind inside {RdFinInit, RdAccInit};
    for (int unsigned i = 0; i < MemLines; i++) begin
      acc_idx[i] = line_t'(32'(tagq_out.line) + i);
      acc_new[i] = '0;
      acc_fin[i] = '0;
      if (rsp_v_q && i < 32'(tagq_out.n) && !(tagq_out.kind inside {RdWalk, RdRaw})) begin
        acc_new[i] = first_in ? fp_acc_init(tagq_out.dtype, rsp_d_q[128*i +: 128]) :
                                fp_acc_step(tagq_out.dtype, tagq_out.rop, tagq_out.native,
                                            acc_q[acc_idx[i]], rsp_d_q[128*i +: 128]);
        acc_fin[i] = fp_acc_finish(tagq_out.dtype, acc_new[i]);
      end
    end
  end

  assign acc_we   = rsp_v_q && (tagq_out.kind inside {RdAccInit, RdAccStep});
  assign pay_push = rsp_v_q && (tagq_out.kind inside {RdRaw, RdFinInit, RdFinStep});

  always_comb begin
    pay_in.n = tagq_out.n;
    for (int unsigned i = 0; i < MemLines; i++) begin
      pay_in.data[128*i +: 128] = (tagq_out.kind == RdRaw) ? rsp_d_q[128*i +: 128] : acc_fin[i];
    end
  end

  always_ff @(posedge clk_i) begin
    if (acc_we) begin
      for (int unsigned i = 0; i < MemLines; i++) begin
        if (i < 32'(tagq_out.n)) begin
          acc_q[acc_idx[i]] <= acc_new[i];
        end
      end
    end
  end

  always_comb begin
    pay_infl_d = pay_infl_q;
    if (credit_take && !pay_push) begin
      pay_infl_d = pay_infl_q + PayCntW'(1);
    end else if (pay_push && !credit_take) begin
      pay_infl_d = pay_infl_q - PayCntW'(1);
    end
  end

  dysharp_fifo #(
    .Width ($bits(pay_beat_t)),
    .Depth (PayDepth)
  ) u_pay_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (pay_push),
    .in_ready_o  (pay_space),
    .in_data_i   (pay_in),
    .out_valid_o (pay_out_v),
    .out_ready_i (pay_pop),
    .out_data_o  (pay_out),
    .usage_o     (pay_usage)
  );

  // ---------------------------------------------------------------------------------------------
  // Responses: a header, then its payload flits
  // ---------------------------------------------------------------------------------------------
  dysharp_fifo #(
    .Width ($bits(rsp_hdr_t)),
    .Depth (HdrDepth)
  ) u_hdr_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (hq_push),
    .in_ready_o  (hq_space),
    .in_data_i   (hq_in),
    .out_valid_o (hq_out_v),
    .out_ready_i (hq_pop),
    .out_data_o  (hq_out),
    .usage_o     (hq_usage_unused)
  );

  always_comb begin
    out_pay_d = out_pay_q;
    out_rem_d = out_rem_q;
    hq_pop    = 1'b0;
    pay_pop   = 1'b0;
    pay_idx_d = pay_idx_q;
    if (!out_pay_q) begin
      rsp_valid_o = hq_out_v;
      rsp_data_o  = hq_out.flit;
      rsp_last_o  = (hq_out.npay == '0);
      if (hq_out_v && rsp_ready_i) begin
        hq_pop    = 1'b1;
        out_pay_d = (hq_out.npay != '0);
        out_rem_d = hq_out.npay;
      end
    end else begin
      rsp_valid_o = pay_out_v;
      rsp_data_o  = pay_out.data[128*pay_idx_q +: 128];
      rsp_last_o  = (out_rem_q == LenWidth'(1));
      if (pay_out_v && rsp_ready_i) begin
        // The head beat leaves after its last flit.
        pay_pop   = (32'(pay_idx_q) + 1 >= 32'(pay_out.n));
        pay_idx_d = pay_pop ? '0 : pay_idx_q + nlines_t'(1);
        out_rem_d = out_rem_q - LenWidth'(1);
        out_pay_d = (out_rem_q != LenWidth'(1));
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------------------------
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      slot_full_q  <= '0;
      slot_tdone_q <= '0;
      rx_slot_q    <= '0;
      rx_sec_q     <= RxHdr;
      rx_cnt_q     <= '0;
      t_slot_q     <= '0;
      t_idx_q      <= '0;
      key_v_q      <= 1'b0;
      key_q        <= '0;
      res_v_q      <= 1'b0;
      res_q        <= '0;
      blocked_q    <= 1'b0;
      hits_q       <= '0;
      misses_q     <= '0;
      is_q         <= IsIdle;
      job_slot_q   <= '0;
      job_local_q  <= '0;
      job_first_q  <= 1'b0;
      job_last_q   <= 1'b0;
      line_q       <= '0;
      addr_q       <= '0;
      walk_addr_q  <= '0;
      walk_lane_q  <= '0;
      alloc_word_q <= '0;
      err_code_q   <= ErrNone;
      mreq_v_q     <= 1'b0;
      mreq_we_q    <= 1'b0;
      mreq_addr_q  <= '0;
      mreq_lines_q <= '0;
      mreq_wdata_q <= '0;
      mreq_wstrb_q <= '0;
      pay_infl_q   <= '0;
      out_pay_q    <= 1'b0;
      out_rem_q    <= '0;
      pay_idx_q    <= '0;
    end else begin
      slot_full_q  <= slot_full_d;
      slot_tdone_q <= slot_tdone_d;
      rx_slot_q    <= rx_slot_d;
      rx_sec_q     <= rx_sec_d;
      rx_cnt_q     <= rx_cnt_d;
      t_slot_q     <= t_slot_d;
      t_idx_q      <= t_idx_d;
      key_v_q      <= key_v_d;
      key_q        <= key_d;
      res_v_q      <= res_v_d;
      res_q        <= res_d;
      blocked_q    <= blocked_d;
      hits_q       <= hits_d;
      misses_q     <= misses_d;
      is_q         <= is_d;
      job_slot_q   <= job_slot_d;
      job_local_q  <= job_local_d;
      job_first_q  <= job_first_d;
      job_last_q   <= job_last_d;
      line_q       <= line_d;
      addr_q       <= addr_d;
      walk_addr_q  <= walk_addr_d;
      walk_lane_q  <= walk_lane_d;
      alloc_word_q <= alloc_word_d;
      err_code_q   <= err_code_d;
      mreq_v_q     <= mreq_v_d;
      mreq_we_q    <= mreq_we_d;
      mreq_addr_q  <= mreq_addr_d;
      mreq_lines_q <= mreq_lines_d;
      mreq_wdata_q <= mreq_wdata_d;
      mreq_wstrb_q <= mreq_wstrb_d;
      pay_infl_q   <= pay_infl_d;
      out_pay_q    <= out_pay_d;
      out_rem_q    <= out_rem_d;
      pay_idx_q    <= pay_idx_d;
    end
  end

  // Allocation and error counters.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned e = 0; e < ExpertsPerPort; e++) begin
        ctr_q[e] <= '0;
      end
      for (int unsigned c = 0; c < 3; c++) begin
        err_q[c] <= '0;
      end
    end else begin
      if (ctr_inc) begin
        ctr_q[job_local_q] <= ctr_q[job_local_q] + 32'd1;
      end
      if (err_inc) begin
        unique case (err_code_q)
          ErrUnmapped: err_q[0] <= err_q[0] + 32'd1;
          ErrRange:    err_q[1] <= err_q[1] + 32'd1;
          ErrAlloc:    err_q[2] <= err_q[2] + 32'd1;
          default:     ;
        endcase
      end
    end
  end

  assign tlb_hits_o   = hits_q;
  assign tlb_misses_o = misses_q;
  assign err_count_o  = {err_q[2], err_q[1], err_q[0]};

  // Outputs of shared blocks read only by the assertions, or not at all (named *unused*).
  logic unused_sig;
  assign unused_sig = ^{tlb_evict_unused, pay_space, hq_usage_unused, tagq_usage};

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  if (ExpertsPerPort < 1 || MaxTargets < 1) begin : gen_param_check
    $error("dysharp_hub: ExpertsPerPort and MaxTargets must be at least 1");
  end
  if (MemLines < 1 || MemLines > MaxLen) begin : gen_lines_check
    $error("dysharp_hub: MemLines must be 1..MaxLen");
  end
  // err_count_o holds the hubs' codes of the package's table, in order.
  if (32'(ErrUnmapped) != FirstHubErrCode || 32'(ErrAlloc) != LastHubErrCode ||
      32'(ErrRange) != FirstHubErrCode + 1) begin : gen_code_check
    $error("dysharp_hub: the hub's error codes are not FirstHubErrCode..LastHubErrCode");
  end

  // Output streams: valid stays high and data/last stay stable until accepted.
  a_rsp_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
    rsp_valid_o && !rsp_ready_i |=> rsp_valid_o && $stable(rsp_data_o) && $stable(rsp_last_o));
  a_mem_req_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
    mem_req_valid_o && !mem_req_ready_i |=> mem_req_valid_o && $stable(mem_req_we_o) &&
    $stable(mem_req_addr_o) && $stable(mem_req_lines_o) && $stable(mem_req_wdata_o) &&
    $stable(mem_req_wstrb_o));
  // A beat has 1..MemLines lines.
  a_mem_req_lines: assert property (@(posedge clk_i) disable iff (!rst_ni)
    mem_req_valid_o |-> mem_req_lines_o != '0 && 32'(mem_req_lines_o) <= MemLines);
  // Input stream (the switch's obligation): an offered flit is held until accepted.
  a_req_stable: assert property (@(posedge clk_i) disable iff (!rst_ni)
    req_valid_i && !req_ready_o |=> req_valid_i && $stable(req_data_i) && $stable(req_last_i));

  // Requests are legal (the switch checked them): len 1..16, tcount 1..MaxTargets for DYN ops.
  a_req_len: assert property (@(posedge clk_i) disable iff (!rst_ni)
    rx_wr_hdr && is_req_op(rx_hdr.opcode) |-> rx_hdr.len >= 1 && 32'(rx_hdr.len) <= MaxLen);
  a_req_tcount: assert property (@(posedge clk_i) disable iff (!rst_ni)
    rx_wr_hdr && is_dyn_op(rx_hdr.opcode) |->
      rx_hdr.tcount != '0 && 32'(rx_hdr.tcount) <= MaxTargets);
  a_req_payload: assert property (@(posedge clk_i) disable iff (!rst_ni)
    rx_wr_pay |-> 32'(rx_cnt_q) < 32'(slot_req_q[rx_slot_q].len));

  // Memory read data only for an outstanding read; read data never overflows the payload FIFO.
  a_rsp_has_tag: assert property (@(posedge clk_i) disable iff (!rst_ni)
    rsp_v_q |-> tagq_out_v);
  a_mem_rsp_outstanding: assert property (@(posedge clk_i) disable iff (!rst_ni)
    mem_rsp_valid_i |-> 32'(tagq_usage) > 32'(rsp_v_q));
  a_credit: assert property (@(posedge clk_i) disable iff (!rst_ni)
    32'(pay_usage) + 32'(pay_infl_q) <= PayDepth);
  a_pay_room: assert property (@(posedge clk_i) disable iff (!rst_ni)
    pay_push |-> pay_space);
  a_infl_underflow: assert property (@(posedge clk_i) disable iff (!rst_ni)
    pay_push |-> pay_infl_q != '0 || credit_take);
  a_tag_room: assert property (@(posedge clk_i) disable iff (!rst_ni)
    tagq_push |-> tagq_space);
  a_hdr_room: assert property (@(posedge clk_i) disable iff (!rst_ni)
    hq_push |-> hq_space);
  // One walk at a time, and its data arrives only while the issue stage and T1 wait for it.
  a_walk_once: assert property (@(posedge clk_i) disable iff (!rst_ni)
    walk_rsp |-> is_q == IsWalkWait && blocked_q && tagq_out.n == nlines_t'(1));
  // A payload beat holds 1..MemLines flits, and a response's flits come from whole beats.
  a_pay_beat: assert property (@(posedge clk_i) disable iff (!rst_ni)
    pay_out_v |-> pay_out.n != '0 && 32'(pay_out.n) <= MemLines && pay_idx_q < pay_out.n);
  a_memreq_load: assert property (@(posedge clk_i) disable iff (!rst_ni)
    mreq_load |-> mreq_free);
  // Payload of a response only after its header.
  a_pay_order: assert property (@(posedge clk_i) disable iff (!rst_ni)
    pay_pop |-> out_pay_q);
  // The job in flight belongs to a received packet.
  a_job_slot: assert property (@(posedge clk_i) disable iff (!rst_ni)
    is_q != IsIdle |-> slot_full_q[job_slot_q]);
  a_res_slot: assert property (@(posedge clk_i) disable iff (!rst_ni)
    res_v_q |-> slot_full_q[res_q.slot]);
  a_key_slot: assert property (@(posedge clk_i) disable iff (!rst_ni)
    key_v_q |-> slot_full_q[key_q.slot]);
  // An allocation never exceeds SlotsPerExpert.
  a_alloc_bound: assert property (@(posedge clk_i) disable iff (!rst_ni)
    ctr_inc |-> !ctr_full);
`endif

endmodule
