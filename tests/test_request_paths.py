"""The two request paths of the bare-metal Subutai driver: the direct window (single-cycle stores
and a blocking load, the default) and the CSR path (-DSUBUTAI_SYNC_CSR, what Zephyr uses). Both
must answer every request alike: errors, a full scratchpad, a wait of more than ten million
cycles with an interrupt pending meanwhile, the PThreads tests and a program, with both backends.
"""

import os

import pytest

from scripts.apps_report import app_runs
from scripts.capture import parse_lines

CSR = "-DSUBUTAI_SYNC_CSR"


def plain_output(output):
    """The output without the measurement lines."""
    return [l for l in output.splitlines() if "@subutai " not in l]


def run_path(sim, mesh, app, path, backend="subutai", program_args="", max_cycles=40_000_000):
    model = sim.model(*mesh)
    out = os.path.join(model.output_dir, "firmware", f"{app}-{backend}-{path}")
    image = model.build_firmware(app, out_dir=out, backend=backend, program_args=program_args,
        extra_cflags=CSR if path == "csr" else "")
    result = model.run(image, max_cycles=max_cycles)
    assert result.exit_code == 0, f"{path}:\n{result.output[-3000:]}{result.stderr}"
    return result


@pytest.mark.parametrize("path", ["window", "csr"])
def test_windowtest_long_wait_interrupt_errors_full_scratchpad(sim, path):
    result = run_path(sim, (2, 1), "windowtest", path)
    checks = [r for r in parse_lines(result.output.splitlines()) if r.get("program") == "windowtest"]
    assert len(checks) == 17, result.output
    failed = [r["check"] for r in checks if not r["ok"]]
    assert not failed, result.output
    assert result.cycles > 10_000_000


def test_both_paths_print_the_same(sim):
    """synctest (the driver) and pthreadtest (both backends) through either path."""
    for app, backend in [("synctest", "subutai"), ("pthreadtest", "subutai"),
                         ("pthreadtest", "swonly"), ("windowtest", "subutai")]:
        mesh = (2, 1) if app == "windowtest" else (2, 2)
        window, csr = (run_path(sim, mesh, app, p, backend) for p in ("window", "csr"))
        assert plain_output(window.output) == plain_output(csr.output), (app, backend)
        if app == "synctest":
            assert all(r["ok"] for r in parse_lines(window.output.splitlines())
                if r.get("program") == "synctest")


@pytest.mark.parametrize("backend", ["subutai", "swonly"])
def test_program_through_the_csr_path(sim, backend):
    """A program keeps its result through the CSR path (the window is every other test's)."""
    window, csr = (run_path(sim, (2, 2), "radix", p, backend, program_args="-i test -s 1",
        max_cycles=30_000_000) for p in ("window", "csr"))
    (w,), (c,) = app_runs(window.output.splitlines()), app_runs(csr.output.splitlines())
    assert w["checksum"] == c["checksum"] and w["objects"] == c["objects"]
