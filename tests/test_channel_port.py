"""Unit tests of the channel port (gateware/ni/channel_port.py) with its network interfaces on a
real mesh (Migen simulator): messages, acks and credits, pushes into tile RAM, errors, and random
traffic over many channels checked against a reference model."""

import random

from migen import *
from migen.sim import run_simulation

from litex.soc.interconnect import wishbone

from gateware.ni import channel_port as C
from gateware.ni.channel_port import ChannelPort
from gateware.ni.ni import NetworkInterface
from gateware.noc.mesh import Mesh

RAM_ORIGIN = 0x2000_0000
RAM_SIZE = 4096


class ChannelMesh(Module):
    """X x Y tiles: an NI (priority class tied off), a channel port and a tile RAM each."""

    def __init__(self, mesh_x, mesh_y):
        self.submodules.noc = Mesh(mesh_x, mesh_y, buffer_depth=2)
        self.ports, self.rams, self.nis = [], [], []
        for i in range(mesh_x * mesh_y):
            ni = NetworkInterface(mesh_x, mesh_y, i % mesh_x, i // mesh_x, prio_stream=True, chan_stream=True)
            port = ChannelPort(ni, i, mesh_x, mesh_y, RAM_ORIGIN, RAM_SIZE)
            ram = wishbone.SRAM(RAM_SIZE)
            self.submodules += ni, port, ram
            self.comb += [
                ni.tx.connect(self.noc.local_inputs[i]),
                self.noc.local_outputs[i].connect(ni.rx),
                ni.prio_tx.valid.eq(0),
                ni.prio_rx.ready.eq(1),
                port.dma.connect(ram.bus),
            ]
            self.ports.append(port)
            self.rams.append(ram)
            self.nis.append(ni)


def reg(offset):
    return offset >> 2


def write(port, offset, value):
    yield from port.window.bus.write(reg(offset), value)


def read(port, offset):
    yield port.window.bus.sel.eq(0xF)
    return (yield from port.window.bus.read(reg(offset)))


def connect(dut, src, out_slot, dst, in_slot, kind=C.KIND_NOC):
    """Receiver first, as the library does."""
    yield from write(dut.ports[dst], C.CONNECT_IN + 4 * in_slot, C.CONN_VALID | src | (out_slot << 8))
    yield from write(
        dut.ports[src],
        C.CONNECT_OUT + 4 * out_slot,
        C.CONN_VALID | dst | (in_slot << 8) | (kind << C.CONN_KIND_SHIFT),
    )


def send(port, slot, words):
    for i, w in enumerate(words):
        yield from write(port, C.TX_DATA + 4 * i, w)
    yield from write(port, C.SEND + 4 * slot, len(words))


def recv(port, slot):
    info = yield from read(port, C.RECV + 4 * slot)
    n = info & C.INFO_LENGTH_MASK
    words = []
    for i in range(n):
        words.append((yield from read(port, C.RX_DATA + 4 * (slot * C.MAX_WORDS + i))))
    yield from write(port, C.ACK + 4 * slot, 0)
    return info, words


def test_message_ack_credit_and_info():
    dut = ChannelMesh(2, 2)
    out = {}

    def sender():
        yield from connect(dut, 0, 3, 3, 5)
        out["status0"] = yield from read(dut.ports[0], C.STATUS)
        yield from send(dut.ports[0], 3, [0x11, 0x22, 0x33])
        out["after_send"] = yield from read(dut.ports[0], C.STATUS)
        # The second send waits on the bus for the receiver's ack.
        yield from send(dut.ports[0], 3, [0x44])
        out["second_sent"] = True

    def receiver():
        for _ in range(60):
            yield
        out["first"] = yield from recv(dut.ports[3], 5)
        out["second"] = yield from recv(dut.ports[3], 5)
        out["error"] = yield from read(dut.ports[3], C.ERROR)

    run_simulation(dut, [sender(), receiver()])
    assert (out["status0"] >> 16) & (1 << 3)
    assert not (out["after_send"] >> 16) & (1 << 3)
    assert out["first"] == (C.info_word(3, 0, 5), [0x11, 0x22, 0x33])
    assert out["second"] == (C.info_word(1, 0, 5), [0x44])
    assert out["second_sent"] and out["error"] == 0


def test_push_writes_words_then_flag_into_tile_ram():
    dut = ChannelMesh(2, 1)
    base = 0x400  # byte offset of the pushed slots in tile RAM
    out = {}

    def gen():
        yield from write(dut.ports[1], C.PUSH_BASE, RAM_ORIGIN + base)
        yield from write(dut.ports[1], C.IRQ_MASK, 1 << 2)
        yield from connect(dut, 0, 0, 1, 2, kind=C.KIND_PUSH)
        out["irq_before"] = yield dut.ports[1].ev.rx.trigger
        yield from send(dut.ports[0], 0, [0xA0 + i for i in range(8)])
        info = yield from read(dut.ports[1], C.RECV + 4 * 2)  # waits until the flag is written
        out["info"] = info
        out["irq_full"] = yield dut.ports[1].ev.rx.trigger
        word0 = (base + 2 * C.SLOT_BYTES) // 4
        out["words"] = []
        for i in range(C.MAX_WORDS + 1):
            out["words"].append((yield dut.rams[1].mem[word0 + i]))
        yield from write(dut.ports[1], C.ACK + 4 * 2, 0)
        out["irq_after_ack"] = yield dut.ports[1].ev.rx.trigger
        for _ in range(20):
            yield
        out["credit"] = (yield from read(dut.ports[0], C.STATUS)) >> 16

    run_simulation(dut, gen())
    assert out["info"] == C.info_word(8, 0, 2)
    assert out["words"] == [0xA0 + i for i in range(8)] + [C.info_word(8, 0, 2)]
    assert (out["irq_before"], out["irq_full"], out["irq_after_ack"]) == (0, 1, 0)
    assert out["credit"] & 1


def test_errors_are_reported_and_nothing_hangs():
    dut = ChannelMesh(2, 1)
    out = {}

    def gen():
        p0, p1 = dut.ports
        yield from write(p0, C.SEND + 4 * 5, 1)  # unconnected: acknowledged, dropped
        out["unconnected"] = yield from read(p0, C.ERROR)
        yield from write(p0, C.ERROR, 0)
        yield from write(p0, C.CONNECT_OUT + 4 * 1, C.CONN_VALID | 7)  # tile 7: not in a 2x1 mesh
        out["bad_tile"] = yield from read(p0, C.ERROR)
        yield from write(p0, C.ERROR, 0)
        yield from write(p1, C.ACK + 4 * 3, 0)
        out["ack_unconnected"] = yield from read(p1, C.ERROR)
        # A message for a slot its receiver never connected: dropped there, with an error; the
        # next message, for a connected slot, still arrives.
        yield from write(p0, C.CONNECT_OUT + 4 * 0, C.CONN_VALID | 1 | (9 << 8))
        yield from send(p0, 0, [1, 2, 3])
        yield from connect(dut, 0, 1, 1, 4)
        yield from write(p0, C.SEND + 4 * 1, 9)  # too long: dropped
        out["too_long"] = yield from read(p0, C.ERROR)
        yield from send(p0, 1, [0x77])
        out["next"] = yield from recv(p1, 4)
        out["dropped"] = yield from read(p1, C.ERROR)
        out["full"] = (yield from read(p1, C.STATUS)) & 0xFFFF

    run_simulation(dut, gen())
    assert out["unconnected"] == C.ERR_SEND_UNCONNECTED
    assert out["bad_tile"] == C.ERR_BAD_TILE
    assert out["ack_unconnected"] == C.ERR_ACK_UNCONNECTED
    assert out["too_long"] & C.ERR_SEND_LENGTH
    assert out["next"] == (C.info_word(1, 0, 4), [0x77])
    assert out["dropped"] & C.ERR_BAD_PACKET and out["full"] == 0


def test_random_traffic_against_a_reference_model():
    """Every ordered pair of a 2x1 mesh has a channel (chanstress does the same on the whole SoC
    up to 16 tiles); each tile (one process per core, as its
    bus has one master) sends random messages (0 to 8 words) on random channels when the
    channel has room, and takes what arrives after random delays. Each channel's messages arrive
    once, in order, whole."""
    mx, my = 2, 1
    n = mx * my
    dut = ChannelMesh(mx, my)
    rng = random.Random(4)
    per_tile = 20
    # Channel (s, d) uses out slot d at s and in slot s at d.
    plan = {s: [rng.choice([d for d in range(n) if d != s]) for _ in range(per_tile)] for s in range(n)}
    expected = {d: sum(1 for s in range(n) for dd in plan[s] if dd == d) for d in range(n)}
    sent = {(s, d): [] for s in range(n) for d in range(n) if s != d}
    got = {k: [] for k in sent}
    connected = []

    def setup():
        for s in range(n):
            for d in range(n):
                if s != d:
                    yield from connect(dut, s, d, d, s)
        connected.append(True)

    def tile(t):
        local = random.Random(100 + t)
        port = dut.ports[t]
        k = received = 0
        while not connected:
            yield
        while k < per_tile or received < expected[t]:
            status = yield from read(port, C.STATUS)
            if k < per_tile and status >> 16 & (1 << plan[t][k]):
                d = plan[t][k]
                words = [(t << 24) | (k << 8) | i for i in range(local.randrange(0, C.MAX_WORDS + 1))]
                sent[(t, d)].append(words)
                yield from send(port, d, words)
                k += 1
            full = [s for s in range(n) if s != t and status & (1 << s)]
            if full:
                s = local.choice(full)
                info, words = yield from recv(port, s)
                assert (info >> C.INFO_SOURCE_SHIFT) & 0xFF == s
                got[(s, t)].append(words)
                received += 1
            for _ in range(local.randrange(0, 8)):
                yield

    run_simulation(dut, [setup()] + [tile(t) for t in range(n)])
    assert sum(len(v) for v in sent.values()) == n * per_tile
    for key in sent:
        assert got[key] == sent[key], key
