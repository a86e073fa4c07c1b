// dysharp_hub_pkg: types shared by the stages of the hub (docs/architecture.md, "dysharp_hub").
// Hand-written (unlike dysharp_pkg, which `dysharp gen-pkg` generates from the Rust codec).
//
// Only types whose widths do not depend on a hub parameter live here. The inter-stage structs
// whose fields are sized by ExpertsPerPort or MemLines (job_t, rd_tag_t, pay_beat_t, mem_req_t,
// mem_rsp_t) are declared in dysharp_hub from its parameters and handed to the stages as type
// parameters.

package dysharp_hub_pkg;

  import dysharp_pkg::*;

  // Designs without a hub (the switch alone) use none of these (as in dysharp_pkg).

  // Packet buffers (receive stage): three keep short packets at line rate; the fourth makes
  // the payload banks 16 words deep at MemLines 4 (dysharp_hub_rx), the area flow's least macro.
  localparam int unsigned NumSlots = 4;
  localparam int unsigned SlotW    = $clog2(NumSlots);
  localparam int unsigned AidxW    = MaxLog2AlEntries; // AIdx < 2^Log2AlEntries <= 2^20
  localparam int unsigned LidxW    = 31;               // AL entry bits 30:0
  localparam int unsigned LineW    = $clog2(MaxLen);   // payload line index
  localparam int unsigned TagDepth = 32;               // outstanding read beats
  localparam int unsigned TagCntW  = $clog2(TagDepth + 1);
  localparam int unsigned HdrDepth = 16;               // response header queue

  typedef logic [SlotW-1:0] slot_t;
  typedef logic [AidxW-1:0] aidx_t;
  typedef logic [LidxW-1:0] lidx_t;
  typedef logic [LineW-1:0] line_t;

  // Hub configuration (spec §7; changes only in reset).
  typedef struct packed {
    logic [47:0] mbase;            // MBase: start of the DYN address window
    logic [47:0] al_base;          // ALBase: the AL table
    logic [47:0] data_base;        // DataBase: the expert slots
    logic [4:0]  log2_bsize;       // Log2Bsize: bytes per slot
    logic [4:0]  log2_al_entries;  // Log2AlEntries: AL entries per expert, <= MaxLog2AlEntries
    logic [4:0]  log2_slots;       // Log2Slots: slots per expert (SlotsPerExpert)
  } hub_cfg_t;

  // The request fields a packet buffer keeps (from flit0).
  typedef struct packed {
    logic [OpcodeWidth-1:0]  opcode;
    logic                    stage;
    logic [MaddrWidth-1:0]   maddr;
    logic [TcountWidth-1:0]  tcount;
    logic [SrcPortWidth-1:0] src_port;
    logic [TagWidth-1:0]     tag;
    logic [LenWidth-1:0]     len;
    logic [DtypeWidth-1:0]   dtype;
    logic [RopWidth-1:0]     rop;
    logic                    acc;     // accumulation: 1 = native (AccNative)
  } hub_req_t;

  // What a target job is (walk stage T0 -> T1 -> issue).
  typedef enum logic [2:0] {
    JobNop    = 3'd0,   // nothing to do (no request opcode / no targets): release the buffer
    JobIdent  = 3'd1,   // non-DYN op: identity translation, len lines at maddr
    JobLookup = 3'd2,   // DYN target to look up (T0's key only)
    JobRange  = 3'd3,   // DYN target failing the range check (no lookup)
    JobHit    = 3'd4,   // DYN target, TLB hit (T1's result only)
    JobMiss   = 3'd5    // DYN target, TLB miss: walk (T1's result only)
  } job_kind_e;

  // What a read's data is for (tag FIFO entry, in memory order; issue -> response stage).
  typedef enum logic [2:0] {
    RdWalk    = 3'd0,   // AL entry line: the walk word
    RdRaw     = 3'd1,   // RSP_READ payload
    RdFinInit = 3'd2,   // only input of a reduction: finish(init(x)) -> payload
    RdFinStep = 3'd3,   // last input: finish(step(acc, x)) -> payload
    RdAccInit = 3'd4,   // first input: acc = init(x)
    RdAccStep = 3'd5    // middle input: acc = step(acc, x)
  } rd_kind_e;

  // Response header queue entry (issue -> output stage): flit0 and its number of payload flits.
  typedef struct packed {
    logic [LenWidth-1:0] npay;
    flit_t               flit;
  } rsp_hdr_t;

  function automatic logic is_op(input logic [OpcodeWidth-1:0] op, input opcode_e ref_op);
    return op == ref_op;
  endfunction

  // Opcode classes: op_is_request, op_is_dyn, op_is_store of dysharp_pkg (generated from the codec).

  // The next packet buffer (buffers are used in turn).
  function automatic slot_t slot_inc(input slot_t i);
    return (32'(i) + 1 >= NumSlots) ? '0 : i + slot_t'(1);
  endfunction


endpackage
