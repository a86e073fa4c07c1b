//! Python bindings of the dysharp golden model (`dysharp_sim`): configuration, packet codec,
//! the golden switch and hubs (whole-system or step by step, as a testbench sees them), memory
//! accesses and field-level diffs. docs/cocotb.md describes the Python API.
//!
//! Every input from Python is checked here before it reaches the model, so errors are Python
//! exceptions with the field named, never a panic.

use dysharp_sim::config::{Config, HubConfig};
use dysharp_sim::fabric::Fabric;
use dysharp_sim::hub::MemAccess;
use dysharp_sim::numerics::{from_f32, lane, to_f32, AccMode, DType, ReduceOp};
use dysharp_sim::packet::fields::{self, FLIT_BYTES};
use dysharp_sim::packet::{
    decode as sim_decode, with_hcc as sim_with_hcc, ErrorCode, Flit, Limits, Opcode, Origin,
    Packet, Stage,
};
use dysharp_sim::scenario::diff::frame_diffs;
use dysharp_sim::scenario::result::{permissive_limits, Frame, GoldenResult};
use dysharp_sim::scenario::{diff as sim_diff, state_digest, DiffOptions, Scenario};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyInt};
use std::collections::VecDeque;

create_exception!(
    dysharp_golden,
    GoldenError,
    PyValueError,
    "Base class of the golden model's errors (a ValueError)."
);
create_exception!(
    dysharp_golden,
    ConfigError,
    GoldenError,
    "A configuration the golden model cannot model."
);
create_exception!(
    dysharp_golden,
    DecodeError,
    GoldenError,
    "A frame that does not decode; `code` is the spec §6 error name, `field` the field."
);
create_exception!(
    dysharp_golden,
    ScenarioError,
    GoldenError,
    "A scenario or result document that cannot be read."
);

fn value_err(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

// ---------------------------------------------------------------------------------------------
// Argument helpers
// ---------------------------------------------------------------------------------------------

/// An unsigned integer argument of at most `max`, named in errors.
fn uint(obj: &Bound<'_, PyAny>, name: &str, max: u128) -> PyResult<u128> {
    let v: i128 = obj.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name}: expected an integer, got {}",
            type_name(obj)
        ))
    })?;
    if v < 0 || v as u128 > max {
        return Err(value_err(format!("{name}: {v} outside 0..={max:#x}")));
    }
    Ok(v as u128)
}

/// A flit argument: a Python int in 0..2^128.
fn flit_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Flit> {
    match obj.extract::<u128>() {
        Ok(v) => Ok(v),
        Err(_) => {
            if obj.cast::<PyInt>().is_ok() {
                Err(value_err(format!(
                    "{name}: {} is not a 128-bit unsigned integer",
                    obj.repr().map_or("?".into(), |r| r.to_string())
                )))
            } else {
                Err(PyTypeError::new_err(format!(
                    "{name}: expected an int (a 128-bit flit), got {}",
                    type_name(obj)
                )))
            }
        }
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map_or("?".into(), |n| n.to_string())
}

/// Bytes in address order from `bytes`/`bytearray`.
fn bytes_arg(obj: &Bound<'_, PyAny>) -> Option<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Some(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Some(b.to_vec());
    }
    None
}

/// A frame argument: a `Packet` (encoded), `bytes` (16 bytes per flit, each flit
/// little-endian: byte 0 = bits 7:0) or an iterable of 128-bit ints.
fn frame_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Flit>> {
    if let Ok(p) = obj.cast::<PyPacket>() {
        return Ok(p.borrow().inner.encode());
    }
    let frame: Vec<Flit> = if let Some(b) = bytes_arg(obj) {
        if !b.len().is_multiple_of(FLIT_BYTES) {
            return Err(value_err(format!(
                "frame: {} bytes is not a whole number of 16-byte flits",
                b.len()
            )));
        }
        b.chunks_exact(FLIT_BYTES)
            .map(|c| u128::from_le_bytes(c.try_into().expect("16 bytes")))
            .collect()
    } else {
        let it = obj.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "frame: expected a Packet, bytes or a list of 128-bit ints, got {}",
                type_name(obj)
            ))
        })?;
        let mut v = Vec::new();
        for (i, item) in it.enumerate() {
            v.push(flit_arg(&item?, &format!("frame flit {i}"))?);
        }
        v
    };
    if frame.is_empty() {
        return Err(value_err(
            "frame: empty (a frame has at least its header flit)",
        ));
    }
    Ok(frame)
}

fn origin_arg(s: &str) -> PyResult<Origin> {
    match s.to_ascii_lowercase().as_str() {
        "sm" => Ok(Origin::Sm),
        "hub" => Ok(Origin::Hub),
        "egress" => Ok(Origin::Egress),
        _ => Err(value_err(format!(
            "origin: `{s}` is not one of \"sm\" (an SM uplink request), \"hub\" (a hub response), \"egress\" (any packet leaving the switch)"
        ))),
    }
}

fn opcode_arg(s: &str) -> PyResult<Opcode> {
    Opcode::ALL
        .iter()
        .copied()
        .find(|o| o.name().eq_ignore_ascii_case(s))
        .ok_or_else(|| {
            let names: Vec<&str> = Opcode::ALL.iter().map(|o| o.name()).collect();
            value_err(format!("opcode: `{s}` is not one of {}", names.join(", ")))
        })
}

fn stage_arg(s: &str) -> PyResult<Stage> {
    match s.to_ascii_lowercase().as_str() {
        "dispatch" => Ok(Stage::Dispatch),
        "combine" => Ok(Stage::Combine),
        _ => Err(value_err(format!(
            "stage: `{s}` is not \"dispatch\" or \"combine\""
        ))),
    }
}

fn stage_name(s: Stage) -> &'static str {
    match s {
        Stage::Dispatch => "dispatch",
        Stage::Combine => "combine",
    }
}

fn ecode_arg(obj: &Bound<'_, PyAny>) -> PyResult<u8> {
    if let Ok(s) = obj.extract::<String>() {
        return ErrorCode::ALL
            .iter()
            .find(|c| c.name().eq_ignore_ascii_case(&s))
            .map(|c| *c as u8)
            .ok_or_else(|| value_err(format!("ecode: `{s}` is not an error code name")));
    }
    Ok(uint(obj, "ecode", fields::ECODE.max() as u128)? as u8)
}

fn ecode_name(c: u8) -> Option<&'static str> {
    ErrorCode::from_code(c).map(|e| e.name())
}

fn check_port(port: usize, n: usize, what: &str) -> PyResult<()> {
    if port >= n {
        return Err(PyIndexError::new_err(format!(
            "{what} {port} out of range: the switch has {n} ports"
        )));
    }
    Ok(())
}

fn decode_err(py: Python<'_>, e: &dysharp_sim::packet::PacketError) -> PyErr {
    let err = DecodeError::new_err(e.to_string());
    let v = err.value(py);
    let _ = v.setattr("code", e.code.name());
    let _ = v.setattr("field", e.field);
    err
}

// ---------------------------------------------------------------------------------------------
// Config
// ---------------------------------------------------------------------------------------------

/// The modelled switch: ports, experts, target limit, static groups and the hub settings
/// (spec §4, §7); validated on construction (`ConfigError`).
#[pyclass(name = "Config", module = "dysharp_golden", eq, frozen, from_py_object)]
#[derive(Clone, PartialEq)]
struct PyConfig {
    inner: Config,
}

fn validated(c: Config) -> PyResult<PyConfig> {
    c.validate()
        .map_err(|e| ConfigError::new_err(e.to_string()))?;
    Ok(PyConfig { inner: c })
}

#[allow(clippy::too_many_arguments)]
fn hub_config(
    mbase: Option<&Bound<'_, PyAny>>,
    log2_bsize: Option<u32>,
    al_base: Option<&Bound<'_, PyAny>>,
    log2_al_entries: Option<u32>,
    data_base: Option<&Bound<'_, PyAny>>,
    log2_slots: Option<u32>,
    tlb_entries: Option<usize>,
    tlb_ways: Option<usize>,
) -> PyResult<HubConfig> {
    let d = HubConfig::default();
    let addr = |o: Option<&Bound<'_, PyAny>>, name: &str, dflt: u64| -> PyResult<u64> {
        o.map_or(Ok(dflt), |o| Ok(uint(o, name, u64::MAX as u128)? as u64))
    };
    let tlb_entries = tlb_entries.unwrap_or(d.tlb_entries);
    Ok(HubConfig {
        mbase: addr(mbase, "mbase", d.mbase)?,
        log2_bsize: log2_bsize.unwrap_or(d.log2_bsize),
        al_base: addr(al_base, "al_base", d.al_base)?,
        log2_al_entries: log2_al_entries.unwrap_or(d.log2_al_entries),
        data_base: addr(data_base, "data_base", d.data_base)?,
        log2_slots: log2_slots.unwrap_or(d.log2_slots),
        tlb_entries,
        tlb_ways: tlb_ways.unwrap_or(tlb_entries),
    })
}

#[pymethods]
impl PyConfig {
    /// Config(num_ports=8, experts_per_port=32, max_targets=32, groups=None, *, mbase, log2_bsize,
    /// al_base, log2_al_entries, data_base, log2_slots, tlb_entries=512, tlb_ways=tlb_entries).
    /// `groups`: the static NVLS group table, one port mask per group id (default 16 empty
    /// groups). Hub settings default to `dysharp_sim::config::HubConfig::default()`.
    #[new]
    #[pyo3(signature = (num_ports=8, experts_per_port=32, max_targets=32, groups=None, *, mbase=None, log2_bsize=None, al_base=None, log2_al_entries=None, data_base=None, log2_slots=None, tlb_entries=None, tlb_ways=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        num_ports: usize,
        experts_per_port: usize,
        max_targets: usize,
        groups: Option<Vec<u32>>,
        mbase: Option<&Bound<'_, PyAny>>,
        log2_bsize: Option<u32>,
        al_base: Option<&Bound<'_, PyAny>>,
        log2_al_entries: Option<u32>,
        data_base: Option<&Bound<'_, PyAny>>,
        log2_slots: Option<u32>,
        tlb_entries: Option<usize>,
        tlb_ways: Option<usize>,
    ) -> PyResult<Self> {
        validated(Config {
            num_ports,
            experts_per_port,
            max_targets,
            groups: groups.unwrap_or_else(|| vec![0; 16]),
            dynamic_ops: true,
            hub: hub_config(
                mbase,
                log2_bsize,
                al_base,
                log2_al_entries,
                data_base,
                log2_slots,
                tlb_entries,
                tlb_ways,
            )?,
        })
    }

    /// The configuration of an RTL `dysharp_top` with these parameter overrides (as in
    /// rtl/models.toml; the RTL's defaults apply to the rest: NumPorts 8, ExpertsPerPort 32,
    /// MaxTargets 32, NumGroups 16, TlbEntries 512, TlbWays = TlbEntries). `groups` is padded
    /// with empty groups to NumGroups; the other keywords are the hub settings driven on the
    /// `cfg_*` inputs.
    #[staticmethod]
    #[pyo3(signature = (params, groups=None, *, mbase=None, log2_bsize=None, al_base=None, log2_al_entries=None, data_base=None, log2_slots=None))]
    #[allow(clippy::too_many_arguments)]
    fn from_rtl_params(
        params: &Bound<'_, PyDict>,
        groups: Option<Vec<u32>>,
        mbase: Option<&Bound<'_, PyAny>>,
        log2_bsize: Option<u32>,
        al_base: Option<&Bound<'_, PyAny>>,
        log2_al_entries: Option<u32>,
        data_base: Option<&Bound<'_, PyAny>>,
        log2_slots: Option<u32>,
    ) -> PyResult<Self> {
        let get = |k: &str, d: usize| -> PyResult<usize> {
            match params.get_item(k)? {
                Some(v) => Ok(uint(&v, k, u32::MAX as u128)? as usize),
                None => Ok(d),
            }
        };
        let tlb_entries = get("TlbEntries", 512)?;
        let ngroups = get("NumGroups", 16)?;
        let mut g = groups.unwrap_or_default();
        if g.len() > ngroups {
            return Err(ConfigError::new_err(format!(
                "invalid configuration: {} groups, the RTL has NumGroups {ngroups}",
                g.len()
            )));
        }
        g.resize(ngroups, 0);
        validated(Config {
            num_ports: get("NumPorts", 8)?,
            experts_per_port: get("ExpertsPerPort", 32)?,
            max_targets: get("MaxTargets", 32)?,
            groups: g,
            dynamic_ops: get("DynamicOps", 1)? != 0,
            hub: hub_config(
                mbase,
                log2_bsize,
                al_base,
                log2_al_entries,
                data_base,
                log2_slots,
                Some(tlb_entries),
                Some(get("TlbWays", tlb_entries)?),
            )?,
        })
    }

    /// A configuration from its JSON form (the `config` of a scenario file, docs/golden.md).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        let c: Config = serde_json::from_str(text)
            .map_err(|e| ConfigError::new_err(format!("invalid configuration: {e}")))?;
        validated(c)
    }

    /// The JSON form (as in scenario files).
    fn to_json(&self) -> String {
        serde_json::to_string(&self.inner).expect("a config serializes")
    }

    #[getter]
    fn num_ports(&self) -> usize {
        self.inner.num_ports
    }
    #[getter]
    fn experts_per_port(&self) -> usize {
        self.inner.experts_per_port
    }
    /// Total experts (num_ports × experts_per_port).
    #[getter]
    fn experts(&self) -> usize {
        self.inner.experts()
    }
    #[getter]
    fn max_targets(&self) -> usize {
        self.inner.max_targets
    }
    #[getter]
    fn groups(&self) -> Vec<u32> {
        self.inner.groups.clone()
    }
    #[getter]
    fn mbase(&self) -> u64 {
        self.inner.hub.mbase
    }
    #[getter]
    fn log2_bsize(&self) -> u32 {
        self.inner.hub.log2_bsize
    }
    #[getter]
    fn al_base(&self) -> u64 {
        self.inner.hub.al_base
    }
    #[getter]
    fn log2_al_entries(&self) -> u32 {
        self.inner.hub.log2_al_entries
    }
    #[getter]
    fn data_base(&self) -> u64 {
        self.inner.hub.data_base
    }
    #[getter]
    fn log2_slots(&self) -> u32 {
        self.inner.hub.log2_slots
    }
    #[getter]
    fn tlb_entries(&self) -> usize {
        self.inner.hub.tlb_entries
    }
    #[getter]
    fn tlb_ways(&self) -> usize {
        self.inner.hub.tlb_ways
    }

    fn __repr__(&self) -> String {
        let c = &self.inner;
        let h = &c.hub;
        format!(
            "Config(num_ports={}, experts_per_port={}, max_targets={}, groups={:?}, mbase={:#x}, log2_bsize={}, al_base={:#x}, log2_al_entries={}, data_base={:#x}, log2_slots={}, tlb_entries={}, tlb_ways={})",
            c.num_ports, c.experts_per_port, c.max_targets, c.groups, h.mbase, h.log2_bsize,
            h.al_base, h.log2_al_entries, h.data_base, h.log2_slots, h.tlb_entries, h.tlb_ways
        )
    }
}

fn limits_of(config: Option<&PyConfig>) -> Limits {
    config.map_or_else(permissive_limits, |c| c.inner.limits())
}

// ---------------------------------------------------------------------------------------------
// Packet
// ---------------------------------------------------------------------------------------------

/// A packet of any kind (docs/spec.md §2–§5). `encode()` gives its flits; `Packet.decode()`
/// parses flits with the spec §6 checks. Fields may be set to any value that fits its header
/// slot, so illegal packets can be built too.
#[pyclass(name = "Packet", module = "dysharp_golden", eq, from_py_object)]
#[derive(Clone, PartialEq)]
struct PyPacket {
    inner: Packet,
}

fn set_payload(p: &mut Packet, bytes: Vec<u8>, len: Option<u8>) -> PyResult<()> {
    let carries = p.opcode.carries_payload(p.ecode);
    if !carries && !bytes.is_empty() {
        return Err(value_err(format!(
            "payload: {} carries no payload",
            p.opcode
        )));
    }
    let len = match len {
        Some(l) => l,
        None if carries => bytes.len().div_ceil(FLIT_BYTES).max(1) as u8,
        None => p.len,
    };
    if carries && bytes.len() > FLIT_BYTES * len as usize {
        return Err(value_err(format!(
            "payload: {} bytes do not fit in len {len} flits",
            bytes.len()
        )));
    }
    p.len = len;
    p.payload = bytes;
    if carries {
        p.payload.resize(FLIT_BYTES * len as usize, 0);
    }
    Ok(())
}

fn targets_arg(v: &Bound<'_, PyAny>) -> PyResult<Vec<u16>> {
    let mut t = Vec::new();
    for (i, x) in v.try_iter()?.enumerate() {
        t.push(uint(&x?, &format!("targets[{i}]"), 0xFFFF)? as u16);
    }
    if t.len() as u64 > fields::TCOUNT.max() {
        return Err(value_err(format!(
            "targets: {} targets, the tcount field holds {}",
            t.len(),
            fields::TCOUNT.max()
        )));
    }
    Ok(t)
}

fn lanes_bytes(dt: DType, values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| from_f32(dt, *v as f32).to_le_bytes()[..dt.bytes()].to_vec())
        .collect()
}

#[pymethods]
impl PyPacket {
    /// Packet(opcode, *, stage=<the opcode's>, maddr=0, src_port=0, tag=0, len=<from payload,
    /// or 1; 0 for RSP_ERROR>, dtype="bf16", rop="add", acc="f32", route=0, ecode=0,
    /// targets=(), be=<all ones for stores>, payload=b"", values=None). `values` (lane values,
    /// rounded to `dtype` nearest-even) replaces `payload`; a payload is zero-filled to `len`
    /// whole flits.
    #[new]
    #[pyo3(signature = (opcode, *, stage=None, maddr=None, src_port=None, tag=None, len=None, dtype="bf16", rop="add", acc="f32", route=None, ecode=None, targets=None, be=None, payload=None, values=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        opcode: &str,
        stage: Option<&str>,
        maddr: Option<&Bound<'_, PyAny>>,
        src_port: Option<&Bound<'_, PyAny>>,
        tag: Option<&Bound<'_, PyAny>>,
        len: Option<&Bound<'_, PyAny>>,
        dtype: &str,
        rop: &str,
        acc: &str,
        route: Option<&Bound<'_, PyAny>>,
        ecode: Option<&Bound<'_, PyAny>>,
        targets: Option<&Bound<'_, PyAny>>,
        be: Option<&Bound<'_, PyAny>>,
        payload: Option<&Bound<'_, PyAny>>,
        values: Option<Vec<f64>>,
    ) -> PyResult<Self> {
        let op = opcode_arg(opcode)?;
        let mut p = Packet::new(op);
        if let Some(s) = stage {
            p.stage = stage_arg(s)?;
        }
        if let Some(v) = maddr {
            p.maddr = uint(v, "maddr", fields::MADDR.max() as u128)? as u64;
        }
        if let Some(v) = src_port {
            p.src_port = uint(v, "src_port", fields::SRC_PORT.max() as u128)? as u8;
        }
        if let Some(v) = tag {
            p.tag = uint(v, "tag", fields::TAG.max() as u128)? as u16;
        }
        p.dtype = dtype.parse().map_err(|e| value_err(format!("{e}")))?;
        p.rop = rop.parse().map_err(|e| value_err(format!("{e}")))?;
        p.acc = acc.parse().map_err(|e| value_err(format!("{e}")))?;
        if let Some(v) = route {
            p.route = uint(v, "route", fields::ROUTE.max() as u128)? as u8;
        }
        if let Some(v) = ecode {
            p.ecode = ecode_arg(v)?;
        }
        if let Some(t) = targets {
            p.targets = targets_arg(t)?;
        }
        if let Some(v) = be {
            if !op.is_store() {
                return Err(value_err(format!("be: {op} carries no byte enables")));
            }
            p.be = Some(flit_arg(v, "be")?);
        } else if op.is_store() {
            p.be = Some(u128::MAX);
        }
        let len = len
            .map(|v| uint(v, "len", fields::LEN.max() as u128).map(|l| l as u8))
            .transpose()?;
        let bytes = match (payload, &values) {
            (Some(_), Some(_)) => {
                return Err(value_err("give `payload` or `values`, not both"));
            }
            (Some(b), None) => bytes_arg(b).ok_or_else(|| {
                PyTypeError::new_err(format!("payload: expected bytes, got {}", type_name(b)))
            })?,
            (None, Some(v)) => lanes_bytes(p.dtype, v),
            (None, None) => Vec::new(),
        };
        set_payload(&mut p, bytes, len)?;
        Ok(PyPacket { inner: p })
    }

    /// Parses a frame (list of 128-bit ints, or bytes) with the spec §6 checks for `origin`
    /// ("sm": an SM request at the switch ingress, "hub": a hub response, "egress": any packet
    /// leaving the switch), with `config`'s limits (default: the widest). Raises `DecodeError`
    /// (attributes `code`, e.g. "ERR_HCC", and `field`).
    #[staticmethod]
    #[pyo3(signature = (frame, origin="egress", config=None))]
    fn decode(
        py: Python<'_>,
        frame: &Bound<'_, PyAny>,
        origin: &str,
        config: Option<PyRef<'_, PyConfig>>,
    ) -> PyResult<Self> {
        let f = frame_arg(frame)?;
        let o = origin_arg(origin)?;
        let limits = limits_of(config.as_deref());
        sim_decode(&f, o, &limits)
            .map(|inner| PyPacket { inner })
            .map_err(|e| decode_err(py, &e))
    }

    /// The frame: a list of 128-bit ints (flit 0 = header, with its check code).
    fn encode(&self) -> Vec<u128> {
        self.inner.encode()
    }

    /// The frame as bytes: 16 per flit, each flit little-endian (byte 0 = bits 7:0).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let b: Vec<u8> = self
            .inner
            .encode()
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        PyBytes::new(py, &b)
    }

    /// The payload's lanes as numbers (bf16/f16/f32 per `dtype`).
    fn values(&self) -> Vec<f64> {
        let dt = self.inner.dtype;
        (0..self.inner.payload.len() / dt.bytes())
            .map(|i| to_f32(dt, lane(dt, &self.inner.payload, i).unwrap_or(0)) as f64)
            .collect()
    }

    /// The payload's lanes as raw bits.
    fn lanes(&self) -> Vec<u32> {
        let dt = self.inner.dtype;
        (0..self.inner.payload.len() / dt.bytes())
            .map(|i| lane(dt, &self.inner.payload, i).unwrap_or(0))
            .collect()
    }

    /// Every field as a dict (opcode and enums by name, `ecode_name`, `values`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = &self.inner;
        let d = PyDict::new(py);
        d.set_item("opcode", p.opcode.name())?;
        d.set_item("stage", stage_name(p.stage))?;
        d.set_item("maddr", p.maddr)?;
        d.set_item("tcount", p.targets.len())?;
        d.set_item("src_port", p.src_port)?;
        d.set_item("tag", p.tag)?;
        d.set_item("len", p.len)?;
        d.set_item("dtype", p.dtype.name())?;
        d.set_item("rop", p.rop.name())?;
        d.set_item("acc", p.acc.name())?;
        d.set_item("route", p.route)?;
        d.set_item("ecode", p.ecode)?;
        d.set_item("ecode_name", ecode_name(p.ecode))?;
        d.set_item("targets", p.targets.clone())?;
        d.set_item("be", p.be)?;
        d.set_item("payload", PyBytes::new(py, &p.payload))?;
        d.set_item("values", self.values())?;
        Ok(d)
    }

    /// A copy.
    fn copy(&self) -> Self {
        self.clone()
    }

    /// Wire flits of the frame.
    #[getter]
    fn wire_flits(&self) -> usize {
        self.inner.wire_flits()
    }
    /// Payload flits.
    #[getter]
    fn payload_flits(&self) -> usize {
        self.inner.payload_flits()
    }

    #[getter]
    fn opcode(&self) -> &'static str {
        self.inner.opcode.name()
    }
    #[setter]
    fn set_opcode(&mut self, v: &str) -> PyResult<()> {
        self.inner.opcode = opcode_arg(v)?;
        Ok(())
    }
    #[getter]
    fn stage(&self) -> &'static str {
        stage_name(self.inner.stage)
    }
    #[setter]
    fn set_stage(&mut self, v: &str) -> PyResult<()> {
        self.inner.stage = stage_arg(v)?;
        Ok(())
    }
    #[getter]
    fn maddr(&self) -> u64 {
        self.inner.maddr
    }
    #[setter]
    fn set_maddr(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.maddr = uint(v, "maddr", fields::MADDR.max() as u128)? as u64;
        Ok(())
    }
    #[getter]
    fn src_port(&self) -> u8 {
        self.inner.src_port
    }
    #[setter]
    fn set_src_port(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.src_port = uint(v, "src_port", fields::SRC_PORT.max() as u128)? as u8;
        Ok(())
    }
    #[getter]
    fn tag(&self) -> u16 {
        self.inner.tag
    }
    #[setter]
    fn set_tag(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.tag = uint(v, "tag", fields::TAG.max() as u128)? as u16;
        Ok(())
    }
    /// `len` (payload flits of a packet that carries payload). Setting it keeps the payload
    /// (zero-filled or cut to `len` flits when the packet carries payload).
    #[getter]
    fn len(&self) -> u8 {
        self.inner.len
    }
    #[setter]
    fn set_len(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        let l = uint(v, "len", fields::LEN.max() as u128)? as u8;
        self.inner.len = l;
        if self.inner.opcode.carries_payload(self.inner.ecode) {
            self.inner.payload.resize(FLIT_BYTES * l as usize, 0);
        }
        Ok(())
    }
    #[getter]
    fn dtype(&self) -> &'static str {
        self.inner.dtype.name()
    }
    #[setter]
    fn set_dtype(&mut self, v: &str) -> PyResult<()> {
        self.inner.dtype = v.parse().map_err(|e| value_err(format!("{e}")))?;
        Ok(())
    }
    #[getter]
    fn rop(&self) -> &'static str {
        self.inner.rop.name()
    }
    #[setter]
    fn set_rop(&mut self, v: &str) -> PyResult<()> {
        self.inner.rop = v
            .parse::<ReduceOp>()
            .map_err(|e| value_err(format!("{e}")))?;
        Ok(())
    }
    #[getter]
    fn acc(&self) -> &'static str {
        self.inner.acc.name()
    }
    #[setter]
    fn set_acc(&mut self, v: &str) -> PyResult<()> {
        self.inner.acc = v
            .parse::<AccMode>()
            .map_err(|e| value_err(format!("{e}")))?;
        Ok(())
    }
    #[getter]
    fn route(&self) -> u8 {
        self.inner.route
    }
    #[setter]
    fn set_route(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.route = uint(v, "route", fields::ROUTE.max() as u128)? as u8;
        Ok(())
    }
    /// The error code (an int; `to_dict()["ecode_name"]` names it). Set by int or name.
    #[getter]
    fn ecode(&self) -> u8 {
        self.inner.ecode
    }
    #[setter]
    fn set_ecode(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.ecode = ecode_arg(v)?;
        Ok(())
    }
    #[getter]
    fn targets(&self) -> Vec<u16> {
        self.inner.targets.clone()
    }
    #[setter]
    fn set_targets(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.targets = targets_arg(v)?;
        Ok(())
    }
    /// Byte enables of a store (bit 2h enables payload bytes 2h and 2h+1... per spec §3), or None.
    #[getter]
    fn be(&self) -> Option<u128> {
        self.inner.be
    }
    #[setter]
    fn set_be(&mut self, v: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.inner.be = v.map(|v| flit_arg(v, "be")).transpose()?;
        Ok(())
    }
    #[getter]
    fn payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.payload)
    }
    #[setter]
    fn set_payload(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = bytes_arg(v).ok_or_else(|| {
            PyTypeError::new_err(format!("payload: expected bytes, got {}", type_name(v)))
        })?;
        let len = if self.inner.opcode.carries_payload(self.inner.ecode) {
            None
        } else {
            Some(self.inner.len)
        };
        set_payload(&mut self.inner, b, len)
    }

    fn __repr__(&self) -> String {
        let p = &self.inner;
        let mut s = format!(
            "Packet({} stage={} maddr={:#x} src_port={} tag={:#x} len={} dtype={} rop={} acc={} route={} ecode={}",
            p.opcode,
            stage_name(p.stage),
            p.maddr,
            p.src_port,
            p.tag,
            p.len,
            p.dtype,
            p.rop,
            p.acc,
            p.route,
            ecode_name(p.ecode).map_or(p.ecode.to_string(), str::to_string)
        );
        if !p.targets.is_empty() {
            s += &format!(" targets={:?}", p.targets);
        }
        if let Some(be) = p.be {
            if be != u128::MAX {
                s += &format!(" be={be:#x}");
            }
        }
        s + ")"
    }
}

// ---------------------------------------------------------------------------------------------
// Memory accesses
// ---------------------------------------------------------------------------------------------

/// One 16-byte line access on a hub's memory port: `kind` "read" or "write", `addr`, and for
/// writes `data` (128-bit int, byte i = bits 8i+7:8i) and `strobe` (16 bits, one per byte).
#[pyclass(
    name = "MemAccess",
    module = "dysharp_golden",
    eq,
    frozen,
    from_py_object
)]
#[derive(Clone, PartialEq)]
struct PyMemAccess {
    inner: MemAccess,
}

fn strobe_mask(s: u16) -> u128 {
    (0..16).fold(0u128, |m, i| {
        if s >> i & 1 == 1 {
            m | (0xFFu128 << (8 * i))
        } else {
            m
        }
    })
}

/// Differences of an expected and an observed access (unstrobed data bytes are don't-care).
fn access_diffs(w: &MemAccess, g: &MemAccess) -> Vec<String> {
    let mut d = Vec::new();
    match (w, g) {
        (MemAccess::Read { addr: a }, MemAccess::Read { addr: b }) => {
            if a != b {
                d.push(format!("read addr: expected {a:#x}, observed {b:#x}"));
            }
        }
        (
            MemAccess::Write {
                addr: a,
                data: da,
                strobe: sa,
            },
            MemAccess::Write {
                addr: b,
                data: db,
                strobe: sb,
            },
        ) => {
            if a != b {
                d.push(format!("write addr: expected {a:#x}, observed {b:#x}"));
            }
            if sa != sb {
                d.push(format!("strobe: expected {sa:#06x}, observed {sb:#06x}"));
            }
            let m = strobe_mask(*sa) & strobe_mask(*sb);
            if da & m != db & m {
                let x = (da ^ db) & m;
                let byte = x.trailing_zeros() / 8;
                d.push(format!(
                    "data (strobed bytes): expected {:032x}, observed {:032x}; first differing byte {byte}",
                    da & m,
                    db & m
                ));
            }
        }
        _ => d.push(format!(
            "kind: expected a {}, observed a {}",
            kind_name(w),
            kind_name(g)
        )),
    }
    d
}

fn kind_name(a: &MemAccess) -> &'static str {
    match a {
        MemAccess::Read { .. } => "read",
        MemAccess::Write { .. } => "write",
    }
}

#[pymethods]
impl PyMemAccess {
    /// MemAccess(kind, addr, data=None, strobe=None): an access observed on a memory port
    /// ("read" or "write"; a write needs data and strobe).
    #[new]
    #[pyo3(signature = (kind, addr, data=None, strobe=None))]
    fn new(
        kind: &str,
        addr: &Bound<'_, PyAny>,
        data: Option<&Bound<'_, PyAny>>,
        strobe: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let addr = uint(addr, "addr", u64::MAX as u128)? as u64;
        let inner = match kind {
            "read" => {
                if data.is_some() || strobe.is_some() {
                    return Err(value_err("a read has no data or strobe"));
                }
                MemAccess::Read { addr }
            }
            "write" => {
                let (Some(d), Some(s)) = (data, strobe) else {
                    return Err(value_err("a write needs data and strobe"));
                };
                MemAccess::Write {
                    addr,
                    data: flit_arg(d, "data")?,
                    strobe: uint(s, "strobe", 0xFFFF)? as u16,
                }
            }
            _ => {
                return Err(value_err(format!(
                    "kind: `{kind}` is not \"read\" or \"write\""
                )))
            }
        };
        Ok(PyMemAccess { inner })
    }

    #[getter]
    fn kind(&self) -> &'static str {
        kind_name(&self.inner)
    }
    #[getter]
    fn addr(&self) -> u64 {
        match self.inner {
            MemAccess::Read { addr } | MemAccess::Write { addr, .. } => addr,
        }
    }
    #[getter]
    fn data(&self) -> Option<u128> {
        match self.inner {
            MemAccess::Write { data, .. } => Some(data),
            MemAccess::Read { .. } => None,
        }
    }
    #[getter]
    fn strobe(&self) -> Option<u16> {
        match self.inner {
            MemAccess::Write { strobe, .. } => Some(strobe),
            MemAccess::Read { .. } => None,
        }
    }

    /// Field-level differences from an observed access (empty: they match; unstrobed data
    /// bytes are don't-care).
    fn diff(&self, observed: PyRef<'_, PyMemAccess>) -> Vec<String> {
        access_diffs(&self.inner, &observed.inner)
    }

    /// Whether an observed access matches this one (see `diff`).
    fn matches(&self, observed: PyRef<'_, PyMemAccess>) -> bool {
        access_diffs(&self.inner, &observed.inner).is_empty()
    }

    fn __repr__(&self) -> String {
        match self.inner {
            MemAccess::Read { addr } => format!("MemAccess(read {addr:#x})"),
            MemAccess::Write { addr, data, strobe } => {
                format!("MemAccess(write {addr:#x} data={data:032x} strobe={strobe:#06x})")
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Fabric
// ---------------------------------------------------------------------------------------------

/// The golden system: one switch and one hub (with its GPU memory) per port, logs on.
///
/// Two ways to drive it:
/// * whole system: `inject(port, frame)` runs a frame from an SM (or a hub) to completion
///   (replicas, hub accesses, responses, reductions) and returns what left the switch;
/// * step by step, in a testbench's own order: `switch_ingress(port, frame, origin)` runs only
///   the switch (checks, replication, load-reduce table) and `hub_handle(port, request)` only
///   a hub (translation, memory accesses, pre-reduction), so an RTL's hubs can be followed in
///   the order they receive their requests.
#[pyclass(name = "Fabric", module = "dysharp_golden")]
struct PyFabric {
    fab: Fabric,
}

type Outs = Vec<(usize, PyPacket)>;

impl PyFabric {
    fn n(&self) -> usize {
        self.fab.cfg.num_ports
    }

    fn count_up(&mut self, port: usize, flits: usize, payload_flits: usize) {
        let l = &mut self.fab.links;
        l.up_wire_flits[port] += flits as u64;
        l.up_payload_bytes[port] += 16 * payload_flits as u64;
    }

    fn count_frame(&mut self, port: usize, origin: Origin, frame: &[Flit]) {
        let payload = sim_decode(frame, origin, &self.fab.cfg.limits())
            .map(|p| p.payload_flits())
            .unwrap_or(0);
        self.count_up(port, frame.len(), payload);
    }

    /// Logs a packet leaving the switch on port `q`'s downlink.
    fn leave(&mut self, q: usize, pkt: &Packet) {
        let l = &mut self.fab.links;
        l.down_wire_flits[q] += pkt.wire_flits() as u64;
        l.down_payload_bytes[q] += 16 * pkt.payload_flits() as u64;
        if let Some(eg) = &mut self.fab.egress {
            eg[q].push(pkt.clone());
        }
        if !pkt.opcode.is_request() {
            self.fab.delivered[q].push(pkt.clone());
        }
    }

    /// `Fabric::run` of the golden model: every packet to completion, in order.
    fn run(&mut self, first: Vec<(usize, Packet)>) -> Outs {
        let mut out = Vec::new();
        let mut queue: VecDeque<(usize, Packet)> = first.into();
        while let Some((q, pkt)) = queue.pop_front() {
            self.leave(q, &pkt);
            if pkt.opcode.is_request() {
                for rsp in self.fab.hubs[q].handle(&pkt) {
                    self.count_up(q, rsp.wire_flits(), rsp.payload_flits());
                    queue.extend(self.fab.switch.ingress(q, Origin::Hub, rsp));
                }
            }
            out.push((q, PyPacket { inner: pkt }));
        }
        out
    }

    fn hub_log(&self, hub: usize) -> &[MemAccess] {
        self.fab.hubs[hub].log.as_deref().unwrap_or(&[])
    }
}

fn ingress_origin(origin: &str) -> PyResult<Origin> {
    match origin_arg(origin)? {
        Origin::Egress => Err(value_err(
            "origin: frames enter the switch from an SM (\"sm\") or a hub (\"hub\")",
        )),
        o => Ok(o),
    }
}

#[pymethods]
impl PyFabric {
    /// Fabric(config): the golden switch and hubs in the reset state (memories zero, TLBs empty).
    #[new]
    fn new(config: PyRef<'_, PyConfig>) -> PyResult<Self> {
        let mut fab =
            Fabric::new(&config.inner).map_err(|e| ConfigError::new_err(e.to_string()))?;
        fab.enable_logs();
        Ok(PyFabric { fab })
    }

    #[getter]
    fn config(&self) -> PyConfig {
        PyConfig {
            inner: self.fab.cfg.clone(),
        }
    }

    /// Injects a frame (Packet, bytes or list of ints) at `port` from its SM (origin "sm") or
    /// its hub ("hub") and runs it to completion. Returns the packets that left the switch
    /// because of it, in order, as (egress port, Packet): requests to hubs and responses to SMs.
    /// A malformed frame is counted and answered as the switch does (RSP_ERROR to the port's
    /// own SM, except ERR_HCC which is dropped silently).
    #[pyo3(signature = (port, frame, origin="sm"))]
    fn inject(&mut self, port: usize, frame: &Bound<'_, PyAny>, origin: &str) -> PyResult<Outs> {
        check_port(port, self.n(), "port")?;
        let o = ingress_origin(origin)?;
        let f = frame_arg(frame)?;
        self.count_frame(port, o, &f);
        let outs = self.fab.switch.ingress_frame(port, o, &f);
        Ok(self.run(outs))
    }

    /// Step mode: the switch alone takes a frame at `port` (origin "sm" or "hub") and returns
    /// what it sends on, as (egress port, Packet); no hub runs. Requests among them are to be
    /// given to `hub_handle` when the hub receives them.
    #[pyo3(signature = (port, frame, origin="sm"))]
    fn switch_ingress(
        &mut self,
        port: usize,
        frame: &Bound<'_, PyAny>,
        origin: &str,
    ) -> PyResult<Outs> {
        check_port(port, self.n(), "port")?;
        let o = ingress_origin(origin)?;
        let f = frame_arg(frame)?;
        self.count_frame(port, o, &f);
        let outs = self.fab.switch.ingress_frame(port, o, &f);
        for (q, p) in &outs {
            self.leave(*q, p);
        }
        Ok(outs
            .into_iter()
            .map(|(q, p)| (q, PyPacket { inner: p }))
            .collect())
    }

    /// Step mode: hub `port` handles one request it received (a Packet or frame, as it left the
    /// switch). Returns (responses, memory accesses): the responses it sends to the switch (give
    /// each to `switch_ingress(port, rsp, "hub")`) and the 16-byte line accesses it made, in order.
    fn hub_handle(
        &mut self,
        py: Python<'_>,
        port: usize,
        request: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<PyPacket>, Vec<PyMemAccess>)> {
        check_port(port, self.n(), "port")?;
        let f = frame_arg(request)?;
        // A hub receives well-formed requests only: decode as the switch emits them.
        let pkt = sim_decode(&f, Origin::Egress, &self.fab.cfg.limits())
            .map_err(|e| decode_err(py, &e))?;
        if !pkt.opcode.is_request() {
            return Err(value_err(format!(
                "hub_handle: {} is a response; hubs receive requests (opcodes 0x1-0x6)",
                pkt.opcode
            )));
        }
        let before = self.hub_log(port).len();
        let rsps = self.fab.hubs[port].handle(&pkt);
        let acc = self.hub_log(port)[before..]
            .iter()
            .map(|a| PyMemAccess { inner: a.clone() })
            .collect();
        Ok((
            rsps.into_iter().map(|p| PyPacket { inner: p }).collect(),
            acc,
        ))
    }

    /// Packets that left the switch on `port`'s downlink so far (requests to the hub and
    /// responses to the SM), in order; `take=True` also clears the list.
    #[pyo3(signature = (port, take=false))]
    fn egress(&mut self, port: usize, take: bool) -> PyResult<Vec<PyPacket>> {
        check_port(port, self.n(), "port")?;
        let eg = &mut self.fab.egress.as_mut().expect("logs on")[port];
        let v: Vec<Packet> = if take { std::mem::take(eg) } else { eg.clone() };
        Ok(v.into_iter().map(|p| PyPacket { inner: p }).collect())
    }

    /// The responses delivered to `port`'s SM so far; `take=True` also clears the list.
    #[pyo3(signature = (port, take=false))]
    fn delivered(&mut self, port: usize, take: bool) -> PyResult<Vec<PyPacket>> {
        check_port(port, self.n(), "port")?;
        let d = &mut self.fab.delivered[port];
        let v: Vec<Packet> = if take { std::mem::take(d) } else { d.clone() };
        Ok(v.into_iter().map(|p| PyPacket { inner: p }).collect())
    }

    /// Every memory access hub `hub` made so far, in order; `take=True` also clears the log.
    #[pyo3(signature = (hub, take=false))]
    fn mem_accesses(&mut self, hub: usize, take: bool) -> PyResult<Vec<PyMemAccess>> {
        check_port(hub, self.n(), "hub")?;
        let log = self.fab.hubs[hub].log.as_mut().expect("logs on");
        let v: Vec<MemAccess> = if take {
            std::mem::take(log)
        } else {
            log.clone()
        };
        Ok(v.into_iter().map(|a| PyMemAccess { inner: a }).collect())
    }

    /// The memory writes of hub `hub` so far (reads left out), in order.
    fn mem_writes(&self, hub: usize) -> PyResult<Vec<PyMemAccess>> {
        check_port(hub, self.n(), "hub")?;
        Ok(self
            .hub_log(hub)
            .iter()
            .filter(|a| matches!(a, MemAccess::Write { .. }))
            .map(|a| PyMemAccess { inner: a.clone() })
            .collect())
    }

    /// Per port, the 14 error counters (index = code − 1): the switch's (codes 1–10 and 14) plus
    /// the port's hub's (11–13), as the RTL's `err_count_o`.
    fn error_counters(&self) -> Vec<Vec<u64>> {
        self.fab
            .error_counters()
            .iter()
            .map(|c| c.to_vec())
            .collect()
    }

    /// The non-zero error counters of `port` by name ({"ERR_HCC": 1, ...}).
    fn errors<'py>(&self, py: Python<'py>, port: usize) -> PyResult<Bound<'py, PyDict>> {
        check_port(port, self.n(), "port")?;
        let d = PyDict::new(py);
        for (i, n) in self.fab.error_counters()[port].iter().enumerate() {
            if *n > 0 {
                d.set_item(ErrorCode::ALL[i].name(), n)?;
            }
        }
        Ok(d)
    }

    /// Counters of hub `hub`: TLB hits, misses, evictions; allocations, walks, line reads/writes.
    fn hub_stats<'py>(&self, py: Python<'py>, hub: usize) -> PyResult<Bound<'py, PyDict>> {
        check_port(hub, self.n(), "hub")?;
        let s = self.fab.hubs[hub].stats();
        let d = PyDict::new(py);
        d.set_item("tlb_hits", s.tlb.hits)?;
        d.set_item("tlb_misses", s.tlb.misses)?;
        d.set_item("tlb_evictions", s.tlb.evictions)?;
        d.set_item("allocations", s.allocations)?;
        d.set_item("walks", s.walks)?;
        d.set_item("line_reads", s.line_reads)?;
        d.set_item("line_writes", s.line_writes)?;
        Ok(d)
    }

    /// Link counters per port: up/down wire flits and payload bytes.
    fn links<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let l = &self.fab.links;
        let d = PyDict::new(py);
        d.set_item("up_wire_flits", l.up_wire_flits.clone())?;
        d.set_item("down_wire_flits", l.down_wire_flits.clone())?;
        d.set_item("up_payload_bytes", l.up_payload_bytes.clone())?;
        d.set_item("down_payload_bytes", l.down_payload_bytes.clone())?;
        Ok(d)
    }

    /// Load-reduce entries of the switch still waiting for partials.
    fn pending(&self) -> usize {
        self.fab.switch.pending()
    }

    /// `n` bytes of hub `hub`'s GPU memory at `addr` (never-written memory reads 0).
    fn read_memory<'py>(
        &self,
        py: Python<'py>,
        hub: usize,
        addr: u64,
        n: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        check_port(hub, self.n(), "hub")?;
        if n > 1 << 24 || addr.checked_add(n as u64).is_none_or(|e| e > 1 << 48) {
            return Err(value_err(format!(
                "read_memory: {n} bytes at {addr:#x} leave the 48-bit space or exceed 16 MiB"
            )));
        }
        let mut buf = vec![0u8; n];
        self.fab.hubs[hub].mem.read(addr, &mut buf);
        Ok(PyBytes::new(py, &buf))
    }

    /// Writes bytes into hub `hub`'s GPU memory at `addr` (initial state: data, AL entries);
    /// not logged as an access.
    fn write_memory(&mut self, hub: usize, addr: u64, data: &Bound<'_, PyAny>) -> PyResult<()> {
        check_port(hub, self.n(), "hub")?;
        let b = bytes_arg(data).ok_or_else(|| {
            PyTypeError::new_err(format!("data: expected bytes, got {}", type_name(data)))
        })?;
        if b.len() > 1 << 24 || addr.checked_add(b.len() as u64).is_none_or(|e| e > 1 << 48) {
            return Err(value_err(format!(
                "write_memory: {} bytes at {addr:#x} leave the 48-bit space or exceed 16 MiB",
                b.len()
            )));
        }
        self.fab.hubs[hub].mem.write(addr, &b);
        Ok(())
    }

    /// The AL allocation counter of each local expert of hub `hub`.
    fn al_counters(&self, hub: usize) -> PyResult<Vec<u32>> {
        check_port(hub, self.n(), "hub")?;
        Ok(self.fab.hubs[hub].counters.clone())
    }

    /// Address of the AL entry of local expert `local` and algebraic index `aidx` (spec §7).
    fn al_entry_addr(&self, local: u32, aidx: u32) -> PyResult<u64> {
        let c = &self.fab.cfg;
        if local as usize >= c.experts_per_port || (aidx as u64) >> c.hub.log2_al_entries != 0 {
            return Err(value_err(format!(
                "al_entry_addr: local expert {local} or aidx {aidx} outside the AL table"
            )));
        }
        Ok(self.fab.hubs[0].al_entry_addr(local, aidx))
    }

    /// SHA-256 of every hub's memory and allocation counters (docs/golden.md §7).
    fn digest(&self) -> String {
        state_digest(&self.fab).value
    }

    fn __repr__(&self) -> String {
        format!(
            "Fabric({} ports, {} experts per port, {} load-reduces pending)",
            self.fab.cfg.num_ports,
            self.fab.cfg.experts_per_port,
            self.fab.switch.pending()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Module functions
// ---------------------------------------------------------------------------------------------

/// decode(frame, origin="egress", config=None) -> Packet; see `Packet.decode`.
#[pyfunction]
#[pyo3(signature = (frame, origin="egress", config=None))]
fn decode(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    origin: &str,
    config: Option<PyRef<'_, PyConfig>>,
) -> PyResult<PyPacket> {
    PyPacket::decode(py, frame, origin, config)
}

/// encode(packet) -> list of 128-bit ints.
#[pyfunction]
fn encode(packet: PyRef<'_, PyPacket>) -> Vec<u128> {
    packet.inner.encode()
}

/// diff(expected, observed, config=None) -> list of str. Field-by-field differences of two
/// frames (Packets, bytes or lists of ints) as they leave the switch: each differing header
/// field with both values, the first differing target, byte enables, the first differing
/// payload lane (numbers and bits); for frames that do not decode, the decode error and raw
/// flit0 fields. Empty when the frames are identical. The same text as `dysharp golden diff`.
#[pyfunction]
#[pyo3(signature = (expected, observed, config=None))]
fn diff(
    expected: &Bound<'_, PyAny>,
    observed: &Bound<'_, PyAny>,
    config: Option<PyRef<'_, PyConfig>>,
) -> PyResult<Vec<String>> {
    let limits = limits_of(config.as_deref());
    let frame = |flits: Vec<Flit>| Frame {
        decoded: sim_decode(&flits, Origin::Egress, &limits),
        flits,
        stream: None,
        time: None,
        xz: Vec::new(),
    };
    let w = frame(frame_arg(expected)?);
    let g = frame(frame_arg(observed)?);
    Ok(frame_diffs(&w, &g).unwrap_or_default())
}

/// The header check code (CRC-8, spec §2) of a flit 0.
#[pyfunction]
fn hcc(flit0: &Bound<'_, PyAny>) -> PyResult<u8> {
    Ok(fields::hcc(flit_arg(flit0, "flit0")?))
}

/// A flit 0 with its check code set.
#[pyfunction]
fn with_hcc(flit0: &Bound<'_, PyAny>) -> PyResult<u128> {
    Ok(sim_with_hcc(flit_arg(flit0, "flit0")?))
}

/// The spec §6 error codes: [(name, code), ...].
#[pyfunction]
fn error_codes() -> Vec<(&'static str, u8)> {
    ErrorCode::ALL
        .iter()
        .map(|c| (c.name(), *c as u8))
        .collect()
}

/// The opcodes: [(name, code), ...].
#[pyfunction]
fn opcodes() -> Vec<(&'static str, u8)> {
    Opcode::ALL.iter().map(|o| (o.name(), *o as u8)).collect()
}

/// run_scenario(text, file="scenario.json") -> str: `dysharp golden run` of a scenario
/// document (docs/golden.md §1); returns the expected result document (JSON).
#[pyfunction]
#[pyo3(signature = (text, file="scenario.json"))]
fn run_scenario(text: &str, file: &str) -> PyResult<String> {
    let p = Scenario::from_json(file, text).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    Ok(p.run().to_json())
}

/// diff_results(expected, observed, max_diffs=1, ignore=()) -> dict: `dysharp golden diff` of two
/// result documents (JSON text). Returns {"equal": bool, "total": int, "text": the report as
/// the CLI prints it, "report": the JSON report as a dict}. `ignore` may name "mem",
/// "errors", "digest".
#[pyfunction]
#[pyo3(signature = (expected, observed, max_diffs=1, ignore=Vec::new(), x_as_zero=false))]
fn diff_results<'py>(
    py: Python<'py>,
    expected: &str,
    observed: &str,
    max_diffs: usize,
    ignore: Vec<String>,
    x_as_zero: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let se = |e: dysharp_sim::scenario::GoldenError| ScenarioError::new_err(e.to_string());
    let e = GoldenResult::from_json("expected", expected).map_err(se)?;
    let o = GoldenResult::from_json("observed", observed).map_err(se)?;
    e.check_pair("expected", &o, "observed").map_err(se)?;
    let mut opt = DiffOptions {
        max_diffs: max_diffs.max(1),
        x_as_zero,
        ..DiffOptions::default()
    };
    for s in &ignore {
        match s.as_str() {
            "mem" => opt.ignore_mem = true,
            "errors" => opt.ignore_errors = true,
            "digest" => opt.ignore_digest = true,
            _ => {
                return Err(value_err(format!(
                    "ignore: `{s}` is not \"mem\", \"errors\" or \"digest\""
                )))
            }
        }
    }
    let r = sim_diff(&e, &o, opt);
    let d = PyDict::new(py);
    d.set_item("equal", r.equal)?;
    d.set_item("total", r.total)?;
    d.set_item("text", r.to_string())?;
    let json = serde_json::to_string(&r).expect("a report serializes");
    d.set_item("report", py.import("json")?.call_method1("loads", (json,))?)?;
    Ok(d)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyConfig>()?;
    m.add_class::<PyPacket>()?;
    m.add_class::<PyMemAccess>()?;
    m.add_class::<PyFabric>()?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(hcc, m)?)?;
    m.add_function(wrap_pyfunction!(with_hcc, m)?)?;
    m.add_function(wrap_pyfunction!(error_codes, m)?)?;
    m.add_function(wrap_pyfunction!(opcodes, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(diff_results, m)?)?;
    m.add("GoldenError", py.get_type::<GoldenError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    Ok(())
}
