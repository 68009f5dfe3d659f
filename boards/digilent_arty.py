#!/usr/bin/env python3
#
# Subutai SoC on the Digilent Arty A7 (Artix-7 XC7A100T / XC7A35T, 256 MiB DDR3). LiteX writes the
# Vivado project (Verilog, .xdc, .tcl, build script); Vivado itself is needed to run it.
#
#   python3 boards/digilent_arty.py --tiles 8 --build     # Vivado project + build script
#   python3 boards/digilent_arty.py --tiles 8 --load      # program the FPGA (SRAM), after Vivado
#


from migen import *

from litex_boards.platforms import digilent_arty
from litex_boards.targets.digilent_arty import _CRG

from litedram.modules import MT41K128M16
from litedram.phy import s7ddrphy

from boards.common import board_argparser, run_board
from soc.board_budget import DeviceLimits, XILINX_DEVICES, XILINX_BUDGET
from soc.board_soc import BoardSoC, sdram_phy_model, sim_platform

BOARD = "digilent_arty"
VARIANTS = {
    "a7-35": "xc7a35ticsg324-1L",
    "a7-100": "xc7a100tcsg324-1",
}

# SoC ----------------------------------------------------------------------------------------------

# The board's DDR3: one 16-bit chip.
SDRAM_DATA_WIDTH = 16


class ArtySoC(BoardSoC):
    def __init__(self, variant="a7-100", sys_clk_freq=75e6, sim=False, **kwargs):
        if sim:
            platform = sim_platform(self)
        else:
            platform = digilent_arty.Platform(variant=variant, toolchain="vivado")
            # litex-boards' CRG: PLL from the 100 MHz clock, 4x and 4x/90° clocks for the DDR3
            # PHY, IDELAYCTRL reference.
            self.crg = _CRG(platform, sys_clk_freq, with_dram=True)
        BoardSoC.__init__(self, platform, sys_clk_freq, ident="Subutai SoC on Arty A7", sim=sim, **kwargs)
        module = MT41K128M16(sys_clk_freq, "1:4")
        if sim:
            self.ddrphy = sdram_phy_model(module, SDRAM_DATA_WIDTH, sys_clk_freq)
        else:
            self.ddrphy = s7ddrphy.A7DDRPHY(
                platform.request("ddram"), memtype="DDR3", nphases=4, sys_clk_freq=sys_clk_freq
            )
        self.add_main_ram_sdram(self.ddrphy, module)


def limits(variant):
    return DeviceLimits(XILINX_BUDGET, *XILINX_DEVICES[VARIANTS[variant]])


def max_tiles(variant, l2_size=None):
    return limits(variant).max_tiles(l2_size)


def default_l2_size(variant):
    return limits(variant).default_l2_size()


# Build --------------------------------------------------------------------------------------------


def main():
    # 75 MHz: LiteX's Arty default is 100 MHz for one core; the Subutai tiles' timing on Artix-7 is
    # unmeasured here (no Vivado), so a margin is kept. The DDR3 runs at 4x (DDR3-600).
    parser = board_argparser(
        BOARD, "Subutai SoC on Arty A7 (Vivado project).", default_sys_clk_freq=75e6, toolchain="vivado"
    )
    parser.add_argument(
        "--variant",
        default="a7-100",
        choices=sorted(VARIANTS),
        help="Board variant: a7-100 (XC7A100T) or a7-35 (XC7A35T).",
    )
    args = parser.parse_args()
    if args.variant != "a7-100":
        args.board = f"digilent_arty_{args.variant.replace('-', '')}"  # Build directory.

    def make_soc(mesh_x, mesh_y, sys_clk_freq, sim=False):
        return ArtySoC(
            variant=args.variant,
            sys_clk_freq=sys_clk_freq,
            mesh_x=mesh_x,
            mesh_y=mesh_y,
            cpu_variant=args.cpu_variant,
            tile_ram_size=args.tile_ram_size,
            l2_size=args.l2_size,
            sim=sim,
        )

    # After the Vivado build (elsewhere): the board's FTDI JTAG.
    run_board(
        parser,
        args,
        make_soc,
        BOARD,
        "vivado",
        limits(args.variant),
        loader_board=f"arty_{args.variant.replace('-', '_')}t",
        device=VARIANTS[args.variant],
    )


if __name__ == "__main__":
    main()
