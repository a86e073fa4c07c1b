// dysharp_fifo_bank: NumQ independent RAM-backed FIFOs with valid/ready on both sides, the design's
// one queue over an SRAM-shaped memory (docs/architecture.md, "Storage map"): the switch's
// crosspoint queues (one bank per egress port and class, queue i written by ingress port i; spec
// §5) and the hub's payload FIFO (NumQ 1, FallThrough).
//
// A word is Width data bits and, with HasLast, a `last` flag beside them (a packet's last flit;
// the crosspoint queues); the flag is stored with the word and leaves with it.
//
// Contract, per queue i (the same for every queue; the queues share nothing but the clock):
//   - in_ready_o[i] = (usage_o[i] != Depth): a function of the fill level only (never of
//     in_valid_i or out_ready_i), so it may feed a producer's arbitration.
//   - usage_o[i] counts every word the queue holds: in its RAM, in the RAM's read register and in
//     its output register, 0..Depth. A producer that reserves room for a whole packet compares
//     Depth - usage_o[i] with the packet length (usage_o only decreases while it is not pushing).
//   - The output is a proper stream: once out_valid_o[i] is high it and out_data_o[i] stay until
//     accepted. A word pushed in cycle t is on the output in cycle t+2 at the earliest; a queue
//     pushed and popped every cycle moves one word every cycle (no bubbles).
//   - FallThrough = 1: a word pushed into a queue that holds nothing else after this cycle's pop
//     skips the RAM (into the output register) and is on the output in cycle t+1; then
//     out_ready_i reaches the RAM's write enable.
//   - Words leave in the order they came in, unchanged; nothing is dropped or duplicated.
//
// Storage per queue: one dysharp_ram_1r1w of Depth - 2 words (an SRAM macro in silicon) behind
// which sit two word stages, the RAM's own read register (rv_q) and an output register (ov_q,
// out_q), as in dysharp_ram_prefetch: a read is issued whenever the RAM holds a word and the two
// stages are not both full (registered state only; out_ready_i does not reach the RAM), and the
// output shows out_q if it holds a word, else the read register. out_q takes the read register's
// word only when a read replaces it, so it holds a word only while the read register holds the
// next one (or, with FallThrough, alone: "out only"). With both stages full no word can be pushed
// until one leaves, so the RAM never holds more than Depth - 2 words (a_ram_cnt) and every word of
// Depth has a place. A write and a read of one address in one cycle return the old word
// (read-first).
//
// The per-queue control bits are vectors over the queues (one operation evaluates the handshake
// logic of all NumQ queues), and a queue's counters, pointers and RAM ports change only in a cycle
// in which it pushes, pops or reads (`act`). `full_q` (usage == Depth) and `ramne_q` (the RAM
// holds a word) are registered copies of comparisons against the fill level, computed once per
// change and checked against it below (docs/perf.md, "The crosspoint queues as banks").

`include "dysharp_assert.svh"

module dysharp_fifo_bank #(
  parameter int unsigned NumQ        = 8,    // queues
  parameter int unsigned Width       = 8,    // bits per word
  parameter int unsigned Depth       = 128,  // words per queue (>= 4)
  parameter bit          HasLast     = 1'b0, // a `last` flag beside each word (in_last_i, out_last_o)
  parameter bit          FallThrough = 1'b0,
  localparam int unsigned UsW        = $clog2(Depth + 1)
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  // Write side: queue i.
  input  logic [NumQ-1:0]              in_valid_i,
  output logic [NumQ-1:0]              in_ready_o,
  input  logic [NumQ-1:0][Width-1:0]   in_data_i,
  input  logic [NumQ-1:0]              in_last_i,   // HasLast only
  // Read side.
  output logic [NumQ-1:0]              out_valid_o,
  input  logic [NumQ-1:0]              out_ready_i,
  output logic [NumQ-1:0][Width-1:0]   out_data_o,
  output logic [NumQ-1:0]              out_last_o,  // HasLast only (0 without)
  // Fill levels.
  output logic [NumQ-1:0][UsW-1:0]     usage_o
);

  localparam int unsigned RamDepth = Depth - 2;
  localparam int unsigned PtrW     = (RamDepth > 1) ? $clog2(RamDepth) : 1;
  localparam int unsigned StoreW   = Width + (HasLast ? 1 : 0);  // a RAM word: {last, data}

  typedef logic [PtrW-1:0]   ptr_t;
  typedef logic [UsW-1:0]    cnt_t;
  typedef logic [Width-1:0]  word_t;
  typedef logic [StoreW-1:0] store_t;

  // Every port through a variable of the bank's own (rtl/dysharp.vlt says why).
  logic  [NumQ-1:0]          in_valid;
  logic  [NumQ-1:0]          out_ready;
  word_t [NumQ-1:0]          in_data;
  logic  [NumQ-1:0]          in_last;
  logic  [NumQ-1:0]          in_ready;
  logic  [NumQ-1:0]          out_valid;
  word_t [NumQ-1:0]          out_data;
  logic  [NumQ-1:0]          out_last;
  logic  [NumQ-1:0][UsW-1:0] usage;
  assign in_valid    = in_valid_i;
  assign out_ready   = out_ready_i;
  assign in_data     = in_data_i;
  assign in_last     = in_last_i;
  assign in_ready_o  = in_ready;
  assign out_valid_o = out_valid;
  assign out_data_o  = out_data;
  assign out_last_o  = out_last;
  assign usage_o     = usage;

  // Per-queue state. Pointers and fill levels are packed vectors over the queues.
  ptr_t  [NumQ-1:0] wr_ptr_q, rd_ptr_q;
  cnt_t  [NumQ-1:0] cnt_q;            // every word held (usage_o)
  store_t           rdata [NumQ];     // the RAMs' read registers
  logic  [NumQ-1:0] full_q;           // cnt_q == Depth
  logic  [NumQ-1:0] ramne_q;          // the RAM holds a word: cnt_q != ov_q + rv_q
  logic  [NumQ-1:0] ov_q;             // the output register holds a word
  logic  [NumQ-1:0] rv_q;             // the read register holds a word

  // Handshake and stage logic of all queues at once.
  logic [NumQ-1:0] push, pop, re, rd_taken, move, ft, we, ov_d, rv_d, act, one;

  assign in_ready    = ~full_q;
  assign out_valid   = ov_q | rv_q;
  assign push        = in_valid & ~full_q;
  assign pop         = out_valid & out_ready;
  assign re          = ramne_q & ~(ov_q & rv_q);
  assign rd_taken    = pop & ~ov_q;
  assign move        = rv_q & ~ov_q & ~pop & re;
  // FallThrough: the queue holds nothing, or only the word leaving now.
  for (genvar i = 0; i < NumQ; i++) begin : gen_one
    assign one[i] = (cnt_q[i] == '0) || (cnt_q[i] == cnt_t'(1) && pop[i]);
  end
  assign ft          = FallThrough ? (push & one) : '0;
  assign we          = push & ~ft;
  assign ov_d        = ft | (ov_q & ~pop) | (~ov_q & move);
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
          if (we[i]) begin
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
    // The stored word: {last, data} with HasLast, else the data (`last` cast away).
    store_t out_q;  // the output register
    assign out_last[i] = HasLast && (ov_q[i] ? out_q[StoreW-1] : rdata[i][StoreW-1]);

    // The RAM has no reset and its ports no rst_ni: in reset, from its first clock edge on, the
    // pointers and the fill level are held at zero, so no read is issued and a word a producer
    // offers then is written at the reset write pointer and never read.
    dysharp_ram_1r1w #(
      .Width (StoreW),
      .Depth (RamDepth)
    ) u_ram (
      .clk_i   (clk_i),
      .we_i    (we[i]),
      .waddr_i (wr_ptr_q[i]),
      .wdata_i (StoreW'({in_last[i] & HasLast, in_data[i]})),
      .re_i    (re[i]),
      .raddr_i (rd_ptr_q[i]),
      .rdata_o (rdata[i])
    );

    // The output register. Data only: read only while ov_q says it holds a word.
    always_ff @(posedge clk_i) begin
      if (ft[i]) begin
        out_q <= StoreW'({in_last[i] & HasLast, in_data[i]});
      end else if (move[i]) begin
        out_q <= rdata[i];
      end
    end
    assign out_data[i] = ov_q[i] ? out_q[Width-1:0] : rdata[i][Width-1:0];
  end

  // Without HasLast the flag inputs are not read.
  logic unused_last;
  assign unused_last = ^{in_last, HasLast};

  `DYSHARP_ASSERT_INIT(a_depth, Depth >= 4, "Depth must be at least 4")

`ifndef SYNTHESIS
  // The contract's rules, per queue: never overflows or underflows; the fill level is in range,
  // sets in_ready_o and moves by the transfers of the cycle; the RAM holds at most Depth - 2
  // words and the output register a word only while the read register holds the next one (or,
  // falling through, alone); full_q and ramne_q equal the comparisons they stand for; the output
  // holds a stalled word and the producer a stalled one (its obligation). Outside formal tools,
  // every word leaves in the order it came in, unchanged (a shadow queue per queue).
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
    store_t            out_held_q, in_held_q;
`ifndef FORMAL
    store_t            shadow_q [$];
`endif
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
        exp_nz_q    <= 1'b0;
        out_hold_q  <= 1'b0;
        in_hold_q   <= 1'b0;
        usage_exp_q <= '0;
        out_held_q  <= '0;
        in_held_q   <= '0;
`ifndef FORMAL
        shadow_q.delete();
`endif
      end else if (active) begin
        automatic int unsigned stage = 32'(ov_q[i]) + 32'(rv_q[i]);
        automatic int unsigned used  = 32'(cnt_q[i]);
        automatic int unsigned exp_n = used + 32'(push[i]) - 32'(pop[i]);
        automatic logic        out_stall = out_valid[i] && !out_ready[i];
        automatic logic        in_stall  = in_valid[i] && !in_ready[i];
        `DYSHARP_ASSERT_I(a_ram_cnt, used >= stage && used - stage <= RamDepth,
          $sformatf("queue %0d: the RAM holds more words than it has", i))
        `DYSHARP_ASSERT_I(a_ramne, ramne_q[i] == (used != stage),
          $sformatf("queue %0d: ramne_q is not (the RAM holds a word)", i))
        `DYSHARP_ASSERT_I(a_stage_order, !ov_q[i] || rv_q[i] || FallThrough,
          $sformatf("queue %0d: output register ahead of the read register", i))
        `DYSHARP_ASSERT_I(a_fall_through, !ft[i] || (!re[i] && stage == 32'(pop[i])),
          $sformatf("queue %0d: a word fell through past another", i))
        `DYSHARP_ASSERT_I(a_no_overflow, !push[i] || used < Depth,
          $sformatf("queue %0d: pushed while full", i))
        `DYSHARP_ASSERT_I(a_no_underflow, !pop[i] || used != 0,
          $sformatf("queue %0d: popped while empty", i))
        `DYSHARP_ASSERT_I(a_usage_range, used <= Depth,
          $sformatf("queue %0d: fill level above Depth", i))
        `DYSHARP_ASSERT_I(a_in_ready, in_ready[i] == (used != Depth),
          $sformatf("queue %0d: in_ready_o is not (usage_o != Depth)", i))
        `DYSHARP_ASSERT_I(a_valid_usage, !out_valid[i] || used != 0,
          $sformatf("queue %0d: valid while empty", i))
        `DYSHARP_ASSERT_I(a_usage_step, !chk_q || used == 32'(usage_exp_q),
          $sformatf("queue %0d: fill level moved by more than the transfers", i))
        // The words themselves only where a rule reads them (a queue that holds words waits
        // most cycles).
        if (out_hold_q || pop[i] || out_stall) begin
          automatic store_t out_w = StoreW'({out_last[i], out_data[i]});
          `DYSHARP_ASSERT_I(a_out_stable,
            !out_hold_q || (out_valid[i] && out_w == out_held_q),
            $sformatf("queue %0d: a stalled output changed or went away", i))
`ifndef FORMAL
          if (pop[i]) begin
            `DYSHARP_ASSERT_I(a_no_phantom, shadow_q.size() != 0,
              $sformatf("queue %0d: a word left that never came in", i))
            if (shadow_q.size() != 0) begin
              `DYSHARP_ASSERT_I(a_order, out_w == shadow_q[0],
                $sformatf("queue %0d: out of order or changed: %h, expected %h", i, out_w,
                          shadow_q[0]))
              void'(shadow_q.pop_front());
            end
          end
`endif
          // Data only: read only while out_hold_q.
          if (out_stall) begin
            out_held_q <= out_w;
          end
        end
        if (in_hold_q || push[i] || in_stall) begin
          automatic store_t in_w = StoreW'({in_last[i] && HasLast, in_data[i]});
          `DYSHARP_ASSERT_I(a_in_stable,
            !in_hold_q || (in_valid[i] && in_w == in_held_q),
            $sformatf("queue %0d: a stalled input changed or went away", i))
`ifndef FORMAL
          if (push[i]) begin
            shadow_q.push_back(in_w);
          end
`endif
          // Data only: read only while in_hold_q.
          if (in_stall) begin
            in_held_q <= in_w;
          end
        end
        exp_nz_q    <= (exp_n != 0);
        out_hold_q  <= out_stall;
        in_hold_q   <= in_stall;
        // Data only: read only while chk_q.
        usage_exp_q <= UsageW'(exp_n);
      end
    end
  end
`endif

endmodule
