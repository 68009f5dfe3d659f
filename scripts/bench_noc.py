#!/usr/bin/env python3
"""NoC benchmark: zero-load latency, cycles per hop and saturation throughput of the mesh (RTL in
Verilator, driven by the mesh testbench), plus software round trips between tiles of the SoC
(the `pingpong` firmware through the NI driver, polling and interrupt mode).

Writes results/noc_*.{csv,md} and results/noc_latency_load.png; prints short tables.
"""

import argparse
import json
import os
import random
import statistics


from scripts.results import save_table, console_table, RESULTS_DIR
from soc.mesh import mesh_shape
from gateware.noc.tb.model import build_model as build_mesh_model
from gateware.noc.tb.reference import check, hops
from gateware.noc.tb.traffic import Packet, uniform_random


def zero_load(model, spacing=200):
    """One single-flit packet at a time from every tile to every tile (both VCs)."""
    n = model.n_tiles
    packets, t = [], 0
    for vc in (0, 1):
        for s in range(n):
            for d in range(n):
                packets.append(Packet(s, d, vc, [], inject=t))
                t += spacing
    result = model.run(packets, max_cycles=t + 10_000)
    report = check(packets, result, model.mesh_x, model.mesh_y)
    if not report.ok():
        raise RuntimeError("zero-load run failed: " + "; ".join(report.errors[:5]))
    lat = {}
    for p, timing in zip(packets, report.timing):
        lat.setdefault(hops(p.src, p.dst, model.mesh_x), []).append(timing["head"] - timing["inject"])
    # Least-squares fit latency = a + b*hops.
    xs = [h for h, ls in lat.items() for _ in ls]
    ys = [l for h, ls in lat.items() for l in ls]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return {h: (min(v), statistics.mean(v), max(v)) for h, v in sorted(lat.items())}, b, my - b * mx


def load_sweep(model, rates, packets_per_src, seed=1):
    """Uniform random traffic at offered loads (flits/cycle/tile); None = saturation."""
    rows = []
    for rate in rates:
        rng = random.Random(seed)
        packets = uniform_random(
            rng, model.mesh_x, model.mesh_y, packets_per_src, max_len=4, rate=rate, vc1_fraction=0.5
        )
        result = model.run(packets, max_cycles=5_000_000, timeout=20_000)
        report = check(packets, result, model.mesh_x, model.mesh_y)
        if not report.ok():
            raise RuntimeError(f"rate {rate}: " + "; ".join(report.errors[:5]))
        flits = sum(len(p.payload) + 1 for p in packets)
        last = max(t["tail"] for t in report.timing if t)
        first = min(p.inject for p in packets)
        throughput = flits / (last - first + 1) / model.n_tiles
        lat = report.latencies(packets)
        lat1 = report.latencies(packets, lambda p: p.vc == 1)
        lat0 = report.latencies(packets, lambda p: p.vc == 0)
        rows.append((rate, throughput, statistics.mean(lat), statistics.mean(lat0), statistics.mean(lat1)))
    return rows


def soc_pingpong(tiles, rounds):
    from soc.simulation import build_model

    x, y = mesh_shape(tiles)
    model = build_model(x, y)
    out = {}
    for mode, flags in [("poll", ""), ("irq", "-DPINGPONG_IRQ")]:
        image = model.build_firmware(
            "pingpong",
            out_dir=f"{model.output_dir}/firmware/bench_pingpong_{mode}",
            extra_cflags=f"{flags} -DPINGPONG_ROUNDS={rounds}",
        )
        print(f"[bench-noc] SoC {x}x{y}: pingpong ({mode}) in Verilator", flush=True)
        r = model.run(image, max_cycles=200_000_000)
        if r.exit_code != 0:
            raise RuntimeError(f"pingpong failed ({r.exit_code}): {r.output[-2000:]}{r.stderr}")
        out[mode] = [
            json.loads(l.split(" ", 1)[1]) for l in r.output.splitlines() if l.startswith("@subutai ")
        ]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mesh", default="4x4", help="Mesh of the RTL measurements (XxY).")
    p.add_argument("--soc-tiles", type=int, default=4, help="Tiles of the SoC ping-pong run (0: skip).")
    p.add_argument("--rounds", type=int, default=16, help="Ping-pong rounds per pair.")
    p.add_argument("--packets", type=int, default=300, help="Packets per source for each load point.")
    args = p.parse_args()
    # SIGTERM stops the running models with the script (not left computing on).
    from soc.simulation import stop_runs_on_sigterm

    stop_runs_on_sigterm()
    try:
        mx, my = mesh_shape(mesh=args.mesh)
        if args.soc_tiles:
            mesh_shape(args.soc_tiles)
    except ValueError as e:
        p.error(str(e))
    if args.rounds <= 0 or args.packets <= 0:
        p.error("--rounds and --packets must be positive")

    print(f"[bench-noc] building the {mx}x{my} mesh testbench", flush=True)
    model = build_mesh_model(mx, my, log=lambda m: print(f"[bench-noc] {m}", flush=True))

    print("[bench-noc] zero-load latency, every pair, both classes", flush=True)
    lat, per_hop, base = zero_load(model)
    rows = [(h, mn, f"{avg:.1f}", mxl) for h, (mn, avg, mxl) in lat.items()]
    header = ["hops", "min (cycles)", "mean", "max"]
    save_table(
        "noc_zero_load",
        header,
        rows,
        title=f"Zero-load head latency, {mx}x{my} mesh (RTL)",
        notes=f"Fit: latency = {base:.2f} + {per_hop:.2f} x hops (cycles). Latency is measured from "
        "the cycle the head flit is offered at the source's local input to the cycle it "
        "leaves the destination's local output.",
    )
    print(console_table(header, rows))
    print(f"cycles per hop: {per_hop:.2f}   (latency = {base:.2f} + {per_hop:.2f} x hops)\n")

    print("[bench-noc] uniform random traffic, load sweep up to saturation", flush=True)
    rates = [0.05, 0.1, 0.2, 0.3, 0.4, None]
    sweep = load_sweep(model, rates, args.packets)
    header = ["offered (flits/cycle/tile)", "accepted", "mean latency", "VC0 latency", "VC1 latency"]
    rows = [
        ("saturation" if r is None else r, f"{t:.3f}", f"{l:.1f}", f"{l0:.1f}", f"{l1:.1f}")
        for r, t, l, l0, l1 in sweep
    ]
    sat = sweep[-1][1]
    save_table(
        "noc_load",
        header,
        rows,
        title=f"Uniform random traffic, {mx}x{my} mesh (RTL)",
        notes=f"Saturation throughput: {sat:.3f} flits/cycle/tile. Packets of 1 to 5 flits, half "
        "on each class; latency from injection time to head delivery (cycles).",
    )
    print(console_table(header, rows))
    print(f"saturation throughput: {sat:.3f} flits/cycle/tile\n")
    plot_load(sweep, mx, my)

    if args.soc_tiles:
        pp = soc_pingpong(args.soc_tiles, args.rounds)
        header = ["mode", "pairs", "min RTT", "mean of avg RTT", "max RTT"]
        rows = []
        for mode, reps in pp.items():
            rows.append(
                (
                    mode,
                    len(reps),
                    min(r["min"] for r in reps),
                    f"{statistics.mean(r['avg'] for r in reps):.0f}",
                    max(r["max"] for r in reps),
                )
            )
        save_table(
            "noc_pingpong",
            header,
            rows,
            title=f"Software round trip between tiles, {args.soc_tiles}-tile SoC (cycles)",
            notes="Firmware `pingpong`: a one-word message and its answer through the NI driver; "
            "`irq` answers from the NI interrupt handler. Includes all software overhead.",
        )
        print(console_table(header, rows))
    print(
        f"\nwrote results/noc_zero_load, noc_load{', noc_pingpong' if args.soc_tiles else ''} (.csv, .md) "
        "and results/noc_latency_load.png"
    )


def plot_load(sweep, mx, my):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    pts = [(t, l0, l1) for r, t, l, l0, l1 in sweep]
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label="VC 0 (normal)")
    ax.plot([p[0] for p in pts], [p[2] for p in pts], "s-", label="VC 1 (priority)")
    ax.set_xlabel("accepted load (flits/cycle/tile)")
    ax.set_ylabel("mean head latency (cycles)")
    ax.set_title(f"{mx}x{my} mesh, uniform random traffic")
    ax.legend()
    fig.tight_layout()
    os.makedirs(RESULTS_DIR, exist_ok=True)
    fig.savefig(os.path.join(RESULTS_DIR, "noc_latency_load.png"), dpi=100)


if __name__ == "__main__":
    main()
