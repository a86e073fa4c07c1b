//! Field-by-field comparison of packets, for scoreboard messages.

use dysharp_sim::numerics::{lane, to_f32, DType};
use dysharp_sim::packet::fields::{self, TARGETS_PER_FLIT};
use dysharp_sim::packet::{decode, Flit, Limits, Origin, Packet, PacketError};

/// Where the frame the RTL sent differs from the golden packet's encoding (`want.encode()`),
/// bit for bit: the first differing flit, named by its role, and in it the fields (flit0), the
/// target lanes (target flits) or the bits (byte enables, payload) that differ, expected and
/// observed. `None` when the frames are identical. This catches what a comparison of decoded
/// packets cannot: `rsvd` not cleared (spec §2), unused target lanes other than 0xFFFF (§3),
/// stray bits in an ignored field.
pub fn frame_diff(want: &Packet, got: &[Flit]) -> Option<String> {
    let w = want.encode();
    if w.as_slice() == got {
        return None;
    }
    if w.len() != got.len() {
        return Some(format!(
            "frame length: expected {} flits, observed {}",
            w.len(),
            got.len()
        ));
    }
    let tflits = if want.opcode.is_dynamic() {
        want.targets.len().div_ceil(TARGETS_PER_FLIT)
    } else {
        0
    };
    let be_at = want.be.map(|_| tflits + 1);
    let pay_at = 1 + tflits + usize::from(want.be.is_some());
    let (i, a, b) = w
        .iter()
        .zip(got)
        .enumerate()
        .map(|(i, (a, b))| (i, *a, *b))
        .find(|(_, a, b)| a != b)?;
    let x = a ^ b;
    let what = if i == 0 {
        let parts: Vec<String> = fields::ALL
            .iter()
            .filter_map(|f| {
                let m = (1u128 << f.width) - 1;
                ((x >> f.lsb) & m != 0).then(|| {
                    format!(
                        "{} [{}:{}] expected {:#x}, observed {:#x}",
                        f.name,
                        f.msb(),
                        f.lsb,
                        (a >> f.lsb) & m,
                        (b >> f.lsb) & m
                    )
                })
            })
            .collect();
        format!("flit 0 (header): {}", parts.join("; "))
    } else if i <= tflits {
        let parts: Vec<String> = (0..TARGETS_PER_FLIT)
            .filter(|l| (x >> (16 * l)) & 0xFFFF != 0)
            .map(|l| {
                let n = TARGETS_PER_FLIT * (i - 1) + l;
                let used = if n < want.targets.len() {
                    "target"
                } else {
                    "unused lane"
                };
                format!(
                    "lane {l} ({used} {n}) expected {:#06x}, observed {:#06x}",
                    (a >> (16 * l)) & 0xFFFF,
                    (b >> (16 * l)) & 0xFFFF
                )
            })
            .collect();
        format!("flit {i} (target flit {}): {}", i - 1, parts.join("; "))
    } else if be_at == Some(i) {
        format!("flit {i} (byte enables): expected {a:#034x}, observed {b:#034x}")
    } else {
        format!(
            "flit {i} (payload flit {}): expected {a:#034x}, observed {b:#034x} (bits {x:#034x} differ)",
            i - pay_at
        )
    };
    Some(what)
}

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

#[cfg(test)]
mod tests {
    use super::frame_diff;
    use dysharp_sim::packet::{Opcode, Packet};

    fn replica() -> Packet {
        let mut p = Packet::new(Opcode::DynSt);
        p.maddr = 0x1000;
        p.len = 1;
        p.targets = vec![3, 9, 12];
        p.be = Some(u128::MAX);
        p.payload = vec![0x5A; 16];
        p
    }

    #[test]
    fn an_identical_frame_has_no_diff() {
        let p = replica();
        assert_eq!(frame_diff(&p, &p.encode()), None);
    }

    #[test]
    fn each_planted_bit_error_is_named_by_its_field_lane_or_flit() {
        let p = replica();
        let good = p.encode();
        // rsvd not cleared (spec §2): the decoded packet is the same, the frame is not.
        let mut f = good.clone();
        f[0] |= 1u128 << 107;
        let d = frame_diff(&p, &f).unwrap();
        assert!(d.contains("flit 0") && d.contains("rsvd"), "{d}");
        // An unused target lane other than 0xFFFF (spec §3).
        let mut f = good.clone();
        f[1] &= !(0xFFFFu128 << (16 * 5));
        let d = frame_diff(&p, &f).unwrap();
        assert!(
            d.contains("target flit 0") && d.contains("unused lane 5"),
            "{d}"
        );
        // A used target lane.
        let mut f = good.clone();
        f[1] ^= 1u128 << 16;
        let d = frame_diff(&p, &f).unwrap();
        assert!(d.contains("lane 1 (target 1)"), "{d}");
        // Byte enables, payload, length.
        let mut f = good.clone();
        f[2] ^= 1;
        assert!(frame_diff(&p, &f).unwrap().contains("byte enables"));
        let mut f = good.clone();
        f[3] ^= 1u128 << 77;
        assert!(frame_diff(&p, &f).unwrap().contains("payload flit 0"));
        let mut f = good;
        f.pop();
        assert!(frame_diff(&p, &f).unwrap().contains("frame length"));
    }
}
