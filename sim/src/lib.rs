//! dysharp golden model.
//!
//! Transaction-level reference for a DySHARP switch: the bit-exact packet codec
//! ([`packet`]), reduction numerics ([`numerics`]), switch and hub semantics
//! ([`switch`], [`hub`]), traffic accounting ([`traffic`]) and MoE routing traces
//! ([`trace`]). The bit-level specification is `docs/spec.md`.

pub mod config;
pub mod fabric;
pub mod fxhash;
pub mod hub;
pub mod memory;
pub mod numerics;
pub mod packet;
pub mod replay;
pub mod scenario;
pub mod study;
pub mod switch;
pub mod trace;
pub mod traffic;
pub mod vcd_extract;
