#
# A tile of the Subutai SoC: its parts, and the tile generated once as a Verilog module of its own.
#
"""The parts of a tile, and a tile generated once as a Verilog module (:class:`TileBlock`).

:func:`build_tile` wires one tile of the mesh: its core's local interconnect
(:class:`gateware.tile.Tile`), its network interface, its Subutai port and its channel port,
as :class:`TileSettings` say. Their identity (tile id, column and row) is a Python int, which
folds into their logic, or a Migen Signal, which makes it an input.

Migen flattens a SoC into one Verilog module, so every tile of a mesh is logic of its own, and
Verilator gives each its own machine code: a 32-tile model runs 5.95 MB of code on every cycle
(180 KB a tile, ``make simspeed``), which no host cache holds, and a tile-cycle costs six times
the one of a 1-tile model. :class:`TileBlock` generates the tile once, as the Verilog module
``subutai_tile`` with its identity as input ports, which the SoC instantiates for every tile but
the first (core 0 is LiteX's CPU of the SoC, and boots a board's BIOS from ROM); Verilator
verilates it once as a hierarchy block (``hier_block``, ``--hierarchical``), so all the tiles run
one code. The logic is the same as the flattened tile's, cycle for cycle: only constants became
inputs.
"""

import os
from dataclasses import dataclass
from typing import Optional

from migen import *

from litex.gen import LiteXContext
from litex.gen.fhdl import verilog
from litex.soc.cores.cpu.vexriscv import VexRiscv

from gateware.control import CycleCounter
from gateware.cpu import litex_variant, use_variant
from gateware.noc.common import HEAD_FIELDS, PORTS, Link
from gateware.noc.router import MeshRouter
from gateware.ni.ni import NetworkInterface
from gateware.ni.subutai_port import SubutaiPort
from gateware.ni.channel_port import ChannelPort
from gateware.subutai import protocol as P
from gateware.tile import Tile
from gateware.uplink import RegisteredUplink

# The Verilog module of a tile (and the basename of its file in the gateware directory).
TILE_MODULE = "subutai_tile"


@dataclass
class TileSettings:
    """What every tile of a SoC has in common (:class:`soc.subutai_soc.SubutaiSoC`'s parameters)."""

    mesh_x: int
    mesh_y: int
    cpu_variant: str
    #: Bases of the tile's windows: tile_ram, tile_csr, tile_sync, tile_chan, tile_ram_uncached,
    #: main_ram (where secondary cores start).
    mem_map: dict
    csr_paging: int
    irqs: dict
    atomic_region: object
    tile_ram_size: int = 16 * 1024
    ni_fifo_depth: int = 16
    spm_bytes: int = 2048
    with_counters: bool = True
    with_channels: bool = True
    cycles_width: int = 64
    #: Flits per input FIFO of the tile's router (:class:`gateware.noc.router.MeshRouter`).
    noc_buffer_depth: int = 2
    #: Options of the :class:`gateware.uplink.RegisteredUplink` the tile's uplink leaves through,
    #: or None: the uplink leaves the tile unregistered.
    uplink: Optional[dict] = None


def build_tile(cpu, tile_id, x, y, cycles, s):
    """One tile around ``cpu``, as :class:`TileSettings` ``s`` say; its NI is ``tile.ni``, its
    link to the mesh ``tile.ni.tx`` (to the router) and ``tile.ni.rx`` (from it)."""
    ni = NetworkInterface(
        s.mesh_x,
        s.mesh_y,
        x=x,
        y=y,
        tx_depth=s.ni_fifo_depth,
        rx_depth=s.ni_fifo_depth,
        prio_stream=True,
        chan_stream=s.with_channels,
        with_counters=s.with_counters,
    )
    chan = None
    if s.with_channels:
        chan = ChannelPort(
            ni, tile_id, s.mesh_x, s.mesh_y, ram_origin=s.mem_map["tile_ram"], ram_size=s.tile_ram_size
        )
    subutai = SubutaiPort(
        ni, tile_id, s.mesh_x, s.mesh_y, spm_bytes=s.spm_bytes, with_counters=s.with_counters
    )
    return Tile(
        cpu,
        tile_id=tile_id,
        x=x,
        y=y,
        cycles=cycles,
        ram_origin=s.mem_map["tile_ram"],
        ram_size=s.tile_ram_size,
        csr_origin=s.mem_map["tile_csr"],
        sync_origin=s.mem_map["tile_sync"],
        chan_origin=s.mem_map["tile_chan"],
        ram_uncached_origin=s.mem_map["tile_ram_uncached"],
        chan=chan,
        csr_paging=s.csr_paging,
        irqs=s.irqs,
        modules={"ni": ni, "subutai": subutai},
        atomic_region=s.atomic_region,
    )


class TileBlock:
    """A tile (its core included) generated once as the Verilog module ``name``, instantiated for
    each tile by :meth:`instance`. (Not a Module itself: a SoC would take it for a submodule and
    flatten it in.)

    The module holds what a tile has of its own: the core, the tile's local interconnect and
    its NI and ports (:func:`build_tile`), its router (the local port inside, every other port
    built, :class:`gateware.noc.router.MeshRouter`) and the register its uplink leaves through
    (``settings.uplink``). Ports: ``sys_clk``/``sys_rst``; ``tile_id``, ``tile_x``, ``tile_y``
    (the identity that a flattened tile has as constants); ``cpu_reset`` (the core's hold,
    :class:`gateware.control.CoreControl`); ``uplink_*``
    (the tile's master port on the SoC's memory system, Wishbone); ``<port>_in_*`` and
    ``<port>_out_*`` (the router's links with its neighbours, north, east, south and west,
    :func:`gateware.noc.common.link_layout`); ``noc_error`` (the router dropped a packet)."""

    def __init__(self, platform, settings, name=TILE_MODULE):
        self.name = name
        s = settings
        self.module = m = Module()
        self.cd_sys = m.clock_domains.cd_sys = ClockDomain("sys")
        self.tile_id = Signal(P.ID_NI_BITS, name_override="tile_id")
        self.tile_x = Signal(HEAD_FIELDS["src_x"][1], name_override="tile_x")
        self.tile_y = Signal(HEAD_FIELDS["src_y"][1], name_override="tile_y")
        self.cpu_reset = Signal(name_override="cpu_reset")

        # # #

        # Verilator evaluates whatever depends combinationally on a hierarchy block's inputs
        # whenever they change, as many times a cycle as the design around it settles: the
        # identity, constant for an instance, is taken from registers (loaded at the first clock
        # edge, while the SoC is in reset), and the cycle counter is counted here (free-running
        # from power-up, as the SoC's, gateware.control.CycleCounter: the same values).
        identity = [Signal.like(v, reset_less=True) for v in (self.tile_id, self.tile_x, self.tile_y)]
        m.sync += [r.eq(v) for r, v in zip(identity, (self.tile_id, self.tile_x, self.tile_y))]
        tile_id, tile_x, tile_y = identity
        m.submodules.cycles = cycles = CycleCounter(s.cycles_width)

        cpu = VexRiscv(platform, litex_variant(s.cpu_variant))
        use_variant(cpu, s.cpu_variant)
        cpu.set_reset_address(s.mem_map["main_ram"])
        m.submodules.cpu = cpu
        m.comb += cpu.reset.eq(self.cpu_reset)
        m.submodules.tile = tile = build_tile(cpu, tile_id, tile_x, tile_y, cycles.value, s)
        self.tile = tile
        m.submodules.router = router = MeshRouter(
            tile_x, tile_y, buffer_depth=s.noc_buffer_depth, mesh_x=s.mesh_x, mesh_y=s.mesh_y
        )
        m.comb += [
            tile.ni.tx.connect(router.inputs["local"]),
            router.outputs["local"].connect(tile.ni.rx),
        ]
        uplink = tile.uplink
        if s.uplink is not None:
            m.submodules.uplink = registered = RegisteredUplink(tile.uplink, **s.uplink)
            uplink = registered.source
        self.noc_error = router.error
        self.noc_error.name_override = "noc_error"

        # The ports: the tile's interfaces, each signal named after its interface and field.
        self.ios = {self.cd_sys.clk, self.cd_sys.rst, self.tile_id, self.tile_x, self.tile_y}
        self.ios |= {self.cpu_reset, self.noc_error}
        for prefix, record, master in _interfaces(uplink, router):
            for name, sig, _ in _record_ports(prefix, record, master):
                sig.name_override = name
                self.ios.add(sig)

    def verilog(self, platform):
        """The module's Verilog (a Migen ``ConvOutput``: ``.write(path)``)."""
        # The banner's hierarchy would be the SoC's (LiteXContext.top), not this module's.
        top, LiteXContext.top = LiteXContext.top, None
        try:
            return verilog.convert(self.module, ios=self.ios, name=self.name, platform=platform)
        finally:
            LiteXContext.top = top

    def write(self, platform, directory):
        """Write the module's Verilog (and its memories' data files) into ``directory``."""
        path = os.path.join(directory, f"{self.name}.v")
        self.verilog(platform).write(path)
        return path

    def instance(self, tile_id, x, y, cpu_reset, uplink, router):
        """An instance of the module for the tile ``tile_id`` at (``x``, ``y``): ``uplink`` a
        Wishbone interface (the tile's master port), ``router`` the :class:`RouterPorts` the mesh
        connects."""
        params = dict(
            i_sys_clk=ClockSignal("sys"),
            i_sys_rst=ResetSignal("sys"),
            i_tile_id=C(tile_id, len(self.tile_id)),
            i_tile_x=C(x, len(self.tile_x)),
            i_tile_y=C(y, len(self.tile_y)),
            i_cpu_reset=cpu_reset,
            o_noc_error=router.error,
        )
        for prefix, record, master in _interfaces(uplink, router):
            for name, sig, d in _record_ports(prefix, record, master):
                params[f"{d}_{name}"] = sig
        return Instance(self.name, **params)


class RouterPorts:
    """The links of a router inside a :class:`TileBlock`, for :class:`gateware.noc.mesh.Mesh`
    (``routers=``): ``inputs``/``outputs`` by port (the local ones stay unconnected: inside the
    module), ``error``."""

    def __init__(self, tile_id):
        self.inputs = {p: Link(name=f"tile{tile_id}_{p}_in") for p in PORTS}
        self.outputs = {p: Link(name=f"tile{tile_id}_{p}_out") for p in PORTS}
        self.error = Signal(name=f"tile{tile_id}_noc_error")


def _interfaces(uplink, router):
    """(prefix, record, whether the module is its master) of the module's interfaces."""
    yield "uplink", uplink, True
    for p in PORTS[1:]:
        yield f"{p}_in", router.inputs[p], False
        yield f"{p}_out", router.outputs[p], True


def _record_ports(prefix, record, master):
    """(name, signal, direction) of each field of the flat ``record`` seen from its ``master``
    side (or its slave side): ``o`` for what that side drives."""
    for fname, _, direction in record.layout:
        out = (direction == DIR_M_TO_S) == master
        yield f"{prefix}_{fname}", getattr(record, fname), "o" if out else "i"
