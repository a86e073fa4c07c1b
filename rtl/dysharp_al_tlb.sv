// dysharp_al_tlb: the hub's AL-TLB (docs/spec.md §7, golden model sim/src/hub/tlb.rs).
//
// Caches (expert local index, AIdx) -> LIdx. Entries / Ways sets (a power of two), Ways ways each
// (Ways = Entries: fully associative, one CAM compare over every entry); set index = AIdx mod sets.
// Storage (docs/architecture.md, "Storage map"): the match keys (valid, local index, AIdx) are
// flip-flops, written only by a fill; the LIdx of every entry is one dysharp_ram_1r1w word
// (address set * Ways + way), the shape of an SRAM macro.
// - Lookup: with query_i, key in, hit out in the same cycle (a compare of the set's ways), from
//   the state after the last fill (a fill takes effect at the clock edge); lookup_hit_o is 0
//   without query_i (operand isolation: the compare and the way encoder run only for a presented
//   key). query_i and the key must come from registers: the compare then settles once per cycle
//   in a simulator, not again for every change of the hub's inputs. With lookup_i (the lookup
//   commits) the LIdx RAM is read at the hit way: lookup_lidx_o is the LIdx of the last hit
//   looked up, from the cycle after that lookup until the next one (the RAM's registered read;
//   the hub holds its job in a register for that cycle, so the lookup costs no extra cycle).
// - Fill: the lowest-numbered invalid way of the set, else the way the set's round-robin pointer
//   names (the pointer then advances, wrapping after Ways - 1). Entries are never invalidated
//   (only a reset clears them), so a set's valid ways are always its lowest ones: the lowest
//   invalid way is the number of fills so far, and once the set is full that count has wrapped
//   to 0, the round-robin pointer's start. One pointer per set (ptr_q) is therefore both, and the
//   set is full when its last way is valid: no search over the ways (golden: `Tlb::fill`'s
//   `filled` and `rr`). The caller fills only after a lookup of the same key missed (the golden
//   model never fills a present key). A lookup in the cycle of a fill sees the state before it
//   (the RAM reads the old word first).
// The hit/miss counters live in the hub (a lookup is counted only when it commits).

`include "dysharp_assert.svh"

module dysharp_al_tlb #(
  parameter int unsigned Entries    = 512,
  parameter int unsigned Ways       = 512,
  parameter int unsigned LocalWidth = 5,
  parameter int unsigned AidxWidth  = 31,
  parameter int unsigned LidxWidth  = 31
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  // Lookup.
  input  logic                  query_i,        // a key is presented (from registers)
  input  logic                  lookup_i,       // read the LIdx of a hit (committed lookup)
  input  logic [LocalWidth-1:0] lookup_local_i,
  input  logic [AidxWidth-1:0]  lookup_aidx_i,
  output logic                  lookup_hit_o,
  output logic [LidxWidth-1:0]  lookup_lidx_o,  // registered: the cycle after lookup_i
  // Fill.
  input  logic                  fill_i,
  input  logic [LocalWidth-1:0] fill_local_i,
  input  logic [AidxWidth-1:0]  fill_aidx_i,
  input  logic [LidxWidth-1:0]  fill_lidx_i,
  // The fill replaces a valid entry (round-robin victim).
  output logic                  fill_evict_o
);

  localparam int unsigned Sets = Entries / Ways;
  localparam int unsigned SetW = (Sets > 1) ? $clog2(Sets) : 1;
  localparam int unsigned WayW = (Ways > 1) ? $clog2(Ways) : 1;
  localparam int unsigned EntW = (Entries > 1) ? $clog2(Entries) : 1;
  localparam int unsigned KeyW = LocalWidth + AidxWidth;
  localparam int unsigned RamD = (Entries > 1) ? Entries : 2;   // the RAM needs two words

  typedef logic [SetW-1:0] set_t;
  typedef logic [WayW-1:0] way_t;
  typedef logic [EntW-1:0] ent_t;
  typedef logic [KeyW-1:0] key_t;

  // Entry e = set * Ways + way.
  function automatic ent_t ent_f(input set_t s, input way_t w);
    return (Sets > 1 ? ent_t'(s) * ent_t'(Ways) : '0) + ent_t'(w);
  endfunction

  logic [Entries-1:0] valid_q;
  key_t               key_q [Entries];
  way_t [Sets-1:0]    ptr_q;          // per set: fills so far, wrapping (the next way)

  function automatic way_t way_inc(input way_t w);
    return (32'(w) + 1 >= Ways) ? '0 : w + way_t'(1);
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Lookup: compare the ways of the key's set (an entry of another set never holds this AIdx).
  // The matching way is an OR of the matching ways' numbers (at most one matches), no priority
  // chain.
  // ---------------------------------------------------------------------------------------------
  set_t lk_set;
  key_t lk_key;
  logic lk_hit;
  logic lk_many;   // more than one way matched (an assertion's operand only)
  way_t lk_way;

  assign lk_set = (Sets > 1) ? set_t'(lookup_aidx_i) : '0;
  assign lk_key = {lookup_local_i, lookup_aidx_i};

  always_comb begin
    logic m;
    m       = 1'b0;
    lk_hit  = 1'b0;
    lk_many = 1'b0;
    lk_way  = '0;
    if (query_i) begin
      for (int unsigned w = 0; w < Ways; w++) begin
        m       = valid_q[ent_f(lk_set, way_t'(w))] && (key_q[ent_f(lk_set, way_t'(w))] == lk_key);
        lk_many = lk_many | (lk_hit & m);
        lk_hit  = lk_hit | m;
        lk_way  = lk_way | (m ? way_t'(w) : '0);
      end
    end
  end

  assign lookup_hit_o = lk_hit;

  // ---------------------------------------------------------------------------------------------
  // Fill: the set's pointer; the set is full (the fill evicts) when its last way is valid.
  // ---------------------------------------------------------------------------------------------
  set_t fl_set;
  way_t fl_way;
  ent_t fl_ent;
  logic fl_found;

  assign fl_set   = (Sets > 1) ? set_t'(fill_aidx_i) : '0;
  assign fl_way   = ptr_q[fl_set];
  assign fl_found = !valid_q[ent_f(fl_set, way_t'(Ways - 1))];

  assign fl_ent       = ent_f(fl_set, fl_way);
  assign fill_evict_o = fill_i && !fl_found;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
    end else if (fill_i) begin
      valid_q[fl_ent] <= 1'b1;
    end
  end

  // One indexed write at the fill's set (one process, not one per set).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ptr_q <= '0;
    end else if (fill_i) begin
      ptr_q[fl_set] <= way_inc(fl_way);
    end
  end

  // Match keys: no reset (compared only where valid_q is set). One write, at the fill's entry
  // (a decoder in hardware; in simulation only a fill does work, not every entry every cycle).
  always_ff @(posedge clk_i) begin
    if (fill_i) begin
      key_q[fl_ent] <= {fill_local_i, fill_aidx_i};
    end
  end

  // LIdx of every entry.
  logic [$clog2(RamD)-1:0] ram_raddr, ram_waddr;
  assign ram_raddr = $bits(ram_raddr)'(ent_f(lk_set, lk_way));
  assign ram_waddr = $bits(ram_waddr)'(fl_ent);

  dysharp_ram_1r1w #(
    .Width (LidxWidth),
    .Depth (RamD)
  ) u_lidx (
    .clk_i   (clk_i),
    .we_i    (fill_i),
    .waddr_i (ram_waddr),
    .wdata_i (fill_lidx_i),
    .re_i    (lookup_i && lk_hit),
    .raddr_i (ram_raddr),
    .rdata_o (lookup_lidx_o)
  );

`ifndef SYNTHESIS
  // Elaboration checks.
  `DYSHARP_ASSERT_INIT(a_geometry, Ways >= 1 && Entries % Ways == 0 && (Sets & (Sets - 1)) == 0,
    "Entries must be Ways times a power of two")
  `DYSHARP_ASSERT_INIT(a_set_width, SetW <= AidxWidth, "more sets than AIdx values")

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh).
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // At most one way of a set matches a key (a fill never duplicates a present key).
      `DYSHARP_ASSERT_I(a_one_match, !lk_many, "a key matched more than one way")
      // A commit is a presented key.
      `DYSHARP_ASSERT_I(a_lookup_query, !lookup_i || query_i, "a lookup without a key")
      // The fill pointer names a way.
      `DYSHARP_ASSERT_I(a_ptr_range, 32'(ptr_q[fl_set]) < Ways, "a fill pointer past the ways")
      // A fill into a set with room takes its lowest invalid way: that way is invalid and the one
      // below it valid.
      `DYSHARP_ASSERT_I(a_fill_lowest, !(fill_i && fl_found) || (!valid_q[fl_ent] &&
        ((fl_way == '0) || valid_q[fl_ent - ent_t'(1)])),
        "a fill not into the set's lowest invalid way")
    end
  end
  // Functional coverage (docs/verification.md): a fill into a free way, and an eviction, in a
  // set-associative TLB (Sets > 1) or a fully associative one (one set).
  `DYSHARP_COVER(c_fill_free, fill_i && fl_found)
  if (Sets > 1) begin : gen_c_evict_sets
    `DYSHARP_COVER(c_evict_set_assoc, fill_evict_o)
  end else begin : gen_c_evict_one
    `DYSHARP_COVER(c_evict_fully_assoc, fill_evict_o)
  end
`endif

endmodule
