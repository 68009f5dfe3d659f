#
# How many tiles of the Subutai SoC fit an FPGA device, and which L2 it can afford: budgets of
# LUTs and block RAMs per tile and for the rest of the SoC, measured on real builds
# (results/boards.md), and a device's limits under them. Used by the board targets (boards/).
#

from soc.subutai_soc import KiB

# How many tiles fit a device, from two figures measured on real builds (results/boards.md):
# LUTs of one tile (VexRiscv + router + NI + Subutai-HW, yosys synth_ecp5 -nowidelut) and of the
# rest of the SoC (SDRAM controller + L2, BIOS ROM, SRAM, UART, global blocks). Placement needs
# headroom, so only FILL of the device's LUTs is budgeted: the smallest share that did not build
# at the target clock lies above it (results/boards.md has the builds); the 8-tile ULX3S build
# takes --lut-fill 0.85 with its measured nextpnr options (boards/radiona_ulx3s.py). Block RAMs
# sit in rows of their own (soc/floorplan.py) and need no routing slack, so BRAM_FILL of them
# is budgeted.
FILL = 0.75
BRAM_FILL = 0.92

ECP5_DEVICES = {
    # device     : (LUT4,   DP16KD)
    "LFE5U-12F": (12_288, 32),
    "LFE5U-25F": (24_288, 56),
    "LFE5U-45F": (43_848, 108),
    "LFE5U-85F": (83_640, 208),
}

XILINX_DEVICES = {
    # device              : (LUT6,   RAMB36)
    "xc7a35ticsg324-1L": (20_800, 50),
    "xc7a100tcsg324-1": (63_400, 135),
}

# L2 cache in front of LiteDRAM: the size the measured builds had (in the budgets' base figures),
# and the sizes a default is chosen from (its data and tags are block RAM: each size costs DP16KD,
# which the budget counts, and no LUT4 site).
L2_MEASURED = 8 * KiB
L2_SIZES = [8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB]


class TileBudget:
    """LUTs and block RAMs of one tile and of the rest of the SoC (without its BIOS ROM, with an
    L2 of ``L2_MEASURED``) on one FPGA family; ``bram_bytes``: bytes of ROM (or L2 data) one block
    RAM holds at 32-bit width."""

    def __init__(self, lut_per_tile, lut_base, bram_per_tile, bram_base, bram_bytes):
        self.lut_per_tile = lut_per_tile
        self.lut_base = lut_base
        self.bram_per_tile = bram_per_tile
        self.bram_base = bram_base
        self.bram_bytes = bram_bytes

    def max_tiles(self, luts, brams, rom_size=64 * KiB, l2_size=L2_MEASURED, limit=16, fill=FILL):
        by_lut = int((fill * luts - self.lut_base) // self.lut_per_tile)
        base = self.bram_base + (rom_size + l2_size - L2_MEASURED) // self.bram_bytes
        by_bram = int((BRAM_FILL * brams - base) // self.bram_per_tile)
        return max(0, min(limit, by_lut, by_bram))

    def default_l2_size(self, luts, brams, rom_size=64 * KiB, fill=FILL):
        """The largest L2 (of ``L2_SIZES``) that costs the device no tile: the block RAMs the
        tiles leave over once the LUTs are spent go to the L2, which every refill of every core
        crosses (docs/architecture.md, "Boards")."""
        tiles = self.max_tiles(luts, brams, rom_size, fill=fill)
        if tiles == 0:
            return L2_MEASURED
        fits = [s for s in L2_SIZES if self.max_tiles(luts, brams, rom_size, s, fill=fill) >= tiles]
        return fits[-1] if fits else L2_SIZES[0]


class DeviceLimits:
    """What one device holds with a budget: its default L2 and its tile limit for an L2 size.
    ``luts``, ``brams``: the device's LUT4 (or LUT6) and block RAMs; ``rom_size``: its BIOS ROM;
    ``fill``: the share of its LUTs the tiles may take (``--lut-fill``)."""

    def __init__(self, budget, luts, brams, rom_size=64 * KiB, fill=FILL):
        self.budget, self.luts, self.brams, self.rom_size = budget, luts, brams, rom_size
        self.fill = fill

    def default_l2_size(self):
        return self.budget.default_l2_size(self.luts, self.brams, self.rom_size, fill=self.fill)

    def max_tiles(self, l2_size=None):
        l2_size = self.default_l2_size() if l2_size is None else l2_size
        return self.budget.max_tiles(self.luts, self.brams, self.rom_size, l2_size, fill=self.fill)


# ECP5, measured on ULX3S 85F placements (results/boards.md; -nowidelut): 7,870 LUT4 sites per
# tile (a 2x2 router has three ports, most 4x2 routers four), about 1,750 for the rest; 20 DP16KD
# per tile, 13 for the rest (the atomic unit's 4 included) + the ROM + the L2 above 8 KiB.
ECP5_BUDGET = TileBudget(
    lut_per_tile=7_870, lut_base=1_750, bram_per_tile=20, bram_base=13, bram_bytes=2 * KiB
)
# Xilinx 7-series: an estimate (no Vivado here) from the ECP5 figures: a LUT6 holds about 1.6
# LUT4 of this logic, a RAMB36 twice a DP16KD.
XILINX_BUDGET = TileBudget(
    lut_per_tile=4_920, lut_base=1_090, bram_per_tile=10, bram_base=7, bram_bytes=4 * KiB
)
