"""Read-write locks under load (firmware/apps/rwbench, scripts/experiments/rwlock.py): both backends run
the same operations, readers never see a torn table, and the report pairs the two backends."""

import pytest

from scripts.experiments.rwlock import measurements, report
from scripts.capture import CaptureError, parse_lines


@pytest.mark.parametrize("backend", ["swonly", "subutai"])
def test_rwbench_on_two_tiles(sim, backend):
    r = sim.run(2, 1, "rwbench", backend, max_cycles=50_000_000)
    assert r.exit_code == 0, r.output[-2000:]
    records = [rec for rec in parse_lines(r.output.splitlines()) if rec.get("program") == "rwbench"]
    assert [rec["write_pct"] for rec in records] == [10, 50]
    for rec in records:
        assert rec["backend"] == backend and rec["tiles"] == 2 and rec["ops"] == 128
        # The hash's share of writes, the same whatever the backend (rwbench checks every one).
        assert 0 < rec["writes"] < rec["ops"] and rec["cycles"] > 0
    assert records[0]["writes"] < records[1]["writes"]


def _line(backend, pct, cycles, writes=10):
    return (
        f'@subutai {{"program":"rwbench","backend":"{backend}","tiles":8,"write_pct":{pct},'
        f'"ops":512,"writes":{writes},"cycles":{cycles}}}'
    )


def test_report_pairs_the_backends(tmp_path):
    lines = [_line("swonly", 10, 900), _line("subutai", 10, 300)]
    table = report(measurements(lines), str(tmp_path))
    assert "3.00x" in table
    csv = (tmp_path / "rwlock.csv").read_text()
    assert "900" in csv and "300" in csv
    assert (tmp_path / "rwlock.png").stat().st_size > 0


def test_report_refuses_unpaired_or_different_runs():
    with pytest.raises(CaptureError, match="no run of subutai"):
        measurements([_line("swonly", 10, 900)])
    with pytest.raises(CaptureError, match="different operations"):
        measurements([_line("swonly", 10, 900, writes=10), _line("subutai", 10, 300, writes=11)])
