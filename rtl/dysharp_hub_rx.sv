// dysharp_hub_rx: the receive stage of the hub (docs/architecture.md, "dysharp_hub").
//
// NumSlots packet buffers, used in turn: flit0, the target flits, the BE flit and the payload of
// a request go into buffer rx_slot_q; a packet is received while earlier ones are processed
// (three buffers keep short packets at line rate; a fourth makes the payload banks 16 words deep
// at MemLines 4, the area flow's least macro). A buffer is full from its last flit until the issue
// stage releases it (rel_i: the packet's last job is done); a full buffer holds off the request
// stream (req_ready_o low while the next buffer in turn is full). The range check of a DYN op
// (spec §7, the same for every target) is computed from flit0 and kept per buffer.
//
// The buffers are read by the later stages through combinational read ports, each addressed by
// that stage's own registers: T0 (target walk), T1 (the TLB key's AIdx), and the issue stage
// (the job at its start and the job in flight). The payloads are the exception: they are
// MemLines dysharp_ram_1r1w banks (line l of buffer s in bank l % MemLines, word
// s * PayRows + l / MemLines: 16 words each at the default MemLines 4), read with a registered
// read at the issue stage's next job slot and line (pay_slot_i, pay_line_i, always a multiple of
// MemLines), so that job_pay_o holds the MemLines lines from the job's line in the cycle the job
// is there. A buffer is only read while it is full (and never
// written then), so reads and writes of the same buffer never meet; a read of a buffer that is
// not full (the next job slot of an idle issue stage) is never used.

`include "dysharp_assert.svh"

module dysharp_hub_rx import dysharp_pkg::*, dysharp_hub_pkg::*; #(
  parameter  int unsigned MaxTargets = 32,
  parameter  bit          DynamicOps = 1'b1, // 0: static groups and unicast only (spec §5.7)
  parameter  int unsigned MemLines   = 4,
  localparam int unsigned TIdxW      = (MaxTargets > 1) ? $clog2(MaxTargets) : 1
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  input  hub_cfg_t                cfg_i,
  // Requests from the switch.
  input  logic                    req_valid_i,
  output logic                    req_ready_o,
  input  flit_t                   req_data_i,
  input  logic                    req_last_i,
  // Buffer state; release of buffer rel_slot_i (its last job is done).
  output logic [NumSlots-1:0]     full_o,
  input  logic                    rel_i,
  input  slot_t                   rel_slot_i,
  // T0: opcode, target count, range check and target t_idx_i of buffer t_slot_i.
  input  slot_t                   t_slot_i,
  input  logic [TIdxW-1:0]        t_idx_i,
  output logic [OpcodeWidth-1:0]  t_op_o,
  output logic [TcountWidth-1:0]  t_tcount_o,
  output logic                    t_rerr_o,
  output logic [15:0]             t_tgt_o,
  // T1: AIdx of the key's buffer.
  input  slot_t                   key_slot_i,
  output aidx_t                   key_aidx_o,
  // Issue, job start: buffer res_slot_i.
  input  slot_t                   res_slot_i,
  output logic [47:0]             res_maddr_o,
  output logic [47:0]             res_off_o,
  output aidx_t                   res_aidx_o,
  // Issue, job in flight: buffer job_slot_i; payload lines pay_line_i + i of buffer pay_slot_i
  // at [128*i +: 128] of job_pay_o in the next cycle.
  input  slot_t                   job_slot_i,
  input  slot_t                   pay_slot_i,
  input  line_t                   pay_line_i,
  output hub_req_t                job_req_o,
  output logic [47:0]             job_off_o,
  output aidx_t                   job_aidx_o,
  output flit_t                   job_be_o,
  output logic [128*MemLines-1:0] job_pay_o
);

  localparam int unsigned MaxTFlits = (MaxTargets + TargetsPerFlit - 1) / TargetsPerFlit;
  localparam int unsigned RxCntW    = $clog2(MaxTFlits + MaxLen + 1);

  typedef enum logic [1:0] {RxHdr, RxTgt, RxBe, RxPay} rx_sec_e;

  // Packet buffers (data only, no reset: read only while full_q says the packet is there). The
  // target lists and the AL fields (AIdx, offset, range check) are in gen_al below.
  hub_req_t            slot_req_q  [NumSlots];
  flit_t               slot_be_q   [NumSlots];
  // Payloads in rows of MemLines lines (the issue stage reads one row per cycle: its beat's lines
  // start at a multiple of MemLines), one RAM bank per line of a row (below).
  localparam int unsigned PayRows   = (MaxLen + MemLines - 1) / MemLines;
  localparam int unsigned BankDepth = NumSlots * PayRows;
  localparam int unsigned BankAw    = $clog2(BankDepth);
  logic [NumSlots-1:0] full_q, full_d;   // packet completely received, not yet released

  slot_t             rx_slot_q, rx_slot_d;
  rx_sec_e           rx_sec_q, rx_sec_d;
  logic [RxCntW-1:0] rx_cnt_q, rx_cnt_d;
  logic              rx_fire;
  hub_req_t          rx_hdr;
  logic [47:0]       rx_rel, rx_aidx_full, rx_off;
  logic [48:0]       rx_bsize, rx_end;
  logic              rx_rerr;
  logic              rx_wr_hdr, rx_wr_tgt, rx_wr_be, rx_wr_pay;

  assign req_ready_o = !full_q[rx_slot_q];
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
    // An AIdx of more than AidxW bits is out of range whatever the configuration says (a
    // Log2AlEntries above MaxLog2AlEntries is not a valid configuration, a_cfg_al_entries): it
    // would otherwise alias in the AIdx tag.
    rx_rerr         = (rx_hdr.maddr < cfg_i.mbase) ||
                      ((rx_aidx_full >> cfg_i.log2_al_entries) != '0) ||
                      ((rx_aidx_full >> AidxW) != '0) || (rx_end > rx_bsize);
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
          if (DynamicOps && op_is_dyn(rx_hdr.opcode) && rx_hdr.tcount != '0) begin
            rx_sec_d = RxTgt;
          end else if (op_is_store(rx_hdr.opcode)) begin
            rx_sec_d = RxBe;
          end else begin
            rx_sec_d = RxPay;
          end
        end
        RxTgt: begin
          rx_wr_tgt = 1'b1;
          rx_cnt_d  = rx_cnt_q + RxCntW'(1);
          if (rx_cnt_q + RxCntW'(1) >= ntf) begin
            rx_sec_d = op_is_store(slot_req_q[rx_slot_q].opcode) ? RxBe : RxPay;
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

  // A buffer is full from its last flit until its release.
  always_comb begin
    full_d = full_q;
    if (rx_fire && req_last_i) begin
      full_d[rx_slot_q] = 1'b1;
    end
    if (rel_i) begin
      full_d[rel_slot_i] = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      full_q    <= '0;
      rx_slot_q <= '0;
      rx_sec_q  <= RxHdr;
      rx_cnt_q  <= '0;
    end else begin
      full_q    <= full_d;
      rx_slot_q <= rx_slot_d;
      rx_sec_q  <= rx_sec_d;
      rx_cnt_q  <= rx_cnt_d;
    end
  end

  // Packet buffer storage.
  always_ff @(posedge clk_i) begin
    if (rx_wr_hdr) begin
      slot_req_q[rx_slot_q] <= rx_hdr;
    end
    if (rx_wr_be) begin
      slot_be_q[rx_slot_q] <= req_data_i;
    end
  end

  // The target lists and AL fields of DYN ops; with DynamicOps = 0 (spec §5.7: no DYN op gets
  // through the switch) there are none, and their read ports are 0.
  if (DynamicOps) begin : gen_al
    logic [15:0]         slot_tgt_q  [NumSlots][MaxTargets];
    aidx_t               slot_aidx_q [NumSlots];
    logic [47:0]         slot_off_q  [NumSlots];
    logic [NumSlots-1:0] slot_rerr_q;

    always_ff @(posedge clk_i) begin
      if (rx_wr_hdr) begin
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
    end

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        slot_rerr_q <= '0;
      end else if (rx_wr_hdr) begin
        slot_rerr_q[rx_slot_q] <= rx_rerr;
      end
    end

    assign t_rerr_o   = slot_rerr_q[t_slot_i];
    assign t_tgt_o    = slot_tgt_q[t_slot_i][t_idx_i];
    assign key_aidx_o = slot_aidx_q[key_slot_i];
    assign res_off_o  = slot_off_q[res_slot_i];
    assign res_aidx_o = slot_aidx_q[res_slot_i];
    assign job_off_o  = slot_off_q[job_slot_i];
    assign job_aidx_o = slot_aidx_q[job_slot_i];
  end else begin : gen_no_al
    assign t_rerr_o   = 1'b0;
    assign t_tgt_o    = '0;
    assign key_aidx_o = '0;
    assign res_off_o  = '0;
    assign res_aidx_o = '0;
    assign job_off_o  = '0;
    assign job_aidx_o = '0;
    logic unused_al;
    assign unused_al = ^{rx_rerr, rx_aidx_full, rx_off, t_idx_i, key_slot_i, rx_wr_tgt};
  end

  // Read ports.
  assign full_o      = full_q;
  assign t_op_o      = slot_req_q[t_slot_i].opcode;
  assign t_tcount_o  = slot_req_q[t_slot_i].tcount;
  assign res_maddr_o = slot_req_q[res_slot_i].maddr;
  assign job_req_o   = slot_req_q[job_slot_i];
  assign job_be_o    = slot_be_q[job_slot_i];

  // Payload banks.
  logic [BankAw-1:0] pay_waddr, pay_raddr;
  assign pay_waddr = BankAw'(32'(rx_slot_q) * PayRows + 32'(rx_cnt_q) / MemLines);
  assign pay_raddr = BankAw'(32'(pay_slot_i) * PayRows + 32'(pay_line_i) / MemLines);

  for (genvar b = 0; b < MemLines; b++) begin : g_pay_bank
    dysharp_ram_1r1w #(
      .Width (FlitBits),
      .Depth (BankDepth)
    ) u_ram (
      .clk_i   (clk_i),
      .we_i    (rst_ni && rx_wr_pay && (32'(rx_cnt_q) % MemLines == b)),
      .waddr_i (pay_waddr),
      .wdata_i (req_data_i),
      .re_i    (rst_ni),
      .raddr_i (pay_raddr),
      .rdata_o (job_pay_o[128*b +: 128])
    );
  end

  // The configuration fields of the later stages (named *unused*).
  logic unused_cfg;
  assign unused_cfg = ^{cfg_i.al_base, cfg_i.data_base, cfg_i.log2_slots};

`ifndef SYNTHESIS

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh). The stability of a
  // stalled word: dysharp_stream_chk below.
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // No flit is dropped: an accepted flit is written or is the last of its packet (which fills
      // the buffer). A payload flit beyond MaxLen would be neither (the switch never sends one).
      `DYSHARP_ASSERT_I(a_req_taken, !rx_fire || (rx_wr_hdr || rx_wr_tgt || rx_wr_be || rx_wr_pay ||
        req_last_i))
      // Requests are legal (the switch checked them): len 1..16, tcount 1..MaxTargets for DYN ops.
      `DYSHARP_ASSERT_I(a_req_len, !(rx_wr_hdr && op_is_request(rx_hdr.opcode)) ||
        (rx_hdr.len >= 1 && 32'(rx_hdr.len) <= MaxLen))
      // Without the dynamic operations the switch lets no DYN op through (spec §5.7).
      `DYSHARP_ASSERT_I(a_req_static, !(rx_wr_hdr && !DynamicOps) || (!op_is_dyn(rx_hdr.opcode)))
      `DYSHARP_ASSERT_I(a_req_tcount, !(rx_wr_hdr && op_is_dyn(rx_hdr.opcode)) ||
        (rx_hdr.tcount != '0 && 32'(rx_hdr.tcount) <= MaxTargets))
      // The configuration's AIdx range fits the AIdx width (spec §7; the golden model refuses
      // larger ones).
      `DYSHARP_ASSERT_I(a_cfg_al_entries, !DynamicOps || 32'(cfg_i.log2_al_entries) <= AidxW)
      `DYSHARP_ASSERT_I(a_req_payload, !rx_wr_pay || (32'(rx_cnt_q) < 32'(slot_req_q[rx_slot_q].len)))
      // Only a full buffer is released, and never the one being received into.
      `DYSHARP_ASSERT_I(a_rel_full, !rel_i || full_q[rel_slot_i])
      `DYSHARP_ASSERT_I(a_rx_not_full, !rx_fire || !full_q[rx_slot_q])
    end
  end

  // Input stream (the switch's obligation): an offered flit is held until accepted.
  dysharp_stream_chk #(
    .Width (FlitBits + 1),
    .Name  ("dysharp_hub_rx: a_req_stable")
  ) u_req_stable_chk (
    .clk_i   (clk_i),
    .rst_ni  (rst_ni),
    .valid_i (req_valid_i),
    .ready_i (req_ready_o),
    .data_i  ({req_last_i, req_data_i})
  );
`endif

endmodule
