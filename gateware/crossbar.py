#
# A Wishbone crossbar whose size grows as masters + slaves per pair of them, for the main RAM of
# meshes up to 8x8 (64 tile uplinks onto 64 banks and the SoC bus).
#
"""Wishbone crossbar, cycle for cycle LiteX's, in linear terms per master and per slave.

LiteX's :class:`~litex.soc.interconnect.wishbone.Crossbar` builds an interface for every pair of
a master and a slave (a ``Decoder`` per master fills a row of them, an ``Arbiter`` per slave
takes a column) and arbitrates with Migen's ``RoundRobin``, whose case statement holds ``n - 1``
nested conditions for each of its ``n`` grants. With the 64 tile uplinks of an 8x8 mesh onto 64
main RAM banks that is 4,160 interfaces and 65 arbiters of 64 x 63 conditions: 180 MB of the 8x8
SoC's 256 MB of Verilog, and most of the time of Verilator on it.

:class:`Crossbar` has the same ports and the same behaviour, signal for signal and cycle for
cycle, built differently:

- a master's choice of slave is a one-hot vector (its ``match`` functions, as LiteX's decoder),
  or, given ``select``, the slave's number (all matches at once: Verilator would recompute a
  65-bit one-hot vector for each of its bits, and a number is compared in one instruction);
- a slave's requests are one bit per master (``cyc`` and that master's choice), the slave takes
  the granted master's signals through one multiplexer per signal, and
- :class:`RoundRobin` finds the next grant with two priority encoders over the request vector
  (the requests after the current grant, then all of them), ``2 n`` conditions instead of
  ``n (n - 1)``;
- a master's ``ack``/``err`` is its bit in the OR over slaves of the slave's ``ack``/``err``
  shifted to its grant, its ``dat_r`` the read data of the slave it addresses (as LiteX's, which are not gated by the
  grant): with ``select``, that slave's ``dat_r`` taken by its number rather than an OR over all
  slaves (the same value: one match holds for every address).

``tests/test_crossbar.py`` runs both on the same random inputs and compares every output on
every cycle.
"""

from functools import reduce
from operator import or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect.wishbone import _layout, DIR_M_TO_S


class RoundRobin(Module):
    """Migen's :class:`~migen.genlib.roundrobin.RoundRobin` (``SP_WITHDRAW``), linear in ``n``:
    while the granted requester keeps ``request`` high the grant stays; otherwise it passes to
    the first requester after it in circular order, and stays put when nobody requests."""

    def __init__(self, n):
        self.request = Signal(n)
        self.grant = Signal(max=max(2, n))

        # # #

        if n == 1:
            self.comb += self.grant.eq(0)
            return
        after = Signal(max=max(2, n))  # first requester after the grant, if any
        first = Signal(max=max(2, n))  # first requester of all, if any
        any_after = Signal()
        # Priority encoders: the lowest index wins, so the statements run from the highest.
        self.comb += [
            any_after.eq(0),
            *[
                If((self.grant < i) & self.request[i], after.eq(i), any_after.eq(1))
                for i in reversed(range(n))
            ],
            *[If(self.request[i], first.eq(i)) for i in reversed(range(n))],
        ]
        self.sync += If(
            ~(self.request >> self.grant)[0] & (self.request != 0),
            self.grant.eq(Mux(any_after, after, first)),
        )


class Crossbar(LiteXModule):
    """Every master of ``masters`` onto the slave its address selects, as LiteX's ``Crossbar``:
    ``slaves`` is a list of ``(match, bus)`` whose ``match(adr)`` are mutually exclusive.
    ``select(adr)``, if given, is the number of the slave whose match holds, computed at once
    (the main RAM's bank is one hash per master, not one per master and bank); then one match
    must hold for every address."""

    def __init__(self, masters, slaves, select=None):
        matches, buses = zip(*slaves)
        n_masters = len(masters)

        # # #

        # Each master's slave (as LiteX's Decoder, combinatorial): one-hot, or its number.
        if select:
            number = [Signal(max=max(2, len(slaves)), name=f"slave{i}") for i in range(n_masters)]
            self.comb += [n.eq(select(m.adr)) for m, n in zip(masters, number)]
            choice = [[n == j for j in range(len(slaves))] for n in number]
        else:
            choice = [Signal(len(slaves), name=f"choice{i}") for i in range(n_masters)]
            for m, c in zip(masters, choice):
                self.comb += c.eq(Cat(*[match(m.adr) for match in matches]))

        arbiters = []
        for j, bus in enumerate(buses):
            rr = RoundRobin(n_masters)
            self.submodules += rr
            arbiters.append(rr)
            self.comb += rr.request.eq(Cat(*[m.cyc & c[j] for m, c in zip(masters, choice)]))
            for name, _, direction in _layout:
                if direction != DIR_M_TO_S:
                    continue
                if name == "cyc":
                    # The granted master's cyc, as the decoder passes it on: for this slave only.
                    self.comb += bus.cyc.eq((rr.request >> rr.grant)[0])
                elif n_masters == 1:
                    self.comb += getattr(bus, name).eq(getattr(masters[0], name))
                else:
                    self.comb += getattr(bus, name).eq(Array(getattr(m, name) for m in masters)[rr.grant])

        # A slave's ack (err) goes to the master it grants: one vector over masters per signal.
        granted = {}
        for name in ("ack", "err"):
            granted[name] = Signal(n_masters, name=f"granted_{name}")
            self.comb += granted[name].eq(
                reduce(or_, [getattr(bus, name) << rr.grant for bus, rr in zip(buses, arbiters)])
            )
        for i, (m, c) in enumerate(zip(masters, choice)):
            self.comb += [m.ack.eq(granted["ack"][i]), m.err.eq(granted["err"][i])]
            if select:
                self.comb += m.dat_r.eq(Array(bus.dat_r for bus in buses)[number[i]])
            else:
                self.comb += m.dat_r.eq(
                    reduce(or_, [Replicate(c[j], len(m.dat_r)) & bus.dat_r for j, bus in enumerate(buses)])
                )
