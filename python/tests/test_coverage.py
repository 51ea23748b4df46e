"""Loader.coverage() and unirecord.check_coverage(): every rank's digest of
what it delivered, checked against every record of the epoch exactly once
(or the padded / weighted multiset), carried through state_dict across
exact and elastic resume, with real torch.distributed ranks (gloo) killed
mid-epoch and resumed on another number of ranks; and a resume that repeats
or skips records is reported, naming them."""
import json
import pickle
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import unirecord
from urec_fixtures import loader_records, run_processes  # noqa: F401 (pytest fixtures)

torch = pytest.importorskip("torch")

N = 90  # records of loader_records
CROP = unirecord.CenterCrop(16, resize=16)


def loader(records, ranks, rank, batch=8, coverage="ids", **sampler):
    return unirecord.Loader(records, batch, shuffle=True, seed=5, threads=1, transform=CROP,
                            fields=unirecord.Fields(return_ids=True),
                            sampler=unirecord.Sampler(num_shards=ranks, shard_id=rank, coverage=coverage, **sampler))


def run(ranks, steps=None):
    """`steps` batches on every rank (None: to the epoch's end); the ids read."""
    ids = Counter()
    for r in ranks:
        for k, (_images, _labels, batch) in enumerate(r):
            ids.update(batch.tolist())
            if steps is not None and k + 1 == steps:
                break
    return ids


def test_every_ranks_digest_checks_the_epoch_and_travels_as_bytes(loader_records):
    ranks = [loader(loader_records, 4, r) for r in range(4)]
    for r in ranks:
        r.set_epoch(3)
    seen = run(ranks)
    digests = [r.coverage() for r in ranks]
    check = unirecord.check_coverage(digests)
    assert check.ok and bool(check), check.message
    assert (check.records, check.deliveries, check.padding) == (N, 92, 2)  # DistributedSampler pads 90 to 92
    assert check.has_ids and check.missing_ids == [] and check.repeated_ids == []
    assert "every record exactly once" in check.message and "2 of them padding" in check.message
    assert sum(d.delivered for d in digests) == sum(seen.values())
    assert sorted(i for d in digests for i in d.ids().tolist()) == sorted(seen.elements())
    d = digests[1]
    assert (d.epoch, d.seed, d.shard_id, d.num_shards, d.complete, d.has_ids) == (3, 5, 1, 4, True, True)
    # Pickled (all_gather_object) or as bytes: the same digest.
    again = [pickle.loads(pickle.dumps(x)) for x in digests]
    assert [x.digest for x in again] == [x.digest for x in digests]
    assert unirecord.check_coverage([x.to_bytes() for x in digests]).ok
    assert "rank 1/4" in repr(d) and "complete" in repr(d)
    # A rank missing: its records, by id.
    partial = unirecord.check_coverage(digests[:3])
    assert not partial.ok and partial.missing_ids == sorted(set(digests[3].ids().tolist()) - set(
        i for x in digests[:3] for i in x.ids().tolist()))
    # A new epoch starts a new digest.
    ranks[0].set_epoch(4)
    assert ranks[0].coverage().delivered == 0 and ranks[0].coverage().epoch == 4


def test_digests_of_different_epochs_or_orders_do_not_mix(loader_records):
    a, b = loader(loader_records, 2, 0), loader(loader_records, 2, 1)
    b.set_epoch(1)
    with pytest.raises(ValueError, match="epoch"):
        unirecord.check_coverage([a.coverage(), b.coverage()])
    with pytest.raises(ValueError, match="no digest"):
        unirecord.check_coverage([])
    with pytest.raises(TypeError, match="unirecord.Coverage"):
        unirecord.check_coverage([a.coverage(), "x"])
    with pytest.raises(ValueError, match="coverage digest"):
        unirecord.check_coverage([b"URCD" + bytes(200)])


def test_coverage_detail_is_an_option(loader_records):
    digest_only = loader(loader_records, 1, 0, coverage="digest")
    run([digest_only])
    d = digest_only.coverage()
    assert d.ids() is None and not d.has_ids and d.delivered == N
    assert unirecord.check_coverage([d]).ok
    nothing = loader(loader_records, 1, 0, coverage="none")
    run([nothing])
    assert nothing.coverage().delivered == 0
    assert unirecord.check_coverage([nothing.coverage()]).missing == N
    with pytest.raises(ValueError, match="coverage detail"):
        loader(loader_records, 1, 0, coverage="all")


def test_state_dict_carries_coverage_on_the_same_ranks_and_as_a_list_elsewhere(loader_records):
    old = [loader(loader_records, 3, r) for r in range(3)]
    run(old, steps=2)
    states = [r.state_dict() for r in old]
    assert all(isinstance(s["coverage"], bytes) for s in states)
    # The same ranks, each its own state.
    same = [loader(loader_records, 3, r) for r in range(3)]
    for r, s in zip(same, states):
        r.load_state_dict(s)
    run(same)
    assert unirecord.check_coverage([r.coverage() for r in same]).ok
    # Two ranks, batch 5, every rank the list of all three.
    new = [loader(loader_records, 2, r, batch=5) for r in range(2)]
    for r in new:
        r.load_state_dict(states)
    run(new)
    check = unirecord.check_coverage([r.coverage() for r in new])
    assert check.ok, check.message
    # One rank's state alone elsewhere (as before coverage): the earlier part is uncarried.
    alone = [loader(loader_records, 2, r) for r in range(2)]
    for r in alone:
        r.load_state_dict(states[1])
    run(alone)
    lost = unirecord.check_coverage([r.coverage() for r in alone])
    assert not lost.ok and lost.uncarried == 2 and lost.missing == 48
    assert "did not carry" in lost.message
    # A state without coverage (an older checkpoint) restores as before.
    older = {k: v for k, v in states[0].items() if k != "coverage"}
    fresh = loader(loader_records, 3, 0)
    fresh.load_state_dict(older)
    assert fresh.coverage().uncarried == 1
    with pytest.raises(ValueError, match="sampler states differ"):
        new[0].load_state_dict([states[0], loader(loader_records, 3, 1).state_dict(), states[2]])


def test_weighted_mixtures_expect_the_weights_counts(loader_records, tmp_path):
    small = tmp_path / "small"
    first = unirecord.Dataset(loader_records)
    with unirecord.Writer(small, first.schema, "small", classes=first.classes, sync=False) as w:
        for i in range(6):
            w.write(first[i])
    ranks = [loader([loader_records, small], 2, r, weights=[0.5, 0.5], epoch_size=60) for r in range(2)]
    seen = run(ranks)
    check = unirecord.check_coverage([r.coverage() for r in ranks])
    assert check.ok, check.message
    assert check.records == 60 and sum(seen.values()) == 60
    assert Counter(seen[i] for i in range(N, N + 6)) == {5: 6}  # 30 samples of 6 records: 5 each


def write_tokens(path, lengths):
    schema = unirecord.Schema({"tokens": unirecord.Field("tokens", "int32", shape=(-1,))})
    with unirecord.Writer(path, schema, "docs", num_shards=2, sync=False) as w:
        for i, n in enumerate(lengths):
            w.write({"tokens": (1000 * i + np.arange(n) + 1).astype(np.int32)})


@pytest.mark.parametrize("strategy", ["concat", "best_fit"])
def test_a_packing_loaders_documents_check_across_an_elastic_resume(tmp_path, strategy):
    lengths = np.random.default_rng(4).integers(0, 40, 150)
    write_tokens(tmp_path / "docs", lengths)

    def packing(ranks, rank):
        return unirecord.Loader(tmp_path / "docs", 3, True, seed=2,
                                fields=unirecord.Fields(["tokens"], image_field=None, label_field=None),
                                sampler=unirecord.Sampler(num_shards=ranks, shard_id=rank, coverage="ids"),
                                pack=unirecord.Pack(16, strategy=strategy, window=8))

    old = [packing(3, r) for r in range(3)]
    for r in old:
        for _ in range(4):
            r.next_batch()
    states = [r.state_dict() for r in old]
    new = [packing(2, r) for r in range(2)]
    for r in new:
        r.load_state_dict(states)
        for _ in r:
            pass
    check = unirecord.check_coverage([r.coverage() for r in new])
    assert check.ok, check.message
    assert check.records == 150


# --- Real ranks: torch.distributed over gloo, killed and resumed -------------

def spawn(world, *args):
    """`world` ranks of coverage_worker.py; their exit codes and output."""
    from test_elastic import free_port

    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not available")
    worker = Path(__file__).with_name("coverage_worker.py")
    port = str(free_port())
    return run_processes([[sys.executable, str(worker), args[0], str(r), str(world), port, *map(str, args[1:])]
                          for r in range(world)])


@pytest.fixture(scope="module")
def killed_run(loader_records, tmp_path_factory):
    """4 ranks read 2 batches of epoch 2, checkpointing after each, then die by SIGKILL."""
    ckpt = tmp_path_factory.mktemp("checkpoints")
    codes, logs = spawn(4, "stop", loader_records, ckpt)
    assert codes == [-9] * 4, logs  # killed mid-epoch, not ended
    return ckpt


def epoch_order(records):
    one = loader(records, 1, 0, batch=1)
    one.set_epoch(2)
    return [int(ids[0]) for _images, _labels, ids in one]


@pytest.mark.parametrize("new_world", [3, 2])
def test_ranks_killed_mid_epoch_and_resumed_on_another_world_size_check_ok(loader_records, killed_run, tmp_path,
                                                                           new_world):
    out = tmp_path / "check.json"
    codes, logs = spawn(new_world, "resume", loader_records, killed_run, 4, "as_saved", out)
    assert codes == [0] * new_world, logs
    result = json.loads(out.read_text())
    assert result["ok"], result["message"]
    assert result["shards"] == list(range(new_world)) and all(result["complete"])
    # The new ranks read the rest of the epoch, positions 32.., and the padding.
    order = epoch_order(loader_records)
    resumed = Counter(i for ids in result["ids"] for i in ids)
    padding = -(-(N - 32) // new_world) * new_world - (N - 32)
    assert result["padding"] == padding
    assert resumed - Counter(order[32:]) == Counter(order[:padding])


@pytest.mark.parametrize("mode", ["stale_state", "stale_coverage"])
def test_a_resume_that_repeats_or_skips_records_is_reported_by_id(loader_records, killed_run, tmp_path, mode):
    # Sampler states of step 1 with the coverage of step 2: the records of
    # step 2 (positions 16..32) are read again; the other way round, never.
    out = tmp_path / "check.json"
    codes, logs = spawn(3, "resume", loader_records, killed_run, 4, mode, out)
    assert codes == [0] * 3, logs
    result = json.loads(out.read_text())
    assert not result["ok"]
    step2 = sorted(epoch_order(loader_records)[16:32])
    if mode == "stale_state":
        assert result["repeated_ids"] == step2 and result["missing_ids"] == [], result["message"]
        assert "16 repeated" in result["message"]
    else:
        assert result["missing_ids"] == step2 and result["repeated_ids"] == [], result["message"]
        assert "16 missing" in result["message"]
