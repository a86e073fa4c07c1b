//! Configuration of a modelled switch and its hubs (spec §4, §7).

use crate::packet::Limits;
use serde::{Deserialize, Serialize};

/// Largest `Log2AlEntries` (spec §7): an AIdx has at most this many bits, the width of the
/// AL-TLB's AIdx tag (`dysharp_pkg::MaxLog2AlEntries` in the RTL). 2^20 algebraic indices per
/// expert is 8× the paper's largest dispatch (4096 tokens per GPU on 32 GPUs, 2^17).
pub const MAX_LOG2_AL_ENTRIES: u32 = 20;

/// Destination-hub configuration, identical on every hub (spec §7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HubConfig {
    /// Multimem base address `MBase`.
    pub mbase: u64,
    /// log2 of the row block size `bsize` in bytes (≥ 4).
    pub log2_bsize: u32,
    /// Base address of the AL table in GPU memory.
    pub al_base: u64,
    /// log2 of the AL entries per expert (the AIdx range), at most [`MAX_LOG2_AL_ENTRIES`].
    pub log2_al_entries: u32,
    /// Base address of the expert data slots.
    pub data_base: u64,
    /// log2 of the slots per expert (`SlotsPerExpert`).
    pub log2_slots: u32,
    /// AL-TLB entries.
    pub tlb_entries: usize,
    /// AL-TLB ways (`tlb_entries` = fully associative).
    pub tlb_ways: usize,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            mbase: 0x4000_0000_0000,
            log2_bsize: 14,
            al_base: 0x0010_0000,
            log2_al_entries: 12,
            data_base: 0x1_0000_0000,
            log2_slots: 12,
            tlb_entries: 512,
            tlb_ways: 512,
        }
    }
}

/// Whole-switch configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Number of ports (one GPU each), at most 32.
    pub num_ports: usize,
    /// Experts per port.
    pub experts_per_port: usize,
    /// Largest target list.
    pub max_targets: usize,
    /// Static NVLS group table: a port mask per group id.
    #[serde(default)]
    pub groups: Vec<u32>,
    /// The dynamic operations (`DYN_ST`, `DYN_LD_REDUCE`) are built in; `false` models the RTL
    /// with `DynamicOps = 0` (spec §5.7), where they are illegal opcodes (`ERR_OPCODE`).
    #[serde(default = "dynamic_ops_default")]
    pub dynamic_ops: bool,
    /// Hub configuration.
    #[serde(default)]
    pub hub: HubConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            num_ports: 8,
            experts_per_port: 32,
            max_targets: 32,
            groups: vec![0; 16],
            dynamic_ops: true,
            hub: HubConfig::default(),
        }
    }
}

fn dynamic_ops_default() -> bool {
    true
}

/// A configuration that cannot be modelled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(pub String);

impl Config {
    /// Total experts (saturating: a configuration whose product overflows fails
    /// [`Config::validate`]).
    pub fn experts(&self) -> usize {
        self.num_ports.saturating_mul(self.experts_per_port)
    }

    /// The switch-ingress limits.
    pub fn limits(&self) -> Limits {
        Limits {
            num_ports: self.num_ports,
            experts_per_port: self.experts_per_port,
            max_targets: self.max_targets,
            groups: self.groups.clone(),
            dynamic_ops: self.dynamic_ops,
        }
    }

    /// Checks the configuration against the field widths of the spec.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let e = |m: String| Err(ConfigError(m));
        if !(1..=32).contains(&self.num_ports) {
            return e(format!("num_ports {} outside 1..=32", self.num_ports));
        }
        let experts = self.num_ports.checked_mul(self.experts_per_port);
        if self.experts_per_port == 0 || experts.is_none_or(|n| n > MAX_EXPERTS) {
            return e(format!(
                "{} experts per port x {} ports must be 1..=65535 experts",
                self.experts_per_port, self.num_ports
            ));
        }
        if !(1..=0x7FFF).contains(&self.max_targets) {
            return e(format!(
                "max_targets {} outside 1..=32767",
                self.max_targets
            ));
        }
        if self.groups.len() > 256 {
            return e(format!(
                "{} groups; the route field holds 256",
                self.groups.len()
            ));
        }
        if let Some(g) = self
            .groups
            .iter()
            .position(|m| self.num_ports < 32 && *m >> self.num_ports != 0)
        {
            return e(format!("group {g} names a port >= {}", self.num_ports));
        }
        let h = &self.hub;
        if !(4..=30).contains(&h.log2_bsize) || h.log2_slots > 31 {
            return e("hub log2 sizes out of range (bsize 2^4..2^30, slots <= 2^31)".into());
        }
        if h.log2_al_entries > MAX_LOG2_AL_ENTRIES {
            return e(format!(
                "log2_al_entries {} above {MAX_LOG2_AL_ENTRIES} (an AIdx has at most \
                 {MAX_LOG2_AL_ENTRIES} bits, the AL-TLB's tag width)",
                h.log2_al_entries
            ));
        }
        if h.tlb_entries > MAX_TLB_ENTRIES {
            return e(format!(
                "tlb_entries {} above the modelled maximum {MAX_TLB_ENTRIES}",
                h.tlb_entries
            ));
        }
        if h.tlb_entries == 0
            || h.tlb_ways == 0
            || !h.tlb_entries.is_multiple_of(h.tlb_ways)
            || !(h.tlb_entries / h.tlb_ways).is_power_of_two()
        {
            return e(format!(
                "TLB of {} entries and {} ways: ways must divide entries into a power-of-two number of sets",
                h.tlb_entries, h.tlb_ways
            ));
        }
        for (name, a) in [
            ("mbase", h.mbase),
            ("al_base", h.al_base),
            ("data_base", h.data_base),
        ] {
            if a >> 48 != 0 || a & 0xF != 0 {
                return e(format!(
                    "{name} 0x{a:x} must be a 16-byte aligned 48-bit address"
                ));
            }
        }
        // Every address a hub computes must stay in the 48-bit space: the AL table (4 bytes
        // per entry) and the data slots (a row block per slot) of the last local expert.
        let local = (self.experts_per_port as u64).saturating_sub(1);
        let al_end = (local << h.log2_al_entries | ((1u64 << h.log2_al_entries) - 1))
            .checked_mul(4)
            .and_then(|x| x.checked_add(4))
            .and_then(|x| x.checked_add(h.al_base));
        let data_end = ((local << h.log2_slots) + (1u64 << h.log2_slots))
            .checked_shl(h.log2_bsize)
            .filter(|x| x >> h.log2_bsize == (local << h.log2_slots) + (1u64 << h.log2_slots))
            .and_then(|x| x.checked_add(h.data_base));
        for (name, end) in [("AL table", al_end), ("data slots", data_end)] {
            if end.is_none_or(|x| x > 1 << 48) {
                return e(format!(
                    "the {name} of {} experts per port run past the 48-bit address space",
                    self.experts_per_port
                ));
            }
        }
        Ok(())
    }
}

/// Most experts a switch can address (the 16-bit expert ID of spec §2).
pub const MAX_EXPERTS: usize = 0xFFFF;

/// Largest modelled AL-TLB (entries per hub): the model keeps every entry in memory.
pub const MAX_TLB_ENTRIES: usize = 1 << 16;
