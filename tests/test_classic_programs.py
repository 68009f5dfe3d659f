"""Programs of one's own as classic PThreads suites write them, through the documented path
(``PROGRAM_DIR``, ``make sim``), bare metal and under Zephyr, with both backends.

The programs (tests/data/programs/) are written for these tests in the style of SPLASH-2 and its
ports: their own getopt options (``-p``, and ``-t`` meaning "test the result"), gettimeofday(),
time() and clock() timing, doubles, blocks each thread allocates, a barrier built from a mutex and
a condition, semaphores; each checks its own result. A program of one's own gets exactly the
arguments it is given, split as a shell splits them, and learns the core count from sysconf().
"""

import os
import subprocess
import sys

import pytest

from gateware.build import ROOT
from scripts.experiments.apps import app_runs

PROGRAMS = os.path.join(os.path.dirname(__file__), "data", "programs")
ARGV_ECHO = os.path.join(PROGRAMS, "argv_echo")
GENERATOR = os.path.join(ROOT, "firmware", "lib", "program_args.py")


def _runs(output):
    return app_runs(output.splitlines())


def _argv(output):
    """The argv argv_echo printed."""
    return [
        line.split(">", 1)[0].split("=<", 1)[1]
        for line in output.splitlines()
        if line.startswith("argv[") and "=<" in line
    ]


# The arguments' words, as a shell splits them (no simulation) -------------------------------------


@pytest.mark.parametrize(
    "line, words",
    [
        ("", []),
        ("-m10", ["-m10"]),
        ("-p8 -m10 -t", ["-p8", "-m10", "-t"]),
        ("  -o  'a b'  ", ["-o", "a b"]),
        ('-o "it\'s" x\\ y', ["-o", "it's", "x y"]),
        ("'' \"\"", ["", ""]),
        ("-s '*/' -q '?\\\\'", ["-s", "*/", "-q", "?\\\\"]),
        ("é \t\n tab", ["é", "tab"]),
    ],
)
def test_arguments_split_as_a_shell_splits_them(tmp_path, line, words):
    """The generated source holds the shell's words (shlex in POSIX mode is the reference), each
    byte as C reads it back, in a C file that compiles."""
    out = tmp_path / "program_args.c"
    env = dict(os.environ, SUBUTAI_PROGRAM_ARGS=line)
    subprocess.run([sys.executable, GENERATOR, str(out)], env=env, check=True)
    text = out.read_text()
    assert f"subutai_program_argc = {len(words)};" in text
    # The C literals decoded back (octal escapes and \" \\ only) give the words' bytes.
    literals = [l.split("= ", 1)[1].rstrip(";") for l in text.splitlines() if l.startswith("static char arg")]
    decoded = [
        bytes(lit[1:-1], "ascii").decode("unicode_escape").encode("latin-1").decode() for lit in literals
    ]
    assert decoded == words
    obj = tmp_path / "program_args.o"
    subprocess.run(
        [
            "riscv64-unknown-elf-gcc",
            "-march=rv32im",
            "-mabi=ilp32",
            "--specs=picolibc.specs",
            "-Wall",
            "-Werror",
            "-I",
            os.path.join(ROOT, "firmware", "include"),
            "-c",
            str(out),
            "-o",
            str(obj),
        ],
        check=True,
    )


def test_generated_source_is_rewritten_only_when_the_words_change(tmp_path):
    out = tmp_path / "program_args.c"
    env = dict(os.environ, SUBUTAI_PROGRAM_ARGS="-p4 -t")
    subprocess.run([sys.executable, GENERATOR, str(out)], env=env, check=True)
    os.utime(out, (1, 1))
    subprocess.run([sys.executable, GENERATOR, str(out)], env=env, check=True)
    assert os.stat(out).st_mtime == 1
    env["SUBUTAI_PROGRAM_ARGS"] = "-p8 -t"
    subprocess.run([sys.executable, GENERATOR, str(out)], env=env, check=True)
    assert os.stat(out).st_mtime != 1 and '"-p8"' in out.read_text()


@pytest.mark.parametrize(
    "own, line, message",
    [
        (True, "-o 'a", "No closing quotation"),
        (True, '-o "a', "No closing quotation"),
        (True, "a\\", "No escaped character"),
        (False, "-i 'test'", "no quotes allowed"),
    ],
)
def test_arguments_a_shell_would_refuse_are_refused(own, line, message):
    from soc.firmware import check_program_args

    with pytest.raises(ValueError, match=message):
        check_program_args(line, own_program=own)


@pytest.mark.parametrize("call", ["sem_open", "sched_setaffinity"])
def test_call_not_provided_is_named_at_link(tmp_path, call):
    """What the survey (docs/programs.md) lists as refused fails the link with its name."""
    program = tmp_path / "uses"
    program.mkdir()
    (program / "main.c").write_text(f"void *{call}();\nint main(void) {{ return {call}() != 0; }}\n")
    proc = subprocess.run(
        [sys.executable, "boards/sim.py", "--tiles", "2", "--program-dir", str(program)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert f"nor the C library provides: {call}" in proc.stderr


def test_unclosed_quote_refused_on_the_command_line():
    proc = subprocess.run(
        [sys.executable, "boards/sim.py", "--tiles", "2", "--program-dir", ARGV_ECHO, "--args=-o 'a b"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "--args" in proc.stderr and "No closing quotation" in proc.stderr, (
        proc.stderr
    )


# Bare metal -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["subutai", "swonly"])
def test_own_program_gets_exactly_its_arguments(sim, tmp_path, backend):
    """No "-t <tiles>" before them; quotes, an empty word and a lone option reach argv as a shell
    would pass them; argv is writable and NULL-terminated; sysconf() gives the tile count, and the
    clocks of gettimeofday(), clock_gettime(), time() and clock() agree."""
    model = sim.model(2, 1)
    args = "-t 3 \"two words\" 'it'\\''s' '' -m10"
    image = model.build_firmware(
        None, backend=backend, program_dir=ARGV_ECHO, program_args=args, out_dir=str(tmp_path / "out")
    )
    r = model.run(image, max_cycles=20_000_000)
    assert r.exit_code == 0, r.output[-3000:]
    assert _argv(r.output) == ["argv_echo", "-t", "3", "two words", "it's", "", "-m10"]
    assert "argv[argc]=NULL" in r.output and "clocks OK" in r.output
    assert "nprocessors_onln=2 nprocessors_conf=2" in r.output
    # The library's limits (limits.h: 32 thread slots a core up to 4 tiles), and clock()'s tick.
    assert "pagesize=4096 clk_tck=1000000 threads_max=64 keys_max=128 stack_min=256" in r.output
    assert "clocks_per_sec=1000000" in r.output and "pid=1" in r.output
    assert "threads_option=200809 barriers_option=200809 semaphores_option=200809" in r.output
    (run,) = _runs(r.output)
    # The report's args give the words again as a shell command line (argv[1] the program changed).
    assert run["args"] == "Xt 3 'two words' 'it'\\''s' '' -m10"
    assert (run["program"], run["backend"], run["tiles"], run["exit"]) == ("argv_echo", backend, 2, 0)


def test_make_sim_passes_arguments_unchanged(sim):
    """The documented path: make sim PROGRAM_DIR=... ARGS=..., with a quote and a lone option."""
    sim.model(2, 1)  # built once for the session
    proc = subprocess.run(
        ["make", "-s", "sim", "TILES=2", f"PROGRAM_DIR={ARGV_ECHO}", 'ARGS=-m10 "a  b"'],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert _argv(proc.stdout) == ["argv_echo", "-m10", "a  b"]


@pytest.mark.parametrize("backend", ["subutai", "swonly"])
@pytest.mark.parametrize(
    "program, args, passed",
    [
        ("integrate", "-p4 -n4096 -t -s", "TEST PASSED"),
        ("matmul", "-t -n16 -s7", "TEST PASSED (0 elements differ)"),
        ("timeouts", "", "timeouts: 65 checks, 0 failed"),
    ],
)
def test_classic_program_checks_its_own_result(sim, tmp_path, program, args, passed, backend):
    """Each program checks itself; the harness's records still come, also from one that ends by
    exit() (integrate), with every thread it made."""
    model = sim.model(2, 2)
    image = model.build_firmware(
        None,
        backend=backend,
        program_dir=os.path.join(PROGRAMS, program),
        program_args=args,
        out_dir=str(tmp_path / "out"),
    )
    r = model.run(image, max_cycles=60_000_000)
    assert r.exit_code == 0, r.output[-3000:]
    assert passed in r.output
    (run,) = _runs(r.output)
    assert run["exit"] == 0 and run["backend"] == backend and run["args"] == args
    if program != "timeouts":
        # Four threads by -p4, or by sysconf() on four tiles.
        assert run["threads"] == 4 and run["ops"][("thread", "create")]["count"] == 3
        assert run["ops"][("cond", "wait")]["count"] + run["ops"][("cond", "broadcast")]["count"] > 0


# Under Zephyr (the full C library, picolibc, for a program of one's own) --------------------------


def _zephyr_image(sim, tmp_path, program, backend, args, mesh=(2, 2)):
    from soc.zephyr import build_app

    model = sim.model(*mesh)
    image = build_app(
        model,
        "program",
        backend,
        program_dir=os.path.join(PROGRAMS, program),
        program_args=args,
        out_dir=str(tmp_path / "build"),
        log=lambda m: print(m, file=sys.stderr),
    )
    return model, image


@pytest.mark.zephyr
def test_own_program_gets_exactly_its_arguments_under_zephyr(sim, tmp_path):
    model, image = _zephyr_image(sim, tmp_path, "argv_echo", "subutai", "-t 3 \"two words\" '' -m10")
    r = model.run(image, max_cycles=100_000_000)
    assert r.exit_code == 0, r.output[-3000:]
    assert _argv(r.output) == ["argv_echo", "-t", "3", "two words", "", "-m10"]
    assert "nprocessors_onln=4" in r.output and "clocks OK" in r.output and "pid=1" in r.output
    (run,) = _runs(r.output)
    assert run["args"] == "Xt 3 'two words' '' -m10" and run["exit"] == 0


# One backend each in CI (zephyr-check); the other backends in the slow suite.
_OTHER = pytest.mark.slow


@pytest.mark.zephyr
@pytest.mark.parametrize(
    "program, backend, args, passed",
    [
        ("integrate", "swonly", "-n4096 -t", "TEST PASSED"),
        ("matmul", "subutai", "-p4 -t -n16", "TEST PASSED (0 elements differ)"),
        ("timeouts", "swonly", "", "timeouts: 65 checks, 0 failed"),
        pytest.param("integrate", "subutai", "-p4 -t", "TEST PASSED", marks=_OTHER),
        pytest.param("matmul", "swonly", "-t -n16", "TEST PASSED (0 elements differ)", marks=_OTHER),
        pytest.param("timeouts", "subutai", "", "timeouts: 65 checks, 0 failed", marks=_OTHER),
    ],
)
def test_classic_program_under_zephyr(sim, tmp_path, program, backend, args, passed):
    model, image = _zephyr_image(sim, tmp_path, program, backend, args)
    r = model.run(image, max_cycles=200_000_000)
    assert r.exit_code == 0, r.output[-3000:]
    assert passed in r.output
    (run,) = _runs(r.output)
    assert run["exit"] == 0 and run["backend"] == backend and run["tiles"] == 4
    if program != "timeouts":
        assert run["threads"] == 4
