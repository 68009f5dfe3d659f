#
# The command line and main flow every FPGA board target of the Subutai SoC shares. Each board
# file (boards/<board>.py) adds its platform, CRG and SDRAM PHY (from litex-boards / LiteDRAM);
# the libraries do the rest: soc.board_soc (the SoC), soc.board_budget (the tile limits),
# soc.fpga_flow and soc.nextpnr (the build), soc.board_sim (the board SoC in Verilator).
#
# The parser is argparse's with LiteX's builder and toolchain options, not LiteX's
# LiteXArgumentParser: that one adds the options of LiteX's SoCCore (--cpu-variant,
# --integrated-rom-size...), which BoardSoC sets itself and which would clash with these.
#

import argparse
import json
import os
import sys
import time

from litex.soc.integration.builder import builder_args

from gateware.build import ROOT

from soc.board_budget import ECP5_DEVICES, FILL
from soc.board_sim import run_board_sim
from soc.fpga_flow import (
    BoardError,
    TimingMiss,
    _toolchain_args,
    check_programmer,
    default_output_dir,
    generate,
    load_bitstream,
    progress,
    run_trellis,
    yowasp_path,
)
from soc.mesh import mesh_shape, MeshShapeError
from soc.nextpnr import STALL_LINES, STALL_PATIENCE, add_nextpnr_options
from soc.simulation import quiet_litex
from soc.subutai_soc import KiB

# Command line -------------------------------------------------------------------------------------


def board_argparser(board, description, default_sys_clk_freq, toolchain="trellis"):
    """Options common to every board target; a board adds its own (--device, --variant...)."""
    parser = argparse.ArgumentParser(description=description)
    target = parser.add_argument_group(title="Target options")
    target.add_argument(
        "--tiles", type=int, default=None, help="Number of tiles (default 4, or the most that fit)."
    )
    target.add_argument("--mesh", default=None, help="Mesh shape XxY (1x1 to 8x8).")
    target.add_argument(
        "--build", action="store_true", help="Build the bitstream (or, for Vivado, its project)."
    )
    target.add_argument("--load", action="store_true", help="Load the bitstream into the FPGA (SRAM).")
    target.add_argument(
        "--sys-clk-freq",
        type=float,
        default=default_sys_clk_freq,
        help=f"System clock frequency in Hz (default {default_sys_clk_freq / 1e6:g} MHz).",
    )
    target.add_argument("--cpu-variant", default="standard", help="VexRiscv variant of every core.")
    target.add_argument(
        "--tile-ram-size", type=lambda s: int(s, 0), default=16 * KiB, help="Private SRAM per tile (bytes)."
    )
    target.add_argument(
        "--l2-size",
        type=l2_size_arg,
        default=None,
        help="L2 cache in front of the SDRAM, shared by every tile: bytes or KiB (e.g. 32K), a "
        "power of two from 1K to 256K, or 0 for none (default: the largest that costs the "
        "device no tile).",
    )
    target.add_argument(
        "--lut-fill",
        type=lut_fill_arg,
        default=FILL,
        help=f"Share of the device's LUTs the tile limit budgets (default {FILL}: what has built at "
        "its clock; more admits more tiles, which may not route or may miss the clock, see "
        "docs/architecture.md, Boards).",
    )
    # LiteX's own builder and toolchain options (--output-dir, --no-compile-software,
    # --nextpnr-seed, ...).
    builder_args(parser)
    _toolchain_args(toolchain)[0](parser)
    if toolchain == "trellis":
        # Another router (or --nextpnr-seed) when a placement does not route (docs/architecture.md
        # "Boards").
        parser.add_argument(
            "--nextpnr-router",
            default="router2",
            choices=["router1", "router2"],
            help="nextpnr-ecp5's router (default router2; router1 is nextpnr's default).",
        )
        parser.add_argument(
            "--nextpnr-placer",
            default="heap",
            choices=["heap", "static"],
            help="nextpnr-ecp5's placer: HeAP (its default) or the electrostatic one.",
        )
        parser.add_argument(
            "--nextpnr-tmg-ripup",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="nextpnr-ecp5's timing-driven rip-up (--tmg-ripup, default on): the router also "
            "rips up and reroutes the nets of paths that miss the clock.",
        )
        parser.add_argument(
            "--nextpnr-timing-weight",
            type=_positive_int,
            default=None,
            help="HeAP's timing weight (--placer-heap-timingweight; nextpnr's default 10): how "
            "hard the placer pulls the cells of critical paths together.",
        )
        parser.add_argument(
            "--nextpnr-critexp",
            type=_positive_int,
            default=None,
            help="HeAP's criticality exponent (--placer-heap-critexp; nextpnr's default 2): "
            "higher weighs the most critical paths more against the rest.",
        )
        parser.add_argument(
            "--seed-attempts",
            type=_positive_int,
            default=3,
            help="Seeds nextpnr-ecp5 tries (--nextpnr-seed, then the next ones) when a run fails, "
            "does not converge (--nextpnr-stall, --nextpnr-timeout) or misses timing "
            "(default 3).",
        )
        parser.add_argument(
            "--nextpnr-timeout",
            type=_minutes,
            default=60,
            help="Minutes after which a nextpnr-ecp5 run counts as not converging (0: none; default 60).",
        )
        parser.add_argument(
            "--nextpnr-stall",
            type=_minutes,
            default=5,
            help="Minutes without progress of nextpnr-ecp5's router (arcs left, wires overused) "
            "after which a run counts as not converging, once the router has also reported "
            f"{STALL_LINES} times without progress, or after {STALL_PATIENCE} times as many "
            "minutes however often it reported (0: never; default 5).",
        )
        parser.add_argument(
            "--timing-allow-fail",
            action="store_true",
            help="Keep a bitstream that misses the system clock without an error exit.",
        )
        parser.add_argument(
            "--floorplan",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="Lock every tile's block RAMs in its part of the device, laid out as the mesh "
            "(boards/floorplan.py), before nextpnr-ecp5 places the rest (default: on from "
            "2 tiles).",
        )
        # Plain LUT4 mapping: synth_ecp5's wide-LUT default takes about twice the LUT4 sites of
        # the router (docs/architecture.md "Boards"); --yosys-widelut restores it.
        parser.add_argument(
            "--yosys-widelut",
            dest="yosys_nowidelut",
            action="store_false",
            help="Map to wide LUTs (synth_ecp5's default; this target uses -nowidelut).",
        )
        parser.set_defaults(yosys_nowidelut=True)
    add_sim_args(parser)
    parser.set_defaults(board=board, toolchain=toolchain)
    return parser


def add_sim_args(parser):
    """Options of the board SoC in simulation (--sim, :func:`run_board_sim`)."""
    sim = parser.add_argument_group(title="Simulation of the board SoC (--sim)")
    sim.add_argument(
        "--sim",
        action="store_true",
        help="Build this board's SoC (BIOS, SDRAM controller and L2 with a model of the board's "
        "SDRAM chip, UART, tiles) as a Verilator model instead of a bitstream, and run it "
        "with its UART on a pseudo-terminal.",
    )
    sim.add_argument(
        "--app",
        default=None,
        help="Firmware to serial-boot through the BIOS (firmware/apps/ or firmware/programs/), "
        "with scripts/board_run.py as on a board; without it the model waits on its "
        "pseudo-terminal for a terminal (litex_term, scripts/board_run.py --port).",
    )
    sim.add_argument(
        "--backend",
        default="subutai",
        choices=["subutai", "swonly"],
        help="PThreads backend of the firmware.",
    )
    sim.add_argument("--app-args", default="", help="Arguments of a benchmark program.")
    sim.add_argument(
        "--zephyr",
        action="store_true",
        help="--app is a zephyr-app application (pthreadtest, program...): Zephyr on every tile, "
        "booted the same way (needs ZEPHYR_BASE).",
    )
    sim.add_argument(
        "--program",
        default=None,
        help="With --zephyr --app program: the benchmark program (firmware/programs/).",
    )
    sim.add_argument(
        "--max-cycles",
        type=_positive_int,
        default=2_000_000_000,
        help="Cycles after which the simulation stops (exit status 124).",
    )
    sim.add_argument(
        "--capture",
        default=None,
        help="Where scripts/board_run.py writes the capture (default: runs/<app>-<backend>"
        ".capture.txt in the model's directory, beside the UART's log).",
    )


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _minutes(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number of minutes {text!r}")
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 (no limit) or more minutes, not {text}")
    return value


def lut_fill_arg(text):
    """--lut-fill: a share of the device's LUTs, above 0 and at most 1."""
    try:
        fill = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    if not 0 < fill <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not in (0, 1]")
    return fill


def l2_size_arg(text):
    """--l2-size: bytes, or KiB with a K suffix; LiteX would round any other size silently."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    try:
        size = int(t[:-1], 0) * KiB if t.endswith("K") else int(t, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid size {text!r} (bytes, or KiB as e.g. 32K)")
    if size and not (1 * KiB <= size <= 256 * KiB and size & (size - 1) == 0):
        raise argparse.ArgumentTypeError(f"{text}: the L2 size must be 0 or a power of two from 1K to 256K")
    return size


def apply_preset(parser, args, presets, device, argv=None):
    """The options a measured build of ``device`` used (``presets``: ``{(device, tiles):
    {dest: value}}``) become the defaults of the same build: each option the command line
    (``argv``, default ``sys.argv[1:]``) does not give takes the preset's value, and the command
    says which it set."""
    tiles = args.tiles
    if args.mesh is not None:
        try:
            mesh_x, mesh_y = mesh_shape(args.tiles, args.mesh)
        except MeshShapeError as e:
            parser.error(str(e))
        tiles = mesh_x * mesh_y
    preset = presets.get((device, tiles), {})
    # argparse leaves an attribute the namespace already has unless the option is given.
    unset = object()
    given, _ = parser.parse_known_args(
        sys.argv[1:] if argv is None else argv, argparse.Namespace(**{dest: unset for dest in preset})
    )
    taken = {dest: value for dest, value in preset.items() if getattr(given, dest) is unset}
    for dest, value in taken.items():
        setattr(args, dest, value)
    if taken:
        progress(
            f"{tiles} tiles on {device}: the options of the measured build ("
            + ", ".join(f"{dest}={value}" for dest, value in taken.items())
            + ")"
        )


def parse_mesh(parser, args, max_tiles, device):
    """(X, Y) of --tiles/--mesh, or a usage error (exit 2) when it is not a mesh or does not fit."""
    tiles = args.tiles
    if tiles is None and args.mesh is None:
        tiles = 4 if max_tiles >= 4 else max(max_tiles, 1)
    try:
        mesh_x, mesh_y = mesh_shape(tiles, args.mesh)
    except MeshShapeError as e:
        parser.error(str(e))
    n = mesh_x * mesh_y
    if max_tiles < 1:
        parser.error(f"no tile fits {device} (see docs/architecture.md, Boards)")
    if n > max_tiles:
        parser.error(
            f"{n} tiles do not fit {device}: at most {max_tiles} "
            f"(estimate from measured LUTs and block RAMs per tile, see docs/architecture.md, Boards; "
            f"--lut-fill {args.lut_fill:g} of its LUTs: a larger share admits more)"
        )
    return mesh_x, mesh_y


def check_sys_clk_freq(parser, freq, low=10e6, high=200e6):
    if not low <= freq <= high:
        parser.error(
            f"--sys-clk-freq {freq:g}: must be {low / 1e6:g} to {high / 1e6:g} MHz (in Hz, e.g. 50e6)"
        )
    return int(freq)


def output_dir_of(parser, args, mesh_x, mesh_y):
    """--output-dir, default build/<board>_<X>x<Y>. Any directory works: the ECP5 tools see the
    build through paths relative to it (:func:`relative_sources`)."""
    return os.path.abspath(args.output_dir or default_output_dir(args.board, mesh_x, mesh_y))


# Build --------------------------------------------------------------------------------------------


def run_board(parser, args, make_soc, build_name, toolchain, limits, loader_board=None, device=""):
    """Main flow of a board target: parse the mesh, elaborate, build, report, load.

    ``make_soc(mesh_x, mesh_y, sys_clk_freq)``: the board's SoC, made after ``args.l2_size`` is
    set (``--l2-size``, or the default of ``limits``, the device's :class:`DeviceLimits`);
    ``toolchain``: "trellis" or "vivado"; ``loader_board``: openFPGALoader's name of the board,
    for --load. ``--load`` without ``--build`` loads the bitstream already built in the output
    directory.
    """
    limits.fill = args.lut_fill
    if args.l2_size is None:
        args.l2_size = limits.default_l2_size()
    mesh_x, mesh_y = parse_mesh(parser, args, limits.max_tiles(args.l2_size), device)
    sys_clk_freq = check_sys_clk_freq(parser, args.sys_clk_freq)
    if args.sim:
        if args.build or args.load:
            parser.error("--sim builds a simulation model, not a bitstream: no --build or --load")
        try:
            sys.exit(run_board_sim(args, make_soc, mesh_x, mesh_y, sys_clk_freq))
        except BoardError as e:
            sys.exit(f"error: {e}")
    elif args.app:
        parser.error(
            "--app runs firmware on the board SoC in simulation: add --sim (on a board, scripts/board_run.py)"
        )
    output_dir = output_dir_of(parser, args, mesh_x, mesh_y)
    gateware_dir = os.path.join(output_dir, "gateware")
    if args.load and loader_board is None:
        parser.error("--load is not supported on this board")
    quiet_litex()
    try:
        # Missing tools fail now, not after the BIOS compile or a long build.
        if args.load:
            check_programmer("openFPGALoader", "openfpgaloader")
        if args.build and toolchain == "trellis":
            yowasp_path()
        if args.build or not args.load:
            build(args, make_soc, build_name, toolchain, mesh_x, mesh_y, sys_clk_freq, output_dir, device)
        if args.load:
            load_bitstream(gateware_dir, build_name, loader_board)
    except TimingMiss as e:
        # Exit status 3: a complete build that misses timing (make bitstream still reports it).
        print(f"error: {e}", file=sys.stderr)
        sys.exit(3)
    except BoardError as e:
        sys.exit(f"error: {e}")
    return output_dir


def build(args, make_soc, build_name, toolchain, mesh_x, mesh_y, sys_clk_freq, output_dir, device):
    progress(
        f"{args.board}: {mesh_x}x{mesh_y} mesh ({mesh_x * mesh_y} tiles, VexRiscv "
        f"{args.cpu_variant}, {args.l2_size // KiB} KiB L2) at {sys_clk_freq / 1e6:g} MHz"
    )
    if (
        toolchain == "trellis"
        and args.nextpnr_placer != "heap"
        and (args.nextpnr_timing_weight or args.nextpnr_critexp)
    ):
        raise BoardError(
            "--nextpnr-timing-weight and --nextpnr-critexp are options of the HeAP "
            "placer (--nextpnr-placer heap)"
        )
    soc = make_soc(mesh_x, mesh_y, sys_clk_freq)
    if toolchain == "trellis":
        if args.floorplan is None:
            # On by default: with it 4 tiles met 55.5 MHz on their first seed (52.3 on the
            # second without), 6 tiles 51.2 MHz (without: no routing), 8 tiles routed
            # (docs/architecture.md, Floorplan). One tile has nothing to lay out.
            args.floorplan = mesh_x * mesh_y >= 2
        add_nextpnr_options(
            soc.platform,
            build_name,
            args.nextpnr_router,
            args.nextpnr_placer,
            args.nextpnr_tmg_ripup,
            args.nextpnr_timing_weight,
            args.nextpnr_critexp,
        )
    t0 = time.time()
    builder = generate(soc, args, output_dir, build_name)
    times = {"generate": time.time() - t0}
    if not args.build:
        return
    gateware_dir = builder.gateware_dir
    if toolchain == "trellis":
        stage_times, seed, (achieved, target), runs = run_trellis(
            soc,
            builder,
            build_name,
            sys_clk_freq,
            seed=args.nextpnr_seed,
            attempts=args.seed_attempts,
            timeout=args.nextpnr_timeout * 60 if args.nextpnr_timeout else None,
            stall=args.nextpnr_stall * 60 if args.nextpnr_stall else None,
            floorplan=(mesh_x, mesh_y, ECP5_DEVICES[device][1]) if args.floorplan else None,
        )
        times.update(stage_times)
        bit = os.path.join(gateware_dir, f"{build_name}.bit")
        progress(
            f"bitstream: {os.path.relpath(bit, ROOT)} (seed {seed}, "
            f"{sum(times.values()) / 60:.1f} min in all)"
        )
    else:
        progress(
            f"Vivado project generated: {os.path.relpath(gateware_dir, ROOT)}/"
            f"{{{build_name}.tcl,{build_name}.xdc,{build_name}.v}}"
        )
        progress(
            f"Vivado is needed to build the bitstream: run (where Vivado is "
            f"installed) 'cd {gateware_dir} && bash build_{build_name}.sh'"
        )
    # What the report (scripts/board_report.py BUILD_DIR, run by make bitstream) needs, beside
    # the tools' own logs.
    with open(os.path.join(gateware_dir, f"{build_name}_times.json"), "w") as f:
        json.dump(
            {
                "times": times,
                "sys_clk_freq": sys_clk_freq,
                "device": device,
                "mesh": [mesh_x, mesh_y],
                "board": args.board,
                "toolchain": toolchain,
                "cpu_variant": args.cpu_variant,
                "l2_size": args.l2_size,
                "seed": seed if toolchain == "trellis" else None,
                "nextpnr": {
                    "placer": args.nextpnr_placer,
                    "router": args.nextpnr_router,
                    "tmg_ripup": args.nextpnr_tmg_ripup,
                    "floorplan": args.floorplan,
                    "timing_weight": args.nextpnr_timing_weight,
                    "critexp": args.nextpnr_critexp,
                }
                if toolchain == "trellis"
                else None,
                "nextpnr_runs": runs if toolchain == "trellis" else None,
            },
            f,
            indent=1,
        )
    progress(f"report: scripts/board_report.py {os.path.relpath(output_dir)}")
    if toolchain == "trellis":
        if achieved < target:
            miss = (
                f"timing missed: the system clock reaches {achieved:.1f} MHz, "
                f"{target - achieved:.1f} MHz ({100 * (target - achieved) / target:.1f} %) short of "
                f"the {target:g} MHz target"
            )
            if not args.timing_allow_fail:
                raise TimingMiss(miss + " (--timing-allow-fail keeps such a bitstream without error)")
            progress(miss + " (allowed by --timing-allow-fail)")
