//! Field table of flit0: the single source of truth for header bit positions.
//!
//! The Rust codec packs and unpacks through this table, and `dysharp gen-pkg`
//! writes the SystemVerilog package `rtl/dysharp_pkg.sv` from it.

use bitvec::prelude::*;

/// One field of flit0: its name, least significant bit and width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Field name as used in docs/spec.md and the SV package (upper-cased there).
    pub name: &'static str,
    /// Position of the field's least significant bit within the 128-bit flit.
    pub lsb: usize,
    /// Width in bits.
    pub width: usize,
}

impl Field {
    /// Most significant bit (inclusive).
    pub const fn msb(&self) -> usize {
        self.lsb + self.width - 1
    }
    /// Largest value the field can hold.
    pub const fn max(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }
}

macro_rules! fields {
    ($($id:ident = ($name:literal, $lsb:expr, $w:expr)),* $(,)?) => {
        $(
            #[doc = concat!("flit0 field `", $name, "`.")]
            pub const $id: Field = Field { name: $name, lsb: $lsb, width: $w };
        )*
        /// Every flit0 field, in bit order.
        pub const ALL: &[Field] = &[$($id),*];
    };
}

fields! {
    OPCODE = ("opcode", 0, 4),
    STAGE = ("stage", 4, 1),
    MADDR = ("maddr", 5, 48),
    TCOUNT = ("tcount", 53, 15),
    SRC_PORT = ("src_port", 68, 5),
    TAG = ("tag", 73, 12),
    LEN = ("len", 85, 5),
    DTYPE = ("dtype", 90, 2),
    ROP = ("rop", 92, 2),
    ACC = ("acc", 94, 1),
    ROUTE = ("route", 95, 8),
    ECODE = ("ecode", 103, 4),
    RSVD = ("rsvd", 107, 13),
    HCC = ("hcc", 120, 8),
}

/// Width of a flit in bits.
pub const FLIT_BITS: usize = 128;
/// Width of a flit in bytes.
pub const FLIT_BYTES: usize = 16;
/// Expert IDs per target-extension flit.
pub const TARGETS_PER_FLIT: usize = 8;
/// Largest payload in flits (256 bytes).
pub const MAX_LEN: usize = 16;
/// Number of header bits covered by the check code (bits 119:0).
pub const HCC_COVERED_BITS: usize = 120;

/// A flit as a 128-bit bit array (bit 0 = least significant bit of the `u128`).
pub type FlitBits = BitArray<[u64; 2], Lsb0>;

/// Converts a flit to its bit array.
pub fn to_bits(flit: u128) -> FlitBits {
    BitArray::new([flit as u64, (flit >> 64) as u64])
}

/// Converts a bit array back to a flit.
pub fn from_bits(bits: &FlitBits) -> u128 {
    let [lo, hi] = bits.into_inner();
    (lo as u128) | ((hi as u128) << 64)
}

/// Reads a field from a flit.
pub fn get(flit: &FlitBits, f: Field) -> u64 {
    flit[f.lsb..f.lsb + f.width].load_le::<u64>()
}

/// Writes a field into a flit; `value` is truncated to the field width.
pub fn set(flit: &mut FlitBits, f: Field, value: u64) {
    flit[f.lsb..f.lsb + f.width].store_le::<u64>(value & f.max());
}

/// CRC-8/SMBUS (poly 0x07, init 0, no reflection) over bytes 0..15 of flit0.
pub fn hcc(flit0: u128) -> u8 {
    crc8(&flit0.to_le_bytes()[..HCC_COVERED_BITS / 8])
}

/// CRC-8/SMBUS of a byte string (poly 0x07, init 0, MSB first, no final XOR).
pub fn crc8(bytes: &[u8]) -> u8 {
    let mut crc = 0u8;
    for &b in bytes {
        crc ^= b;
        for _ in 0..8 {
            crc = if crc & 0x80 != 0 {
                (crc << 1) ^ 0x07
            } else {
                crc << 1
            };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_check_value() {
        assert_eq!(crc8(b"123456789"), 0xF4);
    }

    #[test]
    fn fields_tile_the_flit() {
        let mut next = 0;
        for f in ALL {
            assert_eq!(
                f.lsb, next,
                "field {} does not start where the previous ended",
                f.name
            );
            next = f.lsb + f.width;
        }
        assert_eq!(next, FLIT_BITS);
        assert_eq!(HCC.lsb, HCC_COVERED_BITS);
    }

    #[test]
    fn get_set_round_trip() {
        let mut b = to_bits(0);
        set(&mut b, MADDR, 0xFFFF_FFFF_FFFF_FFFF);
        assert_eq!(get(&b, MADDR), MADDR.max());
        assert_eq!(from_bits(&b), ((1u128 << 48) - 1) << 5);
    }
}
