// dysharp_hub_issue: the memory request issue stage of the hub (docs/architecture.md,
// "dysharp_hub"; spec §5, §7).
//
// Owns the memory request register and runs each job from the walk stage in order: for a TLB
// miss a walk (one 16-byte read of the line holding the AL entry; the walk word is used in the
// cycle it returns), then on a valid entry a fill; on an invalid entry a Dispatch allocates
// (LIdx = counter[local]++, one AL entry line write, a fill) while a Combine fails with
// ERR_UNMAPPED and ends its packet (abort_o); then the `len` data lines, MemLines per beat
// (writes from the packet buffer for stores, reads for loads). A request is one beat of
// 1..MemLines consecutive 16-byte lines (a walk and an AL write are one line). Reads may be
// pipelined: each pushes a read tag (what its data is for) into the tag FIFO (TagDepth
// outstanding beats), and a read whose data goes to the payload FIFO takes a credit first. The
// response header of a load (or of an error) goes into the output stage's header queue with the
// first beat of its job. Counts allocations per expert and the hub's error codes.

`include "dysharp_assert.svh"

module dysharp_hub_issue import dysharp_pkg::*, dysharp_hub_pkg::*; #(
  parameter  int unsigned ExpertsPerPort = 32,
  parameter  bit          DynamicOps     = 1'b1, // 0: static groups and unicast only (spec §5.7)
  parameter  int unsigned MemLines       = 4,
  // A target job (dysharp_hub_walk).
  parameter  type         job_t          = logic,
  // A read tag: struct {rd_kind_e kind; line_t line; nlines_t n; dtype; rop; native;}.
  parameter  type         rd_tag_t       = logic,
  // A memory request: struct {we; addr; nlines_t lines; wdata; wstrb;} (dysharp_hub).
  parameter  type         mem_req_t      = logic,
  localparam int unsigned LocalW         = (ExpertsPerPort > 1) ? $clog2(ExpertsPerPort) : 1
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  input  hub_cfg_t                cfg_i,
  // Packet buffers that are full (assertions only).
  input  logic [NumSlots-1:0]     full_i,
  // Jobs from the walk stage, and the packet buffer of the job at the head (res_i.slot).
  input  logic                    res_valid_i,
  output logic                    res_ready_o,
  input  job_t                    res_i,
  input  logic [47:0]             res_maddr_i,
  input  logic [47:0]             res_off_i,
  input  aidx_t                   res_aidx_i,
  // The packet buffer of the job in flight: job_slot_o; its payload lines from line_q are
  // job_pay_i, read from the buffer's RAM at pay_slot_o / pay_line_o (this cycle's next job slot
  // and line: the read is registered).
  output slot_t                   job_slot_o,
  output slot_t                   pay_slot_o,
  output line_t                   pay_line_o,
  input  hub_req_t                job_req_i,
  input  logic [47:0]             job_off_i,
  input  aidx_t                   job_aidx_i,
  input  flit_t                   job_be_i,
  input  logic [128*MemLines-1:0] job_pay_i,
  // Job control to the receive and walk stages: the packet's last job is done (release its
  // buffer), a failed load-reduce, the walk resolved; the TLB fill.
  output logic                    rel_o,
  output logic                    abort_o,
  output logic                    unblock_o,
  output logic                    fill_o,
  output logic [LocalW-1:0]       fill_local_o,
  output aidx_t                   fill_aidx_o,
  output lidx_t                   fill_lidx_o,
  // Memory requests.
  output logic                    mem_req_valid_o,
  input  logic                    mem_req_ready_i,
  output mem_req_t                mem_req_o,
  // Read tags, oldest first, to the response stage (popped when the read's data is taken).
  output logic                    tag_valid_o,
  input  logic                    tag_ready_i,
  output rd_tag_t                 tag_o,
  output logic [TagCntW-1:0]      tag_usage_o,
  // The walk's read data (line 0 of its beat), in the cycle the response stage has it.
  input  logic                    walk_rsp_i,
  input  logic [127:0]            walk_line_i,
  // Payload FIFO credits (response stage): one may be taken, take one.
  input  logic                    credit_ok_i,
  output logic                    credit_take_o,
  // Response headers to the output stage: pushed only while it has room.
  output logic                    hdr_push_o,
  input  logic                    hdr_space_i,
  output rsp_hdr_t                hdr_o,
  // Counters.
  output logic [2:0][31:0]        err_count_o   // codes 11, 12, 13 at [c-11]
);

  localparam int unsigned LinesW = $clog2(MemLines + 1);

  typedef logic [LocalW-1:0] local_t;
  typedef logic [LinesW-1:0] nlines_t;

  typedef enum logic [2:0] {
    IsIdle     = 3'd0,
    IsLines    = 3'd1,
    IsWalk     = 3'd2,
    IsWalkWait = 3'd3,
    IsAllocWr  = 3'd4,
    IsFinish   = 3'd5
  } is_state_e;

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

  is_state_e       is_q, is_d;
  slot_t           job_slot_q, job_slot_d;
  local_t          job_local_q, job_local_d;
  logic            job_first_q, job_first_d;
  logic            job_last_q, job_last_d;
  line_t           line_q, line_d;
  logic [47:0]     addr_q, addr_d;
  logic [47:0]     walk_addr_q, walk_addr_d;
  logic [3:0]      walk_lane_q, walk_lane_d;
  logic [31:0]     walk_word;
  logic [31:0]     alloc_word_q, alloc_word_d;
  ecode_e          err_code_q, err_code_d;
  logic            j_we, j_hpush, j_credit, j_line_last;
  logic [LineW:0]  j_rem;         // data lines left in the job
  nlines_t         j_nb;          // lines in the next data beat
  rd_kind_e        j_rdkind;
  logic            can_pop, res_pop, job_done;
  logic            ctr_full;
  job_kind_e       res_kind;      // the job kind at the head (DynamicOps = 0: identity or no-op)
  logic [31:0]     ctr_q [ExpertsPerPort];
  logic            ctr_inc;
  logic [31:0]     err_q [3];
  logic            err_inc;

  // Memory request register.
  logic            mreq_v_q, mreq_v_d;
  mem_req_t        mreq_q, mreq_d;
  logic            mreq_free, mreq_load;

  // Read tags.
  logic            tagq_push, tagq_space;
  rd_tag_t         tagq_in;

  // Without the dynamic operations (spec §5.7) every job is an identity or a no-op: the walk,
  // allocation and AL paths, the allocation counters and the AL error counters compile out.
  assign res_kind    = (DynamicOps || (res_i.kind == JobIdent)) ? res_i.kind : JobNop;
  assign job_slot_o  = job_slot_q;
  assign pay_slot_o  = job_slot_d;
  assign pay_line_o  = line_d;
  assign j_we        = op_is_store(job_req_i.opcode);
  assign j_rdkind    = rd_kind_f(job_req_i.opcode, job_first_q, job_last_q);
  assign j_hpush     = !j_we && (!is_op(job_req_i.opcode, OpDynLdReduce) || job_last_q);
  assign j_credit    = !j_we && (j_rdkind inside {RdRaw, RdFinInit, RdFinStep});
  assign j_rem       = (LineW+1)'(job_req_i.len) - (LineW+1)'(line_q);
  assign j_nb        = (32'(j_rem) >= MemLines) ? nlines_t'(MemLines) : nlines_t'(j_rem);
  assign j_line_last = (32'(j_rem) <= MemLines);
  assign mreq_free   = !mreq_v_q || mem_req_ready_i;
  assign ctr_full    = {1'b0, ctr_q[job_local_q]} >= (33'd1 << cfg_i.log2_slots);

  // The AL entry in the walk's line.
  assign walk_word = 32'(walk_line_i >> {walk_lane_q, 3'b000});

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
    mreq_d        = mreq_q;
    tagq_push     = 1'b0;
    tagq_in       = '0;
    credit_take_o = 1'b0;
    hdr_push_o    = 1'b0;
    hdr_o         = '0;
    can_pop       = 1'b0;
    job_done      = 1'b0;
    unblock_o     = 1'b0;
    abort_o       = 1'b0;
    fill_o        = 1'b0;
    fill_lidx_o   = walk_word[LidxW-1:0];
    ctr_inc       = 1'b0;
    err_inc       = 1'b0;

    unique case (is_q)
      IsIdle: begin
        can_pop = 1'b1;
      end

      IsLines: begin
        if (mreq_free && (j_we || tagq_space) && (!j_credit || credit_ok_i) &&
            (!(j_hpush && line_q == '0) || hdr_space_i)) begin
          mreq_load    = 1'b1;
          mreq_d       = '0;
          mreq_d.we    = j_we;
          mreq_d.addr  = addr_q;
          mreq_d.lines = j_nb;
          if (j_we) begin
            for (int unsigned i = 0; i < MemLines; i++) begin
              if (i < 32'(j_nb)) begin
                mreq_d.wdata[128*i +: 128] = job_pay_i[128*i +: 128];
                mreq_d.wstrb[16*i +: 16]   = be_strb_f(job_be_i, line_t'(32'(line_q) + i));
              end
            end
          end else begin
            tagq_push     = 1'b1;
            tagq_in       = '{kind: j_rdkind, line: line_q, n: j_nb, dtype: job_req_i.dtype,
                              rop: job_req_i.rop, native: job_req_i.acc};
            credit_take_o = j_credit;
          end
          if (j_hpush && line_q == '0) begin
            hdr_push_o = 1'b1;
            hdr_o      = '{npay: job_req_i.len,
                           flit: rsp_hdr_f(job_req_i, is_op(job_req_i.opcode, OpRead) ?
                                           OpRspRead : OpRspPartial, ErrNone)};
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
          mreq_d       = '0;
          mreq_d.addr  = walk_addr_q;
          mreq_d.lines = nlines_t'(1);
          tagq_push    = 1'b1;
          tagq_in      = '{kind: RdWalk, line: '0, n: nlines_t'(1), dtype: '0, rop: '0,
                           native: 1'b0};
          is_d         = IsWalkWait;
        end
      end

      IsWalkWait: begin
        if (walk_rsp_i) begin
          unblock_o = 1'b1;
          line_d    = '0;
          if (walk_word[31]) begin
            // Valid entry: fill, then the data lines.
            fill_o = 1'b1;
            addr_d = vaddr_f(job_local_q, walk_word[LidxW-1:0], job_off_i, cfg_i.data_base,
                             cfg_i.log2_slots, cfg_i.log2_bsize);
            is_d   = IsLines;
          end else if (is_op(job_req_i.opcode, OpDynSt)) begin
            if (ctr_full) begin
              err_code_d = ErrAlloc;
              is_d       = IsFinish;
            end else begin
              // Allocate LIdx = counter[local]++, write the entry, fill.
              ctr_inc      = 1'b1;
              fill_o       = 1'b1;
              fill_lidx_o  = ctr_q[job_local_q][LidxW-1:0];
              alloc_word_d = {1'b1, ctr_q[job_local_q][30:0]};
              addr_d       = vaddr_f(job_local_q, ctr_q[job_local_q][LidxW-1:0], job_off_i,
                                     cfg_i.data_base, cfg_i.log2_slots, cfg_i.log2_bsize);
              is_d         = IsAllocWr;
            end
          end else begin
            // Combine of an entry never written: the packet ends here.
            err_code_d = ErrUnmapped;
            abort_o    = 1'b1;
            job_last_d = 1'b1;
            is_d       = IsFinish;
          end
        end
      end

      IsAllocWr: begin
        if (mreq_free) begin
          mreq_load    = 1'b1;
          mreq_d       = '0;
          mreq_d.we    = 1'b1;
          mreq_d.addr  = walk_addr_q;
          mreq_d.lines = nlines_t'(1);
          mreq_d.wdata = (128*MemLines)'(128'(alloc_word_q) << {walk_lane_q, 3'b000});
          mreq_d.wstrb = (16*MemLines)'(16'hF << walk_lane_q);
          is_d         = IsLines;
        end
      end

      IsFinish: begin
        if (err_code_q == ErrNone || hdr_space_i) begin
          if (err_code_q != ErrNone) begin
            err_inc    = 1'b1;
            hdr_push_o = 1'b1;
            if (is_op(job_req_i.opcode, OpDynSt)) begin
              hdr_o = '{npay: '0, flit: rsp_hdr_f(job_req_i, OpRspError, err_code_q)};
            end else begin
              hdr_o = '{npay: '0, flit: rsp_hdr_f(job_req_i, OpRspPartial, err_code_q)};
            end
          end
          job_done = 1'b1;
          is_d     = IsIdle;
        end
      end

      default: is_d = IsIdle;
    endcase

    // Start the next job (in the cycle the previous one issues its last line, or when idle).
    res_pop = can_pop && res_valid_i;
    if (res_pop) begin
      job_slot_d  = res_i.slot;
      job_local_d = res_i.lcl;
      job_first_d = res_i.first;
      job_last_d  = res_i.last;
      line_d      = '0;
      err_code_d  = ErrNone;
      unique case (res_kind)
        JobIdent: begin
          addr_d = res_maddr_i;
          is_d   = IsLines;
        end
        JobHit: begin
          addr_d = vaddr_f(res_i.lcl, res_i.lidx, res_off_i, cfg_i.data_base,
                           cfg_i.log2_slots, cfg_i.log2_bsize);
          is_d   = IsLines;
        end
        JobMiss: begin
          // AL entry ALBase + 4*(local << Log2AlEntries | AIdx): its line and byte lane.
          ea          = cfg_i.al_base + (((48'(res_i.lcl) << cfg_i.log2_al_entries) +
                                          48'(res_aidx_i)) << 2);
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

  assign res_ready_o  = can_pop;
  assign rel_o        = job_done && job_last_q;
  assign fill_local_o = job_local_q;
  assign fill_aidx_o  = job_aidx_i;

  always_comb begin
    mreq_v_d = mreq_v_q;
    if (mreq_load) begin
      mreq_v_d = 1'b1;
    end else if (mem_req_ready_i) begin
      mreq_v_d = 1'b0;
    end
  end

  assign mem_req_valid_o = mreq_v_q;
  assign mem_req_o       = mreq_q;

  // Read tags, in memory order.
  dysharp_fifo #(
    .Width ($bits(rd_tag_t)),
    .Depth (TagDepth)
  ) u_tag_fifo (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .in_valid_i  (tagq_push),
    .in_ready_o  (tagq_space),
    .in_data_i   (tagq_in),
    .out_valid_o (tag_valid_o),
    .out_ready_i (tag_ready_i),
    .out_data_o  (tag_o),
    .usage_o     (tag_usage_o)
  );

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
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
      mreq_q       <= '0;
    end else begin
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
      mreq_q       <= mreq_d;
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
      if (DynamicOps && ctr_inc) begin
        ctr_q[job_local_q] <= ctr_q[job_local_q] + 32'd1;
      end
      if (DynamicOps && err_inc) begin
        unique case (err_code_q)
          ErrUnmapped: err_q[0] <= err_q[0] + 32'd1;
          ErrRange:    err_q[1] <= err_q[1] + 32'd1;
          ErrAlloc:    err_q[2] <= err_q[2] + 32'd1;
          default:     ;
        endcase
      end
    end
  end

  assign err_count_o = {err_q[2], err_q[1], err_q[0]};

  // MBase is the receive stage's (its range check; named *unused*).
  logic unused_cfg;
  assign unused_cfg = ^cfg_i.mbase;

`ifndef SYNTHESIS
  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh). The stability of a
  // stalled request: dysharp_stream_chk below.
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // Memory request stream: a new request is loaded only into a free register; a beat has
      // 1..MemLines lines.
      `DYSHARP_ASSERT_I(a_memreq_load, !mreq_load || mreq_free,
        "a request loaded into a busy register")
      // (The upper bound always holds when MemLines is the count's largest value.)
      `DYSHARP_ASSERT_I(a_mem_req_lines, !mem_req_valid_o ||
        (mem_req_o.lines != '0 && 32'(mem_req_o.lines) <= MemLines),
        "a beat of no lines or more than MemLines")
      // Pushes only with room: tags, headers.
      `DYSHARP_ASSERT_I(a_tag_room, !tagq_push || tagq_space, "a tag pushed without room")
      `DYSHARP_ASSERT_I(a_hdr_room, !hdr_push_o || hdr_space_i, "a header pushed without room")
      // A credit is taken only when one is free, and only with a read.
      `DYSHARP_ASSERT_I(a_credit_ok, !credit_take_o || (credit_ok_i && tagq_push),
        "a credit taken without a free one or a read")
      // Job stream: a job is taken only when the previous one is done or issuing its last line.
      `DYSHARP_ASSERT_I(a_res_pop, !res_pop || is_q == IsIdle || job_done,
        "a job taken while the previous one runs")
      // One walk at a time: its data arrives only while this stage waits for it.
      `DYSHARP_ASSERT_I(a_walk_once, !walk_rsp_i || is_q == IsWalkWait,
        "a walk word that no walk waits for")
      // The job in flight belongs to a received packet.
      `DYSHARP_ASSERT_I(a_job_slot, is_q == IsIdle || full_i[job_slot_q],
        "a job of a packet buffer that is not full")
      // A data beat starts at a multiple of MemLines: its lines are one row of the receive
      // stage's payload banks (read at pay_slot_o / pay_line_o in the cycle before) and of the
      // response stage's accumulators.
      `DYSHARP_ASSERT_I(a_line_row, is_q != IsLines || 32'(line_q) % MemLines == 0,
        "a data beat that does not start a row")
      // An allocation never exceeds SlotsPerExpert.
      `DYSHARP_ASSERT_I(a_alloc_bound, !ctr_inc || !ctr_full, "an allocation past the slots")
    end
  end
  // Memory request stream: valid stays high and the request stays stable until accepted.
  dysharp_stream_chk #(
    .Width ($bits(mem_req_o)),
    .Name  ("dysharp_hub_issue: a_mem_req_stable")
  ) u_mem_req_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (mem_req_valid_o),
    .ready_i (mem_req_ready_i),
    .data_i  (mem_req_o)
  );

  // Functional coverage (docs/verification.md): each error code the hub detects, with the
  // allocation exhaustion (ERR_ALLOC) among them.
  `DYSHARP_COVER(c_hub_err_unmapped, err_inc && (err_code_q == ErrUnmapped))
  `DYSHARP_COVER(c_hub_err_range, err_inc && (err_code_q == ErrRange))
  `DYSHARP_COVER(c_hub_err_alloc, err_inc && (err_code_q == ErrAlloc))
`endif

endmodule
