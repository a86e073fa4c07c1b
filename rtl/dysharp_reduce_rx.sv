// dysharp_reduce_rx: one port's partial receiver in the switch's load-reduce table (docs/spec.md
// §5.3, §5.6; docs/architecture.md "Reduction unit"; golden model: `Switch::partial`).
// dysharp_reduce_unit holds one per port and describes the behaviour ("Receive").
//
// A partial's flit0 is matched by (route, tag) against the keys of share `route` (the shares'
// keys come from the dysharp_reduce_share instances; of the expected / answered masks only this
// port's bit); a matched partial's payload is written to bank[route][this port] slot by slot, a
// failed one's code to slot 0; the key updates (answered, failed) go back to the share. Its own
// module so that synthesis does one receiver once (docs/area.md).

`include "dysharp_assert.svh"

module dysharp_reduce_rx
  import dysharp_pkg::*;
#(
  parameter int unsigned NumPorts   = 8,
  parameter int unsigned RedEntries = 256,
  localparam int unsigned Share     = RedEntries / NumPorts,
  localparam int unsigned IdxW      = (Share > 1) ? $clog2(Share) : 1,
  localparam int unsigned PortW     = (NumPorts > 1) ? $clog2(NumPorts) : 1,
  localparam int unsigned AddrW     = (Share * MaxLen > 1) ? $clog2(Share * MaxLen) : 1
) (
  input  logic                                        clk_i,
  // The checks read the asynchronous reset on the clock (a synchronous use, verification-only).
  input  logic                                        rst_ni,
  input  logic [PortW-1:0]                            p_i,         // this port (messages only)
  // RSP_PARTIAL packets from this port's hub (already checked by the parser); always taken.
  input  logic                                        part_valid_i,
  input  flit_t                                       part_data_i,
  input  logic                                        part_last_i,
  // The keys of every share q: valid, tag, len, and this port's bit of expected / answered.
  input  logic [NumPorts-1:0][Share-1:0]              valid_i,
  input  logic [NumPorts-1:0][Share-1:0][TagWidth-1:0] tag_i,
  input  logic [NumPorts-1:0][Share-1:0][LenWidth-1:0] len_i,
  input  logic [NumPorts-1:0][Share-1:0]              exp_i,
  input  logic [NumPorts-1:0][Share-1:0]              got_i,
  // Share q frees entry free_idx_i[q] this cycle.
  input  logic [NumPorts-1:0]                         free_v_i,
  input  logic [NumPorts-1:0][IdxW-1:0]               free_idx_i,
  // The bank write (bank[bw_q_o][this port]).
  output logic                                        bw_v_o,
  output logic [PortW-1:0]                            bw_q_o,
  output logic [AddrW-1:0]                            bw_addr_o,
  output flit_t                                       bw_data_o,
  // Key updates: `answered` (the partial's last flit) / `failed` (its flit0) of (share_o, idx_o).
  output logic                                        got_v_o,
  output logic                                        err_v_o,
  output logic [PortW-1:0]                            share_o,
  output logic [IdxW-1:0]                             idx_o,
  // Inside a matched partial (flit0 taken, last flit not yet) of entry (in_share_o, in_idx_o).
  output logic                                        inside_o,
  output logic [PortW-1:0]                            in_share_o,
  output logic [IdxW-1:0]                             in_idx_o,
  // One-cycle pulse per dropped (orphan) partial, one cycle after its flit0; a flit0 taken.
  output logic                                        orphan_o,
  output logic                                        take_o
);

  localparam int unsigned SlotW = $clog2(MaxLen);        // payload flit index
  localparam int unsigned CntW  = $clog2(MaxLen + 1);    // 0..MaxLen

  typedef logic [IdxW-1:0]  idx_t;
  typedef logic [AddrW-1:0] addr_t;

  // Storage address of payload flit `slot` of entry `e` in a bank.
  function automatic addr_t addr_f(input idx_t e, input logic [SlotW-1:0] slot);
    return addr_t'(e) * addr_t'(MaxLen) + addr_t'(slot);
  endfunction

  logic             bw_v;
  logic [PortW-1:0] bw_q;
  addr_t            bw_addr;
  flit_t            bw_data;
  logic             rx_busy_q;       // inside a packet (flit0 already taken)
  logic             rx_hit_q;        // the current packet matched an entry
  logic             rx_store_q;      // ... and its payload is stored
  logic [PortW-1:0] rx_q_q;          // its share (requester)
  idx_t             rx_i_q;          // its entry
  logic [CntW-1:0]  rx_slot_q;       // next payload slot
  logic             orphan_q;
  logic             rx_fire, rx_first;
  logic             rx_cand;         // flit0 matches a live entry's keys
  logic             rx_match;        // ... that is not freed this cycle
  idx_t             rx_match_i;
  logic             rx_fail;         // ... and the partial failed
  logic             rx_err_v, rx_got_v;
  logic [PortW-1:0] rx_set_share;
  idx_t             rx_set_idx;

  hdr_t             ph;
  logic [PortW-1:0] rq;                              // the share `route` names
  logic             route_ok;
  flit_t            err_word;

  assign ph       = hdr_t'(part_data_i);
  // Only route, tag, len and ecode of a partial's flit0 matter here; the rest is checked by
  // the parser or carried in the stored word.
  logic unused_ph;
  assign unused_ph = ^ph;
  assign route_ok = 32'(ph.route) < NumPorts;
  assign rq       = PortW'(ph.route);
  assign rx_fire  = part_valid_i;    // every port owns its banks: never a reason to stall
  assign rx_first = !rx_busy_q;

  // Match (route, tag) in share `route`: the port must be expected and not have answered yet
  // (golden model: otherwise the partial is an orphan). The compare runs only for a flit0 that
  // arrives (its result is used in no other cycle: operand isolation, and a simulator skips
  // the share's keys on every other cycle).
  always_comb begin
    rx_cand    = 1'b0;
    rx_match_i = '0;
    if (rx_fire && rx_first && route_ok) begin
      for (int unsigned e = 0; e < Share; e++) begin
        if (valid_i[rq][e] && (tag_i[rq][e] == ph.tag) && exp_i[rq][e] &&
            !got_i[rq][e]) begin
          rx_cand    = 1'b1;
          rx_match_i = idx_t'(e);
        end
      end
    end
    // An entry freed this cycle (a quarantine that expires) no longer takes partials.
    rx_match = rx_cand && !(route_ok && free_v_i[rq] && (free_idx_i[rq] == rx_match_i));
    rx_fail  = (ph.ecode != '0) || (ph.len != len_i[rq][rx_match_i]);
  end

  // The word stored in slot 0 of a failed partial: its flit0 with the failure code.
  always_comb begin
    err_word = part_data_i;
    if (ph.ecode == '0) begin
      err_word[EcodeLsb +: EcodeWidth] = EcodeWidth'(ErrLength);
    end
  end

  always_comb begin
    bw_v    = 1'b0;
    bw_q    = rx_q_q;
    bw_addr = addr_f(rx_i_q, rx_slot_q[SlotW-1:0]);
    bw_data = part_data_i;
    if (rx_fire && rx_first) begin
      bw_v    = rx_match && rx_fail;
      bw_q    = rq;
      bw_addr = addr_f(rx_match_i, '0);
      bw_data = err_word;
    end else if (rx_fire && rx_store_q && (rx_slot_q < CntW'(MaxLen))) begin
      bw_v = 1'b1;
    end
  end

  // Key updates: `failed` at a matched failed flit0, `answered` at the partial's last flit.
  always_comb begin
    rx_err_v = rx_fire && rx_first && rx_match && rx_fail;
    rx_got_v = rx_fire && part_last_i && (rx_first ? rx_match : rx_hit_q);
    rx_set_share = rx_first ? rq : rx_q_q;
    rx_set_idx   = rx_first ? rx_match_i : rx_i_q;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rx_busy_q  <= 1'b0;
      rx_hit_q   <= 1'b0;
      rx_store_q <= 1'b0;
      rx_q_q     <= '0;
      rx_i_q     <= '0;
      rx_slot_q  <= '0;
      orphan_q   <= 1'b0;
    end else begin
      orphan_q <= rx_fire && rx_first && !rx_match;
      if (rx_fire) begin
        rx_busy_q <= !part_last_i;
        if (rx_first) begin
          rx_hit_q   <= rx_match;
          rx_store_q <= rx_match && !rx_fail;
          rx_q_q     <= rq;
          rx_i_q     <= rx_match_i;
          rx_slot_q  <= '0;
        end else if (bw_v) begin
          rx_slot_q <= rx_slot_q + CntW'(1);
        end
      end
    end
  end

  assign bw_v_o    = bw_v;
  assign bw_q_o    = bw_q;
  assign bw_addr_o = bw_addr;
  assign bw_data_o = bw_data;
  assign got_v_o   = rx_got_v;
  assign err_v_o   = rx_err_v;
  assign share_o   = rx_set_share;
  assign idx_o     = rx_set_idx;
  assign inside_o   = rx_busy_q && rx_hit_q;
  assign in_share_o = rx_q_q;
  assign in_idx_o   = rx_i_q;
  assign orphan_o  = orphan_q;
  assign take_o    = rx_fire && rx_first;

`ifndef SYNTHESIS
  logic first_fire_q;
  always_ff @(posedge clk_i) begin
    first_fire_q <= rx_fire && rx_first;
  end

  // The rules, checked at the clock edges out of reset (rtl/dysharp_assert.svh).
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      `DYSHARP_ASSERT_I(a_orphan_pulse, !orphan_o || first_fire_q,
        $sformatf("orphan pulse without a partial on port %0d", p_i))
      // A stored payload flit goes to a live entry that still waits for this port.
      `DYSHARP_ASSERT_I(a_write_live, !(rx_busy_q && rx_hit_q) ||
        (valid_i[rx_q_q][rx_i_q] && exp_i[rx_q_q][rx_i_q] &&
        !got_i[rx_q_q][rx_i_q]),
        $sformatf("port %0d writes a freed or answered entry", p_i))
      // Only RSP_PARTIAL packets arrive here.
      `DYSHARP_ASSERT_I(a_partial_only, !(part_valid_i && rx_first) ||
        part_data_i[OpcodeLsb +: OpcodeWidth] == OpRspPartial,
        $sformatf("port %0d delivered a non-partial", p_i))
      // A stored partial never has more than MaxLen payload flits (the parser checks len).
      `DYSHARP_ASSERT_I(a_partial_len, !(rx_fire && !rx_first && rx_store_q) ||
        rx_slot_q < CntW'(MaxLen),
        $sformatf("port %0d partial longer than MaxLen payload flits", p_i))
    end
  end
`else
  logic unused_p;
  assign unused_p = ^p_i;
`endif

endmodule
