"""The tiles' VexRiscv cores: LiteX's shipped variants, and variants of the project's own
generated from the VexRiscv sources that pythondata-cpu-vexriscv ships (gateware/cpu/generate.py,
which needs Maven and a JDK; the generated Verilog is committed, so building an SoC needs neither).
"""

import dataclasses
import os

CPU_DIR = os.path.dirname(os.path.abspath(__file__))
VERILOG_DIR = os.path.join(CPU_DIR, "verilog")


@dataclasses.dataclass(frozen=True)
class CoreVariant:
    """A VexRiscv of the project's own: LiteX's variant ``base`` (its compiler flags, its CSRs,
    its ports) generated with other cache geometry by the generator's ``options``."""

    name: str
    base: str
    options: tuple
    description: str

    @property
    def verilog(self):
        return os.path.join(VERILOG_DIR, f"VexRiscv_{self.name}.v")


#: The project's variants, by name (``cpu_variant`` of the SoC, beside LiteX's own names).
CORE_VARIANTS = {
    v.name: v
    for v in [
        CoreVariant(
            "standard_i2way",
            "standard",
            ("--iCacheWays", "2"),
            "LiteX's standard (rv32im, 4 KiB I$ and D$, 32-byte lines) with a 2-way instruction cache "
            "of the same capacity",
        ),
        CoreVariant(
            "standard_i8k2way",
            "standard",
            ("--iCacheSize", "8192", "--iCacheWays", "2"),
            "LiteX's standard (rv32im, 4 KiB D$, 32-byte lines) with an 8 KiB 2-way instruction cache",
        ),
    ]
}


#: The cores of the simulated SoC (soc.simulation, boards/sim.py, the benchmarks): an instruction
#: cache that holds the synchronization paths of an image whole, so their cycles do not depend on
#: where the linker puts them (docs/architecture.md, Cores and caches). The boards keep LiteX's
#: standard, whose block RAM 8 tiles on the ULX3S 85F need.
SIM_CPU_VARIANT = "standard_i8k2way"


def litex_variant(cpu_variant):
    """The LiteX variant name a ``cpu_variant`` (LiteX's or the project's) is built as."""
    return CORE_VARIANTS[cpu_variant].base if cpu_variant in CORE_VARIANTS else cpu_variant


def use_variant(cpu, cpu_variant):
    """Make a LiteX VexRiscv ``cpu`` (created with :func:`litex_variant`) the project's variant
    ``cpu_variant``, if it is one: its generated Verilog instead of LiteX's."""
    variant = CORE_VARIANTS.get(cpu_variant)
    if variant is None:
        return
    if not os.path.exists(variant.verilog):
        raise FileNotFoundError(
            f"{variant.verilog} is missing: generate it with python gateware/cpu/generate.py {cpu_variant}"
        )
    cpu.use_external_variant(variant.verilog)
