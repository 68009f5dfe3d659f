#
# Subutai SoC: N VexRiscv tiles in a 2-D mesh, shared main RAM, one UART.
#

import dataclasses
import os

from migen import *

from litex.soc.integration.soc import SoCRegion, SoCCSRRegion
from litex.soc.integration.soc_core import SoCCore
from litex.soc.interconnect import wishbone
from litex.soc.cores.cpu.vexriscv import VexRiscv

from gateware.atomic import AtomicUnit, ATOMIC_OPS
from gateware.cpu import litex_variant, use_variant
from gateware.memory import InterleavedMainRAM
from gateware.uplink import RegisteredUplink
from gateware.control import CycleCounter, CoreControl
from gateware.noc.common import HEAD_FIELDS
from gateware.noc.mesh import Mesh
from soc.tile_block import RouterPorts, TileBlock, TileSettings, build_tile

KiB = 1024
MiB = 1024 * KiB


class SubutaiSoC(SoCCore):
    """Multi-tile VexRiscv SoC.

    Every tile has a core, a private SRAM seen at ``tile_ram`` and a CSR bank seen at
    ``tile_csr`` by its own core (same addresses in every tile, so one image runs on all cores).
    Main RAM, the UART and the global CSRs are shared. With ``mem_banks`` 0, every tile uplink
    is a master of LiteX's shared SoC bus and main RAM one of its slaves (LiteX's integrated RAM,
    or the board's LiteDRAM behind its L2). With ``mem_banks`` N > 0 (needs
    ``integrated_main_ram_size``), main RAM is N line-interleaved banks behind a crossbar of the
    tile uplinks (:class:`gateware.memory.InterleavedMainRAM`), and the SoC bus carries only
    uncached I/O. With ``registered_uplinks`` every uplink leaves its tile through a
    :class:`gateware.uplink.RegisteredUplink`, and the SoC bus (``bus_bursting``, by default the
    same) serves refill bursts from its RAMs at one word per cycle. With
    ``uplink_register_response`` the uplinks register a single access's answer too (one cycle
    more per store and uncached load): the boards set it, where the answer of a slave of the
    shared SoC bus, gated by its arbiter's grant, would otherwise run combinationally across the
    device into every core's data cache.
    ``atomic_words`` sizes the atomic unit of the software-only baseline
    (:class:`gateware.atomic.AtomicUnit`): its runtime words and its objects, 8 words each.
    With ``with_channels`` every tile has a channel port (:mod:`gateware.ni.channel_port`: rdy-ack
    channels through the NoC, its window at ``tile_chan``, its pushes into the tile RAM, seen
    uncached at ``tile_ram_uncached``).
    With ``tile_blocks`` every tile but tile 0 is an instance of one Verilog module generated
    once (:class:`soc.tile_block.TileBlock`, its identity as input ports), which a Verilator
    model verilates once for all (the simulation's large meshes); ``self.tile_block`` writes it.
    With ``remote_tiles`` (tile ids, needs ``tile_blocks``) those tiles are left out: their
    uplinks (``self.remote_uplinks``), router links (``self.noc.routers``) and holds stay for a
    model cut into partitions to make ports of (:mod:`soc.partition`), and the uplink register of
    every instance of the tile module moves out of it into the SoC: the memory system's side.
    Core 0 boots; the other cores are held in reset until core 0 writes ``cores_release``.
    """

    mem_map = {
        **SoCCore.mem_map,
        "tile_ram": 0x2000_0000,
        "main_ram": 0x4000_0000,
        "atomic": 0x9000_0000,
        "csr": 0xF000_0000,
        "tile_csr": 0xF800_0000,
        "tile_sync": 0xF900_0000,
        "tile_chan": 0xF900_1000,
        "tile_ram_uncached": 0xFA00_0000,
    }

    # Interrupt numbers of tile-local sources, the same on every core.
    tile_irqs = {
        "timer0": 1,
        "ni": 2,
        "subutai": 3,
        "chan": 4,
    }

    def __init__(
        self,
        platform,
        sys_clk_freq,
        mesh_x=2,
        mesh_y=2,
        cpu_variant="standard",
        tile_ram_size=16 * KiB,
        noc_buffer_depth=2,
        ni_fifo_depth=16,
        spm_bytes=2048,
        atomic_words=2048,
        mem_banks=0,
        line_bytes=32,
        registered_uplinks=True,
        uplink_register_response=False,
        with_counters=True,
        with_channels=True,
        tile_blocks=False,
        remote_tiles=(),
        ident="Subutai SoC",
        **kwargs,
    ):
        self.mesh_x = mesh_x
        self.mesh_y = mesh_y
        self.line_bytes = line_bytes
        self.n_tiles = n_tiles = mesh_x * mesh_y
        kwargs.setdefault("cpu_reset_address", self.mem_map["main_ram"])
        kwargs.setdefault("integrated_rom_size", 0)
        kwargs.setdefault("integrated_sram_size", 0)
        kwargs.setdefault("bus_bursting", registered_uplinks)
        if mem_banks:
            # Main RAM is built below, as banks behind the tiles' crossbar, not on the SoC bus.
            main_ram_size = kwargs.pop("integrated_main_ram_size", 0)
            main_ram_init = kwargs.pop("integrated_main_ram_init", None)
            if not main_ram_size:
                raise ValueError("mem_banks needs an integrated main RAM (integrated_main_ram_size)")

        # SoCCore: core 0 as the SoC's CPU, shared bus, UART, global CSRs. The tile-local timer
        # replaces LiteX's global timer0.
        SoCCore.__init__(
            self,
            platform,
            sys_clk_freq,
            cpu_type="vexriscv",
            cpu_variant=litex_variant(cpu_variant),
            with_timer=False,
            ident=f"{ident} {mesh_x}x{mesh_y}",
            **kwargs,
        )

        use_variant(self.cpu, cpu_variant)

        # Reserve the tile-local interrupt numbers (exported as <NAME>_INTERRUPT).
        self.tile_irqs = {n: loc for n, loc in self.tile_irqs.items() if n != "chan" or with_channels}
        for name, loc in self.tile_irqs.items():
            self.irq.add(name, loc)

        # Core 0's buses reach the SoC bus through tile 0, not directly.
        for n in range(len(self.cpu.periph_buses)):
            self.bus.masters.pop(f"cpu_bus{n}")

        # Global blocks.
        self.cycles = CycleCounter()
        self.cores = CoreControl(n_tiles)

        # Atomic unit of the software-only baseline (uncached I/O).
        self.atomic = AtomicUnit(n_words=atomic_words)
        atomic_region = SoCRegion(origin=self.mem_map["atomic"], size=self.atomic.size, cached=False)
        self.bus.add_slave("atomic", self.atomic.bus, atomic_region)
        self.add_constant("ATOMIC_WORDS", self.atomic.n_words)
        for n, op in enumerate(ATOMIC_OPS):
            self.add_constant(f"ATOMIC_WINDOW_{op.upper()}", n)

        # The tiles' common settings.
        settings = TileSettings(
            mesh_x=mesh_x,
            mesh_y=mesh_y,
            cpu_variant=cpu_variant,
            mem_map=self.mem_map,
            csr_paging=self.csr.paging,
            irqs=self.tile_irqs,
            atomic_region=atomic_region,
            tile_ram_size=tile_ram_size,
            ni_fifo_depth=ni_fifo_depth,
            spm_bytes=spm_bytes,
            with_counters=with_counters,
            with_channels=with_channels,
            cycles_width=len(self.cycles.value),
            noc_buffer_depth=noc_buffer_depth,
            # Only the banks' own arbiters gain from keeping a grant (RegisteredUplink.keep_grant).
            uplink=dict(
                line_words=line_bytes // 4,
                keep_grant=bool(mem_banks),
                register_response=uplink_register_response,
            )
            if registered_uplinks
            else None,
        )
        # With tile_blocks, every tile but tile 0 is an instance of one generated module, which
        # holds the tile's router and uplink register too; but in a model cut into partitions
        # the uplink registers are the memory system's side of the cut (see below).
        remote_tiles = set(remote_tiles)
        if remote_tiles and (not tile_blocks or n_tiles < 2 or 0 in remote_tiles):
            raise ValueError("remote_tiles: tiles other than tile 0, of a SoC with tile_blocks")
        registers_outside_blocks = bool(remote_tiles) and registered_uplinks
        block_settings = dataclasses.replace(settings, uplink=None) if registers_outside_blocks else settings
        self.tile_block = TileBlock(platform, block_settings) if tile_blocks and n_tiles > 1 else None
        self.remote_uplinks = {}
        block_routers = [None] * n_tiles
        if self.tile_block is not None:
            block_routers[1:] = [RouterPorts(i) for i in range(1, n_tiles)]

        # Network-on-Chip.
        self.noc = Mesh(mesh_x, mesh_y, buffer_depth=noc_buffer_depth, routers=block_routers)

        # Tiles.
        self.bus.add_region(
            "tile_ram",
            SoCRegion(origin=self.mem_map["tile_ram"], size=tile_ram_size, cached=True, linker=True),
        )
        self.tiles = []  # Tile 0, and every tile unless tile_blocks.
        uplinks = []
        for i in range(n_tiles):
            x, y = i % mesh_x, i // mesh_x
            if i == 0 or self.tile_block is None:
                if i > 0:
                    cpu = VexRiscv(platform, litex_variant(cpu_variant))
                    use_variant(cpu, cpu_variant)
                    # Secondary cores always start in main RAM, where crt0 dispatches by tile
                    # id, even when core 0 boots the BIOS from ROM (boards).
                    cpu.set_reset_address(self.mem_map["main_ram"])
                    self.comb += cpu.reset.eq(self.cores.resets[i])
                    self.add_module(name=f"cpu{i}", module=cpu)
                tile = build_tile(self.cpu if i == 0 else cpu, i, x, y, self.cycles.value, settings)
                setattr(self.submodules, f"tile{i}", tile)
                self.tiles.append(tile)
                self.comb += [
                    tile.ni.tx.connect(self.noc.local_inputs[i]),
                    self.noc.local_outputs[i].connect(tile.ni.rx),
                ]
                uplink = tile.uplink
                if registered_uplinks:
                    registered = RegisteredUplink(uplink, **settings.uplink)
                    setattr(self.submodules, f"uplink{i}", registered)
                    uplink = registered.source
            else:
                # The instance's uplink leaves through the register inside it, or, in a model cut
                # into partitions, through one here: then the cut runs between a tile's core and
                # its uplink register, and what the leader receives from the other partitions
                # reaches only that register and its answers' few gates. Verilator settles all
                # the logic that hangs on a model's inputs on every evaluation (its input
                # region): behind the register that would be the crossbar's arbitration and
                # the banks, twice a cycle in the leader (docs/architecture.md). The same
                # logic, cycle for cycle (tests/test_partition.py).
                uplink = wishbone.Interface(data_width=32, address_width=32, addressing="word")
                if i in remote_tiles:
                    self.remote_uplinks[i] = uplink
                else:
                    self.specials += self.tile_block.instance(
                        i, x, y, self.cores.resets[i], uplink, block_routers[i]
                    )
                if registers_outside_blocks:
                    registered = RegisteredUplink(uplink, **settings.uplink)
                    setattr(self.submodules, f"uplink{i}", registered)
                    uplink = registered.source
            uplinks.append(uplink)
        masters = uplinks
        if not mem_banks:
            for i, m in enumerate(masters):
                self.bus.add_master(name=f"tile{i}", master=m)
        else:
            main_ram_region = SoCRegion(
                origin=self.mem_map["main_ram"], size=main_ram_size, cached=True, linker=True
            )
            self.bus.add_region("main_ram", main_ram_region)
            self.main_ram = InterleavedMainRAM(
                masters, main_ram_region, n_banks=mem_banks, line_bytes=line_bytes, init=main_ram_init or None
            )
            self.bus.add_master(name="tiles", master=self.main_ram.io)
        self.add_constant("MEM_BANKS", mem_banks)
        self.add_constant("MEM_LINE_BYTES", line_bytes)
        self.bus.add_region(
            "tile_csr", SoCRegion(origin=self.mem_map["tile_csr"], size=self.tiles[0].csr_size, cached=False)
        )
        self.bus.add_region("tile_sync", self.tiles[0].sync_region)
        self.add_constant("CHANNELS", int(with_channels))
        if with_channels:
            self.bus.add_region("tile_chan", self.tiles[0].chan_region)
            self.bus.add_region("tile_ram_uncached", self.tiles[0].ram_uncached_region)

        for name, value in [("MESH_X", mesh_x), ("MESH_Y", mesh_y), ("N_TILES", n_tiles)]:
            self.add_constant(name, value)
        # Packet format of the NoC, for drivers.
        for field, (lsb, width) in HEAD_FIELDS.items():
            self.add_constant(f"NOC_HEAD_{field.upper()}_OFFSET", lsb)
            self.add_constant(f"NOC_HEAD_{field.upper()}_SIZE", width)
        self.add_constant("NOC_MAX_PAYLOAD", self.tiles[0].ni.max_payload)

    def export_software(self, generated_dir):
        """Write the Subutai protocol and status headers beside LiteX's generated headers."""
        from gateware.subutai import protocol
        from gateware.ni import subutai_window, channel_port

        for name, text in [
            ("subutai_protocol.h", protocol.c_header()),
            ("subutai_status.h", protocol.c_status_header()),
            ("subutai_window.h", subutai_window.c_header()),
            ("subutai_chan_window.h", channel_port.c_header()),
        ]:
            with open(os.path.join(generated_dir, name), "w") as f:
                f.write(text)

    def finalize(self):
        if self.finalized:
            return
        SoCCore.finalize(self)
        # Export tile-local CSR banks (identical layout in every tile) after LiteX has sorted the
        # global ones, so the global CSR base stays the first region of csr.h.
        for name, origin, csrs in self.tiles[0].csr_regions():
            region = SoCCSRRegion(origin=origin, busword=self.csr.data_width, obj=csrs)
            self.csr.add_region(name, region)
            self.csr_regions[name] = region
