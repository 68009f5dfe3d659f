"""NoC benchmark: zero-load latency, cycles per hop and saturation throughput of the mesh (RTL in
Verilator, driven by the mesh testbench), plus software round trips between tiles of the SoC
(the `pingpong` firmware through the NI driver, polling and interrupt mode).

Writes results/noc_*.{csv,md} and results/noc_latency_load.png; prints short tables.

Usage: python -m scripts.experiments noc [--mesh 4x4] [--soc-tiles 4] [--rounds 16] [--packets 300]
"""

import json
import os
import random
import statistics

from gateware.build import build_lock
from scripts.capture import parse_lines
from scripts.experiments.framework import Experiment, ModelConfig, Run, run_image
from scripts.results import console_table, new_figure, save_figure, save_table, to_int
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


#: Offered loads of the sweep (flits/cycle/tile); None: saturation.
RATES = (0.05, 0.1, 0.2, 0.3, 0.4, None)


def record(**fields):
    return "@subutai " + json.dumps({"program": "noc", **fields}, sort_keys=True)


def mesh_model(mesh):
    mx, my = mesh_shape(mesh=mesh)
    from gateware.build import BUILD_DIR

    with build_lock(os.path.join(BUILD_DIR, f"noc_tb_{mx}x{my}")):
        return build_mesh_model(mx, my, log=lambda m: None)


class Noc(Experiment):
    name = "noc"
    title = "NoC latency, saturation and software round trip"
    command = "make bench-noc"
    # The mesh's RTL and its testbench, and the SoC of the ping-pong.
    measures = ("gateware", "soc", "firmware")
    results = ("noc_zero_load", "noc_load", "noc_pingpong")

    def add_arguments(self, parser):
        parser.add_argument("--mesh", default="4x4", help="Mesh of the RTL measurements (XxY).")
        parser.add_argument(
            "--soc-tiles", type=int, default=4, help="Tiles of the SoC ping-pong run (0: skip)."
        )
        parser.add_argument("--rounds", type=int, default=16, help="Ping-pong rounds per pair.")
        parser.add_argument(
            "--packets", type=int, default=300, help="Packets per source for each load point."
        )

    def validate(self, args, error):
        try:
            mesh_shape(mesh=args.mesh)
            if args.soc_tiles:
                mesh_shape(args.soc_tiles)
        except ValueError as e:
            error(str(e))
        if args.rounds <= 0 or args.packets <= 0:
            error("--rounds and --packets must be positive")

    def runs(self, args):
        runs = [Run.of(f"zero-load latency, {args.mesh} mesh", part="zero_load")]
        runs += [
            Run.of(f"uniform random traffic at {r or 'saturation'}, {args.mesh} mesh", part="load", rate=r)
            for r in RATES
        ]
        if args.soc_tiles:
            model = ModelConfig.of(args.soc_tiles)
            runs += [
                Run.of(f"pingpong ({m}), {args.soc_tiles} tiles", model, part="pingpong", mode=m)
                for m in ("poll", "irq")
            ]
        return runs

    def image(self, run, model, args):
        if run.config["part"] != "pingpong":
            return None
        mode = run.config["mode"]
        return model.build_firmware(
            "pingpong",
            out_dir=f"{model.output_dir}/firmware/bench_pingpong_{mode}",
            extra_cflags=f"{'-DPINGPONG_IRQ' if mode == 'irq' else ''} -DPINGPONG_ROUNDS={args.rounds}",
        )

    def execute(self, run, model, image, args):
        c = run.config
        if c["part"] == "pingpong":
            lines = run_image(model, image, run.what, 200_000_000)
            return [
                line.replace('{"', f'{{"mode": "{c["mode"]}", "', 1)
                for line in lines
                if line.startswith("@subutai ")
            ]
        mesh = mesh_model(args.mesh)
        if c["part"] == "zero_load":
            lat, per_hop, base = zero_load(mesh)
            return [
                record(part="zero_load", hops=h, min=mn, mean=avg, max=mx, per_hop=per_hop, base=base)
                for h, (mn, avg, mx) in lat.items()
            ]
        ((rate, t, l, l0, l1),) = load_sweep(mesh, [c["rate"]], args.packets)
        return [record(part="load", rate=rate, accepted=t, latency=l, vc0=l0, vc1=l1)]

    def report(self, lines, args, results_dir):
        records = parse_lines(lines)
        mx, my = mesh_shape(mesh=args.mesh)
        text = []
        zero = [r for r in records if r.get("part") == "zero_load"]
        rows = [(r["hops"], r["min"], f"{r['mean']:.1f}", r["max"]) for r in zero]
        header = ["hops", "min (cycles)", "mean", "max"]
        per_hop, base = zero[0]["per_hop"], zero[0]["base"]
        title = f"Zero-load head latency, {mx}x{my} mesh (RTL)"
        notes = (
            f"Fit: latency = {base:.2f} + {per_hop:.2f} x hops (cycles). Latency is measured from the cycle "
            "the head flit is offered at the source's local input to the cycle it leaves the destination's "
            "local output."
        )
        save_table("noc_zero_load", header, rows, title, notes, results_dir)
        text += [
            console_table(header, rows),
            f"cycles per hop: {per_hop:.2f}   (latency = {base:.2f} + {per_hop:.2f} x hops)\n",
        ]
        sweep = [
            (r["rate"], r["accepted"], r["latency"], r["vc0"], r["vc1"])
            for r in records
            if r.get("part") == "load"
        ]
        header = ["offered (flits/cycle/tile)", "accepted", "mean latency", "VC0 latency", "VC1 latency"]
        rows = [
            ("saturation" if r is None else r, f"{t:.3f}", f"{l:.1f}", f"{l0:.1f}", f"{l1:.1f}")
            for r, t, l, l0, l1 in sweep
        ]
        sat = sweep[-1][1]
        title = f"Uniform random traffic, {mx}x{my} mesh (RTL)"
        notes = (
            f"Saturation throughput: {sat:.3f} flits/cycle/tile. Packets of 1 to 5 flits, half on each "
            "class; latency from injection time to head delivery (cycles)."
        )
        save_table("noc_load", header, rows, title, notes, results_dir)
        text += [console_table(header, rows), f"saturation throughput: {sat:.3f} flits/cycle/tile\n"]
        plot_load(sweep, mx, my, results_dir)
        pp = {}
        for r in records:
            if "mode" in r and "min" in r:
                pp.setdefault(r["mode"], []).append(r)
        if pp:
            header = ["mode", "pairs", "min RTT", "mean of avg RTT", "max RTT"]
            rows = [
                (
                    mode,
                    len(reps),
                    min(r["min"] for r in reps),
                    f"{statistics.mean(r['avg'] for r in reps):.0f}",
                    max(r["max"] for r in reps),
                )
                for mode, reps in pp.items()
            ]
            title = f"Software round trip between tiles, {args.soc_tiles}-tile SoC (cycles)"
            notes = (
                "Firmware `pingpong`: a one-word message and its answer through the NI driver; `irq` "
                "answers from the NI interrupt handler. Includes all software overhead."
            )
            save_table("noc_pingpong", header, rows, title, notes, results_dir)
            text.append(console_table(header, rows))
        return "\n".join(text), []

    def headlines(self, results):
        import math

        rows = results.rows("noc_zero_load")
        lat = {to_int(r["hops"]): to_int(r["min (cycles)"]) for r in rows}
        top = max(lat)
        per_hop = (lat[top] - lat[0]) / top
        exact = all(lat[h] == lat[0] + per_hop * h for h in lat)
        plural = "" if per_hop == 1 else "s"
        hops_text = "hops" if per_hop == 1 else f"{per_hop:g}*hops"
        value = (
            f"{per_hop:g} cycle{plural} per hop (`{lat[0]} + {hops_text}` cycles"
            if exact
            else f"{per_hop:.2f} cycles per hop on average ({lat[0]} cycles at 0 hops"
        ) + f", RTL, up to {top} hops)"
        out = [("NoC zero-load latency", value, self.command)]
        sat = [r for r in results.rows("noc_load") if r["offered (flits/cycle/tile)"] == "saturation"]
        if not sat:
            raise ValueError(f"results/noc_load.csv has no saturation row: run `{self.command}`")
        out.append(
            (
                "NoC saturation, uniform random",
                f"{float(sat[0]['accepted']):.2f} flits/cycle/tile",
                self.command,
            )
        )
        by = {r["mode"]: r for r in results.rows("noc_pingpong")}
        pairs = to_int(next(iter(by.values()))["pairs"])
        tiles = round((1 + math.sqrt(1 + 4 * pairs)) / 2)  # pairs = tiles * (tiles - 1)
        out.append(
            (
                "software round trip between tiles (minimum)",
                f"{to_int(by['poll']['min RTT'])} cycles polling, {to_int(by['irq']['min RTT'])} "
                f"interrupt-driven ({tiles} tiles)",
                self.command,
            )
        )
        return out


def plot_load(sweep, mx, my, results_dir):
    fig, ax = new_figure(figsize=(6, 4))
    pts = [(t, l0, l1) for r, t, l, l0, l1 in sweep]
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label="VC 0 (normal)")
    ax.plot([p[0] for p in pts], [p[2] for p in pts], "s-", label="VC 1 (priority)")
    ax.set_xlabel("accepted load (flits/cycle/tile)")
    ax.set_ylabel("mean head latency (cycles)")
    ax.set_title(f"{mx}x{my} mesh, uniform random traffic")
    ax.legend()
    save_figure(fig, os.path.join(results_dir, "noc_latency_load.png"), 100)


EXPERIMENT = Noc()
