#!/usr/bin/env python3
#
# Zephyr on the Subutai SoC in Verilator: build a zephyr-app application for a SoC model and run it
# (a thin command line over soc.zephyr and soc.simulation).
#
#   python3 boards/zephyr.py --tiles 4 --app pthreadtest                 # every primitive
#   python3 boards/zephyr.py --tiles 4 --app program --program x264 --args "-i test"
#   python3 boards/zephyr.py --tiles 4 --app program --program prodcons --backend swonly
#   python3 boards/zephyr.py --tiles 8 --app multi --set "bodytrack x264" --policy csa --ts-us 500
#   python3 boards/zephyr.py --tiles 8 --app multi --set "streamcluster ep:2" --barrier tidon
#
# Needs a Zephyr tree (ZEPHYR_BASE, e.g. a west workspace's zephyr/) and a RISC-V toolchain: the
# Zephyr SDK (ZEPHYR_SDK_INSTALL_DIR) or, by default, Debian's riscv64-unknown-elf-gcc through
# Zephyr's cross-compile variant (zephyr-app/cmake/subutai.cmake maps its multilib).

import argparse
import os
import sys

from soc.firmware import BACKENDS, CHANS, check_program_args
from soc.mesh import MeshShapeError, mesh_shape
from soc.simulation import EXIT_TIMEOUT, build_model
from soc.zephyr import (
    BARRIER_POLICIES,
    multi_soc,
    SCHED_POLICIES,
    build_app,
    chan_conf,
    build_multi,
    check_program,
    require_zephyr,
    zephyr_apps,
)


def main():
    parser = argparse.ArgumentParser(
        description="Zephyr applications of zephyr-app/ on the Subutai SoC in Verilator."
    )
    parser.add_argument("--tiles", type=int, default=None, help="Number of tiles (1 to 64).")
    parser.add_argument("--mesh", default=None, help="Mesh shape XxY (1x1 to 8x8).")
    parser.add_argument(
        "--app", default="pthreadtest", help="Application of zephyr-app/apps/ (default pthreadtest)."
    )
    parser.add_argument(
        "--program",
        default=None,
        help="With --app program: a benchmark program (firmware/programs/) or firmware application (firmware/apps/).",
    )
    parser.add_argument(
        "--program-dir",
        default=None,
        metavar="DIR",
        help="With --app program: a plain PThreads program of one's own (the .c files of DIR, any "
        "directory) instead of --program.",
    )
    parser.add_argument(
        "--args",
        default="",
        metavar="'ARGS'",
        help="Arguments of the program, split as a shell splits them: a program of "
        "firmware/programs/ gets them after '-t <tiles>', a --program-dir exactly these.",
    )
    parser.add_argument(
        "--set",
        default=None,
        metavar="'P1 P2 ...'",
        help="With --app multi: the applications of the set (programs of firmware/programs/, each "
        "optionally :threads; --args are their arguments).",
    )
    parser.add_argument(
        "--policy", choices=SCHED_POLICIES, default="rr", help="With --app multi: scheduling policy."
    )
    parser.add_argument(
        "--barrier",
        choices=BARRIER_POLICIES,
        default=BARRIER_POLICIES[0],
        help="With --app multi: barrier waiting policy (tidon: seed 002's time-donating barrier).",
    )
    parser.add_argument(
        "--ts-us", type=int, default=1000, help="With --app multi: timeslot in microseconds (default 1000)."
    )
    parser.add_argument("--backend", choices=BACKENDS, default="subutai", help="PThreads backend.")
    parser.add_argument(
        "--chan",
        choices=CHANS,
        default=None,
        help="Channels (subutai/chan.h) with this implementation (a program that uses them gets "
        f"{CHANS[0]} without it).",
    )
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="CONFIG_X=Y",
        help="Extra Kconfig setting (repeatable), e.g. CONFIG_SUBUTAI_PLACEMENT_LEAST_LOADED=y.",
    )
    parser.add_argument(
        "--max-cycles",
        type=int,
        default=200_000_000,
        help=f"Stop after this many cycles (exit {EXIT_TIMEOUT}).",
    )
    parser.add_argument("--build-only", action="store_true", help="Build the image, do not run it.")
    args = parser.parse_args()

    try:
        mesh_x, mesh_y = mesh_shape(args.tiles, args.mesh)
    except MeshShapeError as e:
        parser.error(str(e))
    if args.app not in zephyr_apps():
        parser.error(f"--app {args.app}: no such application (have: {', '.join(zephyr_apps())})")
    if args.program_dir and (args.app != "program" or args.program):
        parser.error("--program-dir goes with --app program, instead of --program")
    if args.program_dir and not os.path.isdir(args.program_dir):
        parser.error(f"--program-dir {args.program_dir}: no such directory")
    if args.app == "program" and not args.program_dir:
        try:
            check_program(args.program)
        except ValueError as e:
            parser.error(f"--program: {e}")
    if args.app == "multi" and not args.set:
        parser.error("--app multi needs --set 'P1 P2 ...' (programs of firmware/programs/)")
    if args.app != "multi" and args.set:
        parser.error("--set only applies to --app multi")
    if args.app not in ("program", "multi") and (args.program or args.args):
        parser.error("--program and --args only apply to --app program (--args also to --app multi)")
    try:
        check_program_args(args.args, own_program=bool(args.program_dir))
    except ValueError as e:
        parser.error(f"--args: {e}")
    for c in args.conf:
        if not c.startswith("CONFIG_") or "=" not in c:
            parser.error(f"--conf {c}: expected CONFIG_NAME=VALUE")
    require_zephyr()
    if args.chan:
        args.conf += chan_conf(args.chan)

    try:
        if args.app == "multi":
            model = build_model(mesh_x, mesh_y, **multi_soc(mesh_x * mesh_y))
            image = build_multi(
                model,
                args.set.split(),
                args.backend,
                args.policy,
                args.ts_us,
                args.args,
                args.conf,
                barrier=args.barrier,
            )
        else:
            model = build_model(mesh_x, mesh_y)
            image = build_app(
                model,
                args.app,
                args.backend,
                args.program,
                args.args,
                args.conf,
                program_dir=args.program_dir,
            )
    except (RuntimeError, ValueError) as e:
        sys.exit(f"error: {e}")
    if args.build_only:
        print(image)
        return
    print(
        f"[zephyr] running {args.app} on {mesh_x}x{mesh_y} ({mesh_x * mesh_y} tiles, one kernel each)",
        flush=True,
    )
    result = model.run(image, max_cycles=args.max_cycles, echo=True)
    sys.stderr.write(result.stderr)
    sys.exit(result.exit_code)


if __name__ == "__main__":
    main()
