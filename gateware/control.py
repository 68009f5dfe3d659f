#
# Global control blocks of the multi-tile SoC: the common cycle counter, the release of the
# secondary cores and the simulation exit register.
#

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStorage, CSRStatus, CSRField


class CycleCounter(LiteXModule):
    """Global 64-bit cycle counter.

    One free-running counter for the whole SoC. Its value is wired into every tile's local CSR
    window (``tile_cycles``) so that cores read timestamps without crossing the shared bus, and
    all tiles read the very same counter.
    """

    def __init__(self, width=64):
        self.value = Signal(width, reset_less=True)

        # # #

        self.sync += self.value.eq(self.value + 1)


class CoreControl(LiteXModule):
    """Holds the secondary cores in reset until core 0 releases them.

    Core 0 starts at power-up; it prepares shared memory (``.data``/``.bss``) and then writes
    the ``release`` register. Clearing a bit puts that core back into reset.
    """

    #: Largest core count: the release mask is at most two CSR words (an 8x8 mesh).
    MAX_CORES = 64

    def __init__(self, n_cores):
        if not 1 <= n_cores <= self.MAX_CORES:
            raise ValueError(f"{n_cores} cores: the release mask holds 1 to {self.MAX_CORES}")
        self.n_cores = n_cores
        self.resets = Signal(n_cores)  # Reset request per core (bit 0 is never asserted).

        self._release = CSRStorage(
            n_cores,
            reset=1,
            description="""
            Core release mask: bit ``i`` lets core ``i`` run, a cleared bit holds it in reset.
            Bit 0 (the boot core) is ignored: core 0 always runs.""",
        )
        self._cores = CSRStatus(8, reset=n_cores, description="Number of cores (tiles) in the SoC.")

        # # #

        self.comb += [self.resets[i].eq(~self._release.storage[i]) for i in range(1, n_cores)]


class SimControl(LiteXModule):
    """Ends a simulation from software with an exit code.

    The write is forwarded to the simulation harness through the ``sim_ctrl`` pads; the harness
    stops the simulation and exits with the code. Not present on hardware builds.
    """

    def __init__(self, pads):
        self._exit = CSRStorage(
            fields=[
                CSRField("code", size=8, description="Exit code of the simulation (0: success)."),
            ],
            description="Writing this register ends the simulation.",
        )

        # # #

        self.sync += [
            pads.valid.eq(self._exit.re),
            If(self._exit.re, pads.code.eq(self._exit.fields.code)),
        ]
