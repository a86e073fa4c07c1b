// dysharp_al_tlb: the hub's AL-TLB (docs/spec.md §7, golden model sim/src/hub/tlb.rs).
//
// Caches (expert local index, AIdx) -> LIdx. Entries / Ways sets (a power of two), Ways ways each
// (Ways = Entries: fully associative, one CAM compare over every entry); set index = AIdx mod sets.
// - Lookup is combinational: key in, hit and LIdx out in the same cycle, from the state after the
//   last fill (a fill takes effect at the clock edge, so a lookup in the following cycle sees it).
// - Fill: the lowest-numbered invalid way of the set, else the way the set's round-robin pointer
//   names (the pointer then advances, wrapping after Ways - 1). The caller fills only after a
//   lookup of the same key missed (the golden model never fills a present key).
// The hit/miss counters live in the hub (a lookup is counted only when it commits).

module dysharp_al_tlb #(
  parameter int unsigned Entries    = 512,
  parameter int unsigned Ways       = 512,
  parameter int unsigned LocalWidth = 5,
  parameter int unsigned AidxWidth  = 31,
  parameter int unsigned LidxWidth  = 31
) (
  input  logic                  clk_i,
  // The SVA `disable iff (!rst_ni)` samples the asynchronous reset on the clock; not a flop.
  /* verilator lint_off SYNCASYNCNET */
  input  logic                  rst_ni,
  /* verilator lint_on SYNCASYNCNET */
  // Lookup.
  input  logic [LocalWidth-1:0] lookup_local_i,
  input  logic [AidxWidth-1:0]  lookup_aidx_i,
  output logic                  lookup_hit_o,
  output logic [LidxWidth-1:0]  lookup_lidx_o,
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

  typedef logic [SetW-1:0] set_t;
  typedef logic [WayW-1:0] way_t;

  logic                  valid_q [Sets][Ways];
  logic [LocalWidth-1:0] local_q [Sets][Ways];
  logic [AidxWidth-1:0]  aidx_q  [Sets][Ways];
  logic [LidxWidth-1:0]  lidx_q  [Sets][Ways];
  way_t                  rr_q    [Sets];

  function automatic way_t way_inc(input way_t w);
    return (32'(w) + 1 >= Ways) ? '0 : w + way_t'(1);
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Lookup: compare the ways of the key's set (an entry of another set never holds this AIdx).
  // ---------------------------------------------------------------------------------------------
  set_t lk_set;
  assign lk_set = (Sets > 1) ? set_t'(lookup_aidx_i) : '0;

  always_comb begin
    lookup_hit_o  = 1'b0;
    lookup_lidx_o = '0;
    for (int unsigned w = 0; w < Ways; w++) begin
      if (valid_q[lk_set][w] && (local_q[lk_set][w] == lookup_local_i) &&
          (aidx_q[lk_set][w] == lookup_aidx_i)) begin
        lookup_hit_o  = 1'b1;
        lookup_lidx_o = lookup_lidx_o | lidx_q[lk_set][w];
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Fill: lowest invalid way of the set, else the round-robin victim.
  // ---------------------------------------------------------------------------------------------
  set_t fl_set;
  way_t fl_way;
  logic fl_found;

  assign fl_set = (Sets > 1) ? set_t'(fill_aidx_i) : '0;

  always_comb begin
    fl_found = 1'b0;
    fl_way   = rr_q[fl_set];
    for (int unsigned w = Ways; w > 0; w--) begin
      if (!valid_q[fl_set][w-1]) begin
        fl_found = 1'b1;
        fl_way   = way_t'(w - 1);
      end
    end
  end

  assign fill_evict_o = fill_i && !fl_found;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned s = 0; s < Sets; s++) begin
        rr_q[s] <= '0;
        for (int unsigned w = 0; w < Ways; w++) begin
          valid_q[s][w] <= 1'b0;
        end
      end
    end else if (fill_i) begin
      valid_q[fl_set][fl_way] <= 1'b1;
      if (!fl_found) begin
        rr_q[fl_set] <= way_inc(rr_q[fl_set]);
      end
    end
  end

  // Tags and data: no reset (read only where valid_q is set).
  always_ff @(posedge clk_i) begin
    if (fill_i) begin
      local_q[fl_set][fl_way] <= fill_local_i;
      aidx_q[fl_set][fl_way]  <= fill_aidx_i;
      lidx_q[fl_set][fl_way]  <= fill_lidx_i;
    end
  end

`ifndef SYNTHESIS
  // Elaboration checks.
  if (Ways < 1 || Entries % Ways != 0 || (Sets & (Sets - 1)) != 0) begin : gen_geometry_check
    $error("dysharp_al_tlb: Entries must be Ways times a power of two");
  end
  if (SetW > AidxWidth) begin : gen_width_check
    $error("dysharp_al_tlb: more sets than AIdx values");
  end

  // At most one way of a set matches a key (a fill never duplicates a present key).
  logic [Ways-1:0] lk_match;
  always_comb begin
    for (int unsigned w = 0; w < Ways; w++) begin
      lk_match[w] = valid_q[lk_set][w] && (local_q[lk_set][w] == lookup_local_i) &&
                    (aidx_q[lk_set][w] == lookup_aidx_i);
    end
  end
  a_onehot_match: assert property (@(posedge clk_i) disable iff (!rst_ni)
    $onehot0(lk_match));
  // The round-robin pointer names a way.
  a_rr_range: assert property (@(posedge clk_i) disable iff (!rst_ni)
    32'(rr_q[fl_set]) < Ways);
  // Functional coverage (docs/verification.md): a fill into a free way, and an eviction, in a
  // set-associative TLB (Sets > 1) or a fully associative one (one set).
  c_fill_free: cover property (@(posedge clk_i) disable iff (!rst_ni) fill_i && fl_found);
  if (Sets > 1) begin : gen_c_evict_sets
    c_evict_set_assoc: cover property (@(posedge clk_i) disable iff (!rst_ni) fill_evict_o);
  end else begin : gen_c_evict_one
    c_evict_fully_assoc: cover property (@(posedge clk_i) disable iff (!rst_ni) fill_evict_o);
  end
`endif

endmodule
