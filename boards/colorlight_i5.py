#!/usr/bin/env python3
#
# Subutai SoC on the Colorlight i5 (ECP5 LFE5U-25F) / i9 (LFE5U-45F) module with its extension
# board (8 MiB SDR SDRAM), built with yosys + nextpnr-ecp5 + ecppack (YoWASP).
#
#   python3 boards/colorlight_i5.py --board i9 --tiles 2 --build   # bitstream + report
#   python3 boards/colorlight_i5.py --board i9 --tiles 2 --load    # program the FPGA (SRAM)
#


from migen import *

from litex_boards.platforms import colorlight_i5
from litex_boards.targets.colorlight_i5 import _CRG

from litedram.modules import M12L64322A  # Compatible with the board's EM638325-6H.
from litedram.phy import GENSDRPHY

from boards.common import board_argparser, run_board
from soc.board_budget import DeviceLimits, ECP5_DEVICES, ECP5_BUDGET
from soc.board_soc import BoardSoC, sdram_phy_model, sim_platform
from soc.subutai_soc import KiB

BOARD = "colorlight_i5"
# Module: (revision, FPGA device).
MODULES = {
    "i5": ("7.0", "LFE5U-25F"),
    "i9": ("7.2", "LFE5U-45F"),
}
# The BIOS takes about 26 KiB: a 32 KiB ROM leaves more of the 25F's 56 block RAMs to the tiles.
ROM_SIZE = 32 * KiB

# 40 MHz, not litex-boards' 50/60 MHz: with 4 tiles nextpnr-ecp5 reaches 42.9 MHz at a 50 MHz target
# (results/boards.md, docs/architecture.md "Boards"); the same logic on the same speed grade.
SYS_CLK_FREQ = 40e6

# SoC ----------------------------------------------------------------------------------------------

# The module's SDRAM: one 32-bit chip.
SDRAM_DATA_WIDTH = 32


class ColorlightSoC(BoardSoC):
    def __init__(self, board="i5", sys_clk_freq=SYS_CLK_FREQ, sim=False, **kwargs):
        revision, device = MODULES[board]
        if sim:
            platform = sim_platform(self)
        else:
            platform = colorlight_i5.Platform(board=board, revision=revision, toolchain="trellis")
            # litex-boards' CRG: PLL from the 25 MHz clock, phase-shifted SDRAM clock.
            self.crg = _CRG(platform, sys_clk_freq)
        kwargs.setdefault("integrated_rom_size", ROM_SIZE)
        BoardSoC.__init__(
            self,
            platform,
            sys_clk_freq,
            ident=f"Subutai SoC on Colorlight {board.upper()}",
            sim=sim,
            **kwargs,
        )
        module = M12L64322A(sys_clk_freq, "1:1")
        if sim:
            self.sdrphy = sdram_phy_model(module, SDRAM_DATA_WIDTH, sys_clk_freq)
        else:
            self.sdrphy = GENSDRPHY(platform.request("sdram"), sys_clk_freq)
        self.add_main_ram_sdram(self.sdrphy, module)


def limits(board):
    return DeviceLimits(ECP5_BUDGET, *ECP5_DEVICES[MODULES[board][1]], rom_size=ROM_SIZE)


def max_tiles(board, l2_size=None):
    return limits(board).max_tiles(l2_size)


def default_l2_size(board):
    return limits(board).default_l2_size()


# Build --------------------------------------------------------------------------------------------


def main():
    parser = board_argparser(BOARD, "Subutai SoC on Colorlight i5/i9.", default_sys_clk_freq=SYS_CLK_FREQ)
    parser.add_argument(
        "--board",
        dest="module",
        default="i5",
        choices=sorted(MODULES),
        help="Module: i5 (LFE5U-25F) or i9 (LFE5U-45F).",
    )
    args = parser.parse_args()
    if args.module != "i5":
        args.board = f"colorlight_{args.module}"  # Build directory and report row.

    def make_soc(mesh_x, mesh_y, sys_clk_freq, sim=False):
        return ColorlightSoC(
            board=args.module,
            sys_clk_freq=sys_clk_freq,
            mesh_x=mesh_x,
            mesh_y=mesh_y,
            cpu_variant=args.cpu_variant,
            tile_ram_size=args.tile_ram_size,
            l2_size=args.l2_size,
            sim=sim,
        )

    # The extension board's CMSIS-DAP probe; openFPGALoader knows the module.
    run_board(
        parser,
        args,
        make_soc,
        BOARD,
        "trellis",
        limits(args.module),
        loader_board=f"colorlight-{args.module}",
        device=MODULES[args.module][1],
    )


if __name__ == "__main__":
    main()
