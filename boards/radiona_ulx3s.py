#!/usr/bin/env python3
#
# Subutai SoC on the Radiona ULX3S (ECP5 LFE5U-12F/25F/45F/85F, 32 MiB SDR SDRAM), built with
# yosys + nextpnr-ecp5 + ecppack (YoWASP).
#
#   python3 boards/radiona_ulx3s.py --tiles 4 --build          # bitstream + report
#   python3 boards/radiona_ulx3s.py --tiles 4 --load           # program the FPGA (SRAM)
#


from migen import *

from litex_boards.platforms import radiona_ulx3s
from litex_boards.targets.radiona_ulx3s import _CRG

from litedram import modules as litedram_modules
from litedram.phy import GENSDRPHY

from boards.common import apply_preset, board_argparser, run_board
from soc.board_budget import DeviceLimits, ECP5_DEVICES, ECP5_BUDGET
from soc.board_soc import BoardSoC, sdram_phy_model, sim_platform
from soc.subutai_soc import KiB

BOARD = "radiona_ulx3s"
DEVICES = ["LFE5U-12F", "LFE5U-25F", "LFE5U-45F", "LFE5U-85F"]
SDRAM_MODULES = ["MT48LC16M16", "AS4C32M16", "AS4C16M16"]


# The BIOS takes about 26 KiB: a 32 KiB ROM (16 block RAMs) on every device leaves the other 16
# block RAMs of a 64 KiB one to the tiles and the L2.
ROM_SIZE = 32 * KiB

# 50 MHz, litex-boards' default for the ULX3S (docs/architecture.md "Boards" has what the builds
# reach).
SYS_CLK_FREQ = 50e6

# What the 8-tile build on the 85F takes to place, route and meet 50 MHz (results/boards.md,
# docs/architecture.md "Boards"): a larger share of the LUTs than the budget's default, the 8 KiB
# L2 the block RAMs leave, HeAP pulling critical paths harder, no timing-driven rip-up, more
# patience with the router and two seeds. They are that build's defaults.
PRESETS = {
    ("LFE5U-85F", 8): dict(
        lut_fill=0.85,
        l2_size=8 * KiB,
        nextpnr_tmg_ripup=False,
        nextpnr_stall=15,
        seed_attempts=2,
        nextpnr_timing_weight=50,
        nextpnr_critexp=6,
    ),
}

# SoC ----------------------------------------------------------------------------------------------

# The board's SDRAM: one 16-bit chip.
SDRAM_DATA_WIDTH = 16


class ULX3SSoC(BoardSoC):
    def __init__(
        self,
        device="LFE5U-85F",
        revision="2.0",
        sys_clk_freq=SYS_CLK_FREQ,
        sdram_module="MT48LC16M16",
        sim=False,
        **kwargs,
    ):
        if sim:
            platform = sim_platform(self)
        else:
            platform = radiona_ulx3s.Platform(device=device, revision=revision, toolchain="trellis")
            # litex-boards' CRG: PLL from the 25 MHz clock, phase-shifted SDRAM clock.
            self.crg = _CRG(platform, sys_clk_freq)
        kwargs.setdefault("integrated_rom_size", ROM_SIZE)
        BoardSoC.__init__(self, platform, sys_clk_freq, ident="Subutai SoC on ULX3S", sim=sim, **kwargs)
        module = getattr(litedram_modules, sdram_module)(sys_clk_freq, "1:1")
        if sim:
            self.sdrphy = sdram_phy_model(module, SDRAM_DATA_WIDTH, sys_clk_freq)
        else:
            self.sdrphy = GENSDRPHY(platform.request("sdram"), sys_clk_freq)
        self.add_main_ram_sdram(self.sdrphy, module)


def limits(device):
    return DeviceLimits(ECP5_BUDGET, *ECP5_DEVICES[device], rom_size=ROM_SIZE)


def max_tiles(device, l2_size=None):
    return limits(device).max_tiles(l2_size)


def default_l2_size(device):
    return limits(device).default_l2_size()


# Build --------------------------------------------------------------------------------------------


def main():
    parser = board_argparser(BOARD, "Subutai SoC on ULX3S.", default_sys_clk_freq=SYS_CLK_FREQ)
    parser.add_argument("--device", default="LFE5U-85F", choices=DEVICES, help="FPGA device.")
    parser.add_argument("--revision", default="2.0", choices=["1.7", "2.0"], help="Board revision.")
    parser.add_argument(
        "--sdram-module", default="MT48LC16M16", choices=SDRAM_MODULES, help="SDRAM chip of the board."
    )
    args = parser.parse_args()
    apply_preset(parser, args, PRESETS, args.device)

    def make_soc(mesh_x, mesh_y, sys_clk_freq, sim=False):
        return ULX3SSoC(
            device=args.device,
            revision=args.revision,
            sys_clk_freq=sys_clk_freq,
            sdram_module=args.sdram_module,
            mesh_x=mesh_x,
            mesh_y=mesh_y,
            cpu_variant=args.cpu_variant,
            tile_ram_size=args.tile_ram_size,
            l2_size=args.l2_size,
            sim=sim,
        )

    # openFPGALoader drives the board's FTDI JTAG.
    run_board(
        parser,
        args,
        make_soc,
        BOARD,
        "trellis",
        limits(args.device),
        loader_board="ulx3s",
        device=args.device,
    )


if __name__ == "__main__":
    main()
