#
# Atomic unit of the software-only baseline: read-modify-write at the memory side.
#

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone
from litex.soc.interconnect.csr import CSRStorage

# Operation windows of the atomic region (each ``n_words`` words long), in window order.
ATOMIC_OPS = ["load_store", "swap", "fetch_add", "test_and_set"]


class AtomicOperand(LiteXModule):
    """Operands of a core's atomic operations (tile-local CSRs).

    A read of an atomic window carries ``atomic_operand`` on the bus's write-data lines, which a
    read does not otherwise use; the tile inserts it, so the atomic unit gets the operand and the
    read returns the old value in one bus transaction.
    """
    def __init__(self):
        self._operand = CSRStorage(32, description="Operand of the next swap or fetch-and-add.")
        self.operand = self._operand.storage


class AtomicUnit(LiteXModule):
    """Atomic variables in uncached I/O space, shared by all cores.

    ``n_words`` 32-bit variables, seen through one window per operation (``ATOMIC_OPS``):
    ``load_store`` (plain read/write), and read-modify-writes that return the old value:
    ``swap`` (write the operand), ``fetch_add`` (add the operand), ``test_and_set`` (write 1).
    The unit serves one bus transaction at a time and the read and the write of a variable happen
    in the same cycle, so every operation is atomic across all cores. The operand comes with the
    read on ``dat_w`` (see :class:`AtomicOperand`).
    """
    def __init__(self, n_words=1024):
        self.n_words  = n_words
        self.bus      = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.size     = 4*n_words*len(ATOMIC_OPS)

        # # #

        mem = Memory(32, n_words)
        rd  = mem.get_port(async_read=True)
        wr  = mem.get_port(write_capable=True)
        self.specials += mem, rd, wr

        index  = Signal(max=n_words)
        window = Signal(max=len(ATOMIC_OPS))
        old    = Signal(32)
        new    = Signal(32)
        self.comb += [
            index.eq(self.bus.adr[:log2_int(n_words)]),
            window.eq(self.bus.adr[log2_int(n_words):]),
            rd.adr.eq(index),
            wr.adr.eq(index),
            old.eq(rd.dat_r),
            Case(window, {
                0: new.eq(self.bus.dat_w),
                1: new.eq(self.bus.dat_w),
                2: new.eq(old + self.bus.dat_w),
                3: new.eq(1),
                "default": new.eq(old),
            }),
            wr.dat_w.eq(new),
        ]
        # One-cycle access: read the old value, write the new one, acknowledge.
        self.sync += [
            self.bus.ack.eq(0),
            If(self.bus.cyc & self.bus.stb & ~self.bus.ack,
                self.bus.ack.eq(1),
                self.bus.dat_r.eq(old),
            )
        ]
        self.comb += wr.we.eq(self.bus.cyc & self.bus.stb & ~self.bus.ack &
            ((window == 0) & self.bus.we | (window != 0) & ~self.bus.we))
