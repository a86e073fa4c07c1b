"""The dysharp golden model (Rust crate dysharp-sim) for Python and cocotb testbenches.

Build a :class:`Config`, build and parse packets (:class:`Packet`, :func:`decode`), run frames
through the golden switch and hubs (:class:`Fabric`: whole system with ``inject``, or step by
step with ``switch_ingress`` and ``hub_handle``), read the expected egress packets and memory
accesses (:class:`MemAccess`), and compare what a design did with :func:`diff`. docs/cocotb.md
in the repository describes the API.
"""

from __future__ import annotations

from ._native import (  # noqa: F401
    Config,
    ConfigError,
    DecodeError,
    Fabric,
    GoldenError,
    MemAccess,
    Packet,
    ScenarioError,
    decode,
    diff,
    diff_results,
    encode,
    error_codes,
    hcc,
    opcodes,
    run_scenario,
    with_hcc,
)

#: Error code names by number (spec §6), e.g. ``ERROR_CODES[1] == "ERR_HCC"``.
ERROR_CODES = {code: name for name, code in error_codes()}
#: Opcode names by number, e.g. ``OPCODES[5] == "DYN_ST"``.
OPCODES = {code: name for name, code in opcodes()}

__all__ = [
    "Config",
    "ConfigError",
    "DecodeError",
    "ERROR_CODES",
    "Fabric",
    "GoldenError",
    "MemAccess",
    "OPCODES",
    "Packet",
    "ScenarioError",
    "config_from_models_toml",
    "decode",
    "diff",
    "diff_results",
    "encode",
    "hcc",
    "model_params",
    "run_scenario",
    "with_hcc",
]


def model_params(models_toml, name):
    """The ``params`` table of model ``name`` in a model registry (rtl/models.toml)."""
    try:
        import tomllib
    except ImportError as e:  # Python < 3.11
        raise GoldenError("reading models.toml needs Python 3.11 (tomllib)") from e
    with open(models_toml, "rb") as f:
        reg = tomllib.load(f)
    for m in reg.get("model", []):
        if m.get("name") == name:
            return dict(m.get("params", {}))
    names = ", ".join(m.get("name", "?") for m in reg.get("model", []))
    raise ConfigError(f"{models_toml}: no model `{name}` (models: {names})")


def config_from_models_toml(models_toml, name, groups=None, **hub):
    """The golden :class:`Config` of RTL model ``name`` of rtl/models.toml (its parameter
    overrides on the RTL's defaults); ``groups`` and the hub keywords (``log2_slots``, ...)
    are what the testbench drives on the ``cfg_*`` inputs."""
    return Config.from_rtl_params(model_params(models_toml, name), groups, **hub)
