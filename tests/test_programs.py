"""Benchmark programs (firmware/programs/): plain PThreads C, built for the host and for the SoC.

Each program's result (its checksum) must not depend on the number of threads or on the backend,
and must equal the host build's (gcc, glibc pthreads); the harness's records must describe the
run: every tile used, the objects the program set up, as many barrier waits as on the host.
"""

import os
import sys

import pytest

from gateware.build import BUILD_DIR, ROOT

from scripts import host_programs
from scripts.experiments.apps import app_runs, events

PROGRAMS = host_programs.programs()
ARGS = "-i test -s 1"
SIZES = [(1, 1), (2, 1), (2, 2), (4, 2)]
HOST_THREADS = (1, 2, 3, 4, 5, 8, 16)


@pytest.fixture(scope="module")
def host():
    """{program: executable} of the host build."""
    return host_programs.build(out_dir=os.path.join(BUILD_DIR, "host"))


@pytest.fixture(scope="module")
def host_runs(host):
    """{(program, threads): run} of the host build with the test input."""
    runs = {}
    for program, exe in host.items():
        for t in HOST_THREADS:
            (run,) = app_runs(host_programs.run(exe, f"-t {t} {ARGS}").splitlines())
            runs[(program, t)] = run
    return runs


def test_programs_exist():
    assert {"streamcluster", "bodytrack", "x264"} <= set(PROGRAMS)


@pytest.mark.parametrize("program", PROGRAMS)
def test_host_result_independent_of_threads(host_runs, program):
    runs = [host_runs[(program, t)] for t in HOST_THREADS]
    assert {r["checksum"] for r in runs} == {runs[0]["checksum"]}, {
        t: r["checksum"] for t, r in zip(HOST_THREADS, runs)
    }
    for t, r in zip(HOST_THREADS, runs):
        assert r["threads"] == t and r["exit"] == 0
        assert r["objects"] == runs[0]["objects"]  # objects do not depend on the threads
        assert sum(r["objects"].values()) > 0
    # With several threads the program synchronizes (no run may pass without using its objects).
    many = host_runs[(program, 4)]
    assert sum(events(many, kind) for kind in ("mutex", "cond", "barrier")) > 0


@pytest.mark.parametrize(
    "args, message",
    [
        ("-t 0", "threads must be 1 to"),
        ("-t 65", "threads must be 1 to"),
        ("-i huge", "input must be test, simsmall or simmedium"),
        ("-s x", "seed must be a number"),
        ("-q 1", "unknown argument '-q'"),
        ("-t", "-t needs a value"),
    ],
)
def test_host_bad_arguments(host, args, message):
    exe = host[PROGRAMS[0]]
    with pytest.raises(host_programs.HostProgramError, match="exit code 1") as e:
        host_programs.run(exe, args)
    assert message in str(e.value)


# 8 tiles: the slowest runs of the suite, slow by their mesh (conftest.py).
@pytest.mark.parametrize("mesh", SIZES, ids=[f"{x}x{y}" for x, y in SIZES])
@pytest.mark.parametrize("backend", ["swonly", "subutai"])
@pytest.mark.parametrize("program", PROGRAMS)
def test_program_in_simulation(sim, host_runs, program, backend, mesh):
    tiles = mesh[0] * mesh[1]
    result = sim.run(*mesh, program, backend=backend, program_args=ARGS, max_cycles=30_000_000)
    assert result.exit_code == 0, result.output[-3000:]
    (run,) = app_runs(result.output.splitlines())
    reference = host_runs[(program, 1)]
    assert run["checksum"] == reference["checksum"], result.output[-2000:]
    assert (run["backend"], run["tiles"], run["threads"], run["unit"]) == (backend, tiles, tiles, "cycles")
    assert run["args"] == f"-t {tiles} {ARGS}"
    assert run["objects"] == reference["objects"]
    assert 0 < run["roi"] < run["time"]
    # Barrier waits are fixed by the program's structure: as many as on the host.
    if tiles in HOST_THREADS:
        assert events(run, "barrier") == events(host_runs[(program, tiles)], "barrier")
    assert run["ops"][("thread", "create")]["count"] == tiles - 1


@pytest.mark.parametrize(
    "cmd, message",
    [
        (
            ["boards/sim.py", "--tiles", "1", "--app", "hello", "--args", "-i test"],
            "--args only applies to a benchmark program",
        ),
        (["boards/sim.py", "--tiles", "1", "--app", "x264", "--args", "-i 'test'"], "no quotes allowed"),
        (["boards/sim.py", "--tiles", "1", "--app", "nosuchprogram"], "no such application or program"),
        (
            ["-m", "scripts.experiments", "apps", "--programs", "nosuchprogram"],
            "no such program nosuchprogram",
        ),
        (["-m", "scripts.experiments", "apps", "--tiles", "7"], "--tiles 7"),
    ],
)
def test_cli_errors(cmd, message):
    import subprocess

    proc = subprocess.run([sys.executable, *cmd], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


# A plain PThreads program of one's own, outside firmware/ (tests/data/programs/counting).
USER_PROGRAM = os.path.join(os.path.dirname(__file__), "data", "programs", "counting")


@pytest.mark.parametrize("backend", ["subutai", "swonly"])
def test_program_of_ones_own_from_any_directory(sim, tmp_path, backend):
    """A PThreads program outside the tree (PROGRAM_DIR) builds against the library as the
    benchmark programs do, and runs under the harness: its output, its exit code, its records
    under its directory's name."""
    model = sim.model(2, 1)
    image = model.build_firmware(
        None, backend=backend, program_dir=USER_PROGRAM, out_dir=str(tmp_path / "out")
    )
    r = model.run(image, max_cycles=20_000_000)
    assert r.exit_code == 0, r.output[-2000:]
    assert "counted: 200" in r.output
    (run,) = app_runs(r.output.splitlines())
    assert run["program"] == "counting" and run["backend"] == backend and run["exit"] == 0
    assert events(run, "mutex") == 400


def test_program_calling_what_the_library_lacks_is_a_clear_error(sim, tmp_path):
    program = tmp_path / "rw"
    program.mkdir()
    (program / "main.c").write_text(
        "int pthread_kill(unsigned int thread, int sig);\nint main(void) { return pthread_kill(0, 1); }\n"
    )
    import subprocess

    p = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "boards", "sim.py"),
            "--tiles",
            "2",
            "--program-dir",
            str(program),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 1
    assert (
        "rw calls what neither the project's PThreads library (firmware/include/pthread.h) nor "
        "the C library provides: pthread_kill"
    ) in p.stderr
    assert "did not build" in p.stderr and "Traceback" not in p.stderr


def _ep_reference(pairs, seed):
    """(accepted, annulus counts) of ep's pairs in floating point: NPB EP's method on the
    program's random numbers (workload.h's wl_hash32)."""
    import math

    def hash32(a, b):
        m = 0xFFFFFFFF
        h = (a ^ (b * 0x9E3779B9)) & m
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & m
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & m
        return h ^ (h >> 16)

    def q31(v):
        return (v - (1 << 32) if v >= 1 << 31 else v) / 2**31

    q = [0] * 10
    for i in range(pairs):
        x, y = q31(hash32(seed, 2 * i)), q31(hash32(seed, 2 * i + 1))
        t = x * x + y * y
        if t > 1 or t < 2**-30:
            continue
        f = math.sqrt(-2 * math.log(t) / t)
        q[min(int(max(abs(x * f), abs(y * f))), 9)] += 1
    return sum(q), q


@pytest.mark.parametrize("input_class, pairs", [("test", 512), ("simsmall", 8192)])
def test_ep_counts_gaussian_pairs_as_floating_point_does(host, input_class, pairs):
    """ep's fixed-point annulus test (no libm, the same on every machine) puts every pair where
    the polar method in floating point does."""
    out = host_programs.run(host["ep"], f"-t 3 -i {input_class} -s 7")
    accepted, q = _ep_reference(pairs, 7)
    assert f"ep: {accepted} of {pairs} pairs accepted; annuli {' '.join(map(str, q))}" in out
    # A Gaussian pair's largest deviate is below 1 with probability 0.683^2, below 2 with 0.954^2.
    assert abs(q[0] / accepted - 0.683**2) < 0.05 and abs((q[0] + q[1]) / accepted - 0.954**2) < 0.03
