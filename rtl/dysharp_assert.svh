// dysharp_assert.svh: the design's one layer of checks (docs/verification.md, "Assertions").
//
// Every invariant and every cover point in rtl/ is written with these macros, and each tool reads
// them in the form it handles best:
//   - Formal tools and other simulators (SYNTHESIS not defined, VERILATOR not defined; a formal
//     flow defines FORMAL and reads with yosys-slang's --no-synthesis-define): concurrent
//     assertions, assumptions and cover properties, clocked on the module's clock and disabled in
//     reset, and immediate assertions inside clocked processes (which a formal tool turns into
//     clocked checks as well).
//   - Verilator: the same checks as immediate tests in clocked processes that print
//     `%Error: <file>:<line>: <name>: <message>` and `$stop`, which the benches count as a failed
//     check. No message names its instance (no %m, no $error): Verilator gives a module whose code
//     names its instance a copy of that code per instance, and the switch has hundreds of queues
//     (docs/perf.md, "Sampling and per-instance code"); the waveform of the failing run shows
//     which instance. Cover points stay `cover property` (Verilator's coverage counts them).
//   - Synthesis (SYNTHESIS defined): the checks are empty; DYSHARP_ASSERT_INIT still checks
//     parameters at elaboration.
//
// The pinned Yosys front end (yosys-slang) takes no sequences and no implication (`|->`, `|=>`,
// `##`): a property is a boolean expression of the current cycle, and a rule over time reads
// explicit history registers (a `_q` copy of last cycle's value) declared in the module's check
// section (`ifndef SYNTHESIS`). Simulation-only reference models (shadow queues) sit under
// `ifndef FORMAL` as well: formal tools take no dynamic queues.
//
// Macros (Clk and RstN default to clk_i and rst_ni, an active-low reset):
//   DYSHARP_ASSERT(Name, Prop[, Clk, RstN])        Prop holds at every clock edge out of reset
//   DYSHARP_ASSERT_NEVER(Name, Prop[, Clk, RstN])  Prop never holds
//   DYSHARP_ASSUME(Name, Prop[, Clk, RstN])        an obligation of the environment (formal: an
//                                                  assumption; simulation: checked like an assert)
//   DYSHARP_COVER(Name, Prop[, Clk, RstN])         a cover point (counted by `make coverage`)
//   DYSHARP_ASSERT_I(Name, Prop[, Msg])            immediate, inside a clocked process: the
//                                                  process's own enable and reset gate it
//   DYSHARP_ASSUME_I(Name, Prop[, Msg])            immediate assumption
//   DYSHARP_ASSERT_INIT(Name, Prop[, Msg])         a parameter rule, checked at elaboration by
//                                                  every tool (synthesis included)
// Msg is a string (`$sformatf(...)` for values); it is built only when the check fails.

`ifndef DYSHARP_ASSERT_SVH
`define DYSHARP_ASSERT_SVH

// Elaboration-time parameter checks: every tool, every mode.
`define DYSHARP_ASSERT_INIT(Name, Prop, Msg = "") \
  if (!(Prop)) begin : Name \
    $error("%s: %s", `"Name`", Msg); \
  end

`ifdef SYNTHESIS
`ifndef FORMAL
`define DYSHARP_CHECKS_OFF
`endif
`endif

`ifdef DYSHARP_CHECKS_OFF

`define DYSHARP_ASSERT(Name, Prop, Clk = clk_i, RstN = rst_ni)
`define DYSHARP_ASSERT_NEVER(Name, Prop, Clk = clk_i, RstN = rst_ni)
`define DYSHARP_ASSUME(Name, Prop, Clk = clk_i, RstN = rst_ni)
`define DYSHARP_COVER(Name, Prop, Clk = clk_i, RstN = rst_ni)
`define DYSHARP_ASSERT_I(Name, Prop, Msg = "")
`define DYSHARP_ASSUME_I(Name, Prop, Msg = "")

`elsif VERILATOR

`define DYSHARP_ASSERT_I(Name, Prop, Msg = "") \
  if (!(Prop)) begin \
    $display("%%Error: %s:%0d: %s: %s", `__FILE__, `__LINE__, `"Name`", Msg); \
    $stop; \
  end
`define DYSHARP_ASSUME_I(Name, Prop, Msg = "") `DYSHARP_ASSERT_I(Name, Prop, Msg)
`define DYSHARP_ASSERT(Name, Prop, Clk = clk_i, RstN = rst_ni) \
  always_ff @(posedge Clk) begin \
    if (RstN) begin \
      `DYSHARP_ASSERT_I(Name, Prop) \
    end \
  end
`define DYSHARP_ASSERT_NEVER(Name, Prop, Clk = clk_i, RstN = rst_ni) \
  `DYSHARP_ASSERT(Name, !(Prop), Clk, RstN)
`define DYSHARP_ASSUME(Name, Prop, Clk = clk_i, RstN = rst_ni) \
  `DYSHARP_ASSERT(Name, Prop, Clk, RstN)
`define DYSHARP_COVER(Name, Prop, Clk = clk_i, RstN = rst_ni) \
  Name: cover property (@(posedge Clk) disable iff (!(RstN)) (Prop));

`else

// Immediate forms carry no label: a check inside a procedural loop is one statement per
// iteration, and a label would name them all alike. The message names the rule.
`define DYSHARP_ASSERT_I(Name, Prop, Msg = "") \
  assert (Prop) else $error("%s: %s", `"Name`", Msg);
`define DYSHARP_ASSUME_I(Name, Prop, Msg = "") \
  assume (Prop) else $error("%s: %s", `"Name`", Msg);
`define DYSHARP_ASSERT(Name, Prop, Clk = clk_i, RstN = rst_ni) \
  Name: assert property (@(posedge Clk) disable iff (!(RstN)) (Prop)) \
    else $error("%s", `"Name`");
`define DYSHARP_ASSERT_NEVER(Name, Prop, Clk = clk_i, RstN = rst_ni) \
  `DYSHARP_ASSERT(Name, !(Prop), Clk, RstN)
`define DYSHARP_ASSUME(Name, Prop, Clk = clk_i, RstN = rst_ni) \
  Name: assume property (@(posedge Clk) disable iff (!(RstN)) (Prop));
`define DYSHARP_COVER(Name, Prop, Clk = clk_i, RstN = rst_ni) \
  Name: cover property (@(posedge Clk) disable iff (!(RstN)) (Prop));

`endif

`endif  // DYSHARP_ASSERT_SVH
