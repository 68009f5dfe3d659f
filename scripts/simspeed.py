#!/usr/bin/env python3
"""Simulation speed benchmark: simulated cycles per wall-clock second of the SoC model.

Builds the Verilator model of 1, 2, 4 and 8 tiles with several build configurations, from what
LiteX's own flow does to this project's defaults, runs the `busy` firmware (every core computing)
for a fixed number of cycles and prints cycles/s. Results go to results/simspeed.{csv,md,png}.
"""

import argparse
import os


from soc.simulation import EXIT_TIMEOUT, build_model, stop_runs_on_sigterm
from soc.mesh import mesh_shape
from scripts.results import save_table, console_table, RESULTS_DIR

XFAST = "-O3 --x-assign fast --x-initial fast --noassert"

# name: (description, build options). Each adds one change to the previous one.
CONFIGS = {
    "litex": (
        "LiteX flow from a script: verilator -O3, tracing compiled in, C++ -O0",
        dict(opt="-O3", trace="1", cxxopt="-O0"),
    ),
    "cxx-O3": ("C++ -O3 (what litex_sim passes)", dict(opt="-O3", trace="1", cxxopt="-O3")),
    "no-trace": ("tracing not compiled in", dict(opt="-O3", cxxopt="-O3")),
    "x-fast": ("--x-assign/--x-initial fast, --noassert", dict(opt=XFAST, cxxopt="-O3")),
    "default": ("project default: x-fast with C++ -O2", dict(opt=XFAST, cxxopt="-O2")),
    "pgo": ("default + gcc profile-guided compile (trained on busy)", dict(opt=XFAST, cxxopt="-O2")),
}


def measure(model, image, cycles):
    r = model.run(image, max_cycles=cycles)
    if r.exit_code != EXIT_TIMEOUT or r.cycles != cycles:
        raise RuntimeError(f"busy run ended early (exit {r.exit_code}):\n{r.output}\n{r.stderr}")
    return r.speed


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tiles", default="1,2,4,8", help="Comma-separated tile counts.")
    p.add_argument(
        "--configs",
        default="litex,default",
        help=f"Comma-separated configurations (default: LiteX's flow and the project's; all: {', '.join(CONFIGS)}).",
    )
    p.add_argument("--cycles", type=int, default=400_000, help="Simulated cycles per measurement.")
    p.add_argument("--jobs", type=int, default=None, help="Parallel C++ compile jobs.")
    args = p.parse_args()
    # SIGTERM stops the running models with the script (not left computing on).
    stop_runs_on_sigterm()

    try:
        tiles = [int(t) for t in args.tiles.split(",")]
        shapes = [mesh_shape(t) for t in tiles]
    except ValueError as e:
        p.error(f"--tiles: {e}")
    configs = args.configs.split(",")
    for c in configs:
        if c not in CONFIGS:
            p.error(f"--configs: unknown configuration {c!r} (have: {', '.join(CONFIGS)})")
    if args.cycles <= 0:
        p.error("--cycles must be positive")

    speeds = {}
    for n, (x, y) in zip(tiles, shapes):
        for c in configs:
            desc, opts = CONFIGS[c]
            print(f"[simspeed] {n} tiles, {c}: {desc}", flush=True)
            obj_dir = f"obj_dir_speed_{c}"
            if c == "pgo":
                model = build_model(x, y, obj_dir=obj_dir, pgo="gen", jobs=args.jobs, **opts)
                image = model.build_firmware("busy")
                model.run(image, max_cycles=args.cycles)  # training run writes the profile
                model = build_model(x, y, obj_dir=obj_dir, pgo="use", jobs=args.jobs, force=True, **opts)
            else:
                model = build_model(x, y, obj_dir=obj_dir, jobs=args.jobs, **opts)
                image = model.build_firmware("busy")
            speeds[(n, c)] = measure(model, image, args.cycles)
            print(f"[simspeed] {n} tiles, {c}: {speeds[(n, c)] / 1e6:.3f} M cycles/s", flush=True)

    header = ["tiles"] + [f"{c} (Mc/s)" for c in configs]
    if "litex" in configs and len(configs) > 1:
        header.append("best/litex")
    # What a many-tile model costs: tile-cycles per second of the default build, and the cost of a
    # tile-cycle relative to the 1-tile model (1.00: the model scales linearly with its tiles).
    per_tile = "default" in configs and 1 in tiles
    if per_tile:
        header += ["default (M tile-cycles/s)", "cost per tile-cycle vs 1 tile"]
    rows = []
    for n in tiles:
        row = [n] + [f"{speeds[(n, c)] / 1e6:.3f}" for c in configs]
        if "litex" in configs and len(configs) > 1:
            row.append(f"{max(speeds[(n, c)] for c in configs) / speeds[(n, 'litex')]:.2f}x")
        if per_tile:
            row += [
                f"{n * speeds[(n, 'default')] / 1e6:.3f}",
                f"{speeds[(1, 'default')] / (n * speeds[(n, 'default')]):.2f}",
            ]
        rows.append(row)
    notes = (
        "Configurations (each adds one change to the previous):\n\n"
        + "\n".join(f"- `{c}`: {CONFIGS[c][0]}" for c in configs)
        + f"\n\nWorkload: firmware `busy` on every core, {args.cycles} simulated cycles per run; "
        "speed from the harness (model run only, not start-up)."
    )
    csv_path, md_path = save_table(
        "simspeed", header, rows, title="Simulation speed (million simulated cycles per second)", notes=notes
    )
    print()
    print(console_table(header, rows))
    plot(tiles, configs, speeds)
    print(f"\nwrote {csv_path}, {md_path} and results/simspeed.png")


def plot(tiles, configs, speeds):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(configs)
    for i, c in enumerate(configs):
        ax.bar(
            [k + i * width for k in range(len(tiles))], [speeds[(n, c)] / 1e6 for n in tiles], width, label=c
        )
    ax.set_xticks([k + width * (len(configs) - 1) / 2 for k in range(len(tiles))])
    ax.set_xticklabels([str(n) for n in tiles])
    ax.set_xlabel("tiles")
    ax.set_ylabel("M simulated cycles / s")
    ax.set_title("Verilator simulation speed of the Subutai SoC")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS_DIR, "simspeed.png"), dpi=100)


if __name__ == "__main__":
    main()
