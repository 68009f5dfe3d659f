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
            ni = NetworkInterface(
                mesh_x, mesh_y, i % mesh_x, i // mesh_x, prio_stream=True, chan_stream=True
            )
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
        t = 0
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
