"""Unit tests of the basic network interface (Migen simulator)."""

import random

from migen import *
from migen.sim import run_simulation

from litex.soc.interconnect import wishbone, csr_bus

from gateware.ni.ni import NetworkInterface
from gateware.noc.common import parse_head_flit, head_flit_value, VC_NORMAL, VC_PRIORITY


class CSRAccess(Module):
    """Puts ``module`` behind a real LiteX CSR bank and Wishbone bridge, as in the SoC, and gives
    generator helpers to access its registers by name."""

    def __init__(self, module, loopback=False):
        self.submodules.dut = module
        if loopback:
            self.comb += module.tx.connect(module.rx)
        self.submodules.bridge = wishbone.Wishbone2CSR(
            bus_csr=csr_bus.Interface(data_width=32, address_width=14)
        )
        self.submodules.banks = csr_bus.CSRBankArray(
            self,
            address_map=lambda name, memory: 0 if name == "dut" and memory is None else None,
            data_width=32,
            address_width=14,
        )
        self.submodules.icon = csr_bus.InterconnectShared([self.bridge.csr], self.banks.get_buses())
        self.addr = {}
        offset = 0
        for c in self.banks.banks[0][1]:
            self.addr[c.name] = offset
            offset += (c.size + 31) // 32

    def write(self, name, value):
        yield from self.bridge.wishbone.write(self.addr[name], value)

    def read(self, name):
        # A core reads with every byte lane selected (the bridge ignores reads without any).
        yield self.bridge.wishbone.sel.eq(0xF)
        return (yield from self.bridge.wishbone.read(self.addr[name]))


def header(dest, length, vc=VC_NORMAL, type=0):
    return dest | (vc << 8) | (length << 16) | (type << 24)


def send(bus, dest, payload, vc=VC_NORMAL, type=0):
    yield from bus.write("tx_header", header(dest, len(payload), vc, type))
    for w in payload:
        yield from bus.write("tx_data", w)


def field(bus, reg, name):
    value = yield from bus.read(reg)
    csr = getattr(bus.ni, "_" + reg)
    for f in csr.fields.fields:
        if f.name == name:
            return (value >> f.offset) & ((1 << f.size) - 1)
    raise KeyError(name)


def recv(bus, vc=VC_NORMAL):
    reg = "rx_data" if vc == VC_NORMAL else "rx_prio_data"
    h = parse_head_flit((yield from bus.read(reg)))
    payload = []
    for _ in range(h.length):
        payload.append((yield from bus.read(reg)))
    return h, payload


def harness(ni, loopback=False):
    bus = CSRAccess(ni, loopback)
    bus.ni = ni
    return bus


def run(bus, *gens):
    run_simulation(bus, list(gens) if len(gens) > 1 else gens[0])


def test_loopback_message_roundtrip():
    bus = harness(NetworkInterface(1, 1, 0, 0), loopback=True)
    out = {}

    def gen():
        yield from send(bus, 0, [0x11111111, 0x22222222, 0x33333333], type=0x5A)
        for _ in range(10):
            yield
        out["messages"] = yield from field(bus, "rx_status", "messages")
        out["msg"] = yield from recv(bus)
        out["after"] = yield from field(bus, "rx_status", "messages")
        out["in"] = yield from bus.read("packets_in")
        out["out"] = yield from bus.read("packets_out")
        out["idle"] = yield from field(bus, "tx_status", "idle")

    run(bus, gen())
    h, payload = out["msg"]
    assert out["messages"] == 1 and out["after"] == 0
    assert (h.dst_x, h.dst_y, h.src_x, h.src_y, h.length, h.type) == (0, 0, 0, 0, 3, 0x5A)
    assert payload == [0x11111111, 0x22222222, 0x33333333]
    assert out["in"] == 1 and out["out"] == 1 and out["idle"] == 1


def test_message_enters_network_only_when_complete():
    bus = harness(NetworkInterface(1, 1, 0, 0), loopback=True)
    seen = []

    def gen():
        yield from bus.write("tx_header", header(0, 2))
        yield from bus.write("tx_data", 1)
        for _ in range(20):
            seen.append((yield bus.ni.tx.valid))
            yield
        yield from bus.write("tx_data", 2)
        for _ in range(10):
            yield
        seen.append((yield from field(bus, "rx_status", "messages")))

    run(bus, gen())
    assert not any(seen[:-1]), "an incomplete message must stay in the NI"
    assert seen[-1] == 1


def test_priority_class_has_its_own_fifo():
    bus = harness(NetworkInterface(1, 1, 0, 0), loopback=True)
    out = {}

    def gen():
        yield from send(bus, 0, [7], vc=VC_NORMAL, type=1)
        yield from send(bus, 0, [8, 9], vc=VC_PRIORITY, type=2)
        for _ in range(10):
            yield
        out["n"] = yield from field(bus, "rx_status", "messages")
        out["p"] = yield from field(bus, "rx_status", "prio_messages")
        out["irq"] = yield bus.ni.ev.rx.trigger
        out["prio"] = yield from recv(bus, VC_PRIORITY)
        out["norm"] = yield from recv(bus, VC_NORMAL)
        out["irq_after"] = yield bus.ni.ev.rx.trigger

    run(bus, gen())
    assert (out["n"], out["p"], out["irq"], out["irq_after"]) == (1, 1, 1, 0)
    assert out["prio"][0].type == 2 and out["prio"][1] == [8, 9]
    assert out["norm"][0].type == 1 and out["norm"][1] == [7]


def test_tx_errors_refuse_and_are_sticky():
    # 2x2 mesh, TX link never ready: nothing leaves, so the FIFO fills up.
    bus = harness(NetworkInterface(2, 2, 1, 0, tx_depth=8, rx_depth=8))
    errors = {}

    def err():
        return (yield from bus.read("tx_error"))

    def clear():
        yield from bus.write("tx_error_clear", 1)

    def gen():
        yield bus.ni.tx.ready.eq(0)
        yield from bus.write("tx_header", header(4, 1))  # outside the 2x2 mesh
        errors["bad_dest"] = yield from err()
        errors["free_after_bad"] = yield from field(bus, "tx_status", "free")
        yield from clear()
        yield from bus.write("tx_header", header(1, 8))  # max_payload is 7
        errors["too_long"] = yield from err()
        yield from clear()
        yield from bus.write("tx_data", 5)  # no open message
        errors["not_open"] = yield from err()
        yield from clear()
        yield from bus.write("tx_header", header(1, 2))
        yield from bus.write("tx_header", header(2, 1))  # first one still open
        errors["still_open"] = yield from err()
        yield from bus.write("tx_data", 1)
        yield from bus.write("tx_data", 2)
        yield from clear()
        yield from send(bus, 3, [1, 2, 3])  # 3 + 4 = 7 of 8 words used
        yield from bus.write("tx_header", header(3, 1))  # needs 2, 1 free
        errors["no_room"] = yield from err()
        errors["free"] = yield from field(bus, "tx_status", "free")
        errors["sticky"] = yield from err()
        yield from clear()
        errors["cleared"] = yield from err()

    run(bus, gen())
    assert errors["bad_dest"] == 0b00001 and errors["free_after_bad"] == 8
    assert errors["too_long"] == 0b00010
    assert errors["not_open"] == 0b01000
    assert errors["still_open"] == 0b10000
    assert errors["no_room"] == 0b00100 and errors["free"] == 1
    assert errors["sticky"] == 0b00100 and errors["cleared"] == 0


def test_rx_backpressure_drops_nothing():
    """Flits offered faster than software reads: ready falls, every message arrives in order."""
    bus = harness(NetworkInterface(2, 1, 0, 0, tx_depth=8, rx_depth=8))
    ni = bus.ni
    rng = random.Random(1)
    msgs = [[rng.getrandbits(32) for _ in range(rng.randrange(0, 4))] for _ in range(40)]
    flits = []
    for i, m in enumerate(msgs):
        flits.append((head_flit_value(0, 0, 1, 0, len(m), i % 256), 1, len(m) == 0))
        flits += [(w, 0, j == len(m) - 1) for j, w in enumerate(m)]
    got, stalls = [], []

    def producer():
        for data, first, last in flits:
            yield ni.rx.valid.eq(1)
            yield ni.rx.vc.eq(VC_NORMAL)
            yield ni.rx.data.eq(data)
            yield ni.rx.first.eq(first)
            yield ni.rx.last.eq(last)
            yield
            while not ((yield ni.rx.ready) & 1):
                stalls.append(1)
                yield
        yield ni.rx.valid.eq(0)

    def consumer():
        while len(got) < len(msgs):
            for _ in range(rng.randrange(0, 30)):
                yield
            if (yield from field(bus, "rx_status", "messages")):
                got.append((yield from recv(bus)))
        got.append((yield from field(bus, "rx_status", "underflow")))
        yield from bus.read("rx_data")  # empty: underflow
        got.append((yield from field(bus, "rx_status", "underflow")))

    run(bus, producer(), consumer())
    assert stalls, "the test must exercise back-pressure"
    assert got[-2:] == [0, 1]
    for i, (m, (h, payload)) in enumerate(zip(msgs, got)):
        assert (h.type, h.src_x, h.length) == (i % 256, 1, len(m))
        assert payload == m


def test_priority_class_reserved_for_hardware():
    """With prio_stream the priority class is the hardware's: software cannot send on it, and
    its messages never reach a software register."""
    bus = harness(NetworkInterface(2, 1, 0, 0, prio_stream=True))
    out = {}

    def gen():
        yield bus.ni.prio_rx.ready.eq(1)
        yield from bus.write("tx_header", header(1, 0, vc=VC_PRIORITY))
        out["err"] = yield from bus.read("tx_error")
        out["free"] = yield from field(bus, "tx_status", "free")

    run(bus, gen())
    assert "rx_prio_data" not in bus.addr
    assert out["err"] == 0b100000 and out["free"] == 16
