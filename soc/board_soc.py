#
# The Subutai SoC on an FPGA board (BoardSoC): LiteX's BIOS in an integrated ROM, the board's
# SDRAM through LiteDRAM behind a shared L2, the board's serial port; and what the same SoC takes
# in simulation (sim_platform, sdram_phy_model). Each board target (boards/<board>.py) adds its
# platform, CRG and SDRAM PHY.
#

import math

from migen import *

from litex.soc.interconnect import wishbone

from gateware.l2cache import L2Cache
from gateware.memory import RegisteredSRAM
from gateware.uplink import RegisteredUplink

from soc.board_budget import L2_MEASURED
from soc.subutai_soc import SubutaiSoC, KiB


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

    def __init__(
        self,
        platform,
        sys_clk_freq,
        integrated_rom_size=64 * KiB,
        integrated_sram_size=8 * KiB,
        l2_size=L2_MEASURED,
        sim=False,
        **kwargs,
    ):
        self.l2_size = l2_size
        self.sim = sim
        SubutaiSoC.__init__(
            self,
            platform,
            int(sys_clk_freq),
            # Core 0 starts in the BIOS (SubutaiSoC defaults to main RAM, for the simulator).
            cpu_reset_address=self.mem_map["rom"],
            integrated_rom_size=integrated_rom_size,
            integrated_sram_size=integrated_sram_size,
            uart_name="sim" if sim else "serial",
            # Event counters are for simulation: on an FPGA they are a third of each engine.
            with_counters=False,
            # Channels (rdy-ack through the NoC) are built and measured in simulation; the boards'
            # device budget (docs/architecture.md, Boards) has not been measured with them.
            with_channels=kwargs.pop("with_channels", False),
            # Every tile is a master of the shared SoC bus: its answers and burst beats are
            # registered in the tile's uplink, so that no path runs from the bus arbiter's grant
            # through a slave's acknowledgement into a core or the uplink's burst FIFO (6-tile
            # critical paths without them: 23.6 and 21.1 ns; docs/architecture.md, Boards).
            uplink_register_response=True,
            **kwargs,
        )
        if sim:
            # The BIOS's memory test of the SDRAM, cut to what a simulation can afford (as
            # litex_sim does).
            self.add_constant("MEMTEST_DATA_SIZE", 8 * KiB)
            self.add_constant("MEMTEST_ADDR_SIZE", 8 * KiB)

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

        ram = RegisteredSRAM(
            size,
            init=contents,
            read_only="w" not in mode,
            name=name,
            bus=wishbone.Interface(
                data_width=self.bus.data_width, address_width=self.bus.address_width, addressing="word"
            ),
        )
        self.bus.add_slave(name=name, slave=ram.bus, region=SoCRegion(origin=origin, size=size, mode=mode))
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
        size = (
            2 ** (geom.bankbits + geom.rowbits + geom.colbits)
            * phy.settings.nranks
            * phy.settings.databits
            // 8
        )
        origin = self.mem_map["main_ram"]
        self.bus.add_region("main_ram", SoCRegion(origin=origin, size=size, mode="rwx"))
        port = self.sdram.crossbar.get_port()
        port.data_width = 2 ** int(math.log2(port.data_width))
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
        self.l2_bridge = RegisteredUplink(
            front,
            line_words=self.line_bytes // 4,
            keep_grant=False,
            register_response=True,
            registered_feedback=feedback,
        )
        if self.l2_size:
            # The L2's lines are LiteX's: the port's width, at least 128 bits, held in 16-bit
            # lanes (gateware/l2cache.py says why not LiteX's one block RAM per byte).
            line = wishbone.Interface(
                data_width=max(port.data_width, 128), address_width=32, addressing="word"
            )
            self.l2_cache = L2Cache(self.l2_size // 4, self.l2_bridge.source, line)
            self.add_config("L2_SIZE", self.l2_size)
        else:
            line = wishbone.Interface(data_width=port.data_width, address_width=32, addressing="word")
            self.submodules += wishbone.Converter(self.l2_bridge.source, line)
        self.wishbone_bridge = LiteDRAMWishbone2Native(wishbone=line, port=port, base_address=origin)


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
