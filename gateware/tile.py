#
# One tile of the mesh: a core's private SRAM and CSRs behind a local interconnect.
#

from functools import reduce
from operator import or_

from migen import *

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone, csr_bus
from litex.soc.interconnect.csr import CSRStorage, CSRStatus, CSRField
from litex.soc.integration.soc import SoCRegion
from litex.soc.cores.timer import Timer

from gateware.atomic import AtomicOperand
from gateware.ni import channel_port
from gateware.ni.subutai_window import WINDOW_SIZE


class TileInfo(LiteXModule):
    """Identity of the tile and the global cycle counter, in the tile-local CSR window.

    ``tile_id``, ``x`` and ``y`` are ints (constants of the tile's logic) or Signals (inputs of a
    tile generated once as a module of its own, :mod:`soc.tile_block`)."""

    def __init__(self, tile_id, x, y, cycles):
        identity = [tile_id, x, y]
        consts = [v if isinstance(v, int) else 0 for v in identity]
        self._id = CSRStatus(8, reset=consts[0], description="Tile (and core) number, ``y*X + x``.")
        self._position = CSRStatus(
            fields=[
                CSRField("x", size=4, reset=consts[1], description="Column of the tile in the mesh."),
                CSRField("y", size=4, reset=consts[2], description="Row of the tile in the mesh."),
            ],
            description="Position of the tile in the mesh.",
        )
        self._cycles = CSRStatus(
            len(cycles),
            description="""
            Global cycle counter (common to all tiles). Read the high word, the low word, then the
            high word again and retry if it changed.""",
        )

        # # #

        self.comb += self._cycles.status.eq(cycles)
        for status, value in [
            (self._id.status, tile_id),
            (self._position.fields.x, x),
            (self._position.fields.y, y),
        ]:
            if not isinstance(value, int):
                self.comb += status.eq(value)


class TileTimer(Timer):
    """LiteX's :class:`Timer` whose uptime is the SoC's global cycle counter.

    ``add_shared_uptime(cycles)`` gives the registers and values of ``Timer.add_uptime()``: both
    counters count from 0 at power-up and take no reset. Why not ``add_uptime()``: it builds a
    64-bit counter in every tile (32 carry cells, 64 LUT4 sites on an ECP5) that would count
    exactly as the global one."""

    def add_shared_uptime(self, cycles):
        assert not self.with_uptime
        self.with_uptime = True
        self._uptime_latch = CSRStorage(
            description="Write a ``1`` to latch current Uptime cycles to ``uptime_cycles`` register."
        )
        self._uptime_cycles = CSRStatus(
            len(cycles), description="Latched Uptime since power-up (in ``sys_clk`` cycles)."
        )

        # # #

        self.uptime_cycles = cycles
        self.sync += If(self._uptime_latch.re, self._uptime_cycles.status.eq(cycles))


class Tile(Module):
    """A tile: the local interconnect of one core.

    The core's instruction and data buses enter a crossbar that decodes three windows, identical in
    every tile so one binary runs on every core:

    - ``ram_origin``: the tile's private SRAM (each core sees its own);
    - ``csr_origin``: the tile's CSR bank (tile id, timer, later the NI);
    - ``sync_origin``: the direct window of the tile's Subutai port (``modules["subutai"]``),
      when it has one (single-cycle loads and stores, no CSR bridge);
    - ``chan_origin``: the window of the tile's channel port (``chan``, a
      :class:`gateware.ni.channel_port.ChannelPort`), when it has one, and
      ``ram_uncached_origin``: the private SRAM again, uncached, where a core reads what the
      channel port pushed into it (the port's ``dma`` is a third master of the crossbar, and
      reaches the SRAM only);
    - everything else goes out on ``self.uplink``, a master port of the SoC's shared bus.

    ``modules`` adds tile-local modules (e.g. ``{"ni": NetworkInterface(...)}``) to the tile's CSR
    bank, at the page given by ``csr_map``.

    The core itself is created and owned by the SoC (core 0 is the SoC's ``cpu``); the tile only
    wires it. Interrupts of tile-local sources are connected to the core at the numbers given in
    ``irqs``.

    This is a plain Migen ``Module`` on purpose: its CSRs live in its own bank and must not be
    collected into the SoC's global CSR bank.
    """

    # Page of each tile-local CSR module inside the tile CSR window (``paging`` bytes each).
    csr_map = {
        "timer0": 0,
        "tile": 1,
        "ni": 2,
        "subutai": 3,
        "atomic": 4,
        "chan": 5,
    }

    def __init__(
        self,
        cpu,
        tile_id,
        x,
        y,
        cycles,
        ram_origin=0x2000_0000,
        ram_size=16 * 1024,
        csr_origin=0xF800_0000,
        csr_paging=0x800,
        sync_origin=0xF900_0000,
        chan_origin=0xF900_1000,
        ram_uncached_origin=0xFA00_0000,
        chan=None,
        irqs={"timer0": 1},
        modules=None,
        atomic_region=None,
        csr_map=None,
    ):
        self.tile_id = tile_id
        self.csr_map = dict(self.csr_map, **(csr_map or {}))
        self.csr_paging = csr_paging
        self.uplink = wishbone.Interface(data_width=32, address_width=32, addressing="word")

        # Tile-local modules ---------------------------------------------------------------------
        self.submodules.ram = wishbone.SRAM(ram_size)
        self.submodules.timer0 = TileTimer()
        self.timer0.add_shared_uptime(cycles)
        self.submodules.tile = TileInfo(tile_id, x, y, cycles)
        # Further tile-local modules given by the SoC (the NI), in the tile's CSR bank.
        for name, module in (modules or {}).items():
            setattr(self.submodules, name, module)

        # Tile-local CSR bank --------------------------------------------------------------------
        self.csr_bridge = wishbone.Wishbone2CSR(bus_csr=csr_bus.Interface(data_width=32, address_width=14))
        self.submodules += self.csr_bridge
        self.csr_size = 2**14 * 4

        # Local interconnect ---------------------------------------------------------------------
        self.ram_region = SoCRegion(origin=ram_origin, size=ram_size)
        self.csr_region = SoCRegion(origin=csr_origin, size=self.csr_size, cached=False)
        slaves = [
            (self.ram_region, self.ram.bus),
            (self.csr_region, self.csr_bridge.wishbone),
        ]
        window = getattr((modules or {}).get("subutai"), "window", None)
        self.sync_region = None
        if window is not None:
            self.sync_region = SoCRegion(origin=sync_origin, size=WINDOW_SIZE, cached=False)
            slaves.append((self.sync_region, window.bus))
        self.chan_region = self.ram_uncached_region = None
        decoders = [r.decoder(self.uplink) for r, _ in slaves]
        masters = [cpu.ibus, cpu.dbus]
        if chan is not None:
            self.submodules.chan = chan
            self.chan_region = SoCRegion(origin=chan_origin, size=channel_port.WINDOW_SIZE, cached=False)
            self.ram_uncached_region = SoCRegion(origin=ram_uncached_origin, size=ram_size, cached=False)
            slaves.append((self.chan_region, chan.window.bus))
            decoders.append(self.chan_region.decoder(self.uplink))
            # The SRAM answers at both addresses (it decodes the low bits only).
            cached, uncached = decoders[0], self.ram_uncached_region.decoder(self.uplink)
            decoders[0] = lambda a: cached(a) | uncached(a)
            masters.append(chan.dma)
        local = lambda a: reduce(or_, [d(a) for d in decoders])
        uplink = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.submodules.crossbar = wishbone.Crossbar(
            masters=masters,
            slaves=[(d, bus) for d, (_, bus) in zip(decoders, slaves)] + [(lambda a: ~local(a), uplink)],
        )
        # Reads of the atomic unit carry the core's atomic operand on dat_w (see
        # gateware/atomic.py), so a read-modify-write is one bus transaction.
        self.comb += uplink.connect(self.uplink, omit={"dat_w"})
        if atomic_region is not None:
            self.submodules.atomic = AtomicOperand()
            to_atomic = atomic_region.decoder(self.uplink)(uplink.adr) & ~uplink.we
            self.comb += self.uplink.dat_w.eq(Mux(to_atomic, self.atomic.operand, uplink.dat_w))
        else:
            self.comb += self.uplink.dat_w.eq(uplink.dat_w)

        # Interrupts -----------------------------------------------------------------------------
        self.irqs = irqs
        for name, loc in irqs.items():
            self.comb += cpu.interrupt[loc].eq(getattr(self, name).ev.irq)

        # CSR bank (built last, once every tile-local module exists) -----------------------------
        self.submodules.csr_bankarray = csr_bus.CSRBankArray(
            self,
            address_map=lambda name, memory: self.csr_map.get(name) if memory is None else None,
            data_width=32,
            address_width=14,
            paging=csr_paging,
        )
        self.submodules.csr_interconnect = csr_bus.InterconnectShared(
            masters=[self.csr_bridge.csr], slaves=self.csr_bankarray.get_buses()
        )

    def csr_regions(self):
        """(name, origin, csrs) of every tile-local CSR bank, for the SoC's exported headers."""
        return [
            (name, self.csr_region.origin + self.csr_paging * mapaddr, csrs)
            for name, csrs, mapaddr, rmap in self.csr_bankarray.banks
        ]
