// dysharp_xp_bank: the crosspoint queues of one class towards one egress port of the switch
// (docs/architecture.md, "dysharp_switch" and "Storage map"; spec §5: one queue per ingress,
// egress and class). NumQ queues, queue i written by ingress port i and read by the egress.
//
// Each queue behaves exactly as a dysharp_fifo_ram of Width FlitBits + 1 ({last, flit}) and the
// same Depth (no FallThrough): same ports per queue, same contract, same cycle timing.
//   - in_ready_o[i] = (usage_o[i] != Depth): a function of the fill level only (never of
//     in_valid_i or out_ready_i), so it may feed a producer's arbitration.
//   - usage_o[i] counts every word queue i holds: in its RAM, in the RAM's read register and in
//     its output register, 0..Depth. A producer that reserves room for a whole packet compares
//     Depth - usage_o[i] with the packet length.
//   - Each output is a proper stream: once out_valid_o[i] is high it and queue i's word stay
//     until accepted. A word pushed in cycle t is on the output in cycle t+2 at the earliest; a
//     queue pushed and popped every cycle moves one word every cycle.
// Storage per queue: one dysharp_ram_1r1w of Depth - 2 words (an SRAM macro in silicon) behind
// which sit the RAM's own read register and one output register (the two stages of
// dysharp_ram_prefetch): a read is issued whenever the RAM holds a word and the two stages are
// not both full. A write and a read of one address in one cycle return the old word (read-first).
// The RAM never holds more than Depth - 2 words (dysharp_fifo_ram's a_ram_cnt argument).
//
// Why a bank and not NumQ dysharp_fifo_ram instances (the hardware is the same: NumQ RAMs and
// NumQ sets of pointers): a simulator evaluates every instance's logic every cycle, and in most
// cycles most of a switch's 2 * NumPorts^2 crosspoint queues neither push, pop nor read (under
// load they hold words and wait for their egress). Here the per-queue control
// bits are vectors over the queues (one operation evaluates the handshake logic of all NumQ
// queues), and a queue's counters, pointers and RAM ports are updated only in a cycle in which it
// pushes, pops or reads (`act`): in any other cycle nothing of the queue changes. Pointers and the
// fill level are per-queue registers; `full_q` (usage == Depth) and `ramne_q` (the RAM holds a
// word) are registered copies of comparisons against them, computed once per change instead of
// every cycle, and checked against them below (docs/perf.md, "The crosspoint queues as banks").
//
// Checks (simulation only) are immediate checks in a clocked process, one per rule and queue, with
// the queue's index in the message (no %m: one copy of the code for every bank instance).

`ifdef VERILATOR
`define DYSHARP_XP_BANK_CHECK(ok, q, msg) if (!(ok)) begin $display("%%Error: dysharp_xp_bank: queue %0d: %s", q, msg); $stop; end
`else
`define DYSHARP_XP_BANK_CHECK(ok, q, msg) if (!(ok)) $error("dysharp_xp_bank: queue %0d: %s", q, msg);
`endif

module dysharp_xp_bank
  import dysharp_pkg::*;
#(
  parameter int unsigned NumQ  = 8,    // queues: one per ingress port
  parameter int unsigned Depth = 128,  // words per queue (>= 4)
  localparam int unsigned UsW  = $clog2(Depth + 1)
) (
  input  logic                       clk_i,
  // Asynchronous reset of the queues' state (the checks' as well).
  /* verilator lint_off SYNCASYNCNET */
  input  logic                       rst_ni,
  /* verilator lint_on SYNCASYNCNET */
  // Write side: queue i from ingress port i.
  input  logic  [NumQ-1:0]           in_valid_i,
  output logic  [NumQ-1:0]           in_ready_o,
  input  flit_t [NumQ-1:0]           in_data_i,
  input  logic  [NumQ-1:0]           in_last_i,
  // Read side (the egress arbiter).
  output logic  [NumQ-1:0]           out_valid_o,
  input  logic  [NumQ-1:0]           out_ready_i,
  output flit_t [NumQ-1:0]           out_data_o,
  output logic  [NumQ-1:0]           out_last_o,
  // Fill levels.
  output logic  [NumQ-1:0][UsW-1:0]  usage_o
);

  // One copy of the code for every bank of the switch.
  /* verilator no_inline_module */

  localparam int unsigned RamDepth = Depth - 2;
  localparam int unsigned PtrW     = (RamDepth > 1) ? $clog2(RamDepth) : 1;
  localparam int unsigned WordW    = FlitBits + 1;   // {last, flit}

  typedef logic [PtrW-1:0]  ptr_t;
  typedef logic [UsW-1:0]   cnt_t;
  typedef logic [WordW-1:0] word_t;

  // Every port through a variable of the bank's own, kept as a variable of the instance by the
  // simulator, so that the bank's code stays one copy for every instance and only the copies to
  // and from the ports are per instance. The inputs' copies are `public_flat_rw` (writable from
  // C++): a `public_flat_rd` copy is replaced by its driver where it is read, that is by the
  // signal of the instance's user inside the bank's code, and every instance got a copy of that
  // code of its own (docs/perf.md, "The crosspoint queues as banks" and "Sampling and
  // per-instance code"). The outputs' copies are `public_flat_rd`.
  logic  [NumQ-1:0]          in_valid  /* verilator public_flat_rw */;
  logic  [NumQ-1:0]          out_ready /* verilator public_flat_rw */;
  flit_t [NumQ-1:0]          in_data   /* verilator public_flat_rw */;
  logic  [NumQ-1:0]          in_last   /* verilator public_flat_rw */;
  logic  [NumQ-1:0]          in_ready  /* verilator public_flat_rd */;
  logic  [NumQ-1:0]          out_valid /* verilator public_flat_rd */;
  flit_t [NumQ-1:0]          out_data  /* verilator public_flat_rd */;
  logic  [NumQ-1:0]          out_last  /* verilator public_flat_rd */;
  logic  [NumQ-1:0][UsW-1:0] usage     /* verilator public_flat_rd */;
  assign in_valid    = in_valid_i;
  assign out_ready   = out_ready_i;
  assign in_data     = in_data_i;
  assign in_last     = in_last_i;
  assign in_ready_o  = in_ready;
  assign out_valid_o = out_valid;
  assign out_data_o  = out_data;
  assign out_last_o  = out_last;
  assign usage_o     = usage;

  // Per-queue state. Pointers and fill levels are packed vectors over the queues (a simulator
  // updates a packed vector in one piece; an unpacked array element by element).
  ptr_t  [NumQ-1:0] wr_ptr_q, rd_ptr_q;
  cnt_t  [NumQ-1:0] cnt_q;            // every word held (usage_o)
  word_t            rdata [NumQ];     // the RAMs' read registers
  logic  [NumQ-1:0] full_q;           // cnt_q == Depth
  logic  [NumQ-1:0] ramne_q;          // the RAM holds a word: cnt_q != ov_q + rv_q
  logic  [NumQ-1:0] ov_q;             // the output register holds a word
  logic  [NumQ-1:0] rv_q;             // the read register holds a word

  // Handshake and stage logic of all queues at once (dysharp_ram_prefetch, Bypass 0).
  logic [NumQ-1:0] push, pop, re, rd_taken, move, ov_d, rv_d, act;

  assign in_ready    = ~full_q;
  assign out_valid   = ov_q | rv_q;
  assign push        = in_valid & ~full_q;
  assign pop         = out_valid & out_ready;
  assign re          = ramne_q & ~(ov_q & rv_q);
  assign rd_taken    = pop & ~ov_q;
  assign move        = rv_q & ~ov_q & ~pop & re;
  assign ov_d        = (ov_q & ~pop) | (~ov_q & move);
  assign rv_d        = re | (rv_q & ~rd_taken);
  // A queue that neither pushes, pops nor reads keeps every register: its counters, pointers,
  // stages and RAM are unchanged (move needs re; ov_d = ov_q and rv_d = rv_q without pop or re).
  assign act         = push | pop | re;
  assign usage       = cnt_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_ptr_q <= '0;
      rd_ptr_q <= '0;
      cnt_q    <= '0;
      full_q   <= '0;
      ramne_q  <= '0;
      ov_q     <= '0;
      rv_q     <= '0;
    end else begin
      ov_q <= ov_d;
      rv_q <= rv_d;
      for (int unsigned i = 0; i < NumQ; i++) begin
        if (act[i]) begin
          // The pointer steps are written out rather than a function: Verilator names a function's
          // temporaries per instance, which would give every bank a copy of this code again.
          if (push[i]) begin
            wr_ptr_q[i] <= (32'(wr_ptr_q[i]) == RamDepth - 1) ? '0 : wr_ptr_q[i] + ptr_t'(1);
          end
          if (re[i]) begin
            rd_ptr_q[i] <= (32'(rd_ptr_q[i]) == RamDepth - 1) ? '0 : rd_ptr_q[i] + ptr_t'(1);
          end
          cnt_q[i]   <= cnt_q[i] + cnt_t'(push[i]) - cnt_t'(pop[i]);
          full_q[i]  <= (32'(cnt_q[i]) + 32'(push[i]) - 32'(pop[i]) == Depth);
          ramne_q[i] <= (cnt_q[i] + cnt_t'(push[i]) - cnt_t'(pop[i])) !=
                        (cnt_t'(ov_d[i]) + cnt_t'(rv_d[i]));
        end
      end
    end
  end

  for (genvar i = 0; i < NumQ; i++) begin : gen_q
    dysharp_ram_1r1w #(
      .Width (WordW),
      .Depth (RamDepth)
    ) u_ram (
      .clk_i   (clk_i),
      .we_i    (push[i]),
      .waddr_i (wr_ptr_q[i]),
      .wdata_i ({in_last[i], in_data[i]}),
      .re_i    (re[i]),
      .raddr_i (rd_ptr_q[i]),
      .rdata_o (rdata[i])
    );

    // The output register. Data only: read only while ov_q says it holds a word.
    word_t out_q;
    always_ff @(posedge clk_i) begin
      if (move[i]) begin
        out_q <= rdata[i];
      end
    end
    assign out_data[i] = ov_q[i] ? out_q[FlitBits-1:0] : rdata[i][FlitBits-1:0];
    assign out_last[i] = ov_q[i] ? out_q[FlitBits]     : rdata[i][FlitBits];
  end

`ifndef SYNTHESIS
  if (Depth < 4) begin : gen_depth_check
    $error("dysharp_xp_bank: Depth must be at least 4");
  end

  // dysharp_fifo_ram's rules, per queue: never overflows or underflows; the fill level is in
  // range, sets in_ready_o and moves by the transfers of the cycle; the RAM holds at most
  // Depth - 2 words and the output register a word only while the read register holds the next
  // one; full_q and ramne_q equal the comparisons they stand for; the output holds a stalled word
  // and the producer a stalled one (its obligation); every word leaves in the order it came in,
  // unchanged (a shadow queue per queue).
  localparam int unsigned UsageW = UsW + 1;
  logic chk_q;  // the previous edge was out of reset

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      chk_q <= 1'b0;
    end else begin
      chk_q <= 1'b1;
    end
  end

  for (genvar i = 0; i < NumQ; i++) begin : gen_chk
    logic [UsageW-1:0] usage_exp_q;  // usage + push - pop of the previous edge
    logic              exp_nz_q;     // usage_exp_q != 0
    logic              out_hold_q;   // the output was stalled at the previous edge
    logic              in_hold_q;    // the input was stalled at the previous edge
    word_t             out_held_q, in_held_q;
    word_t             shadow_q [$];
    logic              active;

    // The queue's rules are checked in every cycle in which it holds or shows a word (in the
    // RAM, the read register or the output register: ramne_q, rv_q, ov_q), is offered one, was
    // stalled, or was expected to hold one (usage_exp_q), and in the first cycle out of reset. In
    // any other cycle it does not act and every rule holds trivially: its fill level is zero as
    // expected (a fill level above zero with the RAM and both stages empty would have been
    // expected at the edge that left it so), and its check state already has the value this edge
    // would give it.
    assign active = !chk_q || in_valid[i] || ramne_q[i] || rv_q[i] || ov_q[i] || exp_nz_q ||
                    in_hold_q || out_hold_q;

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        exp_nz_q   <= 1'b0;
        out_hold_q <= 1'b0;
        in_hold_q  <= 1'b0;
        shadow_q.delete();
      end else if (active) begin
        automatic int unsigned stage = 32'(ov_q[i]) + 32'(rv_q[i]);
        automatic int unsigned used  = 32'(cnt_q[i]);
        automatic int unsigned exp_n = used + 32'(push[i]) - 32'(pop[i]);
        automatic logic        out_stall = out_valid[i] && !out_ready[i];
        automatic logic        in_stall  = in_valid[i] && !in_ready[i];
        `DYSHARP_XP_BANK_CHECK(used >= stage && used - stage <= RamDepth, i,
                               "a_ram_cnt: the RAM holds more words than it has")
        `DYSHARP_XP_BANK_CHECK(ramne_q[i] == (used != stage), i,
                               "ramne_q is not (the RAM holds a word)")
        `DYSHARP_XP_BANK_CHECK(!ov_q[i] || rv_q[i], i,
                               "a_stage_order: output register ahead of the read register")
        `DYSHARP_XP_BANK_CHECK(!push[i] || used < Depth, i, "a_no_overflow: pushed while full")
        `DYSHARP_XP_BANK_CHECK(!pop[i] || used != 0, i, "a_no_underflow: popped while empty")
        `DYSHARP_XP_BANK_CHECK(used <= Depth, i, "a_usage_range: fill level above Depth")
        `DYSHARP_XP_BANK_CHECK(in_ready[i] == (used != Depth), i,
                               "a_in_ready: in_ready_o is not (usage_o != Depth)")
        `DYSHARP_XP_BANK_CHECK(!out_valid[i] || used != 0, i, "a_valid_usage: valid while empty")
        `DYSHARP_XP_BANK_CHECK(!chk_q || used == 32'(usage_exp_q), i,
                               "a_usage_step: fill level moved by more than the transfers")
        // The words themselves only where a rule reads them (a queue that holds words waits
        // most cycles).
        if (out_hold_q || pop[i] || out_stall) begin
          automatic word_t out_w = {out_last[i], out_data[i]};
          `DYSHARP_XP_BANK_CHECK(!out_hold_q || (out_valid[i] && out_w == out_held_q), i,
                                 "a_out_stable: a stalled output changed or went away")
          if (pop[i]) begin
            if (shadow_q.size() == 0) begin
              `DYSHARP_XP_BANK_CHECK(1'b0, i, "a word left that never came in")
            end else begin
              if (out_w != shadow_q[0]) begin
                $display("%%Error: dysharp_xp_bank: queue %0d: out of order or changed: %h, expected %h",
                         i, out_w, shadow_q[0]);
                `DYSHARP_XP_BANK_CHECK(1'b0, i, "out of order or changed")
              end
              void'(shadow_q.pop_front());
            end
          end
          // Data only (not reset): read only while out_hold_q.
          if (out_stall) begin
            out_held_q <= out_w;
          end
        end
        if (in_hold_q || push[i] || in_stall) begin
          automatic word_t in_w = {in_last[i], in_data[i]};
          `DYSHARP_XP_BANK_CHECK(!in_hold_q || (in_valid[i] && in_w == in_held_q), i,
                                 "a_in_stable: a stalled input changed or went away")
          if (push[i]) begin
            shadow_q.push_back(in_w);
          end
          // Data only (not reset): read only while in_hold_q.
          if (in_stall) begin
            in_held_q <= in_w;
          end
        end
        exp_nz_q    <= (exp_n != 0);
        out_hold_q  <= out_stall;
        in_hold_q   <= in_stall;
        // Data only (not reset): read only while chk_q.
        usage_exp_q <= UsageW'(exp_n);
      end
    end
  end
`endif

endmodule

`undef DYSHARP_XP_BANK_CHECK
