#
# FIFOs in registers, with the interface and behaviour of Migen's SyncFIFO.
#
"""Small FIFOs in registers (:class:`RegisterFIFO`, depth >= 2) and the two-entry LiteX stream
form (:class:`RegisterStreamFIFO`); :func:`stream_fifo` picks it for depth 2 and LiteX's
``PipeValid`` (one register) for depth 1.

Why not Migen's ``SyncFIFO`` at depth 2 or 3: on an ECP5 a ``SyncFIFO`` becomes distributed RAM,
16 words deep whatever the depth asked, at about six LUT4 sites per four bits, and its output is
an asynchronous RAM read. Here the head entry is a register (``dout``) and the other entries
(``spare``) load whatever is written (they only matter while the head is taken), so the only
logic per bit is the head's choice between ``din`` and the spares: about one LUT4 per bit at
depth 2 and no RAM. Behaviour is that of ``SyncFIFO(width, depth)`` cycle for cycle: first-word
fall-through, ``writable`` when not full (even in a cycle that reads), ``readable`` when not
empty.
"""

from migen import *

from litex.soc.interconnect import stream


class RegisterFIFO(Module):
    """Migen FIFO interface (``din``/``we``/``writable``, ``dout``/``re``/``readable``,
    ``level``, ``depth``) of ``depth`` >= 2 entries, in registers.

    The head entry is the register ``dout``; the other ``depth - 1`` entries (``spare``) are
    written in turn and move to the head as it leaves. A push goes to the head when the FIFO is
    empty or its only entry leaves, otherwise to the next spare; the spare at the write pointer
    loads whatever is written (when the push goes to the head every spare is empty), so a spare
    costs no logic but its clock enable. At depth 2 (one spare, no pointers) this is the
    two-entry FIFO the router and the stream buffers use; the router's inputs from a neighbour
    take depth 3 (see :class:`gateware.noc.router.MeshRouter`).
    """

    def __init__(self, width, depth=2):
        assert depth >= 2
        self.depth = depth
        self.din, self.we, self.writable = Signal(width), Signal(), Signal()
        self.dout, self.re, self.readable = Signal(width), Signal(), Signal()
        self.level = Signal(max=depth + 1)

        # # #

        n = depth - 1
        spares = [Signal(width, name=f"spare{k}" if n > 1 else "spare") for k in range(n)]
        push, pop = Signal(), Signal()
        self.comb += [
            self.writable.eq(self.level != depth),
            self.readable.eq(self.level != 0),
            push.eq(self.we & self.writable),
            pop.eq(self.re & self.readable),
        ]
        to_head = (self.level == 0) | ((self.level == 1) & pop)
        if n == 1:
            wp, rp = 0, 0
        else:
            wp = Signal(max=n, name="spare_wp")
            rp = Signal(max=n, name="spare_rp")
            self.sync += [
                If(push & ~to_head, wp.eq(Mux(wp == n - 1, 0, wp + 1))),
                If(pop & (self.level >= 2), rp.eq(Mux(rp == n - 1, 0, rp + 1))),
            ]
        self.sync += [
            If(push, Array(spares)[wp].eq(self.din)),
            If(
                pop & (self.level >= 2),
                self.dout.eq(Array(spares)[rp]),
            ).Elif(
                push & to_head,
                self.dout.eq(self.din),
            ),
            self.level.eq(self.level + push - pop),
        ]


class RegisterStreamFIFO(stream._FIFOWrapper):
    """``stream.SyncFIFO(layout, 2)`` built on :class:`RegisterFIFO` (LiteX's own stream
    wrapper of a Migen FIFO, so the stream fields travel exactly as in its FIFOs)."""

    def __init__(self, layout, depth=2):
        stream._FIFOWrapper.__init__(self, RegisterFIFO, layout, depth)
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
