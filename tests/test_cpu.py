"""The tiles' VexRiscv variants (gateware/cpu): the project's generated cores keep LiteX's ports
and have the cache geometry they are named for; a missing one is a clear error."""

import re

import pytest

from gateware.cpu import CORE_VARIANTS, SIM_CPU_VARIANT, CoreVariant, litex_variant, use_variant


def _ports(path):
    with open(path) as f:
        text = f.read()
    header = text[text.index("module VexRiscv (") : text.index(");", text.index("module VexRiscv ("))]
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
        return [
            (name, (int(bits) + 1, int(words) + 1))
            for bits, name, words in re.findall(r"reg \[(\d+):0\] (\w+) \[0:(\d+)\];", f.read())
        ]


def _cache_rams(memories):
    """(I$ data bytes per way, I$ ways, I$ sets, D$ data bytes, D$ ways): the I$ keeps 32-bit
    words in banks_<way> and its tags first, the D$ bytes in ways_<way>_data_symbol<k>."""
    ibanks = [shape for name, shape in memories if name.startswith("banks_")]
    dways = {name.split("_")[1] for name, _ in memories if "_data_symbol" in name}
    dbytes = sum(bits * words // 8 for name, (bits, words) in memories if "_data_symbol" in name)
    itags = [shape for name, shape in memories if name.endswith("_tags")][-len(ibanks) :]
    return ibanks[0][0] * ibanks[0][1] // 8, len(ibanks), itags[0][1], dbytes, len(dways)


@pytest.mark.parametrize(
    "name, geometry",
    [
        ("standard_i2way", (2048, 2, 64, 4096, 1)),
        ("standard_i8k2way", (4096, 2, 128, 4096, 1)),
    ],
)
def test_generated_core_has_its_cache_geometry(name, geometry):
    """The instruction cache the variant is named for (ways of 32-byte lines), the data cache
    LiteX's (4 KiB, one way); LiteX's standard is one 4 KiB way of 128 lines in each."""
    assert _cache_rams(_memories(CORE_VARIANTS[name].verilog)) == geometry
    assert _cache_rams(_memories(_litex_standard())) == (4096, 1, 128, 4096, 1)


def test_variant_names():
    assert SIM_CPU_VARIANT in CORE_VARIANTS
    assert litex_variant("standard_i8k2way") == "standard" and litex_variant("full") == "full"


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
