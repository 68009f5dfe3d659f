#
# A two-entry FIFO in registers, with the interface and behaviour of Migen's SyncFIFO.
#
"""Two-entry FIFO in registers (:class:`TwoEntryFIFO`) and its LiteX stream form
(:class:`RegisterStreamFIFO`); :func:`stream_fifo` picks it for depth 2 and LiteX's
``PipeValid`` (one register) for depth 1.

Why not Migen's ``SyncFIFO`` at depth 2: on an ECP5 a ``SyncFIFO`` becomes distributed RAM,
16 words deep whatever the depth asked, at about six LUT4 sites per four bits, and its output is
an asynchronous RAM read. Here the head entry is a register (``dout``) and the second entry
(``spare``) loads whatever is written (it only matters while the head is taken), so the only
logic per bit is the head's choice between ``din`` and ``spare``: about one LUT4 per bit and no
RAM. Behaviour is that of ``SyncFIFO(width, 2)`` cycle for cycle: first-word fall-through,
``writable`` when not full (even in a cycle that reads), ``readable`` when not empty.
"""

from migen import *

from litex.soc.interconnect import stream


class TwoEntryFIFO(Module):
    """Migen FIFO interface (``din``/``we``/``writable``, ``dout``/``re``/``readable``,
    ``level``, ``depth``) of depth 2, in registers."""
    def __init__(self, width, depth=2):
        assert depth == 2
        self.depth = depth
        self.din, self.we, self.writable = Signal(width), Signal(), Signal()
        self.dout, self.re, self.readable = Signal(width), Signal(), Signal()
        self.level = Signal(2)

        # # #

        spare = Signal(width, name="spare")
        push, pop = Signal(), Signal()
        self.comb += [
            self.writable.eq(self.level != 2),
            self.readable.eq(self.level != 0),
            push.eq(self.we & self.writable),
            pop.eq(self.re & self.readable),
        ]
        self.sync += [
            If(push, spare.eq(self.din)),
            If(pop & (self.level == 2),
                self.dout.eq(spare),
            ).Elif(push & ((self.level == 0) | pop),
                self.dout.eq(self.din),
            ),
            self.level.eq(self.level + push - pop),
        ]


class RegisterStreamFIFO(stream._FIFOWrapper):
    """``stream.SyncFIFO(layout, 2)`` built on :class:`TwoEntryFIFO` (LiteX's own stream
    wrapper of a Migen FIFO, so the stream fields travel exactly as in its FIFOs)."""
    def __init__(self, layout, depth=2):
        stream._FIFOWrapper.__init__(self, TwoEntryFIFO, layout, depth)
        self.depth = depth
        self.level = self.fifo.level


def stream_fifo(layout, depth):
    """A stream FIFO of ``depth`` entries: one register at depth 1 (LiteX's ``PipeValid``: it
    takes a new entry in the cycle its entry leaves, where a ``SyncFIFO`` of depth 1 would not),
    two at depth 2 (:class:`RegisterStreamFIFO`), LiteX's ``SyncFIFO`` otherwise (distributed
    RAM on an FPGA; depth 0 is a plain connection)."""
    if depth == 1:
        return stream.PipeValid(layout)
    return RegisterStreamFIFO(layout) if depth == 2 else stream.SyncFIFO(layout, depth)
