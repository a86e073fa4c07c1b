//! Field-by-field comparison of packets, for scoreboard messages.

use dysharp_sim::numerics::{lane, to_f32, DType};
use dysharp_sim::packet::{decode, Flit, Limits, Origin, Packet, PacketError};

/// Decodes a packet observed leaving the switch (every kind legal).
pub fn decode_any(frame: &[Flit], limits: &Limits) -> Result<Packet, PacketError> {
    decode(frame, Origin::Egress, limits)
}

/// The differences between an expected and an observed packet, field by field;
/// for payloads the first differing lane, as numbers and as bits.
pub fn packet_diff(want: &Packet, got: &Packet) -> String {
    let mut d = Vec::new();
    macro_rules! field {
        ($f:ident) => {
            if want.$f != got.$f {
                d.push(format!(
                    "{}: expected {:?}, observed {:?}",
                    stringify!($f),
                    want.$f,
                    got.$f
                ));
            }
        };
    }
    field!(opcode);
    field!(stage);
    if want.maddr != got.maddr {
        d.push(format!(
            "maddr: expected {:#x}, observed {:#x}",
            want.maddr, got.maddr
        ));
    }
    field!(src_port);
    field!(tag);
    field!(len);
    field!(dtype);
    field!(rop);
    field!(acc);
    field!(route);
    field!(ecode);
    field!(targets);
    if want.be != got.be {
        d.push(format!(
            "byte enables: expected {:x?}, observed {:x?}",
            want.be, got.be
        ));
    }
    if want.payload != got.payload {
        d.push(payload_diff(want.dtype, &want.payload, &got.payload));
    }
    if d.is_empty() {
        "identical".into()
    } else {
        d.join("; ")
    }
}

/// The first differing lane of two payloads.
pub fn payload_diff(dtype: DType, want: &[u8], got: &[u8]) -> String {
    if want.len() != got.len() {
        return format!(
            "payload: expected {} bytes, observed {}",
            want.len(),
            got.len()
        );
    }
    let lanes = want.len() / dtype.bytes();
    for i in 0..lanes {
        let (w, g) = (
            lane(dtype, want, i).unwrap_or(0),
            lane(dtype, got, i).unwrap_or(0),
        );
        if w != g {
            return format!(
                "payload lane {i} ({}): expected {} ({w:#x}), observed {} ({g:#x})",
                dtype.name(),
                to_f32(dtype, w),
                to_f32(dtype, g)
            );
        }
    }
    "payload differs".into()
}
