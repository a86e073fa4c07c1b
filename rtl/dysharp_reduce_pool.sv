// dysharp_reduce_pool: the load-reduce results' flit reductions, a pool shared by the requesters'
// result engines (docs/spec.md §9; docs/architecture.md "Reduction unit"; golden model
// `Switch::partial` through sim/src/numerics.rs).
//
// Units dysharp_reduce_acc instances, each reducing one payload flit per cycle over the expected
// ports in ascending port order (bit-exact; FpStages pipeline stages per flit step, AccStages - 1 =
// fp_red_latency(NumPorts, FpStages) cycles in all). A result engine that has a
// payload flit to read asks in its stage I (req_i); up to Units engines are granted per cycle,
// round robin from a rotating pointer, and only a granted engine reads its banks. In the next
// cycle (its stage C) the banks' outputs of each granted engine go to the unit that granted it,
// and the reduced flit comes back to that engine AccStages - 1 cycles later, when its own
// pipeline carries the flit's place (so an engine sees the same latency as with a unit of its
// own).
//
// Sizing: partials reach the switch at most NumPorts flits per cycle in all, and each result
// flit is the reduction of several of them, so a few units serve every requester (the default
// (NumPorts + 3) / 4: 2 at 8 ports, 14 flit steps per cycle, against one unit per requester
// before, 56). An engine that is not granted waits one cycle; the order of one requester's
// results is its own engine's, so the pool changes when a result leaves, never what it is.

`include "dysharp_assert.svh"

module dysharp_reduce_pool
  import dysharp_pkg::*;
  import dysharp_fp_pkg::*;
#(
  parameter int unsigned NumPorts  = 8,
  parameter int unsigned Units     = 2,
  parameter int unsigned FpStages  = 10
) (
  input  logic                                     clk_i,
  input  logic                                     rst_ni,
  // Stage I: engine q asks for a unit (it has a payload flit to read); granted in this cycle.
  input  logic [NumPorts-1:0]                      req_i,
  output logic [NumPorts-1:0]                      gnt_o,
  // Stage C (the cycle after the grant): engine q's operation and its banks' flits.
  input  logic [NumPorts-1:0]                      v_i,
  input  logic [NumPorts-1:0][1:0]                 dtype_i,
  input  logic [NumPorts-1:0][1:0]                 rop_i,
  input  logic [NumPorts-1:0]                      acc_i,
  input  logic [NumPorts-1:0][NumPorts-1:0]        exp_i,
  input  flit_t [NumPorts-1:0][NumPorts-1:0]       data_i,
  // The reduced flit of engine q, AccStages - 1 cycles after its stage C (0 in other cycles).
  output flit_t [NumPorts-1:0]                     payload_o
);

  localparam int unsigned QW        = (NumPorts > 1) ? $clog2(NumPorts) : 1;
  localparam int unsigned AccStages = fp_red_latency(NumPorts, FpStages) + 1;

  typedef logic [QW-1:0] q_t;

  q_t                 ptr_q, ptr_d;
  logic [Units-1:0]   g_v;             // unit u granted in this cycle ...
  q_t [Units-1:0]     g_q;             // ... to engine g_q[u]
  logic [Units-1:0]   c_v_q;           // stage C: unit u serves engine c_q_q[u]
  q_t [Units-1:0]     c_q_q;

  // Up to Units requesters from the pointer on, each to the next free unit.
  always_comb begin
    int unsigned n;
    int unsigned r;
    n     = 0;
    gnt_o = '0;
    g_v   = '0;
    g_q   = '0;
    ptr_d = ptr_q;
    for (int unsigned k = 0; k < NumPorts; k++) begin
      r = 32'(ptr_q) + k;
      if (r >= NumPorts) begin
        r = r - NumPorts;
      end
      if (req_i[r] && (n < Units)) begin
        gnt_o[r] = 1'b1;
        g_v[n]   = 1'b1;
        g_q[n]   = q_t'(r);
        ptr_d    = q_t'((r + 1 >= NumPorts) ? 0 : r + 1);
        n        = n + 1;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ptr_q <= '0;
      c_v_q <= '0;
      c_q_q <= '0;
    end else begin
      ptr_q <= ptr_d;
      c_v_q <= g_v;
      c_q_q <= g_q;
    end
  end

  flit_t [Units-1:0]  u_payload;
  logic  [Units-1:0]  o_v;
  q_t    [Units-1:0]  o_q;

  for (genvar u = 0; u < Units; u++) begin : g_unit
    // The granted engine's operation and flits (operand isolation: zeros without a grant).
    logic                       v;
    logic [1:0]                 dtype, rop;
    logic                       acc;
    logic [NumPorts-1:0]        exp;
    flit_t [NumPorts-1:0]       data;
    always_comb begin
      v     = c_v_q[u] && v_i[c_q_q[u]];
      dtype = '0;
      rop   = '0;
      acc   = 1'b0;
      exp   = '0;
      data  = '0;
      if (v) begin
        dtype = dtype_i[c_q_q[u]];
        rop   = rop_i[c_q_q[u]];
        acc   = acc_i[c_q_q[u]];
        exp   = exp_i[c_q_q[u]];
        data  = data_i[c_q_q[u]];
      end
    end

    dysharp_reduce_acc #(
      .NumPorts (NumPorts),
      .FpStages (FpStages)
    ) u_acc (
      .clk_i     (clk_i),
      .valid_i   (v),
      .dtype_i   (dtype),
      .rop_i     (rop),
      .acc_i     (acc),
      .exp_i     (exp),
      .data_i    (data),
      .payload_o (u_payload[u])
    );

    // Whose flit leaves the unit: the engine carried alongside the reduction's stages.
    if (AccStages > 1) begin : g_pipe
      logic [AccStages-2:0] pv_q;
      q_t                   pq_q [AccStages-1];
      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          pv_q <= '0;
        end else begin
          pv_q[0] <= v;
          for (int unsigned s = 1; s < AccStages - 1; s++) begin
            pv_q[s] <= pv_q[s-1];
          end
        end
      end
      // Data only: read while the matching pv_q bit is set.
      always_ff @(posedge clk_i) begin
        pq_q[0] <= c_q_q[u];
        for (int unsigned s = 1; s < AccStages - 1; s++) begin
          pq_q[s] <= pq_q[s-1];
        end
      end
      assign o_v[u] = pv_q[AccStages-2];
      assign o_q[u] = pq_q[AccStages-2];
    end else begin : g_comb
      assign o_v[u] = v;
      assign o_q[u] = c_q_q[u];
    end
  end

  // Each engine's flit from the unit that reduced it (at most one: an engine issues one per cycle).
  always_comb begin
    payload_o = '0;
    for (int unsigned u = 0; u < Units; u++) begin
      if (o_v[u]) begin
        payload_o[o_q[u]] = u_payload[u];
      end
    end
  end

`ifndef SYNTHESIS
  `DYSHARP_ASSERT_INIT(a_units, Units >= 1 && Units <= NumPorts, "Units must be 1..NumPorts")

  // Functional coverage (docs/verification.md): every unit busy in one cycle while another engine
  // asks (an engine waits for the pool).
  `DYSHARP_COVER(c_pool_wait, (g_v == '1) && ((req_i & ~gnt_o) != '0))

  // A unit serves engine q in stage C.
  function automatic logic served_f(input q_t q);
    logic r;
    r = 1'b0;
    for (int unsigned u = 0; u < Units; u++) begin
      r |= c_v_q[u] && (c_q_q[u] == q);
    end
    return r;
  endfunction

  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      // A granted engine brings its flits in the next cycle, and only a granted engine does.
      for (int unsigned u = 0; u < Units; u++) begin
        `DYSHARP_ASSERT_I(a_granted_op, !c_v_q[u] || v_i[c_q_q[u]],
          $sformatf("unit %0d: its engine %0d did not bring the granted operation", u, c_q_q[u]))
      end
      for (int unsigned q = 0; q < NumPorts; q++) begin
        `DYSHARP_ASSERT_I(a_ungranted_op, !v_i[q] || served_f(q_t'(q)),
          $sformatf("engine %0d brought an operation without a unit", q))
      end
      `DYSHARP_ASSERT_I(a_grants, $countones(gnt_o) <= Units && (gnt_o & ~req_i) == '0,
        "more grants than units, or a grant without a request")
    end
  end
`endif

endmodule
