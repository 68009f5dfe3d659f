import pytest

from soc.mesh import mesh_shape, MeshShapeError


@pytest.mark.parametrize(
    "tiles,shape",
    [
        (1, (1, 1)),
        (2, (2, 1)),
        (4, (2, 2)),
        (8, (4, 2)),
        (9, (3, 3)),
        (12, (4, 3)),
        (16, (4, 4)),
        (10, (5, 2)),
        (32, (8, 4)),
        (48, (8, 6)),
        (64, (8, 8)),
    ],
)
def test_tiles_to_squarest_mesh(tiles, shape):
    assert mesh_shape(tiles) == shape


@pytest.mark.parametrize(
    "mesh,shape",
    [("1x1", (1, 1)), ("4x4", (4, 4)), ("3X2", (3, 2)), ("1x4", (1, 4)), ("8x8", (8, 8)), ("5x1", (5, 1))],
)
def test_explicit_mesh(mesh, shape):
    assert mesh_shape(mesh=mesh) == shape


@pytest.mark.parametrize(
    "tiles,mesh",
    [
        (0, None),
        (5, None),
        (7, None),
        (17, None),
        (65, None),
        (None, "0x2"),
        (None, "9x1"),
        (None, "2x"),
        (3, "2x2"),
    ],
)
def test_invalid_shapes(tiles, mesh):
    with pytest.raises(MeshShapeError):
        mesh_shape(tiles, mesh)
