#
# Python reference of the NoC: XY routes and the checker of testbench logs.
#
"""Reference model of the mesh NoC and checker of a testbench run.

The reference is written from the specification, independently of the gateware: XY routing
(X first, then Y), row 0 at the north edge, tile ``y*X + x``.
"""

from collections import defaultdict, deque
from dataclasses import dataclass, field

from gateware.noc.common import parse_head_flit  # Bit layout only (shared with the NI).


def xy_route(src, dst, mesh_x):
    """Tiles whose routers a packet from ``src`` to ``dst`` traverses, both ends included."""
    x, y = src % mesh_x, src // mesh_x
    dx, dy = dst % mesh_x, dst // mesh_x
    path = [(x, y)]
    while x != dx:
        x += 1 if dx > x else -1
        path.append((x, y))
    while y != dy:
        y += 1 if dy > y else -1
        path.append((x, y))
    return [yy * mesh_x + xx for xx, yy in path]


def hops(src, dst, mesh_x):
    """Router-to-router links a packet crosses (Manhattan distance)."""
    return len(xy_route(src, dst, mesh_x)) - 1


def link_loads(packets, mesh_x):
    """Flits each directed router-to-router link carries: {(from_tile, to_tile): flits}."""
    load = defaultdict(int)
    for p in packets:
        r = xy_route(p.src, p.dst, mesh_x)
        for a, b in zip(r, r[1:]):
            load[(a, b)] += len(p.payload) + 1
    return load


@dataclass
class Delivered:
    tile: int
    vc: int
    words: list
    head_cycle: int
    tail_cycle: int


@dataclass
class Report:
    errors: list = field(default_factory=list)
    # Per packet of the traffic (same order), when delivered: dict with inject, head, tail cycles.
    timing: list = field(default_factory=list)
    delivered_flits: int = 0

    def ok(self):
        return not self.errors

    def latencies(self, packets, select=lambda p: True):
        return [t["head"] - t["inject"] for p, t in zip(packets, self.timing) if t is not None and select(p)]


def check(packets, result, mesh_x, mesh_y, max_errors=20):
    """Check a :class:`RunResult` against the traffic ``packets``.

    Every packet with a destination inside the mesh arrives exactly once, at its destination
    tile, on its VC, with its words intact (head fields included: destination, source, length);
    the flits of a packet are contiguous within their VC at the destination; packets of each
    (source, destination, VC) arrive in injection order; nothing else arrives; packets for
    destinations outside the mesh are not delivered (and raise the mesh error flag); the mesh
    drained (harness status ``ok``).
    """
    rep = Report()
    err = rep.errors
    if result.status != "ok":
        err.append(f"harness status {result.status}: {result.stdout.strip()}")

    # Reassemble packets per (destination tile, VC) in arrival order.
    partial = {}
    arrived = []
    for cycle, tile, vc, first, last, data in result.deliveries:
        rep.delivered_flits += 1
        key = (tile, vc)
        cur = partial.get(key)
        if cur is None:
            if not first:
                err.append(f"cycle {cycle} tile {tile} vc {vc}: body flit {data:08x} without head")
                continue
            cur = partial[key] = Delivered(tile, vc, [data], cycle, None)
            cur.expected = parse_head_flit(data).length + 1
        else:
            if first:
                err.append(
                    f"cycle {cycle} tile {tile} vc {vc}: head flit {data:08x} inside a "
                    f"packet (interleaved packets on one VC)"
                )
            cur.words.append(data)
        if len(cur.words) == cur.expected:
            if not last:
                err.append(f"cycle {cycle} tile {tile} vc {vc}: last flit not marked last")
            cur.tail_cycle = cycle
            arrived.append(cur)
            del partial[key]
        elif last:
            err.append(
                f"cycle {cycle} tile {tile} vc {vc}: last flag on flit {len(cur.words)} of {cur.expected}"
            )
            del partial[key]
    for (tile, vc), cur in partial.items():
        err.append(f"tile {tile} vc {vc}: incomplete packet {cur.words[:2]}...")

    # Injection cycles: heads of each (source, VC) were injected in traffic order.
    inject_cycles = defaultdict(deque)
    for cycle, tile, vc, head in result.injections:
        inject_cycles[(tile, vc)].append(cycle)

    # Expected packets per (source, destination, VC), in injection order.
    expected = defaultdict(deque)
    rep.timing = [None] * len(packets)
    inject_of = [None] * len(packets)
    per_src_vc = defaultdict(list)
    for i, p in enumerate(packets):
        per_src_vc[(p.src, p.vc)].append(i)
    for key, idxs in per_src_vc.items():
        cycles = inject_cycles.get(key, deque())
        if len(cycles) != len(idxs):
            err.append(
                f"source {key[0]} vc {key[1]}: {len(cycles)} heads injected, {len(idxs)} in the traffic"
            )
        for i, c in zip(idxs, cycles):
            inject_of[i] = c
    for i, p in enumerate(packets):
        if p.valid(mesh_x, mesh_y):
            expected[(p.src, p.dst, p.vc)].append(i)

    for d in arrived:
        h = parse_head_flit(d.words[0])
        tx, ty = d.tile % mesh_x, d.tile // mesh_x
        if (h.dst_x, h.dst_y) != (tx, ty):
            err.append(f"tile {d.tile}: packet for ({h.dst_x},{h.dst_y}) delivered here")
            continue
        if h.src_x >= mesh_x or h.src_y >= mesh_y:
            err.append(f"tile {d.tile}: source ({h.src_x},{h.src_y}) outside the mesh")
            continue
        src = h.src_y * mesh_x + h.src_x
        q = expected.get((src, d.tile, d.vc))
        if not q:
            err.append(
                f"tile {d.tile} vc {d.vc}: unexpected packet from {src} "
                f"(duplicate or never sent): {[hex(w) for w in d.words[:3]]}"
            )
            continue
        i = q.popleft()
        want = packets[i].flits(mesh_x)
        if d.words != want:
            err.append(
                f"packet {i} {src}->{d.tile} vc {d.vc}: got {[hex(w) for w in d.words]}, "
                f"want {[hex(w) for w in want]} (corrupted or out of order)"
            )
        rep.timing[i] = dict(inject=inject_of[i], head=d.head_cycle, tail=d.tail_cycle)

    for key, q in expected.items():
        if q:
            err.append(f"{len(q)} packets {key[0]}->{key[1]} vc {key[2]} never delivered")

    dropped = [p for p in packets if not p.valid(mesh_x, mesh_y)]
    if dropped and not result.summary.get("error"):
        err.append("packets outside the mesh were sent but the error flag is not set")
    if not dropped and result.summary.get("error"):
        err.append("error flag set but every destination was valid")

    if len(err) > max_errors:
        rep.errors = err[:max_errors] + [f"... {len(err) - max_errors} more errors"]
    return rep
