"""The tiles' VexRiscv variants (gateware/cpu): the project's generated cores keep LiteX's ports
and have the cache geometry they are named for; a missing one is a clear error."""

import re

import pytest

from gateware.cpu import CORE_VARIANTS, SIM_CPU_VARIANT, CoreVariant, litex_variant, use_variant


def _ports(path):
    with open(path) as f:
        text = f.read()
    header = text[text.index("module VexRiscv ("):text.index(");", text.index("module VexRiscv ("))]
    return re.findall(r"^\s*(input|output)\s+(?:reg\s+|wire\s+)?(\[[^\]]+\]\s+)?(\w+)", header, re.M)


def _litex_standard():
    import os
    import pythondata_cpu_vexriscv
    return os.path.join(pythondata_cpu_vexriscv.data_location, "VexRiscv.v")


@pytest.mark.parametrize("name", sorted(CORE_VARIANTS))
def test_generated_core_has_litex_ports(name):
    """The SoC instantiates a generated core as LiteX's own (same module, same ports)."""
    variant = CORE_VARIANTS[name]
    ports = [(d, (w or "").strip(), n) for d, w, n in _ports(variant.verilog)]
    base = [(d, (w or "").strip(), n) for d, w, n in _ports(_litex_standard())]
    assert len(ports) == 28 and ports == base


def _memories(path):
    """{name: (word bits, words)} of every memory the Verilog declares (the caches' tags and
    data, the register file); names repeat between the caches, so a list of pairs."""
    with open(path) as f:
        return [(name, (int(bits) + 1, int(words) + 1)) for bits, name, words in
                re.findall(r"reg \[(\d+):0\] (\w+) \[0:(\d+)\];", f.read())]


def test_two_way_core_has_two_ways_of_the_same_capacity():
    """standard_2way: both caches two ways of 64 sets of 32-byte lines (2 KiB each), where
    LiteX's standard has one way of 128 lines: the same 4 KiB of data RAM in each cache."""
    ours, base = _memories(CORE_VARIANTS["standard_2way"].verilog), _memories(_litex_standard())

    def data_bytes(memories):
        # The I$ keeps 32-bit words in banks_<way>, the D$ bytes in ways_<way>_data_symbol<k>.
        return sum(bits * words // 8 for name, (bits, words) in memories
                   if name.startswith("banks_") or "_data_symbol" in name)

    assert data_bytes(ours) == data_bytes(base) == 2 * 4096
    tags = [(name, shape) for name, shape in ours if name.endswith("_tags")]
    assert sorted(tags) == sorted([("ways_0_tags", (23, 64)), ("ways_1_tags", (23, 64))] * 2)
    assert sorted(n for n, _ in base if n.endswith("_tags")) == ["ways_0_tags"] * 2
    assert ("banks_1", (32, 512)) in ours and ("ways_1_data_symbol0", (8, 512)) in ours


def test_variant_names():
    assert SIM_CPU_VARIANT in CORE_VARIANTS
    assert litex_variant("standard_2way") == "standard" and litex_variant("full") == "full"


def test_missing_generated_core_is_a_clear_error(tmp_path, monkeypatch):
    import gateware.cpu as cpu
    ghost = CoreVariant("ghost", "standard", (), "nothing generated")
    monkeypatch.setattr(cpu, "VERILOG_DIR", str(tmp_path))
    monkeypatch.setitem(cpu.CORE_VARIANTS, "ghost", ghost)

    class Cpu:
        def use_external_variant(self, path):
            raise AssertionError("must not be called")

    with pytest.raises(FileNotFoundError, match="gateware/cpu/generate.py ghost"):
        use_variant(Cpu(), "ghost")
