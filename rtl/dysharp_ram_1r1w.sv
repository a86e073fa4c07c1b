// dysharp_ram_1r1w: a memory with the shape of an SRAM macro (docs/architecture.md, "Storage map").
//
// One write port and one read port on the same clock, registered (synchronous) read: the word at
// raddr_i is on rdata_o in the cycle after re_i; rdata_o holds its value while re_i is low. A read
// of the address being written in the same cycle returns the old word (read-first), as a macro
// with separate ports does. No reset: storage is data only, and callers do not read what they
// wrote in reset. The address checks below check every enabled access from the second clock edge
// on: at the first, a caller's pointers may still be random initial values (reset acts at that
// edge). Behavioural, so that Yosys infers a
// memory with two ports and a synchronous read, which `dysharp area` keeps as an SRAM macro
// (`--memories macros`).
//
// Every buffer of 1 KB or more in the design goes through this primitive (or a FIFO built on it).

`include "dysharp_assert.svh"

module dysharp_ram_1r1w #(
  parameter int unsigned Width = 32,
  parameter int unsigned Depth = 64,
  localparam int unsigned AddrW = (Depth > 1) ? $clog2(Depth) : 1
) (
  input  logic             clk_i,
  // Write port.
  input  logic             we_i,
  input  logic [AddrW-1:0] waddr_i,
  input  logic [Width-1:0] wdata_i,
  // Read port (registered).
  input  logic             re_i,
  input  logic [AddrW-1:0] raddr_i,
  output logic [Width-1:0] rdata_o
);


  logic [Width-1:0] mem_q [Depth];
  logic [Width-1:0] rdata_q;

  always_ff @(posedge clk_i) begin
    if (we_i) begin
      mem_q[waddr_i] <= wdata_i;
    end
    if (re_i) begin
      rdata_q <= mem_q[raddr_i];
    end
  end

  assign rdata_o = rdata_q;

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_depth, Depth >= 2, "Depth must be at least 2")
  // Addresses in range (Depth need not be a power of two).
  // From the second clock edge on (see above): chk_armed_q is set by the first.
  logic chk_armed_q;
  initial chk_armed_q = 1'b0;
  always_ff @(posedge clk_i) begin
    if (chk_armed_q) begin
      `DYSHARP_ASSERT_I(a_waddr_range, !we_i || 32'(waddr_i) < Depth, "write address out of range")
      `DYSHARP_ASSERT_I(a_raddr_range, !re_i || 32'(raddr_i) < Depth, "read address out of range")
    end
    chk_armed_q <= 1'b1;
  end
`endif

endmodule
