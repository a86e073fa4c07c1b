"""Tests of the dysharp_golden Python API (run by `make cocotb`; plain asserts, or pytest)."""

import sys
from pathlib import Path

import dysharp_golden as dg

ROOT = Path(__file__).resolve().parents[2]
CFG = dg.Config(4, 8, tlb_entries=16, tlb_ways=4, log2_bsize=9)


def raises(exc, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except exc as e:
        return e
    raise AssertionError(f"{fn.__name__}{a} did not raise {exc.__name__}")


def test_config_validation():
    e = raises(dg.ConfigError, dg.Config, 33, 8)
    assert "num_ports 33" in str(e)
    raises(dg.ConfigError, dg.Config, 4, 8, tlb_entries=12, tlb_ways=5)
    raises(dg.ConfigError, dg.Config, 4, 8, mbase=0x4000_0000_0008)
    assert isinstance(e, ValueError)
    c = dg.Config.from_rtl_params({"NumPorts": 4, "ExpertsPerPort": 8, "TlbEntries": 16, "TlbWays": 4})
    assert (c.num_ports, c.experts, c.tlb_ways, len(c.groups)) == (4, 32, 4, 16)
    assert dg.Config.from_json(c.to_json()) == c
    p = dg.model_params(ROOT / "rtl" / "models.toml", "top_p4")
    assert dg.config_from_models_toml(ROOT / "rtl" / "models.toml", "top_p4").tlb_entries == p["TlbEntries"]
    raises(dg.ConfigError, dg.model_params, ROOT / "rtl" / "models.toml", "nope")


def test_packet_codec():
    p = dg.Packet("DYN_ST", maddr=CFG.mbase + 512, tag=5, targets=[9, 17], dtype="f32",
                  values=[1.0, 2.5, -3.0, 0.1])
    assert p.len == 1 and p.be == (1 << 128) - 1 and p.wire_flits == 4
    f = p.encode()
    q = dg.decode(f, "sm", CFG)
    assert q == p and dg.decode(p.to_bytes()) == p
    assert q.values()[:3] == [1.0, 2.5, -3.0]
    assert q.to_dict()["opcode"] == "DYN_ST"
    raises(ValueError, dg.Packet, "DYN_ST", tag=4096)
    raises(ValueError, dg.Packet, "READ", payload=b"x")
    raises(ValueError, dg.Packet, "NOPE")
    raises(TypeError, dg.decode, "abc")
    raises(ValueError, dg.decode, [1 << 128])
    bad = list(f)
    bad[0] ^= 1 << 7
    e = raises(dg.DecodeError, dg.decode, bad, "sm", CFG)
    assert e.code == "ERR_HCC" and e.field == "hcc"
    e = raises(dg.DecodeError, dg.decode, f[:-1], "sm", CFG)
    assert e.code == "ERR_FRAME"
    e = raises(dg.DecodeError, dg.decode, dg.Packet("DYN_ST", targets=[40]), "sm", CFG)
    assert e.code == "ERR_EXPERT"


def test_diff():
    a = dg.Packet("WRITE", maddr=0x1000, values=[1.0] * 8)
    b = a.copy()
    b.tag = 3
    b.payload = bytes([0x80, 0x3F, 0, 0]) + bytes(12)
    d = dg.diff(a, b)
    assert any(s.startswith("tag: expected 0x0, observed 0x3") for s in d), d
    assert any(s.startswith("payload lane 1") for s in d), d
    assert dg.diff(a, a.encode()) == []
    bad = a.encode()
    bad[0] ^= 1
    assert any("does not decode" in s for s in dg.diff(a, bad))


def test_fabric_whole_system():
    f = dg.Fabric(CFG)
    st = dg.Packet("DYN_ST", maddr=CFG.mbase, targets=[9, 17, 25], dtype="bf16", values=[1.5] * 8)
    outs = f.inject(0, st)
    assert sorted(q for q, _ in outs) == [1, 2, 3]
    assert all(p.src_port == 0 and len(p.targets) == 1 for _, p in outs)
    w = f.mem_writes(1)
    assert [a.kind for a in w] == ["write", "write"]  # AL entry, data line
    ld = dg.Packet("DYN_LD_REDUCE", maddr=CFG.mbase, tag=7, targets=[9, 17, 25], dtype="bf16")
    outs = f.inject(0, ld)
    rsp = [p for q, p in outs if p.opcode == "RSP_REDUCE"]
    assert len(rsp) == 1 and rsp[0].values() == [4.5] * 8 and rsp[0].tag == 7
    assert f.delivered(0, take=True)[0] == rsp[0]
    assert f.pending() == 0
    assert f.inject(2, [1]) == [] and f.errors(2) == {"ERR_HCC": 1}
    outs = f.inject(2, dg.Packet("READ", len=0, route=1))
    assert outs[0][1].opcode == "RSP_ERROR" and f.errors(2)["ERR_LENGTH"] == 1
    raises(IndexError, f.inject, 4, st)
    raises(ValueError, f.inject, 0, st, origin="egress")
    assert len(f.digest()) == 64


def test_fabric_step_mode():
    f = dg.Fabric(CFG)
    outs = f.switch_ingress(0, dg.Packet("WRITE", route=2, maddr=0x100, values=[1.0] * 8))
    assert [(q, p.opcode) for q, p in outs] == [(2, "WRITE")]
    rsps, acc = f.hub_handle(2, outs[0][1])
    assert rsps == [] and acc[0].kind == "write" and acc[0].addr == 0x100
    obs = dg.MemAccess("write", 0x100, acc[0].data ^ (1 << 127), acc[0].strobe)
    assert acc[0].diff(obs) and not acc[0].matches(obs)
    outs = f.switch_ingress(1, dg.Packet("READ", route=2, maddr=0x100))
    rsps, acc = f.hub_handle(2, outs[0][1])
    assert rsps[0].opcode == "RSP_READ" and acc[0].kind == "read"
    back = f.switch_ingress(2, rsps[0], "hub")
    assert back[0][0] == 1 and back[0][1].payload == f.read_memory(2, 0x100, 16)
    raises(ValueError, f.hub_handle, 2, rsps[0])


def test_scenario_run_and_diff():
    text = (ROOT / "examples" / "golden" / "scenario.json").read_text()
    exp = dg.run_scenario(text)
    r = dg.diff_results(exp, exp.replace('"kind": "expected"', '"kind": "observed"'))
    assert r["equal"], r["text"]
    raises(dg.ScenarioError, dg.run_scenario, "{}")


if __name__ == "__main__":
    passed = failed = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                passed += 1
            except Exception as e:  # report every failing test
                failed += 1
                print(f"FAIL {name}: {type(e).__name__}: {e}")
    print(f"dysharp_golden: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
