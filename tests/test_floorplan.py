"""The block-RAM floorplan of the board targets (soc/floorplan.py): the device's block-RAM
sites as nextpnr places them, which tile a block RAM of a netlist belongs to, and the sites each
tile takes."""

import json
import os
import re

import pytest

from soc.floorplan import assign_sites, ebr_sites, tile_of_cells, anchor_block_rams, FloorplanError, MAX_DEPTH
from soc.fpga_flow import yowasp_path
from soc.nextpnr import nextpnr_device_args


# Sites ------------------------------------------------------------------------------------------


def _grid(xs, ys):
    return [(x, y, f"X{x}/Y{y}/EBR{x % 4}") for x in xs for y in ys]


def test_tiles_take_the_sites_of_their_band_row_by_row():
    sites = _grid(range(0, 40, 2), [10, 30, 50, 70])  # 20 columns, 4 rows
    tiles = {f"t{t}.ram{k}": t for t in range(4) for k in range(12)}
    placed = assign_sites(sites, tiles, 2, 2)
    assert len(placed) == len(tiles) and len(set(placed.values())) == len(tiles)
    xy = {c: tuple(map(int, re.match(r"X(\d+)/Y(\d+)", b).groups())) for c, b in placed.items()}
    for cell, (x, y) in xy.items():
        t = tiles[cell]
        assert (x < 20) == (t % 2 == 0), (cell, x)  # column band of the tile's x
        assert (y < 40) == (t // 2 == 0), (cell, y)  # row band of its y
    # Ten sites a row in a band: the first ten RAMs (in name order) fill one row, from the
    # band's centre outwards; the rest go to the other row.
    t0 = sorted(c for c in tiles if tiles[c] == 0)
    first = [xy[c] for c in t0[:10]]
    assert len({y for _, y in first}) == 1
    assert abs(first[0][0] - 9) <= 1 and all(xy[c][1] != first[0][1] for c in t0[10:])


def test_a_band_too_small_is_an_error():
    sites = _grid(range(0, 8, 2), [10, 30])
    with pytest.raises(FloorplanError, match="tile 0 has 5 block RAMs, its part of the device 4"):
        assign_sites(sites, {f"t{t}.ram{k}": t for t in range(2) for k in range(5)}, 2, 1)
    with pytest.raises(FloorplanError, match="cannot hold a 1x3 mesh"):
        assign_sites(sites, {"a": 0}, 1, 3)


def test_device_options_of_the_nextpnr_command():
    cmd = (
        "nextpnr-ecp5 --json a.json --lpf a.lpf --report r.json --router router2 --85k "
        "--package CABGA381 --speed 6 --seed 1"
    )
    assert nextpnr_device_args(cmd) == ["--85k", "--package", "CABGA381"]
    assert nextpnr_device_args("nextpnr-ecp5 --um5g-45k --json a.json") == ["--um5g-45k"]


def test_block_ram_sites_come_from_nextpnr(tmp_path):
    """The probe places as many DP16KD as an LFE5U-25F has (56) with the real nextpnr-ecp5 and
    reads their sites back; the second call is the cache."""
    env = dict(os.environ, PATH=yowasp_path() + os.pathsep + os.environ.get("PATH", ""))
    sites = ebr_sites(
        ["--25k", "--package", "CABGA381"], 56, tools_env=env, cache_dir=str(tmp_path), log=lambda m: None
    )
    assert len(sites) == 56 == len({s[2] for s in sites})
    assert all(re.fullmatch(r"X\d+/Y\d+/EBR\d", s[2]) for s in sites)
    assert len({s[1] for s in sites}) >= 2  # more than one row of block RAMs
    assert ebr_sites(["--25k", "--package", "CABGA381"], 56, cache_dir=str(tmp_path)) == sites


# Tiles of the block RAMs --------------------------------------------------------------------------


class _Netlist:
    """A yosys JSON module made by hand: cells joined by named nets."""

    def __init__(self):
        self.cells, self.netnames, self.bit = {}, {}, 2

    def net(self, name):
        self.netnames[name] = {"bits": [self.bit]}
        self.bit += 1
        return self.netnames[name]["bits"][0]

    def cell(self, name, type_, *bits):
        self.cells[name] = {
            "type": type_,
            "attributes": {},
            "connections": {f"P{i}": [b] for i, b in enumerate(bits)},
        }

    def chain(self, prefix, start, length, end_type="DP16KD", end=None):
        """``length`` LUTs from the net ``start``, then a cell ``end`` of ``end_type``."""
        prev = start
        for i in range(length):
            nxt = self.net(f"{prefix}_n{i}")
            self.cell(f"{prefix}_lut{i}", "LUT4", prev, nxt)
            prev = nxt
        self.cell(end or f"{prefix}_ram", end_type, prev)

    def module(self):
        return {"cells": self.cells, "netnames": self.netnames}


def _two_tiles_and_a_shared_ram():
    n = _Netlist()
    bus = n.net("soc_shared_bus")
    for t in range(2):
        own = n.net(f"soc_tile{t}_crossbar_adr")
        n.chain(f"cache{t}", own, 2, end=f"VexRiscv_{t}.cache")  # the core's RAM
        n.cell(f"sram{t}", "DP16KD", own)  # the tile's SRAM
        n.chain(f"uplink{t}", own, 2, end_type="LUT4", end=f"uplink{t}_out")
        n.cells[f"uplink{t}_out"]["connections"]["P1"] = [bus]  # onto the shared bus
    n.chain("l2", bus, 1, end="l2_data")  # behind the bus
    # A name yosys derived from a tile's net does not make a net the tile's (this one, on the
    # bus next to the L2, would give the L2 to tile 0).
    n.netnames["soc_tile0_crossbar_adr_LUT4_Z_1"] = {"bits": n.netnames["l2_n0"]["bits"]}
    n.chain("far", n.net("soc_tile0_far"), MAX_DEPTH + 1, end="far_ram")
    return n


def test_block_rams_belong_to_the_tile_that_reaches_them_first():
    n = _two_tiles_and_a_shared_ram()
    owner = tile_of_cells(n.module())
    assert owner == {"VexRiscv_0.cache": 0, "sram0": 0, "VexRiscv_1.cache": 1, "sram1": 1}
    # The shared RAMs are as near to both tiles: nobody's. A RAM beyond MAX_DEPTH: nobody's.
    assert "l2_data" not in owner and "far_ram" not in owner


def test_anchoring_rewrites_the_netlist(tmp_path):
    n = _two_tiles_and_a_shared_ram()
    del n.cells["far_ram"]
    path = tmp_path / "soc.json"
    path.write_text(json.dumps({"modules": {"soc": n.module()}}))
    cache = tmp_path / "sites"
    cache.mkdir()
    (cache / "probe.json").write_text(json.dumps(_grid(range(0, 8, 2), [10, 30])))
    summary = anchor_block_rams(
        str(path), "soc", 2, 1, ["--probe"], 8, log=lambda m: None, cache_dir=str(cache)
    )
    assert summary == {"tiles": {0: 2, 1: 2}, "shared": 1}
    cells = json.loads(path.read_text())["modules"]["soc"]["cells"]
    bels = {c: cells[c]["attributes"].get("BEL") for c in cells if cells[c]["type"] == "DP16KD"}
    assert bels["l2_data"] is None
    x = lambda c: int(re.match(r"X(\d+)", bels[c]).group(1))
    assert x("sram0") < 4 <= x("sram1") and x("VexRiscv_0.cache") < 4 <= x("VexRiscv_1.cache")
    # Three tiles' worth of RAMs expected, two found: the netlist is not what the mesh says.
    path.write_text(json.dumps({"modules": {"soc": n.module()}}))
    with pytest.raises(FloorplanError, match="expected 0 to 2"):
        anchor_block_rams(str(path), "soc", 3, 1, ["--probe"], 8, log=lambda m: None, cache_dir=str(cache))
