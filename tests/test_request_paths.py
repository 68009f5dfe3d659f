"""The request path of the bare-metal Subutai driver, the port's direct window (single-cycle stores
and a blocking load), under conditions the other tests do not make: every error answer, a full
scratchpad, a wait of more than ten million cycles with an interrupt pending meanwhile. (A wait
with a deadline issues through the window too but sleeps until the port's reply interrupt:
pthreadtest's timed waits, tests/test_pthread_soc.py.)
"""

import os

from scripts.capture import parse_lines


def test_windowtest_long_wait_interrupt_errors_full_scratchpad(sim):
    model = sim.model(2, 1)
    out = os.path.join(model.output_dir, "firmware", "windowtest-subutai")
    image = model.build_firmware("windowtest", out_dir=out, backend="subutai")
    result = model.run(image, max_cycles=40_000_000)
    assert result.exit_code == 0, f"{result.output[-3000:]}{result.stderr}"
    checks = [r for r in parse_lines(result.output.splitlines()) if r.get("program") == "windowtest"]
    assert len(checks) == 17, result.output
    failed = [r["check"] for r in checks if not r["ok"]]
    assert not failed, result.output
    assert result.cycles > 10_000_000
