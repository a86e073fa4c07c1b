// Floating-point functions of the switch and hub reductions (docs/spec.md §9).
//
// Bit-exact with the golden model sim/src/numerics.rs:
// * fp_add: IEEE 754 binary32 addition, round to nearest ties to even, subnormals kept on input
//   and output (no flush-to-zero), inf + -inf = NaN, (-0) + (-0) = -0, x + (-x) = +0.
// * fp_min/fp_max: IEEE 754-2019 minimumNumber/maximumNumber (a NaN operand is ignored unless
//   both are NaN; -0 orders below +0).
// * Every NaN result is canonical: f32 0x7FC00000, bf16 0x7FC0, f16 0x7E00.
// * fp_widen: exact bf16/f16 -> f32 (NaN sign and payload kept, as numerics::to_f32).
// * fp_narrow: f32 -> bf16/f16 round to nearest even, overflow to infinity, subnormal results.
// * fp_acc_*: lane-parallel accumulator over one flit, the order and rounding of
//   numerics::reduce_lanes: finish(step(...step(init(x0), x1)..., xn)).
//
// dtype codes (dtype_e): 0 bf16, 1 f16, 2 f32; the reserved code 3 is treated as f32 (only
// dtype[1] is decoded). rop codes (rop_e): 0 add, 1 min, 2 max; the reserved code 3 adds.
//
// All functions are purely combinational and synthesizable (constant loop bounds only).
package dysharp_fp_pkg;
  import dysharp_pkg::*;

  localparam logic [31:0] CanonNanF32  = 32'h7FC0_0000;
  localparam logic [15:0] CanonNanBf16 = 16'h7FC0;
  localparam logic [15:0] CanonNanF16  = 16'h7E00;

  // Lanes of a 256-bit accumulator (one f32 per 16-bit lane of a 128-bit flit).
  localparam int unsigned FpAccLanes = FlitBits / 16;
  localparam int unsigned FpAccBits  = 32 * FpAccLanes;

  // True for the 16-bit element types (bf16, f16).
  function automatic logic fp_is16(input logic [1:0] dtype);
    return (dtype == DtBf16) || (dtype == DtF16);
  endfunction

  // Whether the magnitude bits f[30:0] of an f32 are a NaN (quiet or signalling).
  function automatic logic fp_is_nan(input logic [30:0] mag);
    return mag > 31'h7F80_0000;
  endfunction

  // Any NaN becomes the canonical f32 NaN.
  function automatic logic [31:0] fp_canon(input logic [31:0] f);
    return fp_is_nan(f[30:0]) ? CanonNanF32 : f;
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Conversions
  // ---------------------------------------------------------------------------------------------

  // f16 -> f32, exact. Subnormals are normalised; inf/NaN keep sign and payload.
  function automatic logic [31:0] fp_f16_to_f32(input logic [15:0] h);
    /* verilator no_inline_task */
    logic        s;
    logic [4:0]  e;
    logic [9:0]  m;
    logic [3:0]  p;      // position of the leading one of a subnormal fraction
    logic [9:0]  mn;     // subnormal fraction shifted so that the leading one drops out
    logic [31:0] r;
    s  = h[15];
    e  = h[14:10];
    m  = h[9:0];
    p  = 4'd0;
    for (int unsigned i = 0; i < 10; i++) begin
      if (m[i]) p = 4'(i);
    end
    mn = m << (4'd10 - p);
    if (e == 5'd0) begin
      if (m == 10'd0) r = {s, 31'h0};
      // value = 2^(p-24) * 1.f: biased f32 exponent p - 24 + 127 = p + 103.
      else            r = {s, 8'(p) + 8'd103, mn, 13'h0};
    end else if (e == 5'h1F) begin
      r = {s, 8'hFF, m, 13'h0};
    end else begin
      r = {s, 8'(e) + 8'd112, m, 13'h0};
    end
    return r;
  endfunction

  // f32 -> bf16, round to nearest even: the top half is incremented when the discarded half is
  // above 0x8000, or exactly 0x8000 with an odd kept part. bf16 has f32's exponent range, so
  // subnormals round the same way and the carry into the exponent gives infinity on overflow
  // (0x7F7F + 1 = 0x7F80); no non-NaN pattern can wrap (the largest is -inf, 0xFF80).
  function automatic logic [15:0] fp_f32_to_bf16(input logic [31:0] f);
    /* verilator no_inline_task */
    logic rnd;
    rnd = f[15] & ((|f[14:0]) | f[16]);
    return fp_is_nan(f[30:0]) ? CanonNanBf16 : f[31:16] + {15'h0, rnd};
  endfunction

  // f32 -> f16, round to nearest even, overflow to infinity, gradual underflow.
  function automatic logic [15:0] fp_f32_to_f16(input logic [31:0] f);
    /* verilator no_inline_task */
    logic        s;
    logic [30:0] a;
    logic [7:0]  e8;      // biased f32 exponent, 102 ..= 142 on the rounding path
    logic        norm;    // the result is an f16 normal (or rounds up to infinity)
    logic [4:0]  sh;      // right shift of the 24-bit significand, 13 (normal) or 14 ..= 24
    logic [38:0] ext;     // {significand, 24 zero bits} >> sh: kept part over guard and sticky
    logic [14:0] kept;
    logic        rnd;
    logic [15:0] r;
    s    = f[31];
    a    = f[30:0];
    e8   = a[30:23];
    norm = e8 >= 8'd113;  // |x| >= 2^-14
    // Subnormal: count units of 2^-24; |x| = sig * 2^(e8-150), so the shift is 126 - e8.
    sh   = norm ? 5'd13 : 5'(8'd126 - e8);
    ext  = 39'({1'b1, a[22:0], 24'h0} >> sh);  // sh >= 13: bits 47:39 are zero
    kept = norm ? {5'(e8 - 8'd112), ext[33:24]} : ext[38:24];
    rnd  = ext[23] & ((|ext[22:0]) | kept[0]);
    if (a > 31'h7F80_0000) begin
      r = CanonNanF16;
    end else if (a >= 31'h4780_0000) begin
      // |x| >= 2^16 (infinity included) lies beyond every f16 rounding boundary.
      r = {s, 15'h7C00};
    end else if (a <= 31'h3300_0000) begin
      // |x| <= 2^-25, half the smallest subnormal (the tie goes to the even 0).
      r = {s, 15'h0};
    end else begin
      // A carry out of the fraction increments the exponent (0x7BFF + 1 = infinity,
      // 0x03FF + 1 = the smallest normal).
      r = {s, kept + {14'h0, rnd}};
    end
    return r;
  endfunction

  // Widens a value of type dtype (16-bit types in bits[15:0]) to f32, exactly. NaN sign and
  // payload are kept (shifted to the top of the f32 fraction), as numerics::to_f32.
  function automatic logic [31:0] fp_widen(input logic [1:0] dtype, input logic [31:0] bits);
    /* verilator no_inline_task */
    logic [31:0] r;
    if (dtype[1])      r = bits;
    else if (dtype[0]) r = fp_f16_to_f32(bits[15:0]);
    else               r = {bits[15:0], 16'h0};
    return r;
  endfunction

  // Rounds the f32 f to type dtype (numerics::from_f32). 16-bit results in bits[15:0] with
  // bits[31:16] zero; for f32, f with a NaN canonicalised.
  function automatic logic [31:0] fp_narrow(input logic [1:0] dtype, input logic [31:0] f);
    /* verilator no_inline_task */
    logic [31:0] r;
    if (dtype[1])      r = fp_canon(f);
    else if (dtype[0]) r = {16'h0, fp_f32_to_f16(f)};
    else               r = {16'h0, fp_f32_to_bf16(f)};
    return r;
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Arithmetic
  // ---------------------------------------------------------------------------------------------

  // Leading zeros of a 27-bit vector (27 if it is zero).
  function automatic logic [4:0] fp_lzc27(input logic [26:0] v);
    /* verilator no_inline_task */
    logic [4:0] n;
    logic       found;
    n     = 5'd27;
    found = 1'b0;
    for (int i = 26; i >= 0; i--) begin
      if (v[i] && !found) begin
        n     = 5'(26 - i);
        found = 1'b1;
      end
    end
    return n;
  endfunction

  // IEEE 754 binary32 a + b, round to nearest even, subnormals kept; NaN results canonical.
  //
  // The larger-magnitude operand x and the smaller y are aligned with three extra bits below the
  // significand (guard, round, sticky). A right shift of y by 2 or more leaves a difference that
  // needs at most one left shift, so guard/round/sticky give the exact rounding; shifts of 0 or 1
  // lose nothing. Normalisation shifts left at most down to biased exponent 1, leaving a
  // subnormal (leading one below bit 26) with exponent field 0.
  //
  // Written as seven phases over fp_add_t (swap, align, the low and the high half of the sum,
  // leading zeros, normalising shift, round) so that a pipeline can put registers between them
  // (dysharp_fp_step) and still compute exactly fp_add: fp_add is their composition. Unpacked: a
  // simulator keeps each field a variable of its own.
  typedef struct {
    logic        nan;    // the result is the canonical NaN
    logic        inf;    // the result is the infinity x, {sx, 0x7F800000}
    logic        zsign;  // sign of an exact zero: -0 only for (-0) + (-0)
    logic        sx;     // sign of x, the larger magnitude
    logic        sub;    // signs differ
    logic [7:0]  ex;     // effective biased exponent of x (1 for subnormals and zero)
    logic [4:0]  dd;     // alignment shift of y, saturated at 27
    logic [26:0] ax;     // x's significand and three zero bits
    logic [23:0] ysig;   // y's significand (hidden bit included)
    logic [26:0] ay;     // y aligned: guard, round, sticky below
    logic [13:0] lo;     // the sum's low 14 bits ...
    logic        c_lo;   // ... and their carry
    logic [27:0] sum;    // {1'b0, ax} + or - {1'b0, ay}
    logic        zero;   // the sum is exactly zero
    logic [4:0]  sh;     // left shift of the sum (no carry)
    logic [26:0] norm;   // normalised significand and guard, round, sticky
    logic [8:0]  e;      // biased exponent of norm[26], 1 ..= 255
  } fp_add_t;

  // Phase 1: order the operands by magnitude, the special cases, the alignment shift (both
  // exponent differences computed beside the magnitude comparison, then chosen).
  function automatic fp_add_t fp_add_swap(input logic [31:0] a, input logic [31:0] b);
    /* verilator no_inline_task */
    fp_add_t     t;
    logic        a_inf, b_inf, swap;
    logic [31:0] x, y;
    logic [7:0]  ea, eb, d;
    t     = '{default: '0};
    a_inf = (a[30:0] == 31'h7F80_0000);
    b_inf = (b[30:0] == 31'h7F80_0000);
    swap  = b[30:0] > a[30:0];
    x     = swap ? b : a;
    y     = swap ? a : b;
    ea    = (a[30:23] == 8'h0) ? 8'd1 : a[30:23];
    eb    = (b[30:23] == 8'h0) ? 8'd1 : b[30:23];
    d     = swap ? (eb - ea) : (ea - eb);
    t.sx  = x[31];
    t.sub = x[31] ^ y[31];
    t.ex  = swap ? eb : ea;
    t.dd  = (d > 8'd26) ? 5'd27 : d[4:0];
    t.ax  = {x[30:23] != 8'h0, x[22:0], 3'b000};
    t.ysig = {y[30:23] != 8'h0, y[22:0]};
    t.nan  = fp_is_nan(a[30:0]) || fp_is_nan(b[30:0]) || (a_inf && b_inf && t.sub);
    t.inf  = a_inf || b_inf;
    t.zsign = a[31] & b[31];
    return t;
  endfunction

  // Phase 2: y shifted right by dd, the bits shifted out kept as the sticky bit.
  function automatic fp_add_t fp_add_align(input fp_add_t t);
    /* verilator no_inline_task */
    fp_add_t     r;
    logic [53:0] yext;
    r    = t;
    yext = {t.ysig, 3'b000, 27'h0} >> t.dd;
    r.ay = {yext[53:28], yext[27] | (|yext[26:0])};
    return r;
  endfunction

  // Phases 3 and 4: {1'b0, ax} + {1'b0, ay}, or minus (ax + ~ay + 1: ax is the larger
  // magnitude, so no borrow leaves bit 27), in two halves.
  function automatic fp_add_t fp_add_sum_lo(input fp_add_t t);
    /* verilator no_inline_task */
    fp_add_t     r;
    logic [14:0] s;
    r      = t;
    s      = {1'b0, t.ax[13:0]} + {1'b0, t.ay[13:0] ^ {14{t.sub}}} + {14'h0, t.sub};
    r.lo   = s[13:0];
    r.c_lo = s[14];
    return r;
  endfunction

  function automatic fp_add_t fp_add_sum_hi(input fp_add_t t);
    /* verilator no_inline_task */
    fp_add_t     r;
    logic [13:0] h;
    r     = t;
    h     = {1'b0, t.ax[26:14]} + ({1'b0, t.ay[26:14]} ^ {14{t.sub}}) + {13'h0, t.c_lo};
    r.sum = {h, t.lo};
    return r;
  endfunction

  // Phase 5: the normalisation's shift and exponent (a carry shifts right by one; otherwise left
  // by the leading zeros, stopping at biased exponent 1).
  function automatic fp_add_t fp_add_lzc(input fp_add_t t);
    /* verilator no_inline_task */
    fp_add_t    r;
    logic [4:0] lz;
    logic [7:0] em;      // largest left shift that keeps the biased exponent >= 1
    r      = t;
    r.zero = (t.sum == 28'h0);
    lz     = fp_lzc27(t.sum[26:0]);
    em     = t.ex - 8'd1;
    // Stop at biased exponent 1: em < lz (<= 27) fits in 5 bits.
    r.sh   = ({3'b000, lz} < em) ? lz : em[4:0];
    r.e    = t.sum[27] ? ({1'b0, t.ex} + 9'd1) : ({1'b0, t.ex} - {4'h0, r.sh});
    return r;
  endfunction

  // Phase 6: the normalising shift.
  function automatic fp_add_t fp_add_shift(input fp_add_t t);
    /* verilator no_inline_task */
    fp_add_t r;
    r      = t;
    r.norm = t.sum[27] ? {t.sum[27:2], t.sum[1] | t.sum[0]} : (t.sum[26:0] << t.sh);
    return r;
  endfunction

  // Phase 7: rounding to nearest even and the special results.
  function automatic logic [31:0] fp_add_round(input fp_add_t t);
    /* verilator no_inline_task */
    logic [7:0]  field;
    logic        rnd;
    logic [30:0] mag;
    logic [31:0] r;
    field = t.norm[26] ? t.e[7:0] : 8'h0;
    rnd   = t.norm[2] & (t.norm[1] | t.norm[0] | t.norm[3]);
    mag   = {field, t.norm[25:3]} + {30'h0, rnd};
    if (t.nan) begin
      r = CanonNanF32;
    end else if (t.inf) begin
      r = {t.sx, 31'h7F80_0000};          // the infinity has the larger magnitude
    end else if (t.zero) begin
      r = {t.zsign, 31'h0};               // exact zero: -0 only for (-0) + (-0)
    end else if (t.e >= 9'd255) begin
      r = {t.sx, 31'h7F80_0000};          // the carry pushed the exponent past the maximum
    end else begin
      r = {t.sx, mag};                    // a rounding carry may give infinity, correctly
    end
    return r;
  endfunction

  function automatic logic [31:0] fp_add(input logic [31:0] a, input logic [31:0] b);
    /* verilator no_inline_task */
    return fp_add_round(fp_add_shift(fp_add_lzc(fp_add_sum_hi(fp_add_sum_lo(
             fp_add_align(fp_add_swap(a, b)))))));
  endfunction

  // Total-order key of a non-NaN f32: unsigned comparison of the keys orders the values, with
  // -0 below +0.
  function automatic logic [31:0] fp_key(input logic [31:0] f);
    return f[31] ? ~f : {1'b1, f[30:0]};
  endfunction

  // IEEE 754-2019 minimumNumber.
  function automatic logic [31:0] fp_min(input logic [31:0] a, input logic [31:0] b);
    /* verilator no_inline_task */
    logic [31:0] r;
    if (fp_is_nan(a[30:0]) && fp_is_nan(b[30:0])) r = CanonNanF32;
    else if (fp_is_nan(a[30:0]))                  r = b;
    else if (fp_is_nan(b[30:0]))                  r = a;
    else                                          r = (fp_key(b) < fp_key(a)) ? b : a;
    return r;
  endfunction

  // IEEE 754-2019 maximumNumber.
  function automatic logic [31:0] fp_max(input logic [31:0] a, input logic [31:0] b);
    /* verilator no_inline_task */
    logic [31:0] r;
    if (fp_is_nan(a[30:0]) && fp_is_nan(b[30:0])) r = CanonNanF32;
    else if (fp_is_nan(a[30:0]))                  r = b;
    else if (fp_is_nan(b[30:0]))                  r = a;
    else                                          r = (fp_key(b) > fp_key(a)) ? b : a;
    return r;
  endfunction

  // ---------------------------------------------------------------------------------------------
  // Lane-parallel flit accumulator
  // ---------------------------------------------------------------------------------------------
  // Accumulator lane i at [32*i +: 32] (f32). 16-bit types: 8 lanes, lane i of a flit at
  // [16*i +: 16]. f32: 4 lanes, lane i of a flit at [32*i +: 32]; accumulator lanes 4..7 zero.

  // Lane i of flit x of type dtype, widened to f32 (lanes 4..7 of an f32 flit are zero).
  function automatic logic [31:0] fp_flit_lane(input logic [1:0] dtype, input flit_t x,
                                               input int unsigned i);
    logic [1:0]  j;  // f32 lane index within the flit
    logic [31:0] r;
    j = i[1:0];
    if (!fp_is16(dtype)) r = (i < FpAccLanes / 2) ? x[32*j +: 32] : 32'h0;
    else                 r = fp_widen(dtype, {16'h0, x[16*i[2:0] +: 16]});
    return r;
  endfunction

  // ---------------------------------------------------------------------------------------------
  // One lane of a reduction step in phases (dysharp_fp_step; fp_acc_step is their composition)
  // ---------------------------------------------------------------------------------------------

  // A flit step's operation.
  typedef struct packed {
    logic       en;      // step this flit (else the accumulator passes)
    logic       init;    // the flit starts the reduction
    logic [1:0] dtype;
    logic [1:0] rop;
    logic       native;  // round to dtype after the step
  } fp_ctl_t;

  // One lane's state between phases (unpacked, as fp_add_t: a simulator keeps each field a
  // variable of its own instead of bits of one wide word).
  typedef struct {
    logic        done;   // byp (and r) is the lane's result (a pass, an init, an f32 flit's
                         // upper lane): no later phase changes the state
    logic        mm;     // byp is a min/max result (still rounded to dtype when native)
    logic [31:0] byp;
    logic [31:0] a;      // the accumulator lane
    logic [31:0] xw;     // the flit's lane: raw before phase 0, widened to f32 after
    fp_add_t     add;
    logic        narrowed;  // r holds the result rounded to dtype (16 bits)
    logic [31:0] r;      // the result, from phase 5 on
  } fp_lane_t;

  // Phases of a step (fp_lane_phase): 0 widen the flit's lane, 1 min/max or the adder's swap,
  // 2 align, 3 and 4 the sum's halves, 5 leading zeros, 6 normalising shift, 7 round, 8 round to
  // dtype (native), 9 widen back.
  localparam int unsigned FpPhases = 10;

  // Lane i of acc and of flit x (raw) as a lane state before phase 0.
  function automatic fp_lane_t fp_lane_in(input fp_ctl_t c, input logic [FpAccBits-1:0] acc,
                                          input flit_t x, input int unsigned i);
    fp_lane_t   t;
    logic [1:0] j;  // f32 lane index within the flit
    j    = i[1:0];
    t    = '{default: '0};
    t.a  = acc[32*i +: 32];
    if (!c.en) begin
      // the accumulator passes
      t.done = 1'b1;
      t.byp  = t.a;
      t.r    = t.a;
    end else if (!fp_is16(c.dtype)) begin
      t.xw = (i < FpAccLanes / 2) ? x[32*j +: 32] : 32'h0;
    end else begin
      t.xw = {16'h0, x[16*i[2:0] +: 16]};
    end
    return t;
  endfunction

  // Phase k of a lane of a step (i: the lane). A lane whose state is done is left as it is, so a
  // caller may skip the call for it.
  function automatic fp_lane_t fp_lane_phase(input int unsigned k, input fp_ctl_t c,
                                             input int unsigned i, input fp_lane_t t);
    /* verilator no_inline_task */
    fp_lane_t r;
    r = t;
    if (!t.done) begin
      unique case (k)
        0: begin
          if (fp_is16(c.dtype)) r.xw = fp_widen(c.dtype, t.xw);
          if (c.init) begin
            r.done = 1'b1;
            r.byp  = fp_canon(r.xw);
          end else if (!fp_is16(c.dtype) && i >= FpAccLanes / 2) begin
            r.done = 1'b1;
            r.byp  = 32'h0;
          end
          r.r = r.byp;
        end
        1: begin
          if (c.rop == 2'd1) begin
            r.mm  = 1'b1;
            r.byp = fp_min(t.a, t.xw);
          end else if (c.rop == 2'd2) begin
            r.mm  = 1'b1;
            r.byp = fp_max(t.a, t.xw);
          end else begin
            r.add = fp_add_swap(t.a, t.xw);
          end
        end
        2: if (!t.mm) r.add = fp_add_align(t.add);
        3: if (!t.mm) r.add = fp_add_sum_lo(t.add);
        4: if (!t.mm) r.add = fp_add_sum_hi(t.add);
        5: if (!t.mm) r.add = fp_add_lzc(t.add);
        6: if (!t.mm) r.add = fp_add_shift(t.add);
        7: r.r = t.mm ? t.byp : fp_add_round(t.add);
        8: begin
          if (c.native && fp_is16(c.dtype)) begin
            r.r        = fp_narrow(c.dtype, t.r);
            r.narrowed = 1'b1;
          end
        end
        9: if (t.narrowed) r.r = fp_widen(c.dtype, t.r);
        default: r = t;
      endcase
    end
    return r;
  endfunction

  // The registers of a step of n stages: bit k set puts a register after phase k (phase 9's
  // result is always registered, the step's output). Each phase alone takes 2.3 to 5.4 ns in
  // sky130 at tt (docs/area.md), so 150 MHz needs every cut (n = 10); fewer stages merge
  // neighbouring phases.
  function automatic logic [FpPhases-2:0] fp_step_cuts(input int unsigned n);
    logic [FpPhases-2:0] m;
    unique case (n)
      1:       m = 9'b000_000_000;
      2:       m = 9'b000_010_000;
      3:       m = 9'b001_000_100;
      4:       m = 9'b010_010_010;
      5:       m = 9'b010_101_010;
      6:       m = 9'b011_010_110;
      7:       m = 9'b011_010_111;
      8:       m = 9'b011_011_111;
      9:       m = 9'b011_111_111;
      default: m = 9'b111_111_111;
    endcase
    return m;
  endfunction

  // Cycles from a payload flit's operands to its reduced flit in dysharp_reduce_acc: an input
  // register, the first port's init, NumPorts - 1 steps of fp_stages each, the finish.
  function automatic int unsigned fp_red_latency(input int unsigned num_ports,
                                                 input int unsigned fp_stages);
    return 3 + (num_ports - 1) * fp_stages;
  endfunction

  // First input of a reduction: every lane widened to f32, a NaN lane as the canonical f32 NaN.
  function automatic logic [FpAccBits-1:0] fp_acc_init(input logic [1:0] dtype, input flit_t x);
    /* verilator no_inline_task */
    logic [FpAccBits-1:0] acc;
    for (int unsigned i = 0; i < FpAccLanes; i++) begin
      acc[32*i +: 32] = fp_canon(fp_flit_lane(dtype, x, i));
    end
    return acc;
  endfunction

  // Next input of a reduction: acc_lane = acc_lane op widen(x_lane); with native set and a
  // 16-bit dtype the result is rounded to dtype (and widened back) after every step. The phases
  // of dysharp_fp_step in one cycle.
  function automatic logic [FpAccBits-1:0] fp_acc_step(input logic [1:0] dtype,
                                                       input logic [1:0] rop,
                                                       input logic native,
                                                       input logic [FpAccBits-1:0] acc,
                                                       input flit_t x);
    /* verilator no_inline_task */
    logic [FpAccBits-1:0] acc_n;
    fp_ctl_t              c;
    fp_lane_t             t;
    c = '{en: 1'b1, init: 1'b0, dtype: dtype, rop: rop, native: native};
    for (int unsigned i = 0; i < FpAccLanes; i++) begin
      t = fp_lane_in(c, acc, x, i);
      for (int unsigned k = 0; k < FpPhases; k++) begin
        t = fp_lane_phase(k, c, i, t);
      end
      acc_n[32*i +: 32] = t.r;
    end
    return acc_n;
  endfunction

  // End of a reduction: every lane rounded to dtype into a flit.
  function automatic flit_t fp_acc_finish(input logic [1:0] dtype,
                                          input logic [FpAccBits-1:0] acc);
    /* verilator no_inline_task */
    flit_t       y;
    logic [31:0] n;
    y = '0;
    for (int unsigned i = 0; i < FpAccLanes; i++) begin
      n = fp_narrow(dtype, acc[32*i +: 32]);
      if (fp_is16(dtype))             y[16*i +: 16] = n[15:0];
      else if (i < FpAccLanes / 2)    y[32*i +: 32] = n;
    end
    return y;
  endfunction

endpackage
