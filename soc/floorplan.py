#
# Block-RAM floorplan of the mesh on an ECP5: every tile's block RAMs are locked in the part of
# the device that its mesh position maps to, so that the placer gathers each tile's logic around
# them and the tiles lie side by side as in the mesh, instead of interleaved.
#
"""Block-RAM floorplan of a mesh SoC on an ECP5 (``--floorplan`` of the board targets).

Why: nextpnr-ecp5 built without Python (YoWASP's) has no placement regions, but it honours a
``BEL`` attribute on any cell, and its placers pull the logic of a cell's nets toward the cells
locked in place. A tile's 20 block RAMs (its core's caches and register file, its SRAM, its
Subutai scratchpad) are wired to most of its logic; locked in the tile's own rectangle of the
device, they keep that logic there, and the mesh links between neighbouring tiles short
(docs/architecture.md, Boards, says what it gave).

Three steps, each a function:

- :func:`ebr_sites`: the device's block-RAM sites (``X<x>/Y<y>/EBR<n>``), from nextpnr itself:
  a netlist of as many ``DP16KD`` as the device has, placed out of context (cached in
  ``build/``), so no site list is copied from a datasheet;
- :func:`tile_of_cells`: which tile each ``DP16KD`` of the synthesized SoC belongs to, by a
  breadth-first search over the netlist from the nets named after each tile (``..._tile<i>_``):
  a block RAM is the tile's when that tile reaches it within a few cells and clearly before
  every other tile (the shared L2, ROM and atomic unit are about as near to every tile: they
  stay free);
- :func:`assign_sites`: the sites split into ``mesh_x`` column bands and ``mesh_y`` row bands;
  tile (x, y) takes the sites of its band nearest the band's centre, its RAMs in name order (a
  memory's blocks next to each other); the sites it leaves are the shared RAMs'.
"""

import json
import os
import re
import subprocess
from collections import Counter, defaultdict, deque

from gateware.build import BUILD_DIR

# A net whose name carries a tile's index (Migen names a tile's signals <soc>_tile<i>_...).
TILE_NET = re.compile(r"(?:^|_)tile(\d+)_")
# Names that yosys and its ECP5 mapping make up for the nets between the cells they create
# (<net>_LUT4_Z_..., <net>_TRELLIS_FF_Q_DI, ...): taken from one neighbouring net, they can name
# a net of the shared bus after a tile (on a 2x2 netlist, tile 3's was one cell from the ROM).
DERIVED_NET = re.compile(r"_LUT4|_TRELLIS|_CCU2C|_DPR|_PFUMX|_L6MUX|_DI\b|\$")
# Nets with more sinks than this (clock, resets, enables, wide buses' selects) are not followed:
# they join every tile to every other.
MAX_FANOUT = 40
# A block RAM is a tile's when that tile's nets reach it within MAX_DEPTH cells and every other
# tile's at least MARGIN cells later. Measured on the 4- and 6-tile ULX3S netlists: a tile
# reaches its own block RAMs in 0 (SRAM) to 5 (the core's register file) cells, each at least 3
# before any other tile; the shared ones (L2, ROM, atomic unit, SoC SRAM) behind the uplinks and
# the SoC bus are 3 to 6 cells from the nearest tile and at most one more from the next.
MAX_DEPTH = 6
MARGIN = 2


class FloorplanError(Exception):
    pass


# Block-RAM sites --------------------------------------------------------------------------------


def _probe_verilog(n):
    """``n`` DP16KD in a chain (each one's read data is the next one's write data), so none is
    removed and nextpnr places them all."""
    lines = ["module ebr_probe(input clk, input [8:0] a, input [17:0] d, output [17:0] q);"]
    prev = "d"
    adr = lambda port, bits: ",".join(f".AD{port}{13 - k}(a[{b}])" for k, b in enumerate(bits))
    for i in range(n):
        lines += [
            f"wire [17:0] o{i};",
            f"DP16KD #(.DATA_WIDTH_A(18), .DATA_WIDTH_B(18)) r{i} (.CLKA(clk), .CLKB(clk), "
            ".CEA(1'b1), .CEB(1'b1), .OCEA(1'b1), .OCEB(1'b1), .WEA(1'b1), .WEB(1'b0), "
            + adr("A", range(8, -1, -1))
            + ", "
            + adr("B", range(9))
            + ", "
            + ", ".join(f".DIA{j}({prev}[{j}])" for j in range(18))
            + ", "
            + ", ".join(f".DOB{j}(o{i}[{j}])" for j in range(18))
            + ");",
        ]
        prev = f"o{i}"
    lines += [f"assign q = {prev};", "endmodule", ""]
    return "\n".join(lines)


def ebr_sites(device_args, n_ebr, tools_env=None, cache_dir=None, log=print):
    """The block-RAM sites of the device that nextpnr's ``device_args`` (e.g. ``["--85k",
    "--package", "CABGA381"]``) select, as ``[(x, y, bel)]``: ``n_ebr`` DP16KD placed out of
    context (about 15 seconds the first time; cached in ``cache_dir``)."""
    cache_dir = cache_dir or os.path.join(BUILD_DIR, "ebr_sites")
    key = "_".join(a.lstrip("-") for a in device_args)
    cache = os.path.join(cache_dir, f"{key}.json")
    if os.path.exists(cache):
        with open(cache) as f:
            return [tuple(s) for s in json.load(f)]
    work = os.path.join(cache_dir, key)
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "ebr_probe.v"), "w") as f:
        f.write(_probe_verilog(n_ebr))
    log(f"floorplan: placing {n_ebr} block RAMs to find the sites of {' '.join(device_args)}")
    # Relative paths: YoWASP's tools do not see the host's /tmp (docs/architecture.md).
    for cmd in (
        [
            "yosys",
            "-q",
            "-l",
            "yosys.log",
            "-p",
            "read_verilog ebr_probe.v; synth_ecp5 -top ebr_probe -json ebr_probe.json",
        ],
        [
            "nextpnr-ecp5",
            *device_args,
            "--json",
            "ebr_probe.json",
            "--out-of-context",
            "--no-route",
            "--write",
            "placed.json",
            "-l",
            "nextpnr.log",
            "-q",
        ],
    ):
        p = subprocess.run(cmd, cwd=work, env=tools_env, capture_output=True, text=True)
        if p.returncode != 0:
            raise FloorplanError(f"{cmd[0]} failed on the block-RAM probe, see {work}")
    with open(os.path.join(work, "placed.json")) as f:
        # nextpnr names the module it writes "top", whatever the netlist's top was.
        cells = next(iter(json.load(f)["modules"].values()))["cells"]
    sites = []
    for cell in cells.values():
        if cell["type"] == "DP16KD":
            bel = cell["attributes"]["NEXTPNR_BEL"]
            x, y = re.match(r"X(\d+)/Y(\d+)/", bel).groups()
            sites.append((int(x), int(y), bel))
    if len(sites) != n_ebr:
        raise FloorplanError(f"the probe placed {len(sites)} of {n_ebr} block RAMs, see {work}")
    sites.sort()
    with open(cache, "w") as f:
        json.dump(sites, f)
    return sites


# Tiles of the block RAMs ------------------------------------------------------------------------


def _distances(cells, cells_of_bit, seeds, limit, max_fanout):
    """Cells reached from the cells on the ``seeds`` bits within ``limit`` steps (a step: a net
    of at most ``max_fanout`` sinks), with their distance."""
    dist, frontier = {}, deque()
    for b in seeds:
        users = cells_of_bit.get(b, [])
        if len(users) <= max_fanout:
            for c in users:
                if c not in dist:
                    dist[c] = 0
                    frontier.append(c)
    while frontier:
        c = frontier.popleft()
        if dist[c] >= limit:
            continue
        for bits in cells[c]["connections"].values():
            for b in bits:
                users = cells_of_bit.get(b, []) if isinstance(b, int) else []
                if len(users) > max_fanout:
                    continue
                for u in users:
                    if u not in dist:
                        dist[u] = dist[c] + 1
                        frontier.append(u)
    return dist


def tile_of_cells(module, cell_type="DP16KD", max_fanout=MAX_FANOUT, max_depth=MAX_DEPTH, margin=MARGIN):
    """``{cell name: tile}`` for the ``cell_type`` cells of a yosys JSON ``module`` that belong to
    one tile: a breadth-first search from each tile's named nets (Migen's names, not those yosys
    derives from them), through nets of at most ``max_fanout`` sinks, gives every cell its
    distance from each tile; a cell is tile ``t``'s when ``t`` reaches it within ``max_depth``
    steps and every other tile at least ``margin`` steps later. The shared block RAMs, as near
    to one tile as to the next, are nobody's."""
    cells = module["cells"]
    seeds = defaultdict(set)
    for name, net in module["netnames"].items():
        m = TILE_NET.search(name)
        if m and not DERIVED_NET.search(name):
            seeds[int(m.group(1))].update(b for b in net["bits"] if isinstance(b, int))
    cells_of_bit = defaultdict(list)
    for name, cell in cells.items():
        for bits in cell["connections"].values():
            for b in bits:
                if isinstance(b, int):
                    cells_of_bit[b].append(name)
    limit = max_depth + margin
    dist = {t: _distances(cells, cells_of_bit, bits, limit, max_fanout) for t, bits in seeds.items()}
    owner = {}
    for name, cell in cells.items():
        if cell["type"] != cell_type:
            continue
        reach = sorted((d.get(name, limit + 1), t) for t, d in dist.items())
        (d0, t0), others = reach[0], reach[1:]
        if d0 <= max_depth and all(d >= d0 + margin for d, _ in others):
            owner[name] = t0
    return owner


# Sites of the tiles -----------------------------------------------------------------------------


def _bands(values, n):
    """``values`` (sorted, distinct) cut into ``n`` contiguous bands of nearly equal size."""
    return [values[len(values) * i // n : len(values) * (i + 1) // n] for i in range(n)]


def assign_sites(sites, tiles_of, mesh_x, mesh_y):
    """``{cell: bel}``: tile ``t`` (at x = t % mesh_x, y = t // mesh_x) takes the sites of its
    column and row band nearest the band's centre for its cells (``tiles_of``: ``{cell: t}``),
    in name order, row by row. Raises FloorplanError when a band holds fewer sites than its
    tile needs."""
    xs = sorted({x for x, _, _ in sites})
    ys = sorted({y for _, y, _ in sites})
    if len(ys) < mesh_y or len(xs) < mesh_x:
        raise FloorplanError(
            f"{len(xs)} columns and {len(ys)} rows of block RAMs cannot hold a {mesh_x}x{mesh_y} mesh"
        )
    col_bands, row_bands = _bands(xs, mesh_x), _bands(ys, mesh_y)
    cells_of = defaultdict(list)
    for cell, t in tiles_of.items():
        cells_of[t].append(cell)
    placed = {}
    for t, cells in sorted(cells_of.items()):
        tx, ty = t % mesh_x, t // mesh_x
        if ty >= mesh_y:
            raise FloorplanError(f"tile {t} is outside the {mesh_x}x{mesh_y} mesh")
        band = [s for s in sites if s[0] in col_bands[tx] and s[1] in row_bands[ty]]
        if len(band) < len(cells):
            raise FloorplanError(f"tile {t} has {len(cells)} block RAMs, its part of the device {len(band)}")
        cx = (min(s[0] for s in band) + max(s[0] for s in band)) / 2
        cy = (min(s[1] for s in band) + max(s[1] for s in band)) / 2
        # Row by row (the row nearest the band's centre first), each from the centre outwards:
        # a memory's blocks side by side in one row.
        rows = sorted({s[1] for s in band}, key=lambda y: (abs(y - cy), y))
        band.sort(key=lambda s: (rows.index(s[1]), abs(s[0] - cx), s))
        for cell, site in zip(sorted(cells), band):
            placed[cell] = site[2]
    return placed


# The netlist ------------------------------------------------------------------------------------


def anchor_block_rams(
    netlist_path, top, mesh_x, mesh_y, device_args, n_ebr, tools_env=None, cache_dir=None, log=print
):
    """Lock every tile's block RAMs of the yosys JSON netlist ``netlist_path`` (module ``top``)
    in its part of the device (a ``BEL`` attribute each, which nextpnr honours); rewrites the
    netlist and returns ``{"tiles": {tile: block RAMs}, "shared": block RAMs left free}``
    (``cache_dir``: where :func:`ebr_sites` keeps the device's sites)."""
    with open(netlist_path) as f:
        netlist = json.load(f)
    module = netlist["modules"][top]
    sites = ebr_sites(device_args, n_ebr, tools_env=tools_env, cache_dir=cache_dir, log=log)
    tiles_of = tile_of_cells(module)
    n_tiles = mesh_x * mesh_y
    found = sorted(set(tiles_of.values()))
    if found != list(range(n_tiles)):
        raise FloorplanError(f"block RAMs found for tiles {found}, expected 0 to {n_tiles - 1}")
    placed = assign_sites(sites, tiles_of, mesh_x, mesh_y)
    for cell, bel in placed.items():
        module["cells"][cell]["attributes"]["BEL"] = bel
    with open(netlist_path, "w") as f:
        json.dump(netlist, f)
    per_tile = Counter(tiles_of.values())
    total = sum(1 for c in module["cells"].values() if c["type"] == "DP16KD")
    summary = {"tiles": dict(sorted(per_tile.items())), "shared": total - len(placed)}
    log(
        f"floorplan: {len(placed)} block RAMs locked in their tiles' parts of the device "
        f"({', '.join(f'tile {t}: {n}' for t, n in summary['tiles'].items())}); "
        f"{summary['shared']} shared ones left to the placer"
    )
    return summary
