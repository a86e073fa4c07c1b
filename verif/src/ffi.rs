//! The cxx bridge to the C++ shim (`shim/shim.h`, generated `models.cc`).

#[cxx::bridge(namespace = "dysharp")]
pub mod bridge {
    unsafe extern "C++" {
        include!("dysharp-verif/shim/shim.h");

        /// A Verilator model instance.
        type Model;

        /// Creates model `kind` with the random-initialisation seed `seed`.
        fn new_model(kind: u32, seed: u64) -> UniquePtr<Model>;
        /// One clock cycle; returns the assertion failures it raised.
        fn cycle(self: Pin<&mut Model>, inputs: &[u32], outputs: &mut [u32]) -> u64;
        /// `cycle` once per `in_words` words of `inputs`, in one call; the
        /// outputs of the last cycle; the assertion failures raised.
        fn replay(self: Pin<&mut Model>, inputs: &[u32], outputs: &mut [u32]) -> u64;
        /// Settles combinational logic without a clock edge.
        fn settle(self: Pin<&mut Model>, inputs: &[u32], outputs: &mut [u32]) -> u64;
        /// Starts a VCD waveform.
        fn open_vcd(self: Pin<&mut Model>, path: &str) -> bool;
        /// Closes the VCD waveform.
        fn close_vcd(self: Pin<&mut Model>);
        /// Cycles run so far.
        fn cycles(self: &Model) -> u64;
        /// Writes the coverage collected so far to `path` (Verilator's
        /// `coverage.dat` format); false if the model has no coverage or the
        /// file cannot be written.
        fn write_coverage(self: Pin<&mut Model>, path: &str) -> bool;
    }
}

// SAFETY: each Model owns its own VerilatedContext; a model is only ever used
// from one thread at a time (it is moved, never shared).
unsafe impl Send for bridge::Model {}
