#
# X x Y mesh of MeshRouters.
#
"""Mesh NoC: ``mesh_x * mesh_y`` :class:`MeshRouter` s connected to their neighbours.

Tile ``i = y*mesh_x + x`` is the router at column ``x``, row ``y``; row 0 is the north edge (see
:mod:`gateware.noc.common`). ``local_inputs[i]`` is the link from the network interface (NI) of
tile ``i`` into the mesh, ``local_outputs[i]`` the link from the mesh to that NI.

Edge ports that have no neighbour are tied off (input never valid, output always ready); the
routers are told the mesh size, so they do not even build those ports. With XY routing no valid
destination leads off the mesh. A packet whose head flit names a destination outside the mesh is
consumed and dropped by the first router (never forwarded, never hangs); ``error`` is then set
(sticky, OR of all routers) and the router's ``dropped`` counter increments.

Latency of an uncontended head flit: ``2*hops + 1`` cycles from the cycle it enters the source
router to the cycle it leaves the destination router, ``hops`` being the Manhattan distance (the
links between routers are registered, see :class:`gateware.noc.router.MeshRouter`).
"""

from migen import *

from litex.gen import LiteXModule, Reduce

from gateware.noc.common import PORTS, PORT_OFFSETS, OPPOSITE, MAX_MESH_DIM, tile_id
from gateware.noc.router import MeshRouter


class Mesh(LiteXModule):
    """``mesh_x`` x ``mesh_y`` mesh of routers (1..4 each by design; the head flit allows 16).

    ``buffer_depth``, ``starvation_limit``, ``with_counters`` and ``link_registers`` are passed
    to every router. ``routers`` (optional, by tile id) gives routers built elsewhere, as objects
    with ``inputs``, ``outputs`` (every port) and ``error`` (a router inside a tile module of its
    own, :mod:`soc.tile_block`); the mesh builds those that are None.
    Attributes: ``routers`` (list by tile id), ``local_inputs``/``local_outputs`` (links by tile
    id), ``error`` (sticky: some router dropped a packet).
    """

    def __init__(
        self,
        mesh_x,
        mesh_y,
        buffer_depth=2,
        starvation_limit=8,
        with_counters=False,
        link_registers=True,
        routers=None,
    ):
        assert 1 <= mesh_x <= MAX_MESH_DIM and 1 <= mesh_y <= MAX_MESH_DIM
        self.mesh_x, self.mesh_y = mesh_x, mesh_y
        self.n_tiles = n = mesh_x * mesh_y
        self.error = Signal()

        # # #

        self.routers = []
        for t in range(n):
            x, y = t % mesh_x, t // mesh_x
            if routers is not None and routers[t] is not None:
                self.routers.append(routers[t])
                continue
            r = MeshRouter(
                x,
                y,
                buffer_depth=buffer_depth,
                starvation_limit=starvation_limit,
                mesh_x=mesh_x,
                mesh_y=mesh_y,
                with_counters=with_counters,
                link_registers=link_registers,
            )
            setattr(self.submodules, f"router{t}", r)
            self.routers.append(r)

        self.local_inputs = [r.inputs["local"] for r in self.routers]
        self.local_outputs = [r.outputs["local"] for r in self.routers]

        # Neighbours: each output feeds the opposite input of the router behind it.
        for t, r in enumerate(self.routers):
            x, y = t % mesh_x, t // mesh_x
            for p in PORTS[1:]:
                dx, dy = PORT_OFFSETS[p]
                nx, ny = x + dx, y + dy
                if 0 <= nx < mesh_x and 0 <= ny < mesh_y:
                    neighbour = self.routers[tile_id(nx, ny, mesh_x)]
                    self.comb += r.outputs[p].connect(neighbour.inputs[OPPOSITE[p]])
                else:
                    # Mesh edge: nothing comes in, anything going out would be absorbed.
                    self.comb += [
                        r.inputs[p].valid.eq(0),
                        r.outputs[p].ready.eq(2 ** len(r.outputs[p].ready) - 1),
                    ]

        self.comb += self.error.eq(Reduce("OR", [r.error for r in self.routers]))
