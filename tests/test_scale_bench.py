"""The ``scale`` benchmark case: registered, and its scaling rows skip with their reason
on a machine without the cores or the GPU they need (no Ray run here: the overhead row
runs the real model on two engines and is left to ``chunkscope bench --cases scale``)."""

from __future__ import annotations

from core.bench import CASE_NAMES
from core.bench.scale_cases import SCALING_WORKERS, _scaling_rows, scale_paths
from core.chunk import policy_from_args
from core.cli.bench_cmd import parse_cases


def test_scale_is_a_bench_case():
    assert "scale" in CASE_NAMES and parse_cases("scale") == ("scale",)
    assert all(p.is_file() for p in scale_paths(quick=False))
    assert len(scale_paths(quick=True)) < len(scale_paths(quick=False))


def test_scaling_rows_skip_with_their_reason_without_cores_or_gpu():
    policy = policy_from_args("structure", None, None, None)
    rows = _scaling_rows([], policy, cores=2, gpus=0)
    assert [r.key for r in rows] == [f"scale:cpu{w}" for w in SCALING_WORKERS] + ["scale:gpu1"]
    assert all(r.status == "skipped" and r.ours is None for r in rows)
    assert all(r.skipped == "needs 9 usable cores, this machine has 2" for r in rows[:-1])
    assert rows[-1].skipped == "no CUDA device on this machine"
