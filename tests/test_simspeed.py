"""`make simspeed`'s command line (scripts/simspeed.py): a wrong argument is refused with a clear
message before any model is built."""

import subprocess
import sys

import pytest

from gateware.build import ROOT


def simspeed(*args):
    return subprocess.run(
        [sys.executable, "scripts/simspeed.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--repeat", "0"], "--repeat must be 1 or more"),
        (["--cycles", "0"], "--cycles must be positive"),
        (["--configs", "default,fast"], "unknown configuration 'fast'"),
        (["--threads", "1"], "--threads: 2 or more"),
        (["--tiles", "65"], "--tiles:"),
    ],
)
def test_wrong_arguments_are_refused(args, message):
    p = simspeed(*args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr
    assert "[build]" not in p.stdout
