"""gateware.crossbar against what it replaces: LiteX's wishbone Crossbar and Migen's RoundRobin,
driven by the same random inputs (fixed seeds), every output compared on every cycle."""

import random

import pytest
from migen import *
from migen.genlib import roundrobin
from migen.sim import run_simulation

from litex.soc.interconnect import wishbone

from gateware.crossbar import Crossbar, RoundRobin


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_round_robin_grants_as_migen(n):
    ref, dut = roundrobin.RoundRobin(n, roundrobin.SP_WITHDRAW), RoundRobin(n)
    top = Module()
    top.submodules += ref, dut
    rng = random.Random(n)
    seen = set()

    def bench():
        for _ in range(600):
            # Mostly sparse requests (the grant moves), sometimes all or none.
            request = rng.choice([0, (1 << n) - 1, rng.getrandbits(n), 1 << rng.randrange(n)])
            yield ref.request.eq(request)
            yield dut.request.eq(request)
            yield
            g = yield ref.grant
            assert (yield dut.grant) == g
            seen.add(g)

    run_simulation(top, bench())
    assert seen == set(range(n))  # every grant was reached


def _bus():
    return wishbone.Interface(data_width=32, address_width=32, addressing="word")


def _pair(n_masters, n_slaves, with_select):
    """Two crossbars of the same shape (LiteX's and ours) with their own masters and slaves;
    ``with_select``: ours takes the slave's number as one expression."""
    sides = []
    for cls in (wishbone.Crossbar, Crossbar):
        masters = [_bus() for _ in range(n_masters)]
        buses = [_bus() for _ in range(n_slaves)]
        # Slave k takes addresses whose bits 4:7 are k; the last one everything else.
        matches = [lambda a, k=k: a[4:7] == k for k in range(n_slaves - 1)]
        matches.append(lambda a: a[4:7] >= n_slaves - 1)
        kwargs = {}
        if cls is Crossbar and with_select:
            last = n_slaves - 1
            kwargs["select"] = lambda a: Mux(a[4:7] >= last, last, a[4:7])
        sides.append((cls(masters=masters, slaves=list(zip(matches, buses)), **kwargs), masters, buses))
    return sides


@pytest.mark.parametrize(
    "n_masters,n_slaves,with_select",
    [(1, 3, False), (5, 4, False), (8, 9, False), (5, 4, True), (3, 8, True)],
)
def test_crossbar_matches_litex(n_masters, n_slaves, with_select):
    (ref, ref_m, ref_s), (dut, dut_m, dut_s) = _pair(n_masters, n_slaves, with_select)
    top = Module()
    top.submodules += ref, dut
    rng = random.Random(100 * n_masters + n_slaves)
    m_to_s = [(n, w) for n, w, d in wishbone._layout if d == wishbone.DIR_M_TO_S]
    s_to_m = [(n, w) for n, w, d in wishbone._layout if d == wishbone.DIR_S_TO_M]
    widths = {"adr_width": 32, "data_width": 32, "sel_width": 4}
    acks = [0]

    def drive(pairs, layout):
        for a, b in pairs:
            for name, width in layout:
                bits = widths.get(width, width)
                # Addresses spread over every slave; strobes and acks often, data at random.
                value = rng.randrange(16) << 4 if name == "adr" else rng.getrandbits(bits)
                if name in ("cyc", "stb", "ack"):
                    value = int(rng.random() < 0.6)
                yield getattr(a, name).eq(value)
                yield getattr(b, name).eq(value)

    def bench():
        for _ in range(800):
            yield from drive(zip(ref_m, dut_m), m_to_s)
            yield from drive(zip(ref_s, dut_s), s_to_m)
            yield  # settle the combinatorial outputs for these inputs, clock the grants
            for pairs, layout in ((zip(ref_m, dut_m), s_to_m), (zip(ref_s, dut_s), m_to_s)):
                for k, (a, b) in enumerate(pairs):
                    for name, _ in layout:
                        expected = yield getattr(a, name)
                        assert (yield getattr(b, name)) == expected, f"{name} of port {k}"
                        acks[0] += name == "ack" and expected

    run_simulation(top, bench())
    assert acks[0] > 100  # the comparison saw traffic acknowledged
