"""Atomic unit of the software-only baseline, exercised by every core of the SoC (Verilator)."""

import pytest

from scripts.capture import parse_lines


@pytest.mark.parametrize("mesh", [(2, 1), (2, 2)], ids=["2x1", "2x2"])
def test_atomic_operations_are_exact_across_cores(sim, mesh):
    x, y = mesh
    r = sim.run(x, y, "atomictest", max_cycles=20_000_000)
    assert r.exit_code == 0, r.output + r.stderr
    checks = {c["check"]: c for c in parse_lines(r.output.splitlines())}
    assert set(checks) == {
        "fetch_add_count",
        "fetch_add_weighted",
        "test_and_set_one_winner",
        "swap_token_kept",
    }
    n = x * y
    assert checks["fetch_add_count"]["value"] == n * 200
    assert checks["fetch_add_weighted"]["value"] == 200 * n * (n + 1) // 2
    assert all(c["ok"] == 1 for c in checks.values()), checks
