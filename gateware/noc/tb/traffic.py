#
# Traffic for the NoC testbench: packets, generators, traffic files.
#
"""Packets and traffic patterns for the Verilator testbench (all randomness from a seeded
``random.Random``, so every run is reproducible)."""

from dataclasses import dataclass
from typing import Optional

from gateware.noc.common import head_flit_value, tile_xy


@dataclass
class Packet:
    src: int  # Source tile.
    dst: int  # Destination tile (may be outside the mesh if ``dst_xy`` says so).
    vc: int
    payload: list  # Words after the head flit.
    inject: int = 0  # Earliest injection cycle.
    type: int = 0
    dst_xy: Optional[tuple] = None  # Explicit destination coordinates (to address outside the mesh).

    def destination(self, mesh_x):
        return self.dst_xy if self.dst_xy is not None else tile_xy(self.dst, mesh_x)

    def valid(self, mesh_x, mesh_y):
        dx, dy = self.destination(mesh_x)
        return dx < mesh_x and dy < mesh_y

    def head(self, mesh_x):
        dx, dy = self.destination(mesh_x)
        sx, sy = tile_xy(self.src, mesh_x)
        return head_flit_value(dx, dy, sx, sy, len(self.payload), self.type)

    def flits(self, mesh_x):
        return [self.head(mesh_x)] + list(self.payload)


def write_traffic(path, packets, mesh_x, mesh_y):
    """Traffic file for ``tb.cpp``: packets in list order (which is the injection order of each
    source and VC)."""
    with open(path, "w") as f:
        f.write(f"# {len(packets)} packets, {mesh_x}x{mesh_y} mesh\n")
        for p in packets:
            words = p.flits(mesh_x)
            tag = "P" if p.valid(mesh_x, mesh_y) else "D"
            f.write(
                f"{tag} {p.src} {p.inject} {p.vc} {len(words)} " + " ".join(f"{w:08x}" for w in words) + "\n"
            )


def random_payload(rng, max_len):
    return [rng.getrandbits(32) for _ in range(rng.randint(0, max_len))]


def uniform_random(rng, mesh_x, mesh_y, packets_per_src, max_len=8, rate=None, vc1_fraction=0.5):
    """Every source sends ``packets_per_src`` packets to uniformly random destinations (itself
    included), random VC and length.

    ``rate``: offered load in flits/cycle per source (injection times spaced accordingly);
    ``None`` injects everything at cycle 0 (saturation: as fast as back-pressure allows).
    """
    n = mesh_x * mesh_y
    packets = []
    for s in range(n):
        t = 0.0
        for _ in range(packets_per_src):
            payload = random_payload(rng, max_len)
            vc = 1 if rng.random() < vc1_fraction else 0
            inject = 0 if rate is None else int(t)
            packets.append(Packet(s, rng.randrange(n), vc, payload, inject, type=rng.getrandbits(8)))
            if rate is not None:
                t += rng.expovariate(rate / (len(payload) + 1))
    return packets


def all_pairs(rng, mesh_x, mesh_y, rounds=1, max_len=8, spacing=0):
    """``rounds`` packets on each VC from every source to every destination, shuffled per
    source; source ``s`` injects its ``k``-th packet at ``k*spacing``."""
    n = mesh_x * mesh_y
    packets = []
    for s in range(n):
        mine = [(d, vc) for d in range(n) for vc in (0, 1) for _ in range(rounds)]
        rng.shuffle(mine)
        for k, (d, vc) in enumerate(mine):
            packets.append(
                Packet(s, d, vc, random_payload(rng, max_len), k * spacing, type=rng.getrandbits(8))
            )
    return packets
