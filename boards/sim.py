#!/usr/bin/env python3
#
# Verilator simulation target of the Subutai SoC (the default target): a thin command line over
# soc.simulation (model build and runs) and soc.firmware (images).
#
#   python3 boards/sim.py --tiles 4 --build                 # build the model once
#   python3 boards/sim.py --tiles 4 --ram-init hello.bin    # run an image on it (no rebuild)
#   python3 boards/sim.py --tiles 4 --app hello             # build firmware app, then run it
#   python3 boards/sim.py --tiles 64 --partitions 2 --app hello   # the model cut in 2 processes
#

import argparse
import glob
import os
import subprocess
import sys

from gateware.cpu import SIM_CPU_VARIANT
from soc.firmware import BACKENDS, CHANS, benchmark_programs, check_program_args, define_arg, firmware_apps
from soc.mesh import mesh_shape, MeshShapeError
from soc.simulation import EXIT_TIMEOUT, TILE_BLOCKS_FROM, build_model, mem_banks_arg
from soc.subutai_soc import KiB, MiB


def main():
    parser = argparse.ArgumentParser(description="Subutai SoC on Verilator (LiteX simulation).")
    parser.add_argument("--tiles", type=int, default=None, help="Number of tiles (1 to 64).")
    parser.add_argument("--mesh", default=None, help="Mesh shape XxY (1x1 to 8x8).")
    parser.add_argument(
        "--cpu-variant",
        default=SIM_CPU_VARIANT,
        help=f"VexRiscv variant of every core (default {SIM_CPU_VARIANT}).",
    )
    parser.add_argument(
        "--tile-ram-size", type=lambda s: int(s, 0), default=16 * KiB, help="Private SRAM per tile (bytes)."
    )
    parser.add_argument(
        "--main-ram-size", type=lambda s: int(s, 0), default=1 * MiB, help="Shared main RAM (bytes)."
    )
    parser.add_argument(
        "--output-dir", default=None, help="Build directory (default build/sim_XxY_<variant>)."
    )
    parser.add_argument("--build", action="store_true", help="Build the model (skipped when up to date).")
    parser.add_argument("--force", action="store_true", help="Rebuild the model even when up to date.")
    parser.add_argument(
        "--app",
        default=None,
        help="Firmware application (firmware/apps/<app>) or benchmark program (firmware/programs/<app>) to compile and run.",
    )
    parser.add_argument(
        "--program-dir",
        default=None,
        metavar="DIR",
        help="A plain PThreads program of one's own (the .c files of DIR, any directory), built "
        "and run as the benchmark programs are.",
    )
    parser.add_argument(
        "--args",
        default="",
        metavar="'ARGS'",
        help="Arguments of a benchmark program, split as a shell splits them: a program of "
        "firmware/programs/ gets them after '-t <tiles>' (e.g. '-i test -s 7'), a --program-dir "
        "exactly these (e.g. '-p8 -m10').",
    )
    parser.add_argument(
        "--define",
        "-D",
        action="append",
        type=define_arg,
        default=[],
        metavar="NAME[=VALUE]",
        help="Compile the --app with this C macro (repeatable), e.g. -D STRESS_CYCLES=1000000.",
    )
    parser.add_argument(
        "--backend", choices=BACKENDS, default="subutai", help="PThreads backend the --app is linked with."
    )
    parser.add_argument(
        "--chan",
        choices=CHANS,
        default=None,
        help=f"Implementation of channels (subutai/chan.h) the --app is built with (default {CHANS[0]}).",
    )
    parser.add_argument("--ram-init", default=None, help="Raw binary image to run from main RAM.")
    parser.add_argument(
        "--max-cycles",
        type=int,
        default=50_000_000,
        help=f"Stop after this many cycles (exit {EXIT_TIMEOUT}).",
    )
    parser.add_argument(
        "--trace",
        nargs="?",
        const="sim.vcd",
        default=None,
        metavar="FILE",
        help="Write a waveform (.vcd or .fst); builds a tracing model beside the fast one.",
    )
    parser.add_argument(
        "--mem-banks",
        type=mem_banks_arg,
        default=None,
        help="Main RAM in this many line-interleaved banks behind a crossbar (a power of two; 0: one "
        "RAM on the shared SoC bus; default: one per tile).",
    )
    parser.add_argument("--jobs", type=int, default=None, help="Parallel C++ compile jobs.")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="Host cores the model evaluates on (Verilator --threads; a model of its own). It spins on "
        "them: one thread per free core (2 threads, the default tile-module model: 0.76x at 32 tiles, 1.15x "
        "at 64; the flattened one: 2.6x at 32 tiles, 0.70x at 16).",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        default=1,
        help="Cut the model into this many partitions of tiles, each a Verilator model in a process "
        "of its own, exchanging the cut's registered signals every cycle: the same cycles and output "
        "(soc/partition.py; a model of its own, with the tile module).",
    )
    parser.add_argument(
        "--leader-tiles",
        type=int,
        default=None,
        metavar="L",
        help="Tiles of the first partition, which also holds the memory system, the UART and the "
        "global control (default: as many as the others'); the other tiles are shared evenly.",
    )
    parser.add_argument(
        "--hosts",
        default=None,
        metavar="HOST[,HOST...]",
        help="Run the partitions as an MPI job on these hosts (Open MPI's mpirun; neighbouring "
        "partitions on one host, the first partition, which reads the image, on the first host; "
        "every host needs the build directory at the same path). Without: this host, through "
        "shared memory.",
    )
    parser.add_argument(
        "--tile-blocks",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"Verilate one tile module for every tile but tile 0 (soc/tile_block.py), or flatten "
        f"every tile into the SoC's module (--no-tile-blocks): the same cycles (default: from "
        f"{TILE_BLOCKS_FROM} tiles, where it is faster; the other choice is a model of its own).",
    )
    args = parser.parse_args()

    try:
        mesh_x, mesh_y = mesh_shape(args.tiles, args.mesh)
    except MeshShapeError as e:
        parser.error(str(e))
    if sum(map(bool, (args.ram_init, args.app, args.program_dir))) > 1:
        parser.error("give one of --app, --program-dir and --ram-init")
    if args.program_dir and not glob.glob(os.path.join(args.program_dir, "*.c")):
        parser.error(f"--program-dir {args.program_dir}: no C sources (*.c) there")
    if args.ram_init and not os.path.isfile(args.ram_init):
        parser.error(f"--ram-init {args.ram_init}: no such file")
    if args.max_cycles < 0:
        parser.error("--max-cycles must be >= 0")
    if args.threads < 1:
        parser.error("--threads must be >= 1")
    if not 1 <= args.partitions <= mesh_x * mesh_y:
        parser.error(f"--partitions {args.partitions}: 1 to {mesh_x * mesh_y} (a tile a partition at least)")
    if args.partitions > 1 and (args.threads > 1 or args.trace or args.tile_blocks is False):
        parser.error(
            "--partitions: a model cut into partitions has no --threads, --trace or --no-tile-blocks"
        )
    if args.leader_tiles is not None and args.partitions < 2:
        parser.error("--leader-tiles: a model cut into --partitions 2 or more")
    hosts = [h for h in (args.hosts or "").split(",") if h]
    if args.hosts is not None and (args.partitions < 2 or not hosts):
        parser.error("--hosts: give host names, and --partitions 2 or more")
    if args.threads > 1 and args.trace:
        parser.error("--threads and --trace: a waveform comes from a single-threaded model")
    if args.app and args.app not in firmware_apps() + benchmark_programs(channels=True):
        parser.error(
            f"--app {args.app}: no such application or program (have: "
            f"{', '.join(firmware_apps())}; programs: {', '.join(benchmark_programs(channels=True))})"
        )
    if args.args and args.app not in benchmark_programs(channels=True) and not args.program_dir:
        parser.error("--args only applies to a benchmark program (firmware/programs/, --program-dir)")
    try:
        check_program_args(args.args, own_program=bool(args.program_dir))
    except ValueError as e:
        parser.error(f"--args: {e}")
    if args.define and not (args.app or args.program_dir):
        parser.error("--define applies to an --app or a --program-dir")

    trace = None
    if args.trace:
        trace = "fst" if args.trace.endswith(".fst") else "1"
    try:
        model = build_model(
            mesh_x,
            mesh_y,
            args.cpu_variant,
            tile_ram_size=args.tile_ram_size,
            main_ram_size=args.main_ram_size,
            mem_banks=args.mem_banks,
            output_dir=args.output_dir,
            trace=trace,
            jobs=args.jobs,
            threads=args.threads,
            tile_blocks=args.tile_blocks,
            partitions=args.partitions,
            leader_tiles=args.leader_tiles,
            force=args.force,
        )
    except (RuntimeError, ValueError) as e:
        sys.exit(f"error: {e}")

    image = args.ram_init
    if args.app or args.program_dir:
        try:
            image = model.build_firmware(
                args.app,
                backend=args.backend,
                program_args=args.args,
                extra_cflags=" ".join(f"-D{d}" for d in args.define),
                program_dir=args.program_dir,
                chan=args.chan,
            )
        except subprocess.CalledProcessError:
            sys.exit(f"error: the firmware of {args.app or args.program_dir} did not build (above)")
    if image is None:
        return
    print(
        f"[sim] running {os.path.basename(image)} on {mesh_x}x{mesh_y} ({mesh_x * mesh_y} tiles)", flush=True
    )
    try:
        result = model.run(image, max_cycles=args.max_cycles, trace=args.trace, echo=True, hosts=hosts)
    except (RuntimeError, ValueError) as e:
        sys.exit(f"error: {e}")
    sys.stderr.write(result.stderr)
    sys.exit(result.exit_code)


if __name__ == "__main__":
    main()
