"""Shared fixtures: Verilator models are built once per test session and reused."""

import sys

import pytest


class ModelCache:
    def __init__(self):
        self.models = {}
        self.images = {}

    def model(self, mesh_x, mesh_y):
        from soc.simulation import build_model

        key = (mesh_x, mesh_y)
        if key not in self.models:
            self.models[key] = build_model(mesh_x, mesh_y, log=lambda m: print(m, file=sys.stderr))
        return self.models[key]

    def image(self, mesh_x, mesh_y, app, backend="subutai", program_args=""):
        key = (mesh_x, mesh_y, app, backend, program_args)
        if key not in self.images:
            self.images[key] = self.model(mesh_x, mesh_y).build_firmware(
                app, backend=backend, program_args=program_args
            )
        return self.images[key]

    def run(self, mesh_x, mesh_y, app, backend="subutai", program_args="", **kwargs):
        model = self.model(mesh_x, mesh_y)
        return model.run(self.image(mesh_x, mesh_y, app, backend, program_args), **kwargs)


def _zephyr_missing():
    """Why no Zephyr image can be built here, or None."""
    from soc.zephyr import ZephyrUnavailable, zephyr_environment

    try:
        zephyr_environment()
    except ZephyrUnavailable as e:
        return f"Zephyr suite skipped: {e}"
    return None


def pytest_collection_modifyitems(items):
    """The slow marker by cost, in every file alike: a simulation of the SoC with 8 tiles or more
    (a ``mesh`` parameter of X*Y >= 8) is slow (pytest.ini). A test marked zephyr builds a Zephyr
    image: without a Zephyr tree it is skipped, with the reason in pytest's summary."""
    for item in items:
        mesh = item.callspec.params.get("mesh") if hasattr(item, "callspec") else None
        if isinstance(mesh, tuple) and len(mesh) == 2 and mesh[0] * mesh[1] >= 8:
            item.add_marker(pytest.mark.slow)
    zephyr_items = [item for item in items if item.get_closest_marker("zephyr")]
    reason = _zephyr_missing() if zephyr_items else None
    if reason:
        for item in zephyr_items:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def sim():
    return ModelCache()


@pytest.fixture(scope="session")
def pthreadtest_groups():
    """The check groups of firmware/apps/pthreadtest (its report() calls), the one PThreads test
    that runs bare metal and under Zephyr, in the order main() runs them (a file per group of
    primitives, each reporting its groups in order)."""
    import glob
    import os
    import re
    from soc.firmware import FIRMWARE_DIR

    sources = {}
    for path in glob.glob(os.path.join(FIRMWARE_DIR, "apps", "pthreadtest", "*.c")):
        with open(path) as f:
            sources[path] = f.read()
    main = sources[os.path.join(FIRMWARE_DIR, "apps", "pthreadtest", "main.c")]
    body = main[main.index("int main(") :]
    groups = []
    for test in re.findall(r"\b(test_\w+)\(", body):
        path = next(p for p, text in sources.items() if re.search(rf"\bvoid {test}\(", text))
        for group in re.findall(r'\breport\("([^"]+)"', sources[path]):
            if group not in groups:
                groups.append(group)
    assert len(groups) >= 10, groups
    return groups
