#
# Definitions shared by the NoC routers, the mesh and the network interfaces (NIs).
#
"""Links, flits and head-flit fields of the Subutai NoC.

Link protocol
=============

A *link* carries flits in one direction between two neighbours (router to router, NI to router,
router to NI). It is a :class:`migen.genlib.record.Record` of layout :func:`link_layout`:

============ ====== ========= ===============================================================
field        width  direction meaning
============ ====== ========= ===============================================================
``valid``    1      forward   a flit is offered this cycle
``vc``       1      forward   virtual channel (traffic class) of the offered flit
``first``    1      forward   the flit is a head flit
``last``     1      forward   the flit is a tail flit (a single-flit packet has both)
``data``     32     forward   the flit
``ready``    2      backward  ``ready[v]``: the receiver accepts a flit on VC ``v`` this cycle
============ ====== ========= ===============================================================

A flit is transferred on VC ``v`` in every cycle where ``valid & (vc == v) & ready[v]``. Rules:

- ``ready`` must not depend combinationally on ``valid``, ``vc``, ``first``, ``last`` or ``data``
  of the same link (in the routers it is a function of the input FIFO fill level only). Hence a
  sender *may* look at ``ready`` before it chooses what to offer: ``valid``/``vc``/``data`` may
  depend combinationally on ``ready``, and no combinational loop can form across routers.
- An offer that was not accepted may be withdrawn or replaced by a flit of the other VC in the
  next cycle (the transfer condition is evaluated cycle by cycle; nothing is "pending" on the
  link). This is what lets flits of the two VCs interleave on a link.
- ``ready[v]`` may go low at any time; the sender then keeps the flit. Nothing is ever dropped
  by the link itself and no credits are needed.
- A *registered* link (between two routers, see :class:`gateware.noc.router.MeshRouter`) moves
  the sender's decision one cycle earlier: the sender offers in cycle ``t+1`` (from a register) a
  flit it chose on ``ready[v]`` of cycle ``t``, and the receiver takes every flit offered; its
  ``ready`` leaves room for the one flit in flight.
- Packets are well formed: on each VC a head flit (``first``) is followed by exactly ``length``
  further flits (see below), the last of them with ``last``. All flits of a packet use the same
  VC. Flits of different VCs may interleave; flits of different packets on the same VC may not.

VC 1 is the priority class (synchronization control packets), VC 0 the normal class.

Head flit
=========

====== ========== ====================================================
bits   field      meaning
====== ========== ====================================================
3:0    ``dst_x``  destination column
7:4    ``dst_y``  destination row
11:8   ``src_x``  source column
15:12  ``src_y``  source row
23:16  ``length`` number of flits that follow the head (0..255)
31:24  ``type``   message type (opaque to the routers)
====== ========== ====================================================

Tile ``i`` sits at column ``x = i % X`` and row ``y = i // X`` of an ``X x Y`` mesh
(``i = y*X + x``). Row 0 is the *north* edge: the north neighbour of ``(x, y)`` is ``(x, y-1)``,
the south neighbour ``(x, y+1)``, the east neighbour ``(x+1, y)``, the west one ``(x-1, y)``.
"""

from collections import namedtuple

from migen import *
from migen.genlib.record import DIR_M_TO_S, DIR_S_TO_M

# Virtual channels (traffic classes) ---------------------------------------------------------------

N_VCS = 2
VC_NORMAL = 0
VC_PRIORITY = 1

FLIT_WIDTH = 32

# Router ports -------------------------------------------------------------------------------------

PORTS = ["local", "north", "east", "south", "west"]
LOCAL, NORTH, EAST, SOUTH, WEST = range(len(PORTS))

# (dx, dy) of the neighbour behind each port (y grows southwards).
PORT_OFFSETS = {
    "local": (0, 0),
    "north": (0, -1),
    "east": (1, 0),
    "south": (0, 1),
    "west": (-1, 0),
}

# Port of the neighbour that faces each port.
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}

MAX_MESH_DIM = 16  # 4-bit coordinates in the head flit.

# Head flit ----------------------------------------------------------------------------------------

# name: (lsb, width)
HEAD_FIELDS = {
    "dst_x": (0, 4),
    "dst_y": (4, 4),
    "src_x": (8, 4),
    "src_y": (12, 4),
    "length": (16, 8),
    "type": (24, 8),
}

HeadFlit = namedtuple("HeadFlit", ["dst_x", "dst_y", "src_x", "src_y", "length", "type"])
_HEAD_ORDER = list(HeadFlit._fields)


def head_field(data, name):
    """Migen slice of head-flit field ``name`` of the 32-bit value ``data``."""
    lsb, width = HEAD_FIELDS[name]
    return data[lsb : lsb + width]


def head_flit_value(dst_x, dst_y, src_x, src_y, length, type=0):
    """Head flit as a Python int (for tests and software models)."""
    word = 0
    for name, value in zip(_HEAD_ORDER, (dst_x, dst_y, src_x, src_y, length, type)):
        lsb, width = HEAD_FIELDS[name]
        if not 0 <= value < (1 << width):
            raise ValueError(f"head flit field {name}={value} does not fit in {width} bits")
        word |= value << lsb
    return word


def head_flit(dst_x, dst_y, src_x, src_y, length, type=0):
    """Head flit from its fields.

    With Python ints only, returns an int (like :func:`head_flit_value`). If any field is a Migen
    value, returns a 32-bit Migen expression (``Cat``); Python ints in it become constants and
    Migen values are truncated to the field width.
    """
    values = (dst_x, dst_y, src_x, src_y, length, type)
    if all(isinstance(v, int) for v in values):
        return head_flit_value(*values)
    parts = []
    for name, value in zip(_HEAD_ORDER, values):
        width = HEAD_FIELDS[name][1]
        if isinstance(value, int):
            parts.append(Constant(value, width))
        else:
            parts.append(value[:width])
    return Cat(*parts)


def parse_head_flit(word):
    """Fields of a head flit given as a Python int, as a :class:`HeadFlit` named tuple."""
    return HeadFlit(*[(word >> HEAD_FIELDS[n][0]) & ((1 << HEAD_FIELDS[n][1]) - 1) for n in _HEAD_ORDER])


# Tiles --------------------------------------------------------------------------------------------


def tile_id(x, y, mesh_x):
    return y * mesh_x + x


def tile_xy(tile, mesh_x):
    return tile % mesh_x, tile // mesh_x


# Link ---------------------------------------------------------------------------------------------


def link_layout(data_width=FLIT_WIDTH, n_vcs=N_VCS):
    """Record layout of a link (see the module docstring for the protocol)."""
    return [
        ("valid", 1, DIR_M_TO_S),
        ("vc", bits_for(n_vcs - 1), DIR_M_TO_S),
        ("first", 1, DIR_M_TO_S),
        ("last", 1, DIR_M_TO_S),
        ("data", data_width, DIR_M_TO_S),
        ("ready", n_vcs, DIR_S_TO_M),
    ]


class Link(Record):
    """A link: ``Record(link_layout())``. ``src.connect(dst)`` wires a sender to a receiver."""

    def __init__(self, name=None, **kwargs):
        Record.__init__(self, link_layout(**kwargs), name=name)
