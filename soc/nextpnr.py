#
# nextpnr-ecp5 as the board builds drive it: its options (report, router, placer), its command's
# device and seed, the watch of its router (RouterStall) and its --report JSON (utilisation,
# Fmax, critical path), which scripts/board_report.py reads too.
#

import json
import re


# Reports of the router without progress, and windows without progress however few reports
# came, that make a stall (RouterStall, --nextpnr-stall).
STALL_LINES = 8
STALL_PATIENCE = 3


class RouterStall:
    """Watch of nextpnr-ecp5's router: says when it has stopped converging.

    router1 logs the arcs it still has to route every 1000 iterations, router2 the wires
    overused after each iteration. A placement that cannot be routed does not fail: router1 rips
    up and reroutes the same arcs for an hour (a 4-tile placement held about 88,000 of 150,000
    arcs for ten minutes while each 1000 iterations went from half a second to three minutes),
    router2's overuse falls and then grows again. A healthy run improves on its best count by
    far more than ``margin`` of it within ``window`` seconds and ``lines`` progress lines, so a
    run that does neither is taken as a stall, and so is one that has not improved for
    ``patience`` windows however few lines it wrote; the target then moves on to the next seed.
    Why the lines as well as the time: a run that routes can go through a congested patch where
    a few batches of router1 take a minute or two each and gain almost nothing (a 4-tile
    placement: four batches, 348 s, 143 arcs, then back to a second a batch and routed); a
    stalled one keeps going round for many batches (the one above: 8 batches and 333 s when it
    is stopped). Why the patience: the batches of a stalled run can grow to ten minutes each (an
    8-tile placement: 61,265 arcs left, 603 s for its last batch). A router with nothing left
    to route (no arcs left, no wire overused) is never stalled: its routing is legal, and what it
    still does (router2's timing-driven rip-up, which nextpnr bounds) ends by itself; stopping it
    would throw a routed placement away (an 8-tile run reached no overused wire at its 73rd
    iteration and went on ripping up 14 to 16 failing arcs)."""

    # The count each router logs, and what it counts.
    _PROGRESS = [
        (re.compile(r"^Info:\s+\d+\s*\|[^|]*\|[^|]*\|\s*(\d+)\s*\|"), "arcs left"),  # router1
        (re.compile(r"^Info:\s+iter=\d+ .*overused=(\d+)"), "wires overused"),  # router2
    ]

    def __init__(self, window=300, margin=0.005, lines=STALL_LINES, patience=STALL_PATIENCE):
        self.window = window
        self.margin = margin
        self.lines = lines
        self.patience = patience
        self.best = None  # (count, time it was reached)
        self.what = None
        self.since = 0  # Progress lines since the best.

    def feed(self, line, now):
        for pattern, what in self._PROGRESS:
            m = pattern.match(line)
            if m:
                break
        else:
            return
        count = int(m.group(1))
        if (
            self.best is None
            or self.what != what
            or count < self.best[0] - max(1, self.margin * self.best[0])
        ):
            self.best = (count, now)
            self.what = what
            self.since = 0
        else:
            self.since += 1

    def stalled(self, now):
        """Why the router counts as stalled at ``now``, or None."""
        if self.best is None or self.best[0] == 0:
            return None
        idle = now - self.best[1]
        if idle < self.window or self.since < self.lines and idle < self.patience * self.window:
            return None
        return (
            f"stalled: no fewer {self.what} than {self.best[0]:,} for "
            + (f"{idle / 60:.0f} min" if idle >= 60 else f"{idle:.0f} s")
            + f" ({self.since} router reports)"
        )


def _nextpnr_progress(line):
    return (
        line.startswith(
            (
                "Info: Running main",
                "Info: Running placer",
                "Info: Running router",
                "Info: Max frequency",
                "Info: Program finished",
                "Info: Device utilisation",
                "Info: Routing complete",
                "Info: HeAP Placer Time",
                "Info:   Iter",
                "Info:    at iteration #",
            )
        )
        or " Max frequency for clock" in line
        or "[router2]" in line
        and "overused" in line
        or line.startswith("ERROR")
    )


def nextpnr_device_args(cmd):
    """The device and package options of nextpnr-ecp5's command (``--85k --package CABGA381``)."""
    words = cmd.split()
    device = [w for w in words if re.fullmatch(r"--(um5g-|um-)?\d+k", w)]
    return device + (["--package", words[words.index("--package") + 1]] if "--package" in words else [])


def _with_seed(cmd, seed):
    """nextpnr's command of LiteX's script with ``--seed`` set to ``seed``."""
    words = cmd.split()
    if "--seed" in words:
        words[words.index("--seed") + 1] = str(seed)
    else:
        words += ["--seed", str(seed)]
    return " ".join(words)


def parse_nextpnr_report(path):
    """Utilisation ``{bel type: (used, available)}`` and Fmax ``{clock: (achieved, constraint)}``
    (MHz) of nextpnr's ``--report`` JSON."""
    with open(path) as f:
        report = json.load(f)
    util = {k: (v["used"], v["available"]) for k, v in report.get("utilization", {}).items()}
    fmax = {k: (v["achieved"], v["constraint"]) for k, v in report.get("fmax", {}).items()}
    return util, fmax


def _cell_base(name):
    """The design name inside a nextpnr cell name: what yosys and nextpnr append after it
    (``.0.4``, ``$DPRAM_COMB1``, ``_LUT4_Z…``, ``_TRELLIS_FF_Q…``, ``_CCU2C…``) dropped."""
    return re.split(r"\.\d|\$|_LUT4|_TRELLIS|_CCU2C|_DI_|_PFUMX|_L6MUX", name, maxsplit=1)[0] or name


def critical_path(path, clock):
    """The critical path of ``clock`` (a clock name of the report's Fmax) in nextpnr's ``--report``
    JSON: ``{"from", "to", "through", "delay_ns", "routing_ns", "levels"}`` (source and sink cells,
    the design names of the logic in between, total and routing delay, logic levels), or None."""
    with open(path) as f:
        report = json.load(f)
    edge = f"posedge {clock}"
    for p in report.get("critical_paths", []):
        if p.get("from") != edge or p.get("to") != edge or not p.get("path"):
            continue
        segs = p["path"]
        through = []
        for seg in segs:
            base = _cell_base(seg["to"]["cell"])
            if seg["type"] == "logic" and base not in through:
                through.append(base)
        return {
            "from": _cell_base(segs[0]["from"]["cell"]),
            "to": _cell_base(segs[-1]["to"]["cell"]),
            "through": through,
            "delay_ns": sum(seg["delay"] for seg in segs),
            "routing_ns": sum(seg["delay"] for seg in segs if seg["type"] == "routing"),
            "levels": sum(1 for seg in segs if seg["type"] == "logic"),
        }
    return None


def critical_path_text(cp):
    return (
        f"{cp['from']} -> {cp['to']}: {cp['delay_ns']:.1f} ns ({cp['routing_ns']:.1f} ns "
        f"routing, {cp['levels']} logic levels; through {', '.join(cp['through']) or '-'})"
    )


def sys_fmax(fmax, sys_clk_mhz):
    """(clock, achieved, constraint) of the system clock: among the clocks constrained at
    sys_clk_freq (the SDRAM's phase-shifted copy drives no logic and has no entry), the slowest."""
    matching = [(name, a, c) for name, (a, c) in fmax.items() if abs(c - sys_clk_mhz) < 0.5]
    if not matching:
        matching = [(name, a, c) for name, (a, c) in fmax.items()]
    if not matching:
        return None
    return min(matching, key=lambda m: m[1])


def nextpnr_report_name(build_name):
    return f"{build_name}_report.json"


def add_nextpnr_options(
    platform, build_name, router, placer="heap", tmg_ripup=False, timing_weight=None, critexp=None
):
    """Have nextpnr write its --report JSON (utilization, Fmax per clock) and use ``router`` and
    ``placer`` (with ``tmg_ripup``, its timing-driven rip-up; ``timing_weight`` and ``critexp``:
    HeAP's timing weight and criticality exponent, nextpnr's defaults when None). LiteX's trellis
    toolchain has no option for extra nextpnr arguments; its wrapper takes them from the
    toolchain's ``_pnr_opts``, set before the build."""
    platform.toolchain._pnr_opts += (
        f" --report {nextpnr_report_name(build_name)}"
        f" --router {router} --placer {placer}"
        + (" --tmg-ripup" if tmg_ripup else "")
        + (f" --placer-heap-timingweight {timing_weight}" if timing_weight is not None else "")
        + (f" --placer-heap-critexp {critexp}" if critexp is not None else "")
    )
