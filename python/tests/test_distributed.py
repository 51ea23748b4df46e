"""4 processes on localhost with torch.distributed (gloo), one unirecord.Loader
per rank, num_shards/shard_id taken from torch.distributed."""
import json
import socket
import sys
from collections import Counter
from pathlib import Path

import pytest
from urec_fixtures import loader_records, run_processes  # noqa: F401 (pytest fixtures)

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():
    pytest.skip("torch.distributed is not available", allow_module_level=True)

WORLD = 4
N = 90  # records of the loader_records fixture


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ranks(loader_records, tmp_path_factory):
    out = tmp_path_factory.mktemp("dist") / "ranks.json"
    port = free_port()
    worker = Path(__file__).with_name("dist_worker.py")
    codes, logs = run_processes([[sys.executable, str(worker), str(r), str(WORLD), str(port), str(loader_records), str(out)]
                                 for r in range(WORLD)])
    assert codes == [0] * WORLD, logs
    return json.loads(out.read_text())


def check_partition(per_rank):
    per = -(-N // WORLD)  # ceil: DistributedSampler pads by wrapping around
    assert all(len(ids) == per for ids in per_rank)
    union = Counter(i for ids in per_rank for i in ids)
    assert set(union) == set(range(N))
    extra = sum(union.values()) - N
    assert extra == per * WORLD - N
    return union


def test_equal_batch_counts_from_torch_distributed(ranks):
    assert [r["shard_id"] for r in ranks] == list(range(WORLD))
    assert all(r["num_shards"] == WORLD for r in ranks)
    counts = {tuple(c) for r in ranks for c in r["all_counts"]}
    assert counts == {(3, 3)}  # ceil(23 / 8) on every rank
    assert all(r["len"] == 3 for r in ranks)


def test_union_covers_the_dataset_with_padding_only(ranks):
    for key in ("epoch0", "epoch1"):
        union = check_partition([r[key] for r in ranks])
        # The padding repeats the first ids of the epoch's order: rank r takes
        # positions r, r + 4, ...; positions N.. wrap around to 0...
        order = [None] * (WORLD * -(-N // WORLD))
        for r in ranks:
            order[r["rank"]::WORLD] = r[key]
        assert order[N:] == order[: len(order) - N]
        assert {i for i, c in union.items() if c > 1} == set(order[N:])


def test_set_epoch_changes_the_order(ranks):
    assert all(r["epoch0"] != r["epoch1"] for r in ranks)
    assert [sorted(r["epoch0"]) for r in ranks] != [sorted(r["epoch1"]) for r in ranks]


def test_sequential_partition_equals_torch_distributed_sampler(ranks):
    for r in ranks:
        assert r["sequential"] == r["torch_sequential"]


def test_resumed_loader_continues_exactly(ranks):
    for r in ranks:
        assert r["resumed"] == r["epoch1"]
