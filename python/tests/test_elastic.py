"""Resume on another number of ranks (real torch.distributed ranks over gloo,
started with torch.multiprocessing) and weighted mixing of datasets."""
import json
import math
import socket
from collections import Counter
from pathlib import Path

import pytest

import unirecord
from urec_fixtures import image_folder, image_records, loader_records  # noqa: F401 (pytest fixtures)

torch = pytest.importorskip("torch")

N = 90  # records of loader_records
GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "data" / "golden" / "sampler"
CROP = unirecord.CenterCrop(16, resize=16)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(world, records, batch_size, phase, batches, state_hex, out):
    import elastic_worker

    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not available")
    args = (world, free_port(), str(records), batch_size, phase, batches, state_hex, str(out))
    # fork: the ranks start with torch and unirecord already imported (spawn
    # would import them again in each, seconds apiece on a busy machine).
    torch.multiprocessing.start_processes(elastic_worker.run, args=args, nprocs=world, join=True, start_method="fork")
    return json.loads(out.read_text())


def epoch_order(records, epoch):
    """The epoch's whole order: one rank, batch 1, sequence of ids."""
    loader = unirecord.Loader(records, 1, shuffle=True, seed=5, threads=1, transform=CROP,
                              sampler=unirecord.Sampler(num_shards=1, shard_id=0),
                              fields=unirecord.Fields(return_ids=True))
    loader.set_epoch(epoch)
    return [int(ids[0]) for _images, _labels, ids in loader]


@pytest.mark.parametrize("world, batch, batches, new_world, new_batch", [(4, 8, 2, 2, 5), (2, 6, 3, 3, 4)])
def test_resume_on_another_number_of_ranks_reads_the_epoch_exactly(loader_records, tmp_path, world, batch, batches,
                                                                   new_world, new_batch):
    stopped = spawn(world, loader_records, batch, "stop", batches, "", tmp_path / "stop.json")
    # Ranks step in lockstep: every rank's state is the same, at world * batch * batches.
    assert len({r["state"] for r in stopped}) == 1
    consumed = world * batch * batches
    assert {r["position"] for r in stopped} == {consumed}
    resumed = spawn(new_world, loader_records, new_batch, "resume", 0, stopped[1]["state"], tmp_path / "resume.json")
    before = [i for r in stopped for i in r["ids"]]
    after = [i for r in resumed for i in r["ids"]]
    order = epoch_order(loader_records, 2)
    # Before: the epoch's first positions; after: the rest, each once, plus
    # the padding of the new partition (ids from the start of the epoch).
    assert sorted(before) == sorted(order[:consumed])
    rest = N - consumed
    padded = -(-rest // new_world) * new_world
    assert len(after) == padded
    assert all(len(r["ids"]) == padded // new_world for r in resumed)  # equal on every rank
    counts = Counter(before + after)
    assert set(counts) == set(range(N))
    extra = Counter(after) - Counter(order[consumed:])
    assert sum(extra.values()) == padded - rest and set(extra) <= set(order[: padded - rest])
    # The interleaving is DistributedSampler's over the rest of the order.
    rest_order = (order[consumed:] + order)[:padded]
    for r in resumed:
        assert r["ids"] == rest_order[r["rank"]::new_world]
    assert {r["position"] for r in resumed} == {N}  # the whole epoch consumed
    # len(): the batches the new ranks needed for the part before, rounded up, plus theirs.
    per = new_world * new_batch
    assert {r["len"] for r in resumed} == {-(-consumed // per) + -(-(padded // new_world) // new_batch)}


def test_a_version_1_state_still_restores(loader_records):
    """A state the previous sampler version wrote (tests/data/golden/README.md):
    rank 1 of 4, seed 4, epoch 1, one batch of 8 read."""
    state = (GOLDEN / "sampler_state_v1_n90.bin").read_bytes()
    kwargs = dict(fields=unirecord.Fields(return_ids=True), threads=1, transform=CROP,
                  sampler=unirecord.Sampler(num_shards=4, shard_id=1))
    resumed = unirecord.Loader(loader_records, 8, shuffle=True, **kwargs)  # seed 0: the state has 4
    resumed.load_state_dict({"sampler_state": state, "epoch": 1, "position": 8, "seed": 4})
    rest = [i for _images, _labels, ids in resumed for i in ids.tolist()]
    assert rest[:5] == [5, 58, 26, 43, 81]  # what the build that wrote it read next
    whole = unirecord.Loader(loader_records, 8, shuffle=True, seed=4, **kwargs)
    whole.set_epoch(1)
    assert rest == [i for _images, _labels, ids in whole for i in ids.tolist()][8:]
    # Version 1 belongs to its partition: another number of ranks refuses it.
    with pytest.raises(ValueError, match="version 1"):
        unirecord.Loader(loader_records, 8, shuffle=True, threads=1, transform=CROP,
                         sampler=unirecord.Sampler(num_shards=2, shard_id=0),
                         fields=unirecord.Fields(return_ids=True)).load_state_dict({"sampler_state": state})


def mixed(loader_records, image_records, seed=3, **sampler):
    """The two datasets mixed 70/30; `sampler`: Sampler attributes over that."""
    sampler = unirecord.Sampler(**dict(dict(weights=[0.7, 0.3], epoch_size=200, num_shards=1, shard_id=0), **sampler))
    return unirecord.Loader([loader_records, image_records], 10, shuffle=True, seed=seed, threads=1, transform=CROP,
                            sampler=sampler, fields=unirecord.Fields(return_ids=True))


def epoch_ids(loader):
    return [i for _images, _labels, ids in loader for i in ids.tolist()]


def test_mixing_proportions_within_binomial_error(loader_records, image_records):
    loader = mixed(loader_records, image_records)
    assert len(loader) == 20
    for epoch in range(3):
        loader.set_epoch(epoch)
        ids = epoch_ids(loader)
        # Ids number the datasets one after another: loader_records' 90, then image_records' 18.
        assert len(ids) == 200 and all(0 <= i < N + 18 for i in ids)
        from_a = [i < N for i in ids]
        assert sum(from_a) == 140  # exactly 0.7 of the epoch
        # Any stretch of the epoch is a sample of those proportions: the first
        # half within 4 binomial standard deviations of 0.7.
        share = sum(from_a[:100]) / 100
        assert abs(share - 0.7) <= 4 * math.sqrt(0.7 * 0.3 / 100)
        # The small dataset (60 of 18 records) is repeated evenly; the large
        # one (140 of 90) has each record once or twice.
        counts_b = Counter(i for i in ids if i >= N)
        assert set(counts_b) == set(range(N, N + 18)) and set(counts_b.values()) <= {3, 4}
        assert set(Counter(i for i in ids if i < N).values()) <= {1, 2}


def test_mixed_batches_decode_each_dataset_from_its_own_files(loader_records, image_records):
    loader = mixed(loader_records, image_records)
    a, b = unirecord.Dataset(loader_records), unirecord.Dataset(image_records)
    images, labels, ids = next(iter(loader))
    for k, i in enumerate(ids.tolist()):
        record = a[i] if i < N else b[i - N]
        assert labels[k].item() == record["label"]


def test_mixing_is_deterministic_and_resumes_mid_epoch(loader_records, image_records):
    first = mixed(loader_records, image_records)
    first.set_epoch(1)
    reference = epoch_ids(first)
    again = mixed(loader_records, image_records)
    again.set_epoch(1)
    assert epoch_ids(again) == reference
    other_seed = mixed(loader_records, image_records, seed=4)
    other_seed.set_epoch(1)
    assert epoch_ids(other_seed) != reference
    first.set_epoch(2)
    assert epoch_ids(first) != reference
    # Resume after 3 batches: exactly the rest.
    part = mixed(loader_records, image_records)
    part.set_epoch(1)
    head = [i for _ in range(3) for i in part.next_batch()[2].tolist()]
    state = part.state_dict()
    assert state["position"] == 30
    resumed = mixed(loader_records, image_records)
    resumed.load_state_dict(state)
    assert head + epoch_ids(resumed) == reference
    # On 3 ranks (batch 7): the rest once each, plus the padding.
    after = []
    for rank in range(3):
        rank_loader = mixed(loader_records, image_records, num_shards=3, shard_id=rank)
        rank_loader.load_state_dict(state)
        after += epoch_ids(rank_loader)
    assert len(after) == 171 and Counter(after) - Counter(reference[30:]) <= Counter(reference[:1])
    # Another mixture's state is refused.
    with pytest.raises(ValueError, match="mixture"):
        mixed(loader_records, image_records, weights=[0.5, 0.5]).load_state_dict(state)


def test_mixed_ranks_partition_the_epoch_like_one_dataset(loader_records, image_records):
    whole = mixed(loader_records, image_records)
    reference = epoch_ids(whole)
    ranks = [epoch_ids(mixed(loader_records, image_records, num_shards=3, shard_id=r)) for r in range(3)]
    padded = (reference + reference)[:201]
    for r in range(3):
        assert ranks[r] == padded[r::3]


def test_mixing_options_are_checked(loader_records, image_records, tmp_path):
    with pytest.raises(ValueError, match="2 datasets|weights"):
        mixed(loader_records, image_records, weights=[1, 2, 3])
    with pytest.raises(ValueError, match="finite number >= 0"):
        mixed(loader_records, image_records, weights=[1, -1])
    with pytest.raises(TypeError, match="weights"):
        mixed(loader_records, image_records, weights="0.7")
    with pytest.raises(ValueError, match="select records of one dataset"):
        mixed(loader_records, image_records, subset=[1, 2])
    with pytest.raises(ValueError, match="at least one dataset"):
        unirecord.Loader([], 4, shuffle=True)
    # A dataset whose label is another type: refused, naming the field and both types.
    schema = unirecord.Schema([unirecord.Field("image", "bytes"), unirecord.Field("label", "int32")])
    first = unirecord.Dataset(loader_records)[0]
    with unirecord.Writer(tmp_path, schema, "int32", sync=False) as w:
        w.write({"image": first["image"], "label": 1})
    with pytest.raises(ValueError, match=r"field 'label'.*int64.*int32"):
        unirecord.Loader([loader_records, tmp_path], 4, shuffle=True, threads=1, transform=CROP,
                         sampler=unirecord.Sampler(num_shards=1, shard_id=0))
    # epoch_size alone resamples one dataset.
    one = unirecord.Loader(loader_records, 10, shuffle=True, threads=1, transform=CROP,
                           sampler=unirecord.Sampler(epoch_size=25, num_shards=1, shard_id=0),
                           fields=unirecord.Fields(return_ids=True))
    ids = epoch_ids(one)
    assert len(ids) == 25 and len(set(ids)) == 25
