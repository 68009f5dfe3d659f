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
    The unit serves one bus transaction at a time and a variable's new value is written in the
    cycle its old value is returned, before the next transaction can read it, so every operation
    is atomic across all cores. The operand comes with the read on ``dat_w`` (see
    :class:`AtomicOperand`).

    The variables live in a memory with a synchronous read port (block RAM on FPGAs): the read
    starts in the request's cycle and the answer, the modified value and its write-back come one
    cycle later, exactly when the registered acknowledgement of an asynchronous-read design would.
    An asynchronous read of 1024 words was distributed RAM (about 5,000 LUT4 sites on an ECP5)
    whose read multiplexer, behind the SoC bus arbiter and in front of the fetch-and-add
    carry chain and the write-back, was the critical path of the board builds.
    """

    def __init__(self, n_words=2048):
        self.n_words = n_words
        self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.size = 4 * n_words * len(ATOMIC_OPS)

        # # #

        mem = Memory(32, n_words)
        rd = mem.get_port()  # Synchronous read: data one cycle after adr.
        wr = mem.get_port(write_capable=True)
        self.specials += mem, rd, wr

        index = Signal(max=n_words)
        window = Signal(max=len(ATOMIC_OPS))
        old = Signal(32)
        new = Signal(32)
        self.comb += [
            index.eq(self.bus.adr[: log2_int(n_words)]),
            window.eq(self.bus.adr[log2_int(n_words) :]),
            rd.adr.eq(index),
            wr.adr.eq(index),
            old.eq(rd.dat_r),
            Case(
                window,
                {
                    0: new.eq(self.bus.dat_w),
                    1: new.eq(self.bus.dat_w),
                    2: new.eq(old + self.bus.dat_w),
                    3: new.eq(1),
                    "default": new.eq(old),
                },
            ),
            wr.dat_w.eq(new),
        ]
        # Cycle 0: the request's address starts the read. Cycle 1 (the master holds its request
        # until acknowledged): acknowledge with the old value and write the new one, which a
        # following transaction (cycle 2 at the earliest) reads.
        self.sync += self.bus.ack.eq(self.bus.cyc & self.bus.stb & ~self.bus.ack)
        self.comb += [
            self.bus.dat_r.eq(old),
            wr.we.eq(
                self.bus.cyc
                & self.bus.stb
                & self.bus.ack
                & ((window == 0) & self.bus.we | (window != 0) & ~self.bus.we)
            ),
        ]
