// Thin C++ shim between Rust and the Verilator models (see build.rs).
// One call per clock cycle moves every input in and every output out as packed
// 32-bit words; wide ports are copied here, not signal by signal over FFI.
#pragma once
#include <cstdint>
#include <memory>
#include "rust/cxx.h"

namespace dysharp {

class Model {
public:
    virtual ~Model() = default;
    // One clock cycle: apply inputs with the clock low, settle, copy the outputs
    // (what the rising edge samples), then raise the clock. Returns the number of
    // assertion failures / $error calls the cycle raised.
    virtual uint64_t cycle(rust::Slice<const uint32_t> in, rust::Slice<uint32_t> out) = 0;
    // Cycles as `cycle` for each `in.size() / in_words` consecutive input records, in one call
    // (no FFI and no bench between cycles: the C++ floor of a recorded run). `out` holds the
    // last cycle's outputs. Returns the assertion failures raised.
    virtual uint64_t replay(rust::Slice<const uint32_t> in, rust::Slice<uint32_t> out) = 0;
    // Apply inputs and settle without a clock edge (combinational models).
    virtual uint64_t settle(rust::Slice<const uint32_t> in, rust::Slice<uint32_t> out) = 0;
    // Start writing a VCD waveform; false if the file cannot be opened.
    virtual bool open_vcd(rust::Str path) = 0;
    // Flush and close the waveform.
    virtual void close_vcd() = 0;
    // Cycles run so far.
    virtual uint64_t cycles() const = 0;
    // Write the coverage collected so far (Verilator coverage.dat format) to
    // `path`; false if the model collects no coverage or the file cannot be written.
    virtual bool write_coverage(rust::Str path) = 0;
};

// Creates model number `kind` (see the generated model table); nullptr if unknown.
std::unique_ptr<Model> new_model(uint32_t kind, uint64_t seed);

}  // namespace dysharp
