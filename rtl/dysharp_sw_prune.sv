// dysharp_sw_prune: target-list pruning of the request replicas leaving one egress port (spec §3,
// §5.1: a replica carries the target list pruned to the targets on its port, list order kept,
// unused lanes of its last target flit 16'hFFFF; golden: Switch::replicate_dynamic in
// sim/src/switch.rs).
//
// The request forwarder writes a DYN op's replica for this port with its final header (tcount and
// hcc of the pruned replica) and the request's target flits whole; the header's rsvd field holds
// how many target flits follow (dysharp_sw_req_fwd). This stage streams the replica out and prunes
// the list on the way, one flit per cycle:
//   - header: forwarded with rsvd cleared; the count of target flits to read, the number of this
//     port's targets to emit (the header's tcount) and whether a tail follows are taken from it;
//   - target flit: its lanes naming an expert of this port (PortId * ExpertsPerPort ..) are packed
//     behind the lanes kept from earlier flits (at most TargetsPerFlit - 1). A flit leaves when
//     TargetsPerFlit lanes are packed or all of the port's targets are; a flit that completes
//     nothing is taken without output (the downlink is free for the response class). When the
//     request's last target flit completes two flits (more than TargetsPerFlit lanes at once),
//     the second leaves in the next cycle, before anything else is taken: the one case that costs
//     a cycle, only for a port holding more than TargetsPerFlit targets of a list;
//   - byte-enable and payload flits, and every flit of other ops: forwarded as they are.
// The list is held for TargetsPerFlit - 1 lanes, never whole, and each lane is handled once.
// Padding lanes of the request (past its tcount) are 16'hFFFF as the parser stored them, which
// names no expert.

`include "dysharp_assert.svh"

module dysharp_sw_prune
  import dysharp_pkg::*;
#(
  parameter int unsigned PortId         = 0,
  parameter int unsigned ExpertsPerPort = 32,
  parameter int unsigned MaxTargets     = 32
) (
  input  logic  clk_i,
  input  logic  rst_ni,
  // Replicas as the crosspoint queues hold them (request class).
  input  logic  in_valid_i,
  output logic  in_ready_o,
  input  flit_t in_data_i,
  input  logic  in_last_i,
  // Replicas as they leave on the downlink.
  output logic  out_valid_o,
  input  logic  out_ready_i,
  output flit_t out_data_o,
  output logic  out_last_o
);

  localparam int unsigned Lanes    = TargetsPerFlit;
  localparam int unsigned TgtFlits = (MaxTargets + Lanes - 1) / Lanes;
  localparam int unsigned TfW      = $clog2(TgtFlits + 1);
  localparam int unsigned WantW    = $clog2(MaxTargets + 1);
  localparam int unsigned BufW     = $clog2(Lanes);           // lanes kept: 0 .. Lanes - 1
  localparam int unsigned NumW     = $clog2(2 * Lanes);       // lanes packed: 0 .. 2 Lanes - 1
  localparam int unsigned Lo       = PortId * ExpertsPerPort;
  localparam int unsigned Hi       = Lo + ExpertsPerPort;

  typedef logic [Lanes-1:0][15:0]     lanes_t;
  typedef logic [2*Lanes-2:0][15:0]   packed_t;

  logic                 inpkt_q;     // the next input flit is not a header
  logic [TfW-1:0]       tleft_q;     // target flits of the request still to read
  logic [WantW-1:0]     want_q;      // this port's targets not yet sent (kept lanes included)
  logic                 tail_q;      // a tail (byte enables, payload) follows the targets
  lanes_t               keep_q;      // lanes packed and not yet sent (the first kcnt_q; the
                                     // others 16'hFFFF once a target flit was taken)
  logic [BufW-1:0]      kcnt_q;
  logic                 flush_q;     // keep_q is the replica's last target flit, to be sent
  logic                 flast_q;     // ... and the replica's last flit

  hdr_t                 h;
  logic                 is_hdr, is_dyn_hdr, is_tgt;
  logic [Lanes-1:0]     match;
  lanes_t               sel;         // this flit's matching lanes, packed to the front
  logic [BufW:0]        nsel;
  packed_t              merged;      // kept lanes, then this flit's
  logic [NumW-1:0]      num;
  logic                 full, done, emit, in_fire, out_fire;
  flit_t                tgt_out;

  assign h          = hdr_t'(in_data_i);
  assign is_hdr     = !inpkt_q;
  assign is_dyn_hdr = is_hdr && op_is_dyn(h.opcode);
  assign is_tgt     = inpkt_q && (tleft_q != '0);

  // This port's lanes of the flit, packed to the front in lane order.
  always_comb begin
    int unsigned n;
    n   = 0;
    sel = '1;
    for (int unsigned l = 0; l < Lanes; l++) begin
      // Lo <= id < Hi, as one unsigned compare (an id below Lo wraps around).
      match[l] = (32'(in_data_i[16*l +: 16]) - Lo) < ExpertsPerPort;
    end
    for (int unsigned l = 0; l < Lanes; l++) begin
      if (match[l]) begin
        sel[n[BufW-1:0]] = in_data_i[16*l +: 16];
        n = n + 1;
      end
    end
    nsel = (BufW + 1)'(n);
  end

  // The kept lanes followed by this flit's: lane j is kept lane j below kcnt_q, else selected lane
  // j - kcnt_q (16'hFFFF past them).
  always_comb begin
    for (int unsigned j = 0; j < 2 * Lanes - 1; j++) begin
      merged[j] = 16'hFFFF;
      if (j < 32'(kcnt_q)) begin
        merged[j] = keep_q[j];
      end else if ((j - 32'(kcnt_q)) < Lanes) begin
        merged[j] = sel[j - 32'(kcnt_q)];
      end
    end
    num = NumW'(kcnt_q) + NumW'(nsel);
  end

  // A target flit sends one flit when Lanes lanes are packed or when the port's last target is.
  assign full = 32'(num) >= Lanes;
  assign done = (num != '0) && (32'(num) >= 32'(want_q));
  assign emit = is_tgt && (full || done);
  always_comb begin
    tgt_out = '1;
    for (int unsigned l = 0; l < Lanes; l++) begin
      tgt_out[16*l +: 16] = merged[l];
    end
  end

  always_comb begin
    hdr_t ho;
    ho          = h;
    ho.rsvd     = '0;
    out_valid_o = 1'b0;
    out_data_o  = in_data_i;
    out_last_o  = in_last_i;
    in_ready_o  = 1'b0;
    if (flush_q) begin
      out_valid_o = 1'b1;
      out_data_o  = flit_t'(keep_q);  // lanes past kcnt_q are 16'hFFFF (packed so)
      out_last_o  = flast_q;
    end else if (is_tgt) begin
      out_valid_o = in_valid_i && emit;
      out_data_o  = tgt_out;
      // The replica ends with this flit when it has no tail and these are the port's last targets.
      out_last_o  = !tail_q && (32'(want_q) <= Lanes) && (32'(num) >= 32'(want_q));
      in_ready_o  = emit ? out_ready_i : 1'b1;
    end else begin
      out_valid_o = in_valid_i;
      out_data_o  = is_dyn_hdr ? flit_t'(ho) : in_data_i;
      in_ready_o  = out_ready_i;
    end
  end

  assign in_fire  = in_valid_i && in_ready_o;
  assign out_fire = out_valid_o && out_ready_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      inpkt_q <= 1'b0;
      tleft_q <= '0;
      want_q  <= '0;
      tail_q  <= 1'b0;
      keep_q  <= '1;
      kcnt_q  <= '0;
      flush_q <= 1'b0;
      flast_q <= 1'b0;
    end else begin
      if (flush_q && out_fire) begin
        flush_q <= 1'b0;
        kcnt_q  <= '0;
        want_q  <= '0;
      end
      if (in_fire) begin
        inpkt_q <= !in_last_i;
        if (is_dyn_hdr) begin
          tleft_q <= TfW'(h.rsvd);
          want_q  <= WantW'(h.tcount);
          tail_q  <= op_is_store(h.opcode);
          kcnt_q  <= '0;
        end else if (is_tgt) begin
          automatic int unsigned sent;
          automatic int unsigned rest;
          sent    = emit ? ((32'(num) >= Lanes) ? Lanes : 32'(num)) : 0;
          rest    = 32'(num) - sent;
          tleft_q <= tleft_q - TfW'(1);
          want_q  <= want_q - WantW'(sent);
          kcnt_q  <= BufW'(rest);
          for (int unsigned l = 0; l < Lanes - 1; l++) begin
            keep_q[l] <= merged[sent + l];
          end
          // The rest are the port's last targets: they leave in the next cycle.
          if ((rest != 0) && (rest >= 32'(want_q) - sent)) begin
            flush_q <= 1'b1;
            flast_q <= !tail_q;
          end
        end
      end
    end
  end

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_ids, Hi <= 32'hFFFF, "expert IDs must leave 16'hFFFF unused")

  // Functional coverage (docs/verification.md): a request's target flit with none of the port's
  // targets left to complete a flit (taken without output), a replica of two or more target
  // flits, and its last target flit sent in the cycle after the request's (a flush).
  `DYSHARP_COVER(c_prune_skip, in_fire && is_tgt && !emit)
  `DYSHARP_COVER(c_prune_multi, in_fire && is_tgt && emit && (32'(want_q) > Lanes))
  `DYSHARP_COVER(c_prune_flush, flush_q && out_fire)

  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // A request's target flits carry at least the port's targets still to send.
      `DYSHARP_ASSERT_I(a_want, !(in_fire && is_tgt && (tleft_q == TfW'(1))) ||
        (32'(num) >= 32'(want_q)),
        $sformatf("port %0d: a replica's target list ended before its tcount", PortId))
      `DYSHARP_ASSERT_I(a_want_tail, !(in_fire && inpkt_q && !is_tgt) || (want_q == '0) ||
        flush_q, $sformatf("port %0d: targets left unsent at a replica's tail", PortId))
      `DYSHARP_ASSERT_I(a_hdr_tgts, !(in_fire && is_dyn_hdr) ||
        ((h.rsvd != '0) && (32'(h.rsvd) <= TgtFlits) && (h.tcount != '0)),
        $sformatf("port %0d: a DYN replica without target flits", PortId))
    end
  end
`endif

endmodule
