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
            self.images[key] = self.model(mesh_x, mesh_y).build_firmware(app, backend=backend,
                program_args=program_args)
        return self.images[key]

    def run(self, mesh_x, mesh_y, app, backend="subutai", program_args="", **kwargs):
        model = self.model(mesh_x, mesh_y)
        return model.run(self.image(mesh_x, mesh_y, app, backend, program_args), **kwargs)


@pytest.fixture(scope="session")
def sim():
    return ModelCache()


@pytest.fixture(scope="session")
def pthreadtest_groups():
    """The check groups of firmware/apps/pthreadtest (its report() calls), the one PThreads test
    source that runs bare metal and under Zephyr."""
    import os
    import re
    from soc.firmware import FIRMWARE_DIR
    with open(os.path.join(FIRMWARE_DIR, "apps", "pthreadtest", "main.c")) as f:
        groups = re.findall(r'\breport\("([^"]+)"', f.read())
    assert len(groups) >= 10, groups
    return groups
