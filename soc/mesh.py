#
# Mesh shape of the SoC: from a tile count or an explicit XxY.
#

import re

#: Largest side: 8x8 is the paper's 64-core machine (Subutai, seed 000, §VIII). Each part's own
#: limit is larger (docs/architecture.md, "Mesh sizes").
MAX_DIM = 8
#: A tile count is laid out no more than this many times as wide as tall: 5 or 7 tiles in a line
#: are no mesh (give --mesh 5x1 for one).
MAX_ASPECT = 4


class MeshShapeError(ValueError):
    pass


def mesh_shape(tiles=None, mesh=None):
    """Return (X, Y) for ``--tiles N`` or ``--mesh XxY`` (1x1 to 8x8).

    A tile count is laid out as the squarest mesh with X >= Y and X <= 4 Y (2 -> 2x1, 8 -> 4x2,
    32 -> 8x4).
    """
    if mesh is not None:
        m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", str(mesh))
        if m is None:
            raise MeshShapeError(f"--mesh {mesh!r}: expected XxY, e.g. 2x2")
        x, y = int(m.group(1)), int(m.group(2))
        if not (1 <= x <= MAX_DIM and 1 <= y <= MAX_DIM):
            raise MeshShapeError(f"--mesh {mesh}: each side must be 1 to {MAX_DIM}")
        if tiles is not None and tiles != x * y:
            raise MeshShapeError(f"--tiles {tiles} does not match --mesh {mesh} ({x * y} tiles)")
        return x, y
    tiles = 1 if tiles is None else int(tiles)
    if not 1 <= tiles <= MAX_DIM * MAX_DIM:
        raise MeshShapeError(f"--tiles {tiles}: must be 1 to {MAX_DIM * MAX_DIM}")
    shapes = [
        (x, tiles // x)
        for x in range(1, MAX_DIM + 1)
        if tiles % x == 0 and tiles // x <= x and x <= MAX_ASPECT * (tiles // x)
    ]
    if not shapes:
        raise MeshShapeError(
            f"--tiles {tiles} does not form a mesh of at most {MAX_DIM}x{MAX_DIM}, "
            f"no more than {MAX_ASPECT} times as wide as tall; give the shape with --mesh XxY"
        )
    return min(shapes, key=lambda s: s[0] - s[1])
