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
  function automatic logic [31:0] fp_add(input logic [31:0] a, input logic [31:0] b);
    /* verilator no_inline_task */
    logic        a_inf, b_inf, swap;
    logic [31:0] x, y;
    logic        sx, sub;
    logic [7:0]  ex, ey;     // effective biased exponents (1 for subnormals and zero)
    logic [7:0]  d;
    logic [4:0]  dd;         // alignment shift, saturated at 27
    logic [53:0] yext;
    logic [26:0] ax, ay;
    logic [27:0] sum;
    logic [4:0]  lz, sh;     // leading zeros of the sum, left shift
    logic [7:0]  em;         // largest left shift that keeps the biased exponent >= 1
    logic [26:0] norm;
    logic [8:0]  e;          // biased exponent of norm[26], 1 ..= 255
    logic [7:0]  field;
    logic        rnd;
    logic [30:0] mag;
    logic [31:0] r;

    a_inf = (a[30:0] == 31'h7F80_0000);
    b_inf = (b[30:0] == 31'h7F80_0000);

    swap = b[30:0] > a[30:0];
    x    = swap ? b : a;
    y    = swap ? a : b;
    sx   = x[31];
    sub  = x[31] ^ y[31];
    ex   = (x[30:23] == 8'h0) ? 8'd1 : x[30:23];
    ey   = (y[30:23] == 8'h0) ? 8'd1 : y[30:23];
    d    = ex - ey;
    dd   = (d > 8'd26) ? 5'd27 : d[4:0];
    ax   = {x[30:23] != 8'h0, x[22:0], 3'b000};
    yext = {y[30:23] != 8'h0, y[22:0], 3'b000, 27'h0} >> dd;
    ay   = {yext[53:28], yext[27] | (|yext[26:0])};
    sum  = sub ? ({1'b0, ax} - {1'b0, ay}) : ({1'b0, ax} + {1'b0, ay});

    lz = fp_lzc27(sum[26:0]);
    em = ex - 8'd1;
    sh = 5'd0;
    if (sum[27]) begin
      norm = {sum[27:2], sum[1] | sum[0]};
      e    = {1'b0, ex} + 9'd1;
    end else begin
      // Stop at biased exponent 1: em < lz (<= 27) fits in 5 bits.
      sh   = ({3'b000, lz} < em) ? lz : em[4:0];
      norm = sum[26:0] << sh;
      e    = {1'b0, ex} - {4'h0, sh};
    end
    field = norm[26] ? e[7:0] : 8'h0;
    rnd   = norm[2] & (norm[1] | norm[0] | norm[3]);
    mag   = {field, norm[25:3]} + {30'h0, rnd};

    if (fp_is_nan(a[30:0]) || fp_is_nan(b[30:0]) || (a_inf && b_inf && sub)) begin
      r = CanonNanF32;
    end else if (a_inf || b_inf) begin
      r = x;                              // the infinity has the larger magnitude
    end else if (sum == 28'h0) begin
      r = {a[31] & b[31], 31'h0};         // exact zero: -0 only for (-0) + (-0)
    end else if (e >= 9'd255) begin
      r = {sx, 31'h7F80_0000};            // the carry pushed the exponent past the maximum
    end else begin
      r = {sx, mag};                      // a rounding carry may give infinity, correctly
    end
    return r;
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

  // a op b for rop 0 add, 1 min, 2 max (reserved 3: add).
  function automatic logic [31:0] fp_combine(input logic [1:0] rop, input logic [31:0] a,
                                             input logic [31:0] b);
    /* verilator no_inline_task */
    logic [31:0] r;
    case (rop)
      2'd1:    r = fp_min(a, b);
      2'd2:    r = fp_max(a, b);
      default: r = fp_add(a, b);
    endcase
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

  // One lane of a reduction step: acc op x (x already widened to f32); with native set and a
  // 16-bit dtype the result is rounded to dtype and widened back (dysharp_fp_acc_lane).
  function automatic logic [31:0] fp_lane_step(input logic [1:0] dtype, input logic [1:0] rop,
                                               input logic native, input logic [31:0] acc,
                                               input logic [31:0] x);
    /* verilator no_inline_task */
    logic [31:0] r;
    r = fp_combine(rop, acc, x);
    if (native && fp_is16(dtype)) r = fp_widen(dtype, fp_narrow(dtype, r));
    return r;
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
  // 16-bit dtype the result is rounded to dtype (and widened back) after every step.
  function automatic logic [FpAccBits-1:0] fp_acc_step(input logic [1:0] dtype,
                                                       input logic [1:0] rop,
                                                       input logic native,
                                                       input logic [FpAccBits-1:0] acc,
                                                       input flit_t x);
    /* verilator no_inline_task */
    logic [FpAccBits-1:0] acc_n;
    logic [31:0]          r;
    for (int unsigned i = 0; i < FpAccLanes; i++) begin
      r = fp_lane_step(dtype, rop, native, acc[32*i +: 32], fp_flit_lane(dtype, x, i));
      if (!fp_is16(dtype) && i >= FpAccLanes / 2) r = 32'h0;
      acc_n[32*i +: 32] = r;
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
