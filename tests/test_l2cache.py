"""L2Cache (gateware/l2cache.py) in front of a 128-bit LiteX SRAM, in Migen's simulator: random
reads and writes of every byte mask over four times the cache's size (hits, clean and dirty
misses), checked against a reference memory and, after a final sweep that evicts every line,
against the SRAM itself; the cycle costs of hits; and the timing property it exists for: the
write enables of the data and tag memories do not depend on the tag just read."""

import random

import pytest
from migen import Module, Memory, run_simulation
from litex.soc.interconnect import wishbone

from gateware.l2cache import L2Cache
from gateware.netlist import combinational_cone

CACHE_WORDS = 64  # 32-bit words: 16 lines of 128 bits.
WORDS = 4 * CACHE_WORDS


class Bench(Module):
    def __init__(self):
        self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        line = wishbone.Interface(data_width=128, address_width=32, addressing="word")
        self.submodules.l2 = L2Cache(CACHE_WORDS, self.bus, line)
        self.submodules.ram = wishbone.SRAM(WORDS * 4, bus=line)


def access(bus, adr, we=0, dat=0, sel=0xF):
    """One classic cycle, held until acknowledged; returns (data, cycles)."""
    yield bus.adr.eq(adr)
    yield bus.we.eq(we)
    yield bus.dat_w.eq(dat)
    yield bus.sel.eq(sel)
    yield bus.cyc.eq(1)
    yield bus.stb.eq(1)
    yield
    cycles = 1
    while not (yield bus.ack):
        yield
        cycles += 1
    data = yield bus.dat_r
    yield bus.cyc.eq(0)
    yield bus.stb.eq(0)
    yield
    return data, cycles


def merge(old, dat, sel):
    mask = sum(0xFF << (8 * i) for i in range(4) if sel >> i & 1)
    return (old & ~mask) | (dat & mask)


@pytest.mark.parametrize("seed", [1, 2])
def test_random_accesses_match_a_reference_memory(seed):
    dut = Bench()
    rng = random.Random(seed)
    reference = [0] * WORDS
    errors, content = [], []

    def master():
        for _ in range(600):
            adr = rng.randrange(WORDS)
            if rng.random() < 0.5:
                dat, sel = rng.getrandbits(32), rng.randrange(1, 16)
                yield from access(dut.bus, adr, we=1, dat=dat, sel=sel)
                reference[adr] = merge(reference[adr], dat, sel)
            else:
                data, _ = yield from access(dut.bus, adr)
                if data != reference[adr]:
                    errors.append((adr, data, reference[adr]))
        # Two cache sizes read in turn: every line ends up holding the second one, clean, so
        # every dirty line has been written back (the cache is direct-mapped).
        for adr in range(2 * CACHE_WORDS):
            data, _ = yield from access(dut.bus, adr)
            if data != reference[adr]:
                errors.append((adr, data, reference[adr]))
        for line in range(WORDS // 4):
            word = yield dut.ram.mem[line]
            content.extend((word >> (32 * i)) & 0xFFFFFFFF for i in range(4))

    run_simulation(dut, master())
    assert errors == []
    assert content == reference


def test_cycle_costs_of_hits_and_misses():
    dut = Bench()
    costs = {}

    def master():
        # The cache starts with tag 0 in every line: the next cache size misses.
        _, costs["miss"] = yield from access(dut.bus, CACHE_WORDS + 5)  # Refills the line.
        _, costs["read"] = yield from access(dut.bus, CACHE_WORDS + 6)
        _, costs["write"] = yield from access(dut.bus, CACHE_WORDS + 7, we=1, dat=1)

    run_simulation(dut, master())
    # IDLE, then TEST_HIT acknowledges a read; a write is acknowledged from WRITE_HIT. A clean
    # miss: IDLE, TEST_HIT, WRITE_TAG, REFILL (the SRAM answers in 2 cycles), TEST_HIT.
    assert costs == {"miss": 6, "read": 2, "write": 3}


def ports_of(cache):
    """The fragment of ``cache``, the ports of its data memories (one, or one per lane) and
    the port of its tag memory."""
    fragment = cache.get_fragment()
    memories = [s for s in fragment.specials if isinstance(s, Memory)]
    tag_mem = next(m for m in memories if m.name_override == "tag_mem")
    return fragment, [m.ports[0] for m in memories if m is not tag_mem], tag_mem.ports[0]


@pytest.mark.parametrize("cache", [L2Cache, wishbone.Cache], ids=["L2Cache", "litex"])
def test_write_enables_do_not_depend_on_the_tag_read(cache):
    bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
    line = wishbone.Interface(data_width=128, address_width=32, addressing="word")
    fragment, data_ports, tag_port = ports_of(cache(CACHE_WORDS, bus, line))
    assert data_ports
    # LiteX's cache writes a hit's data, and a miss's new tag, in the cycle of its tag
    # comparison; this one does neither.
    for port in data_ports + [tag_port]:
        cone = combinational_cone(fragment, [port.we])
        assert (tag_port.dat_r in cone) == (cache is wishbone.Cache)
