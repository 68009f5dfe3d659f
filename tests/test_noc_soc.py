"""Message passing between tiles in the SoC (Verilator): NI driver, polling and interrupts."""

import pytest

from scripts.capture import parse_lines


def pingpong(sim, x, y, irq):
    model = sim.model(x, y)
    key = (x, y, "pingpong_irq" if irq else "pingpong")
    if key not in sim.images:
        flags = "-DPINGPONG_IRQ" if irq else ""
        sim.images[key] = model.build_firmware(
            "pingpong", out_dir=f"{model.output_dir}/firmware/{key[2]}", extra_cflags=flags
        )
    r = model.run(sim.images[key], max_cycles=20_000_000)
    assert r.exit_code == 0, r.output + r.stderr
    return parse_lines(r.output.splitlines())


@pytest.mark.parametrize("irq", [False, True], ids=["poll", "irq"])
@pytest.mark.parametrize("mesh", [(2, 1), (2, 2)], ids=["2x1", "2x2"])
def test_pingpong_every_pair(sim, mesh, irq):
    x, y = mesh
    n = x * y
    reports = pingpong(sim, x, y, irq)
    pairs = {(r["src"], r["dst"]) for r in reports}
    assert pairs == {(s, d) for s in range(n) for d in range(n) if s != d}
    for r in reports:
        assert r["mode"] == ("irq" if irq else "poll")
        sx, sy, dx, dy = r["src"] % x, r["src"] // x, r["dst"] % x, r["dst"] // x
        assert r["hops"] == abs(sx - dx) + abs(sy - dy)
        # Every round trip took some cycles and the statistics are consistent.
        assert 0 < r["min"] <= r["avg"] <= r["max"]
