"""Every Zephyr application and every library configuration a user can choose, compiled and linked
for the SoC (zephyr-app/): both PThreads backends, the scheduling policies of an application set
(OAT, RR, CSA, CSA without its limit), the four barrier waiting policies, the four channel
implementations, both thread placements, every program of firmware/programs/ and the firmware
applications written for Zephyr too, the library at the kernel's optimisation level, the set
launcher (apps/multi) with every program in its set.

These builds are not run (tests/test_zephyr.py, test_multi.py, test_tidon.py and test_chan_soc.py
run a representative set of them); they make sure that no configuration of the Zephyr half stops
compiling unseen. Each build's .config is checked for the settings it asked for, so a choice that
Kconfig dropped (an unmet dependency) fails here rather than building the default.

The builds of one application share one build directory, emptied before each: the compiler cache
(ccache, which Zephyr's build uses when it is installed; make setup installs it) then reuses every
object whose preprocessed source is the same in the configuration before, so a build costs about
its configure step and the sources the configuration changes.

The matrix itself (every Kconfig choice of zephyr-app/ in some build, with both backends) is
checked without a Zephyr tree.
"""

import itertools
import os
import re
import shutil
import sys

import pytest

from soc.firmware import CHANS, benchmark_programs
from soc.zephyr import (
    BARRIER_POLICIES,
    SCHED_POLICIES,
    ZEPHYR_APP_DIR,
    ZEPHYR_FIRMWARE_APPS,
    barrier_conf,
    chan_conf,
    sched_conf,
    zephyr_apps,
)

BACKENDS = ("subutai", "swonly")
#: The timeslot of the set builds (us): any divisor of a second builds the same code.
TS_US = 500


def _builds():
    """Every build as a pytest parameter (app, backend, program, conf), named by what it sets:
    each setting with both backends where the library's code differs by backend, the pairs of
    policies spread over the builds."""
    builds = []

    def add(app, backend, program=None, conf=(), tag=None):
        name = "-".join(filter(None, [app, program, backend, tag]))
        builds.append(pytest.param(app, backend, program, list(conf), id=name))

    # hello has no PThreads (its prj.conf), so no backend.
    add("hello", BACKENDS[0])
    for app in ("costs", "pthreadtest"):
        for backend in BACKENDS:
            add(app, backend)
    for backend in BACKENDS:
        add("pthreadtest", backend, conf=["CONFIG_SUBUTAI_PLACEMENT_LEAST_LOADED=y"], tag="least-loaded")
    # The library at the kernel's optimisation level, with a bound on the software objects.
    conf = ["CONFIG_SUBUTAI_SPEED_OPTIMIZATIONS=n", "CONFIG_SUBUTAI_PTHREAD_SW_OBJECTS=32"]
    add("costs", "swonly", conf=conf, tag="kernel-level")
    # The programs' sources are the same with either backend (the library is not): in turn.
    for k, program in enumerate(benchmark_programs() + list(ZEPHYR_FIRMWARE_APPS)):
        add("program", BACKENDS[k % 2], program)
    for chan in CHANS:
        for backend in BACKENDS:
            add("program", backend, "farm", chan_conf(chan), tag=chan)
    # Every scheduling policy with both backends, each with a barrier waiting policy of its own.
    for policy, barrier in zip(SCHED_POLICIES, itertools.cycle(BARRIER_POLICIES)):
        for backend in BACKENDS:
            conf = sched_conf(policy, TS_US) + barrier_conf(barrier)
            add("multi", backend, conf=conf, tag=f"{policy}-{barrier}")
    # The migrating baseline (idle kernels take threads), with the slot log.
    for backend in BACKENDS:
        conf = sched_conf("rr", TS_US) + ["CONFIG_SUBUTAI_SCHED_STEAL=y", "CONFIG_SUBUTAI_SCHED_SLOT_LOG=64"]
        add("multi", backend, conf=conf, tag="rr-steal")
    return builds


BUILDS = _builds()


def _kconfig_choices():
    """Every ``choice`` block of zephyr-app's Kconfig files: {choice: (options, unconditional
    default)}."""
    choices = {}
    for root, _, files in os.walk(ZEPHYR_APP_DIR):
        for name in files:
            if name.startswith("Kconfig"):
                with open(os.path.join(root, name)) as f:
                    text = f.read()
                for choice, body in re.findall(r"^choice (\w+)\n(.*?)^endchoice", text, re.S | re.M):
                    defaults = re.findall(r"^\s+default (\w+)\s*$", body, re.M)
                    choices[choice] = (re.findall(r"^config (\w+)", body, re.M), defaults[-1])
    return choices


def _uses_pthreads(app):
    with open(os.path.join(ZEPHYR_APP_DIR, "apps", app, "prj.conf")) as f:
        return not re.search(r"^CONFIG_SUBUTAI_PTHREAD=n$", f.read(), re.M)


def _settings(app, backend, program, conf):
    """The Kconfig symbols a build sets (without CONFIG_), the backend's where the app has PThreads."""
    backend_symbol = {f"SUBUTAI_BACKEND_{backend.upper()}"} if _uses_pthreads(app) else set()
    return backend_symbol | {c.split("=")[0].removeprefix("CONFIG_") for c in conf if c.startswith("CONFIG_")}


def test_every_choice_is_built_with_both_backends():
    """Each option of each Kconfig choice of the module is set by some build with each backend
    (the choice's default by a build that sets none of its options, or by name), every
    application of zephyr-app/apps and every program is built."""
    choices = _kconfig_choices()
    assert {"SUBUTAI_BACKEND", "SUBUTAI_SCHED", "SUBUTAI_BARRIER_WAIT", "SUBUTAI_CHAN_IMPL"} <= set(choices)
    for backend in BACKENDS:
        builds = [_settings(*p.values) for p in BUILDS if p.values[1] == backend]
        for choice, (options, default) in choices.items():
            if choice == "SUBUTAI_BACKEND":
                continue  # the loop's backend
            # The channel implementations are a choice only where channels are on.
            relevant = [s for s in builds if choice != "SUBUTAI_CHAN_IMPL" or "SUBUTAI_CHAN" in s]
            for option in options:
                named = any(option in s for s in relevant)
                by_default = option == default and any(not set(options) & s for s in relevant)
                assert named or by_default, (backend, choice, option)
        assert "SUBUTAI_SCHED_CSA_LIMIT" in set().union(*builds), backend
        apps = {p.values[0] for p in BUILDS if p.values[1] == backend}
        assert {a for a in zephyr_apps() if _uses_pthreads(a)} <= apps, backend
    assert {p.values[0] for p in BUILDS} == set(zephyr_apps())
    programs = {p.values[2] for p in BUILDS if p.values[0] == "program"}
    assert programs == set(benchmark_programs(channels=True)) | set(ZEPHYR_FIRMWARE_APPS)


@pytest.mark.zephyr
@pytest.mark.parametrize("app, backend, program, conf", BUILDS)
def test_builds(sim, app, backend, program, conf):
    from soc.zephyr import build_app

    model = sim.model(2, 2)
    out_dir = os.path.join(model.output_dir, "zephyr", "every-configuration", app)
    shutil.rmtree(out_dir, ignore_errors=True)
    # A set with every program: each is linked into an instance object of its own.
    instances = (
        [f"MULTI_SET={' '.join(benchmark_programs())}", "MULTI_ARGS=-i test"] if app == "multi" else []
    )
    image = build_app(
        model,
        app,
        backend,
        program,
        conf=instances + conf,
        out_dir=out_dir,
        log=lambda m: print(m, file=sys.stderr),
    )
    assert os.path.getsize(image) > 0
    with open(os.path.join(out_dir, "zephyr", ".config")) as f:
        config = f.read()
    pthread = "CONFIG_SUBUTAI_PTHREAD=y\n" if _uses_pthreads(app) else "# CONFIG_SUBUTAI_PTHREAD is not set\n"
    assert pthread in config
    given = {c.split("=")[0]: c.split("=", 1)[1] for c in conf if c.startswith("CONFIG_")}
    for symbol in sorted(_settings(app, backend, program, conf)):
        value = given.get(f"CONFIG_{symbol}", "y")
        expected = f"# CONFIG_{symbol} is not set\n" if value == "n" else f"CONFIG_{symbol}={value}\n"
        assert expected in config, (symbol, value)


@pytest.mark.zephyr
def test_a_build_directory_of_another_checkout_is_configured_afresh(sim, tmp_path):
    """A model's build directory copied from another checkout holds CMake caches made for other
    paths, which CMake refuses to configure: the build starts afresh there instead of failing."""
    from soc.zephyr import build_app

    model = sim.model(2, 2)
    elsewhere = str(tmp_path / "elsewhere")
    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    first = build_app(model, "hello", out_dir=elsewhere, log=log)
    moved = str(tmp_path / "moved")
    shutil.copytree(elsewhere, moved, symlinks=True)
    said = []
    image = build_app(model, "hello", out_dir=moved, log=said.append)
    assert any("configured afresh" in m for m in said), said
    with open(first, "rb") as a, open(image, "rb") as b:
        assert a.read() == b.read()
    # Configured here now: the next build keeps it.
    said.clear()
    build_app(model, "hello", out_dir=moved, log=said.append)
    assert not any("configured afresh" in m for m in said), said
