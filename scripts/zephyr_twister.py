#!/usr/bin/env python3
"""Zephyr's twister over the applications of zephyr-app/ on the simulated board.

    .venv/bin/python scripts/zephyr_twister.py [--tiles N | --mesh XxY] [twister options...]

Builds (or reuses) the Verilator model of the SoC, points the board at it (``SUBUTAI_SOC_DIR``)
and runs ``$ZEPHYR_BASE/scripts/twister`` on ``zephyr-app/apps`` (each application's
``sample.yaml`` or ``testcase.yaml``) for the board ``subutai_litex``, whose run target boots each
image on the model (``zephyr-app/boards/subutai/subutai_litex/board.cmake``). Options it does not
know go to twister (e.g. ``-s subutai.pthreadtest.swonly``, ``--build-only``, ``-W``); its test
configuration is ``zephyr-app/twister/test_config.yaml`` unless ``--test-config`` is given. Reports
go to ``build/twister/``. Exit status: twister's.
"""

import argparse
import os
import subprocess
import sys

from gateware.build import BUILD_DIR, ROOT
from soc.mesh import MeshShapeError, mesh_shape
from soc.simulation import build_model
from soc.zephyr import ZEPHYR_APP_DIR, ZephyrUnavailable, zephyr_environment

#: The project's test configuration (platforms, no levels), unless the command line gives one.
TEST_CONFIG = os.path.join(ZEPHYR_APP_DIR, "twister", "test_config.yaml")


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    p.add_argument("--tiles", type=int, default=None, help="Number of tiles (default 4).")
    p.add_argument("--mesh", default=None, help="Mesh shape XxY (1x1 to 8x8).")
    args, twister_args = p.parse_known_args()
    try:
        mesh_x, mesh_y = mesh_shape(args.tiles if args.tiles or args.mesh else 4, args.mesh)
    except MeshShapeError as e:
        p.error(str(e))
    try:
        env = zephyr_environment()
    except ZephyrUnavailable as e:
        sys.exit(f"error: {e}")
    twister = os.path.join(env["ZEPHYR_BASE"], "scripts", "twister")
    if not os.path.isfile(twister):
        sys.exit(f"error: no {twister}: ZEPHYR_BASE is not a whole Zephyr tree")
    model = build_model(mesh_x, mesh_y)
    env["SUBUTAI_SOC_DIR"] = model.output_dir
    apps, boards = (os.path.join(ROOT, "zephyr-app", d) for d in ("apps", "boards"))
    cmd = [sys.executable, twister, "-T", apps, "--board-root", boards, "-p", "subutai_litex"]
    cmd += ["-O", os.path.join(BUILD_DIR, "twister")]
    if not any(a == "--test-config" or a.startswith("--test-config=") for a in twister_args):
        cmd += ["--test-config", TEST_CONFIG]
    cmd += twister_args
    print(
        f"[twister] {mesh_x}x{mesh_y} model {os.path.relpath(model.output_dir, ROOT)}: " + " ".join(cmd[1:]),
        flush=True,
    )
    return subprocess.call(cmd, env=env, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
