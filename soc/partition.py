#
# The simulation model cut into partitions of tiles, each a Verilator model of its own in a process
# of its own, exchanging the signals of the cut every cycle (Metro-MPI's cut of OpenPiton).
#
"""A Verilator model of the SoC cut into partitions that run side by side, cycle for cycle.

One model in one process runs every tile's code on every cycle, and that code outgrows a host
core's caches as the mesh grows (``make simspeed``). Metro-MPI (OpenPiton) cuts a many-core
design where its signals are registered, verilates each piece on its own and runs the pieces in
processes that exchange the cut's signals every cycle: the same machine, cycle for cycle, on as
many host cores as there are pieces. This module cuts the Subutai SoC the same way.

**The cut.** A tile generated as a module of its own (:class:`soc.tile_block.TileBlock`) meets the
rest of the SoC only through its clock and reset, its core's hold (``cpu_reset``), its uplink to
the memory system (Wishbone) and its router's four links to its neighbours. In a cut model the
uplink's register (:class:`gateware.uplink.RegisteredUplink`) is not in the tile module but in the
leader, on the memory system's side: what the leader receives then reaches that register and the
few gates of its answers, not the crossbar's arbitration and the banks behind it, which Verilator
would otherwise settle on every evaluation of the leader (the logic that hangs on a model's inputs,
its input region), twice a cycle. A :class:`Partitioning` gives each partition a range of
tiles (row-major, so mostly whole rows of the mesh); partition 0, the *leader*, holds tile 0 and
everything that is not a tile (the memory banks and their crossbar, the SoC bus, the UART, the
global control). Each other partition is a module of its own instances of the tile module
(:func:`group_module`), wired to each other as the mesh wires them; the leader is the SoC itself
with its remote tiles' instances left out and their ports made its own (``remote_tiles`` of
:class:`soc.subutai_soc.SubutaiSoC`).

**Why it is cycle for cycle the same machine.** Every signal a tile partition sends is a
register's output, or logic of its registers only: the router's links are registered (a flit on
a link comes from a register, ``ready`` from an input FIFO's level, :mod:`gateware.noc.router`),
and a core's requests come from its bus command registers through the tile's own decoding. The
leader's answers on the uplinks are not: the uplink register acknowledges the request it sees in
the same cycle (a burst's next word, when the address follows), and so does a bank behind it (as
in the single model). So every cycle runs in two steps (:data:`PROTOCOL`): each tile partition
publishes its signals for the cycle (they depend on nothing it receives: the harness checks it
on every cycle, and a net that moves with what its partition received ends the run with an
error); the leader takes them, settles its logic and publishes its own (the answers included);
then every partition takes what it receives and clocks its edge. Registering the answers instead
would cost a cycle on every store and uncached load of every model; the second step costs the
leader one settling of its logic.
The exchange keeps the signals' values bit for bit, so a partitioned model runs exactly the cycles
and prints exactly the output of the single one (``tests/test_partition.py``).

**The nets.** Each signal of the cut is a *net* (:class:`Net`) with one driving partition and one
reading partition, named after what it is, the same in both partitions' top modules: a link from
tile ``a`` to tile ``b`` ``link_<a>_<b>_<field>``, an uplink ``tile<i>_uplink_<field>``, a hold
``tile<i>_cpu_reset``, the SoC's reset ``soc_rst``. The C++ that copies them between a model's
ports and the exchange buffer is generated from the same list (:func:`ports_header`), one word
per net at a fixed place: the single source of the layout for every partition.
"""

import hashlib
import os
import re
from dataclasses import dataclass

from migen import *

from litex.gen import LiteXContext
from litex.gen.fhdl import verilog
from litex.soc.interconnect import wishbone

from gateware.noc.common import OPPOSITE, PORT_OFFSETS, PORTS, link_layout, tile_id
from soc.tile_block import RouterPorts

#: The exchange of a cycle, for docs and the harness: tile partitions publish first (registered
#: signals only), the leader answers, then every partition clocks its edge.
PROTOCOL = ("tiles publish", "leader settles and publishes", "all clock")

#: The nets' fields: a link's (:func:`gateware.noc.common.link_layout`) and an uplink's.
LINK_FIELDS = [(name, width, direction) for name, width, direction in link_layout()]


def uplink_interface():
    """A tile's uplink as the SoC's memory system sees it (the tile module's ``uplink_*``)."""
    return wishbone.Interface(data_width=32, address_width=32, addressing="word")


UPLINK_FIELDS = [
    (name, len(getattr(uplink_interface(), name)), d) for name, _, d in uplink_interface().layout
]


class PartitionError(ValueError):
    """A partitioning that cannot be built (too many partitions for the mesh, ...)."""


@dataclass(frozen=True)
class Net:
    """A signal of the cut: ``name`` (a port of its partitions' top modules), ``width`` bits,
    driven by partition ``driver``, read by the partitions ``readers``."""

    name: str
    width: int
    driver: int
    readers: tuple

    @property
    def words(self):
        """32-bit words it takes in the exchange buffer."""
        return (self.width + 31) // 32


class Partitioning:
    """``n`` partitions of a ``mesh_x`` x ``mesh_y`` SoC: partition ``k`` holds a contiguous range
    of tile ids (row-major), as even as they come; partition 0 also everything that is not a tile.
    """

    def __init__(self, mesh_x, mesh_y, n, leader_tiles=None):
        """``leader_tiles``: the leader's tiles (tile 0 and the next ones), the others shared
        evenly by the other partitions (default: every partition alike)."""
        n_tiles = mesh_x * mesh_y
        if not 1 <= n <= n_tiles:
            raise PartitionError(
                f"{n} partitions of {n_tiles} tiles: give 1 to {n_tiles} (one tile a partition at least)"
            )
        if leader_tiles is not None and not (
            1 <= leader_tiles <= n_tiles - (n - 1) and (n > 1 or leader_tiles == n_tiles)
        ):
            raise PartitionError(
                f"a leader of {leader_tiles} tiles in {n} partitions of {n_tiles} tiles: give 1 to "
                f"{n_tiles - (n - 1)} (every other partition a tile at least)"
            )
        self.mesh_x, self.mesh_y, self.n = mesh_x, mesh_y, n
        self.n_tiles = n_tiles
        self.leader_tiles = leader_tiles
        if leader_tiles is None:
            bounds = [k * n_tiles // n for k in range(n + 1)]
        else:
            rest = n_tiles - leader_tiles
            bounds = [0] + [leader_tiles + k * rest // (n - 1) for k in range(n)] if n > 1 else [0, n_tiles]
        self.ranges = [range(bounds[k], bounds[k + 1]) for k in range(n)]
        self._of = {i: k for k, r in enumerate(self.ranges) for i in r}
        self._nets = None
        self._place_blocks = None

    def tiles(self, k):
        return list(self.ranges[k])

    def partition_of(self, tile):
        return self._of[tile]

    def links(self):
        """Every link of the mesh: (``a``, ``port``, ``b``), from tile ``a`` through its ``port``
        to tile ``b``."""
        for a in range(self.n_tiles):
            x, y = a % self.mesh_x, a // self.mesh_x
            for p in PORTS[1:]:
                dx, dy = PORT_OFFSETS[p]
                if 0 <= x + dx < self.mesh_x and 0 <= y + dy < self.mesh_y:
                    yield a, p, tile_id(x + dx, y + dy, self.mesh_x)

    def crossing_links(self, k):
        """The links with one end in partition ``k``."""
        return [(a, p, b) for a, p, b in self.links() if (self._of[a] == k) != (self._of[b] == k)]

    def remote_tiles(self):
        """The tiles outside the leader."""
        return [i for i in range(self.n_tiles) if self._of[i] != 0]

    def nets(self):
        """Every net of the cut, in the order of the exchange buffer (a list of its own)."""
        if self._nets is None:
            self._nets = self._make_nets()
        return list(self._nets)

    def _make_nets(self):
        nets = [Net("soc_rst", 1, 0, tuple(range(1, self.n)))] if self.n > 1 else []
        for a, p, b in self.links():
            ka, kb = self._of[a], self._of[b]
            if ka == kb:
                continue
            for field, width, direction in LINK_FIELDS:
                forward = direction == DIR_M_TO_S
                nets.append(
                    Net(link_net(a, b, field), width, ka if forward else kb, (kb if forward else ka,))
                )
        for i in self.remote_tiles():
            k = self._of[i]
            nets.append(Net(f"tile{i}_cpu_reset", 1, 0, (k,)))
            for field, width, direction in UPLINK_FIELDS:
                tile_drives = direction == DIR_M_TO_S
                nets.append(
                    Net(
                        f"tile{i}_uplink_{field}",
                        width,
                        k if tile_drives else 0,
                        (0,) if tile_drives else (k,),
                    )
                )
        return nets

    def layout(self):
        """{net name: (first word, net)} of the exchange buffer, and its words: each driver's nets
        together, each driver's block on a cache line of its own (a partition writes only its
        block, and sends it whole to its readers over MPI)."""
        place, blocks = self._blocks()
        return dict(place), blocks[-1][0]

    def blocks(self):
        """(first word, words) of each partition's block of the exchange buffer."""
        return self._blocks()[1][: self.n]

    def _blocks(self):
        if self._place_blocks is None:
            self._place_blocks = self._make_blocks()
        return self._place_blocks

    def _make_blocks(self):
        place, blocks, word = {}, [], 0
        nets = self.nets()
        for k in range(self.n + 1):
            word = -(-word // 16) * 16  # 64-byte lines
            start = word
            for net in nets if k < self.n else ():
                if net.driver == k:
                    place[net.name] = (word, net)
                    word += net.words
            blocks.append((start, word - start))
        return place, blocks

    def readers(self, k):
        """The partitions that read nets of partition ``k``."""
        return sorted({r for net in self.nets() if net.driver == k for r in net.readers})

    def layout_id(self):
        """A 64-bit digest of the layout, which every partition checks against the leader's."""
        place, words = self.layout()
        text = ";".join(
            f"{n}:{w}:{net.width}:{net.driver}:{net.readers}" for n, (w, net) in sorted(place.items())
        )
        return int.from_bytes(hashlib.sha256(f"{words};{text}".encode()).digest()[:8], "little")

    def providers(self, k):
        """The partitions whose nets partition ``k`` reads."""
        return sorted({net.driver for net in self.nets() if k in net.readers})


def link_net(a, b, field):
    return f"link_{a}_{b}_{field}"


def _link_fields(record):
    return [(field, getattr(record, field)) for field, _, _ in LINK_FIELDS]


def boundary_signals(partitioning, k, routers, uplinks, resets, rst):
    """{net name: signal} of partition ``k``'s side of the cut. ``routers``/``uplinks``/``resets``:
    by tile id, the tiles' router links (:class:`soc.tile_block.RouterPorts`), uplinks and holds
    as partition ``k`` has them: its own tiles' (the ports of their instances) and, in the leader,
    its remote tiles' (which the mesh and the memory system are wired to); ``rst`` the reset."""
    P = partitioning
    mine = set(P.tiles(k))
    signals = {"soc_rst": rst} if P.n > 1 else {}
    for a, p, b in P.crossing_links(k):
        # The leader names the remote end's record (which its mesh drives and reads), a tile
        # partition its own end's (its instance's ports): the same signals of the same link.
        own_end = a in mine
        if k == 0:
            record = routers[b].inputs[OPPOSITE[p]] if own_end else routers[a].outputs[p]
        else:
            record = routers[a].outputs[p] if own_end else routers[b].inputs[OPPOSITE[p]]
        for field, sig in _link_fields(record):
            signals[link_net(a, b, field)] = sig
    tiles = P.remote_tiles() if k == 0 else P.tiles(k)
    for i in tiles:
        signals[f"tile{i}_cpu_reset"] = resets[i]
        for field, _, _ in UPLINK_FIELDS:
            signals[f"tile{i}_uplink_{field}"] = getattr(uplinks[i], field)
    for name, sig in signals.items():
        sig.name_override = name
    return signals


def leader_signals(soc, partitioning):
    """The leader's side of the cut in ``soc`` (a :class:`soc.subutai_soc.SubutaiSoC` built with
    ``remote_tiles``): adds the signals it needs (the holds, the reset) and returns them by net."""
    resets = {}
    for i in partitioning.remote_tiles():
        resets[i] = Signal(name=f"tile{i}_cpu_reset")
        soc.comb += resets[i].eq(soc.cores.resets[i])
    rst = Signal(name="soc_rst")
    soc.comb += rst.eq(ResetSignal("sys"))
    return boundary_signals(partitioning, 0, soc.noc.routers, soc.remote_uplinks, resets, rst)


class GroupModule(Module):
    """Partition ``k`` (> 0): instances of the tile module ``block`` (:class:`soc.tile_block.TileBlock`)
    for its tiles, linked as :class:`gateware.noc.mesh.Mesh` links them, the links that leave the
    partition, the uplinks, the holds, the clock and the reset as ports (``self.ios``)."""

    def __init__(self, block, partitioning, k):
        P = partitioning
        assert k > 0
        self.clock_domains.cd_sys = cd_sys = ClockDomain("sys")
        cd_sys.clk.name_override = "sys_clk"
        mine = P.tiles(k)
        routers = {i: RouterPorts(i) for i in mine}
        uplinks = {i: uplink_interface() for i in mine}
        resets = {i: Signal(name=f"tile{i}_cpu_reset") for i in mine}
        for i in mine:
            x, y = i % P.mesh_x, i // P.mesh_x
            self.specials += block.instance(i, x, y, resets[i], uplinks[i], routers[i])
        # The mesh inside the partition, and its edges tied off as the mesh ties them.
        linked = set()
        for a, p, b in P.links():
            if a in routers and b in routers:
                self.comb += routers[a].outputs[p].connect(routers[b].inputs[OPPOSITE[p]])
            linked |= {(a, p), (b, OPPOSITE[p])}
        for i in mine:
            for p in PORTS[1:]:
                if (i, p) not in linked:
                    self.comb += [
                        routers[i].inputs[p].valid.eq(0),
                        routers[i].outputs[p].ready.eq(2 ** len(routers[i].outputs[p].ready) - 1),
                    ]
        self.signals = boundary_signals(P, k, routers, uplinks, resets, cd_sys.rst)
        self.ios = {cd_sys.clk} | set(self.signals.values())


def group_verilog(block, partitioning, k, platform, path):
    """Write partition ``k``'s top module (named ``sim``, as the leader's) to ``path``."""
    module = GroupModule(block, partitioning, k)
    top, LiteXContext.top = LiteXContext.top, None
    try:
        verilog.convert(module, ios=module.ios, name="sim", platform=platform).write(path)
    finally:
        LiteXContext.top = top
    return module


_PORT_RE = re.compile(r"^\s*(input|output)\s+(?:wire|reg)?\s*(?:\[(\d+):0\])?\s*(\w+)\s*[,)]?\s*$")


def check_ports(path, partitioning, k):
    """Check that the top module in ``path`` has every net of partition ``k`` as a port of its
    direction and width: a net a partition's logic does not drive (or drives when it should
    read) is a cut in the wrong place, which would run silently wrong."""
    ports = {}
    with open(path) as f:
        for line in f:
            if line.startswith(");"):
                break
            m = _PORT_RE.match(line)
            if m:
                ports[m.group(3)] = (m.group(1), int(m.group(2) or 0) + 1)
    for net in partitioning.nets():
        if k != net.driver and k not in net.readers:
            continue
        want = ("output" if net.driver == k else "input", net.width)
        if ports.get(net.name) != want:
            raise PartitionError(
                f"partition {k}'s top module ({path}) has {net.name} as {ports.get(net.name)}, not {want}"
            )


def ports_header(partitioning, k, binaries=()):
    """The C++ header of partition ``k``'s harness (soc/sim_harness/partition.cpp): the buffer's
    layout and the copies between the model's ports and the buffer; the leader's names the other
    partitions' binaries (``binaries``: paths relative to the leader's)."""
    P = partitioning
    place, words = P.layout()
    providers = P.providers(k)
    out = [
        "// Generated by soc/partition.py: the exchange of one partition of the cut model.",
        "#pragma once",
        f"#define PARTITION_INDEX {k}",
        f"#define N_PARTITIONS {P.n}",
        f"#define NET_WORDS {words}",
        f"#define LAYOUT_ID 0x{P.layout_id():016x}ull",
        f"static const int PROVIDERS[] = {{{', '.join(map(str, providers)) or '-1'}}};",
        f"static const int N_PROVIDERS = {len(providers)};",
        f"static const int READERS[] = {{{', '.join(map(str, P.readers(k))) or '-1'}}};",
        f"static const int N_READERS = {len(P.readers(k))};",
        "// Each partition's block of the buffer: first word, words.",
        f"static const int BLOCK_START[] = {{{', '.join(str(b[0]) for b in P.blocks())}}};",
        f"static const int BLOCK_WORDS[] = {{{', '.join(str(b[1]) for b in P.blocks())}}};",
        "",
        "// The nets this partition reads: from the buffer into the model's inputs.",
        "static inline void partition_receive(Vsim *top, const uint32_t *nets)",
        "{",
    ]
    for name, (word, net) in place.items():
        if k in net.readers:
            if net.words == 1:
                out.append(f"\ttop->{name} = nets[{word}];")
            else:
                out.append(f"\ttop->{name} = (uint64_t)nets[{word}] | (uint64_t)nets[{word + 1}] << 32;")
    out += [
        "}",
        "",
        "// The nets this partition drives: from the model's outputs into the buffer.",
        "static inline void partition_publish(const Vsim *top, uint32_t *nets)",
        "{",
    ]
    for name, (word, net) in place.items():
        if net.driver == k:
            out.append(f"\tnets[{word}] = (uint32_t)top->{name};")
            if net.words == 2:
                out.append(f"\tnets[{word + 1}] = (uint32_t)((uint64_t)top->{name} >> 32);")
    out.append("}")
    published = [(w, net) for w, net in place.values() if net.driver == k]
    out += [
        "",
        "// The nets this partition drives (its block's first word, words, name).",
        "static const struct { int word, words; const char *name; } PUBLISHED[] = {",
    ]
    out += [f'\t{{{w}, {net.words}, "{net.name}"}},' for w, net in published] or ['\t{0, 0, ""},']
    out += ["};", f"static const int N_PUBLISHED = {len(published)};"]
    # The leader starts the others; theirs is empty.
    out += ["", "// The other partitions' binaries, relative to the leader's directory."]
    out.append("static const char *const PARTITION_BINARIES[] = {")
    out += [f'\t"{b}",' for b in (binaries if k == 0 else ())] or ["\tnullptr,"]
    out.append("};")
    if any(net.width > 64 for net in P.nets()):
        raise PartitionError("a net wider than 64 bits")
    return "\n".join(out) + "\n"


def partition_dir(gateware_dir, n, leader_tiles=None):
    """Where a model cut into ``n`` partitions (the leader's ``leader_tiles``, :class:`Partitioning`)
    is generated and built, beside the single model: ``partitions<n>[_leader<tiles>]``."""
    return os.path.join(
        gateware_dir, f"partitions{n}" + ("" if leader_tiles is None else f"_leader{leader_tiles}")
    )
