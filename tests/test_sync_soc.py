"""Subutai-HW primitives through the NIs of the SoC (Verilator): firmware `synctest`."""

import pytest

from scripts.capture import parse_lines

CHECKS_MULTI = {
    "alloc_bad_host",
    "alloc_barrier_zero",
    "round_robin_hosts",
    "ids_hosted_as_asked",
    "mutex_counter",
    "barrier_one_serial_per_round",
    "barrier_releases_after_all_arrived",
    "cond_items_consumed",
    "cond_sum",
    "unlock_by_non_owner_eperm",
    "trylock_held_ebusy",
    "relock_by_owner_edeadlk",
    "free_locked_ebusy",
    "free_ok",
    "lock_freed_einval",
    "free_twice_einval",
    "lock_bogus_einval",
    "barrier_op_on_mutex_einval",
}


@pytest.mark.parametrize("mesh", [(1, 1), (2, 1), (2, 2)], ids=["1x1", "2x1", "2x2"])
def test_synctest_every_primitive_and_error(sim, mesh):
    x, y = mesh
    r = sim.run(x, y, "synctest", max_cycles=20_000_000)
    assert r.exit_code == 0, r.output + r.stderr
    assert "synctest done" in r.output
    checks = {c["check"]: c for c in parse_lines(r.output.splitlines())}
    expected = (
        CHECKS_MULTI if x * y > 1 else CHECKS_MULTI - {"unlock_by_non_owner_eperm", "trylock_held_ebusy"}
    )
    assert set(checks) == expected
    failed = [c for c in checks.values() if c["ok"] != 1]
    assert not failed, failed


STRESS_CHECKS = {
    "invariants",
    "mutex_entries_counted",
    "every_core_ran_every_round",
    "tokens_all_taken",
    "messages_delivered",
    "ran_long_enough",
}


# 8x8: the largest mesh (slow, tests/conftest.py).
@pytest.mark.parametrize("mesh", [(1, 1), (2, 1), (2, 2), (8, 8)], ids=["1x1", "2x1", "2x2", "8x8"])
def test_syncstress_short(sim, mesh):
    """firmware/apps/syncstress for one million cycles: random locks, trylocks, signals,
    broadcasts, condition waits (untimed and timed out), barriers and NoC messages on objects
    hosted on every tile. A lost wake-up or a deadlock of the priority class would leave a core
    waiting: the run would end at the cycle limit instead of exiting."""
    x, y = mesh
    model = sim.model(x, y)
    key = (x, y, "syncstress_short")
    if key not in sim.images:
        sim.images[key] = model.build_firmware(
            "syncstress",
            out_dir=f"{model.output_dir}/firmware/syncstress_short",
            extra_cflags="-DSTRESS_CYCLES=1000000u",
        )
    r = model.run(sim.images[key], max_cycles=4_000_000)
    assert r.exit_code == 0, r.output[-3000:] + r.stderr
    lines = parse_lines(r.output.splitlines())
    checks = {c["check"]: c for c in lines if "check" in c}
    assert set(checks) == STRESS_CHECKS
    failed = [c for c in checks.values() if c["ok"] != 1]
    assert not failed, failed
    summary = next(c for c in lines if "rounds" in c)
    assert summary["cycles"] >= 1_000_000 and summary["locks"] > 0 and summary["wakes"] > 0
    if x * y > 1:
        # Tokens crossed between cores, and some waited for them.
        assert summary["messages"] > 0 and summary["waits"] > 0
