#
# Zephyr applications of zephyr-app/ for a SoC build: the build environment (Zephyr tree,
# toolchain, host tools) and the build of one application.
#
"""Build ``zephyr-app`` applications for a Subutai SoC build.

The library behind ``boards/zephyr.py``, the Zephyr benchmarks and the Zephyr tests. Needs a
Zephyr tree (``ZEPHYR_BASE``) and a RISC-V toolchain: the Zephyr SDK (``ZEPHYR_SDK_INSTALL_DIR``)
or, by default, Debian's ``riscv64-unknown-elf-gcc`` through Zephyr's ``cross-compile`` variant
(``zephyr-app/cmake/subutai.cmake`` maps its multilib). :class:`ZephyrUnavailable` says what is
missing.
"""

import glob
import os
import shutil
import subprocess
import sys

from gateware.build import ROOT
from soc.firmware import (
    CHANNEL_PROGRAMS,
    DEFAULT_CHAN,
    benchmark_programs,
    check_backend,
    check_chan,
    check_program_args,
    firmware_apps,
    slug,
)

ZEPHYR_APP_DIR = os.path.join(ROOT, "zephyr-app")
APPS_DIR = os.path.join(ZEPHYR_APP_DIR, "apps")


#: Applications of firmware/apps/ written for both runtimes, which the app ``program`` builds under
#: Zephyr; the others use the bare-metal runtime (its release cycle, its channel set-up) and do
#: not link there (pthreadtest has an app of its own).
ZEPHYR_FIRMWARE_APPS = ("prodcons", "switchbench")


class ZephyrUnavailable(RuntimeError):
    """No Zephyr tree or toolchain to build with; the message says what to set or install."""


def zephyr_apps():
    return sorted(
        d for d in os.listdir(APPS_DIR) if os.path.isfile(os.path.join(APPS_DIR, d, "CMakeLists.txt"))
    )


def check_program(program):
    """``program`` if the app ``program`` builds it under Zephyr, else ValueError saying why."""
    if program not in benchmark_programs(channels=True) + list(ZEPHYR_FIRMWARE_APPS):
        bare = " (an application that runs bare metal only)" if program in firmware_apps() else ""
        raise ValueError(
            f"program {program!r}{bare}: no such program under Zephyr; give one of firmware/programs/ "
            f"({', '.join(benchmark_programs(channels=True))}) or an application of firmware/apps/ "
            f"written for Zephyr too ({', '.join(ZEPHYR_FIRMWARE_APPS)})"
        )
    return program


def zephyr_environment():
    """Environment of a Zephyr build: ZEPHYR_BASE and a toolchain, or ZephyrUnavailable."""
    env = dict(os.environ)
    base = env.get("ZEPHYR_BASE")
    if not base:
        raise ZephyrUnavailable(
            "ZEPHYR_BASE is not set: point it at a Zephyr 4.x tree "
            "(e.g. the zephyr/ folder of a west workspace, see README.md, 'Zephyr')"
        )
    if not os.path.isfile(os.path.join(base, "share", "zephyr-package", "cmake", "ZephyrConfig.cmake")):
        raise ZephyrUnavailable(f"ZEPHYR_BASE={base} is not a Zephyr tree (no share/zephyr-package)")
    if not env.get("ZEPHYR_TOOLCHAIN_VARIANT") and not env.get("ZEPHYR_SDK_INSTALL_DIR"):
        env["ZEPHYR_TOOLCHAIN_VARIANT"] = "cross-compile"
    if env.get("ZEPHYR_TOOLCHAIN_VARIANT") == "cross-compile":
        env.setdefault("CROSS_COMPILE", "/usr/bin/riscv64-unknown-elf-")
        if not shutil.which(env["CROSS_COMPILE"] + "gcc"):
            raise ZephyrUnavailable(
                f"{env['CROSS_COMPILE']}gcc not found: install the Debian package "
                "gcc-riscv64-unknown-elf (make setup)"
            )
    for tool, package in (
        ("cmake", "the Debian package cmake"),
        ("ninja", "ninja (pip, make setup)"),
        ("dtc", "the Debian package device-tree-compiler"),
    ):
        if not shutil.which(tool, path=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")):
            raise ZephyrUnavailable(f"{tool} not found: install {package}")
    # The venv's tools (ninja, west, Zephyr's Python packages) come first.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def require_zephyr():
    """Exits with the reason (exit code 1) when no Zephyr build is possible here."""
    try:
        zephyr_environment()
    except ZephyrUnavailable as e:
        sys.exit(f"error: {e}")


def build_app(
    model,
    app,
    backend="subutai",
    program=None,
    program_args="",
    conf=(),
    out_dir=None,
    extra_cflags="",
    log=print,
    program_dir=None,
):
    """Build a zephyr-app application for a SoC model (:class:`soc.simulation.SimModel` or any LiteX build
    directory with a csr.json); return its zephyr.bin. Rebuilds only what changed. With the app
    ``program``, ``program_dir`` is a plain PThreads program of one's own (the .c files of any
    directory) instead of ``program``, named after its directory."""
    if app not in zephyr_apps():
        raise ValueError(f"no Zephyr application {app!r} (have: {', '.join(zephyr_apps())})")
    check_backend(backend)
    if program_dir is not None:
        if app != "program" or program:
            raise ValueError("a program directory applies to the app 'program', instead of a program")
        program_dir = os.path.abspath(program_dir)
        if not glob.glob(os.path.join(program_dir, "*.c")):
            raise ValueError(f"program directory {program_dir}: no C sources (*.c) there")
    elif app == "program":
        check_program(program)
    elif program or program_args:
        raise ValueError("program and program arguments only apply to the app 'program'")
    check_program_args(program_args, own_program=program_dir is not None)
    if program in CHANNEL_PROGRAMS and not any(c.startswith("CONFIG_SUBUTAI_CHAN") for c in conf):
        conf = list(conf) + chan_conf(DEFAULT_CHAN)
    env = zephyr_environment()
    soc_dir = getattr(model, "output_dir", model)
    # Kconfig settings given on CMake's command line stay in its cache: a build directory of its
    # own for each set of them, so a setting never outlives the call that gave it.
    name = "-".join(
        filter(
            None,
            [app, program or (program_dir and os.path.basename(program_dir)), backend, slug(program_args)]
            + [slug(c.removeprefix("CONFIG_")) for c in conf if not c.startswith("EXTRA_DTC_OVERLAY_FILE=")],
        )
    )
    out_dir = out_dir or os.path.join(soc_dir, "zephyr", name)
    cmd = [
        "cmake",
        "-GNinja",
        "-S",
        os.path.join(APPS_DIR, app),
        "-B",
        out_dir,
        f"-DSUBUTAI_SOC_DIR={soc_dir}",
        f"-DCONFIG_SUBUTAI_BACKEND_{backend.upper()}=y",
    ]
    if program or program_dir:
        label = program or os.path.basename(program_dir)
        cmd += [
            f"-DPROGRAM={program or ''}",
            f"-DPROGRAM_DIR={program_dir or ''}",
            f"-DPROGRAM_ARGS={program_args}",
            f'-DCONFIG_SUBUTAI_APP_NAME="{label}"',
        ]
    cmd += [f"-D{c}" for c in conf]
    if extra_cflags:
        cmd.append(f"-DEXTRA_CFLAGS={extra_cflags}")
    log(f"[zephyr] {name}: configuring for {soc_dir}")
    if discard_foreign_build(out_dir, os.path.join(APPS_DIR, app)):
        log(f"[zephyr] {name}: the build directory was configured elsewhere: configured afresh")
    _run(cmd, env, out_dir, "configure")
    log(f"[zephyr] {name}: building")
    _run(["ninja", "-C", out_dir], env, out_dir, "build")
    return os.path.join(out_dir, "zephyr", "zephyr.bin")


def discard_foreign_build(out_dir, source_dir):
    """Remove ``out_dir`` when its CMake cache was made for another build directory or another
    source (a model's build directory copied from another checkout): CMake refuses to configure
    such a cache ("does not match the source ... used to generate cache"), and everything in it
    is another checkout's. True when it was removed."""
    cache = os.path.join(out_dir, "CMakeCache.txt")
    try:
        with open(cache) as f:
            entries = dict(
                line.rstrip("\n").split("=", 1)
                for line in f
                if line.startswith(("CMAKE_CACHEFILE_DIR:", "CMAKE_HOME_DIRECTORY:"))
            )
    except FileNotFoundError:
        return False
    made_for = (entries.get("CMAKE_CACHEFILE_DIR:INTERNAL"), entries.get("CMAKE_HOME_DIRECTORY:INTERNAL"))
    here = (os.path.realpath(out_dir), os.path.realpath(source_dir))
    if tuple(p and os.path.realpath(p) for p in made_for) == here:
        return False
    shutil.rmtree(out_dir)
    return True


def _run(cmd, env, out_dir, stage):
    os.makedirs(out_dir, exist_ok=True)
    log_path = os.path.join(out_dir, f"{stage}.log")
    with open(log_path, "w") as f:
        proc = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        with open(log_path) as f:
            tail = "".join(f.readlines()[-25:])
        raise RuntimeError(f"Zephyr {stage} failed (log: {log_path}):\n{tail}")


#: Scheduling policies of an application set (zephyr-app/lib/Kconfig, SUBUTAI_SCHED).
SCHED_POLICIES = ("oat", "rr", "csa", "csa-nolimit", "rr-core")


def multi_soc(n_tiles):
    """The SoC options of the models that run application sets on ``n_tiles`` tiles
    (``build_model(**multi_soc(n))``): main RAM for up to 8 applications of 17 threads (8 KiB
    stacks) and their data, and an atomic unit that holds the software-only backend's objects
    (8 words each) beside the runtime's words (7 a thread slot, firmware/lib/atomic_words.h).
    Four x264s initialize 192 mutexes and condition variables: more than the 180 blocks a
    2048-word unit keeps, fewer than a 4096-word one's, the unit of the sets of up to 8 tiles.
    The paper's load on 16 tiles, eight x264s of 16 threads, initializes 384, where a 4096-word
    unit keeps 364 beside the set's 144 thread slots and 128 keys: its unit has 8192 words (876 blocks)."""
    return dict(main_ram_size=4 * 1024 * 1024, atomic_words=4096 if n_tiles <= 8 else 8192)


def sched_conf(policy, ts_us):
    """Kconfig settings of a scheduling policy and timeslot (microseconds)."""
    if policy not in SCHED_POLICIES:
        raise ValueError(f"scheduling policy {policy!r}: one of {', '.join(SCHED_POLICIES)}")
    if not 1 <= ts_us <= 1_000_000 or 1_000_000 % ts_us:
        raise ValueError(f"timeslot {ts_us} us: 1 us to 1 s, dividing a second")
    conf = [f"CONFIG_SUBUTAI_PTHREAD_TIMESLICE_US={ts_us}"]
    if policy == "csa-nolimit":
        return conf + ["CONFIG_SUBUTAI_SCHED_CSA=y", "CONFIG_SUBUTAI_SCHED_CSA_LIMIT=n"]
    return conf + [f"CONFIG_SUBUTAI_SCHED_{policy.upper().replace('-', '_')}=y"]


#: Barrier waiting policies (zephyr-app/lib/Kconfig, SUBUTAI_BARRIER_WAIT); the default first.
BARRIER_POLICIES = ("spin-then-block", "spin", "block", "tidon")


def barrier_conf(policy):
    """Kconfig setting of a barrier waiting policy."""
    if policy not in BARRIER_POLICIES:
        raise ValueError(f"barrier policy {policy!r}: one of {', '.join(BARRIER_POLICIES)}")
    return [f"CONFIG_SUBUTAI_BARRIER_WAIT_{policy.upper().replace('-', '_')}=y"]


#: The devicetree overlay that enables the channel port (disabled in the board's devicetree, so
#: that images without channels keep their interrupt handler as it was).
CHAN_OVERLAY = os.path.join(ZEPHYR_APP_DIR, "dts", "chan.overlay")


def chan_conf(impl):
    """Build settings of channels (subutai/chan.h) with an implementation (soc.firmware.CHANS):
    the Kconfig, and for the port's implementations the overlay that enables it."""
    check_chan(impl)
    conf = ["CONFIG_SUBUTAI_CHAN=y", f"CONFIG_SUBUTAI_CHAN_IMPL_{impl.upper()}=y"]
    if impl in ("noc", "push"):
        conf.append(f"EXTRA_DTC_OVERLAY_FILE={CHAN_OVERLAY}")
    return conf


def build_multi(
    model, programs, backend, policy, ts_us, program_args="", conf=(), log=print, barrier=BARRIER_POLICIES[0]
):
    """Build zephyr-app/apps/multi for a set of applications (programs of firmware/programs/ or
    directories of a plain PThreads program, each optionally ":threads", and "*runs" for an
    application run again while the others' first runs go on), one scheduling policy, timeslot
    and barrier waiting policy; return its zephyr.bin."""
    for entry in programs:
        name = entry.split("*")[0].split(":")[0]
        if "/" not in name and name not in benchmark_programs():
            raise ValueError(f"application {entry!r}: no such program ({', '.join(benchmark_programs())})")
        runs = entry.split("*")[1:]
        if runs and (len(runs) > 1 or not runs[0].isdigit() or int(runs[0]) < 1):
            raise ValueError(f"application {entry!r}: give its runs as a count of at least 1 (ep:2*3)")
    set_conf = [f"MULTI_SET={' '.join(programs)}", f"MULTI_ARGS={program_args}"]
    # The default policy adds no setting: its images are the ones built before the others existed.
    wait_conf = barrier_conf(barrier) if barrier != BARRIER_POLICIES[0] else []
    conf = set_conf + sched_conf(policy, ts_us) + wait_conf + list(conf)
    return build_app(model, "multi", backend, conf=conf, log=log)
