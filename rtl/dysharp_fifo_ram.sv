// dysharp_fifo_ram: synchronous FIFO with valid/ready on both sides whose storage is one
// dysharp_ram_1r1w (an SRAM-shaped memory with a registered read), for the switch's crosspoint
// queues (docs/architecture.md, "dysharp_switch" and "Storage map").
//
// A drop-in for dysharp_fifo: same parameters, same ports, same contract, except that a word
// pushed in cycle t reaches the output in cycle t+2 at the earliest (dysharp_fifo: t+1); with
// FallThrough = 1 a word pushed into a FIFO that holds nothing else after this cycle's pop goes
// straight into the output register and is on the output in cycle t+1 (a zero-load latency of one
// cycle, as dysharp_fifo's, and a stream pushed and popped every cycle never enters the RAM); then
// out_ready_i reaches the RAM's write enable.
//   - in_ready_o = (usage_o != Depth): a function of the fill level only (never of in_valid_i or
//     out_ready_i), so it may feed a producer's arbitration.
//   - usage_o counts every word held: in the RAM, in the RAM's read register and in the output
//     register, 0..Depth. A producer that reserves room for a whole packet compares
//     Depth - usage_o with the packet length (usage_o only decreases while it is not pushing).
//   - The output is a proper stream: once out_valid_o is high it and out_data_o stay until
//     accepted. With the head word pushed in cycle t (or earlier) and the word ahead of it gone,
//     out_valid_o is high from cycle max(t + 2, departure of the word ahead + 1) on, so a FIFO
//     pushed and popped every cycle moves one word every cycle (no bubbles).
//
// Structure (Depth >= 4). Words enter the RAM (Depth - 2 words). Behind it are two word stages,
// the RAM's own read register and an output register (dysharp_ram_prefetch, which says how they
// work): a read is issued whenever the RAM holds a word and the two stages are not both full
// (registered state only; out_ready_i does not reach the RAM).
// Capacity: with both stages full no word can be pushed until one leaves, so the RAM never holds
// more than Depth - 2 words (proved in the a_ram_cnt assertion's comment); every word of Depth
// therefore has a place, and the flip-flops outside the RAM are one word plus control.
// A write and a read of the same RAM address in one cycle (RAM full and pushed while read)
// returns the old word: dysharp_ram_1r1w is read-first.
//
// Depth < 4 (a RAM of fewer than two words is not a RAM): the module is a dysharp_fifo
// (flip-flops, output at t+1).

// Checks (simulation only) are immediate assertions in clocked processes with a message that
// does not name the instance, not concurrent properties: Verilator gives every instance of a
// module with concurrent assertions (sampled copies of their signals) or with %m (the instance
// name as a string literal) a copy of its own of the module's code, and the switch has
// 2 * NumPorts^2 of these queues; shared code is what keeps a 16-port model in the instruction
// cache (docs/perf.md, "One copy of the crosspoint queue's code"). A failure is counted as an
// error by Verilator ($stop under +verilator+error+limit, as $error is) and by other simulators
// ($error); the waveform of the failing run (`--vcd`) shows which queue.
`ifdef VERILATOR
`define DYSHARP_FIFO_RAM_CHECK(ok, msg) if (!(ok)) begin $display("%%Error: dysharp_fifo_ram: %s", msg); $stop; end
`else
`define DYSHARP_FIFO_RAM_CHECK(ok, msg) if (!(ok)) $error("dysharp_fifo_ram: %s", msg);
`endif

module dysharp_fifo_ram #(
  parameter int unsigned Width       = 8,
  parameter int unsigned Depth       = 2,
  parameter bit          FallThrough = 1'b0
) (
  input  logic                       clk_i,
  // The SVA `disable iff (!rst_ni)` samples the asynchronous reset on the clock; not a flop.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                       rst_ni,
  /* verilator lint_on SYNCASYNCNET */
  // Write side.
  input  logic                       in_valid_i,
  output logic                       in_ready_o,
  input  logic [Width-1:0]           in_data_i,
  // Read side.
  output logic                       out_valid_o,
  input  logic                       out_ready_i,
  output logic [Width-1:0]           out_data_o,
  // Fill level.
  output logic [$clog2(Depth+1)-1:0] usage_o
);

  // One copy of the code for every instance (see above).
  /* verilator no_inline_module */

  // The handshake inputs through copies of the module's own, `public_flat_rd` (read-only to
  // C++): Verilator keeps them as variables of the instance instead of putting each instance's
  // driving signal into a copy of the code of its own (only the two copies are per instance), and,
  // unlike a writable `public` port, does not re-evaluate the logic behind them at every eval()
  // (docs/perf.md, "Input-combinational logic out of the crosspoint queues").
  logic in_valid  /* verilator public_flat_rd */;
  logic out_ready /* verilator public_flat_rd */;
  assign in_valid  = in_valid_i;
  assign out_ready = out_ready_i;

  logic push, pop;
`ifndef SYNTHESIS
  logic ram_cnt_ok, stage_order_ok;  // the RAM form's own invariants (checked below)
`endif

  assign push = in_valid && in_ready_o;
  assign pop  = out_valid_o && out_ready;

  if (Depth >= 4) begin : gen_ram
    localparam int unsigned RamDepth = Depth - 2;
    localparam int unsigned PtrW     = $clog2(RamDepth);
    localparam int unsigned CntW     = $clog2(Depth + 1);

    typedef logic [PtrW-1:0] ptr_t;
    typedef logic [CntW-1:0] cnt_t;

    ptr_t             wr_ptr_q, wr_ptr_d;
    ptr_t             rd_ptr_q, rd_ptr_d;
    cnt_t             cnt_q, cnt_d;        // every word held (usage_o)
    cnt_t             stage_cnt;           // words in the two stages
    logic [1:0]       stage_cnt2;
    logic [Width-1:0] rdata;
    logic             ram_nonempty, re, we, ft, stage_order;

    function automatic ptr_t ptr_inc(input ptr_t p);
      return (32'(p) == RamDepth - 1) ? '0 : p + ptr_t'(1);
    endfunction

    assign stage_cnt    = cnt_t'(stage_cnt2);
    assign ram_nonempty = (cnt_q != stage_cnt);

    assign in_ready_o  = (32'(cnt_q) != Depth);
    assign usage_o     = cnt_q;

    // The RAM has no reset and its ports no rst_ni: in reset, from its first clock edge on, the
    // pointers and the fill level are held at zero, so no read is issued (dysharp_ram_prefetch)
    // and a word a producer offers then is written at the reset write pointer and never read. No
    // combinational path from rst_ni (see dysharp_ram_prefetch).
    // FallThrough: a word pushed into a FIFO that holds nothing else after this cycle's pop skips
    // the RAM (into the output register).
    assign ft = FallThrough && push && ((cnt_q == '0) || (cnt_q == cnt_t'(1) && pop));
    assign we = push && !ft;

    always_comb begin
      wr_ptr_d = (push && !ft) ? ptr_inc(wr_ptr_q) : wr_ptr_q;
      rd_ptr_d = re ? ptr_inc(rd_ptr_q) : rd_ptr_q;
      cnt_d    = cnt_q;
      if (push && !pop) begin
        cnt_d = cnt_q + cnt_t'(1);
      end else if (pop && !push) begin
        cnt_d = cnt_q - cnt_t'(1);
      end
    end

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        wr_ptr_q <= '0;
        rd_ptr_q <= '0;
        cnt_q    <= '0;
      end else begin
        wr_ptr_q <= wr_ptr_d;
        rd_ptr_q <= rd_ptr_d;
        cnt_q    <= cnt_d;
      end
    end

    dysharp_ram_1r1w #(
      .Width (Width),
      .Depth (RamDepth)
    ) u_ram (
      .clk_i   (clk_i),
      .we_i    (we),
      .waddr_i (wr_ptr_q),
      .wdata_i (in_data_i),
      .re_i    (re),
      .raddr_i (rd_ptr_q),
      .rdata_o (rdata)
    );

    // Read the RAM's oldest word unless both stages are full.
    dysharp_ram_prefetch #(
      .Width  (Width),
      .Bypass (FallThrough)
    ) u_prefetch (
      .clk_i            (clk_i),
      .rst_ni           (rst_ni),
      .avail_i          (ram_nonempty),
      .re_o             (re),
      .rdata_i          (rdata),
      .byp_i            (ft),
      .byp_data_i       (in_data_i),
      .out_valid_o      (out_valid_o),
      .out_ready_i      (out_ready),
      .out_data_o       (out_data_o),
      .stage_cnt_o      (stage_cnt2),
      .stage_order_ok_o (stage_order)
    );

`ifndef SYNTHESIS
    // a_ram_cnt: the RAM never holds more than RamDepth words. From RamDepth words it could only
    // grow with a push and no read; a push needs a free word of Depth, i.e. not both stages
    // full, and then the RAM (not empty) is read.
    assign ram_cnt_ok     = 32'(cnt_q) - 32'(stage_cnt) <= RamDepth && cnt_q >= stage_cnt;
    // a_stage_order: the output register holds a word only while the read register holds the
    // next one.
    assign stage_order_ok = stage_order;
`else
    logic unused_stage_order;
    assign unused_stage_order = stage_order;
`endif
  end else begin : gen_ff
`ifndef SYNTHESIS
    assign ram_cnt_ok     = 1'b1;
    assign stage_order_ok = 1'b1;
`endif
    dysharp_fifo #(
      .Width (Width),
      .Depth (Depth)
    ) u_fifo (
      .clk_i       (clk_i),
      .rst_ni      (rst_ni),
      .in_valid_i  (in_valid),
      .in_ready_o  (in_ready_o),
      .in_data_i   (in_data_i),
      .out_valid_o (out_valid_o),
      .out_ready_i (out_ready),
      .out_data_o  (out_data_o),
      .usage_o     (usage_o)
    );
  end

`ifndef SYNTHESIS
  if (Depth < 1) begin : gen_depth_check
    $error("dysharp_fifo_ram: Depth must be at least 1");
  end

  // Never overflows, never underflows; the fill level is in range and sets in_ready_o; it moves
  // by the transfers of the cycle. Output stream: valid stays high and data stays stable until
  // accepted. Input stream (the producer's obligation): an offered word is held until accepted.
  // End to end: every word leaves in the order it came in, unchanged (a shadow queue).
  logic                       chk_q;       // the previous edge was out of reset
  localparam int unsigned     UsageW = $clog2(Depth + 1) + 1;
  logic [UsageW-1:0]          usage_exp_q; // usage_o + push - pop of the previous edge
  logic                       out_hold_q;  // the output was stalled at the previous edge
  logic                       in_hold_q;   // the input was stalled at the previous edge
  logic [Width-1:0]           out_held_q, in_held_q;
  logic [Width-1:0]           shadow_q[$];
  logic                       chk_active;  // a cycle in which any rule below can fail

  // The rules are checked in every cycle in which the queue holds, shows or is offered a word, was
  // stalled, or was expected to hold one (usage_exp_q), and in the first cycle out of reset. In
  // any other cycle every rule holds trivially: nothing is pushed, popped or read, the fill level
  // is zero as expected, no stage holds a word (else out_valid_o), and the check state
  // (chk_q, the hold flags, usage_exp_q) already has the value this edge would give it. Skipping
  // them there is what keeps the idle queues of a switch cheap to simulate (docs/perf.md,
  // "Input-combinational logic out of the crosspoint queues").
  assign chk_active = !chk_q || in_valid || (usage_o != '0) || (usage_exp_q != '0) ||
                      out_valid_o || in_hold_q || out_hold_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      chk_q      <= 1'b0;
      out_hold_q <= 1'b0;
      in_hold_q  <= 1'b0;
      shadow_q.delete();
    end else if (chk_active) begin
      `DYSHARP_FIFO_RAM_CHECK(ram_cnt_ok, "a_ram_cnt: the RAM holds more words than it has")
      `DYSHARP_FIFO_RAM_CHECK(stage_order_ok,
                              "a_stage_order: output register ahead of the read register")
      `DYSHARP_FIFO_RAM_CHECK(!push || 32'(usage_o) < Depth, "a_no_overflow: pushed while full")
      `DYSHARP_FIFO_RAM_CHECK(!pop || usage_o != '0, "a_no_underflow: popped while empty")
      `DYSHARP_FIFO_RAM_CHECK(32'(usage_o) <= Depth, "a_usage_range: fill level above Depth")
      `DYSHARP_FIFO_RAM_CHECK(in_ready_o == (32'(usage_o) != Depth),
                              "a_in_ready: in_ready_o is not (usage_o != Depth)")
      `DYSHARP_FIFO_RAM_CHECK(!out_valid_o || usage_o != '0, "a_valid_usage: valid while empty")
      `DYSHARP_FIFO_RAM_CHECK(!chk_q || 32'(usage_o) == 32'(usage_exp_q),
                              "a_usage_step: fill level moved by more than the transfers")
      `DYSHARP_FIFO_RAM_CHECK(!out_hold_q || (out_valid_o && out_data_o == out_held_q),
                              "a_out_stable: a stalled output changed or went away")
      `DYSHARP_FIFO_RAM_CHECK(!in_hold_q || (in_valid && in_data_i == in_held_q),
                              "a_in_stable: a stalled input changed or went away")
      if (pop) begin
        if (shadow_q.size() == 0) begin
          `DYSHARP_FIFO_RAM_CHECK(1'b0, "a word left that never came in")
        end else begin
          if (out_data_o != shadow_q[0]) begin
            $display("%%Error: dysharp_fifo_ram: out of order or changed: %h, expected %h",
                     out_data_o, shadow_q[0]);
            `DYSHARP_FIFO_RAM_CHECK(1'b0, "out of order or changed")
          end
          void'(shadow_q.pop_front());
        end
      end
      if (push) begin
        shadow_q.push_back(in_data_i);
      end
      chk_q      <= 1'b1;
      out_hold_q <= out_valid_o && !out_ready;
      in_hold_q  <= in_valid && !in_ready_o;
    end
  end

  // Data only: read only while out_hold_q / in_hold_q, which reset clears.
  always_ff @(posedge clk_i) begin
    if (chk_active) begin
      usage_exp_q <= UsageW'(usage_o) + UsageW'(push) - UsageW'(pop);
      if (out_valid_o && !out_ready) begin
        out_held_q <= out_data_o;
      end
      if (in_valid && !in_ready_o) begin
        in_held_q <= in_data_i;
      end
    end
  end
`endif

endmodule

`undef DYSHARP_FIFO_RAM_CHECK
