"""The sampler's partitioning against torch.utils.data.DistributedSampler.

`urec sample` prints the ids one rank reads. Given unirecord's own order of
the epoch (one rank, no padding), DistributedSampler(shuffle=False) over that
order must pick exactly the same ids for every rank, drop_last or not.
"""
import os
import subprocess

import pytest

torch_data = pytest.importorskip("torch.utils.data")

UREC = os.environ.get("UREC", "urec")


def urec_sample(records, **options):
    args = [UREC, "sample", "--records", str(records)]  # "A,B": a mixture
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is not False:
            args += [flag, str(value)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [int(line) for line in out.split()]


class _Ordered:
    """A dataset whose item i is the i-th id of a given order."""

    def __init__(self, order):
        self.order = order

    def __len__(self):
        return len(self.order)


@pytest.mark.parametrize("order", ["sequential", "shuffle", "block"])
@pytest.mark.parametrize("records", [1, 2, 7, 97, 1000])
@pytest.mark.parametrize("replicas", [1, 2, 3, 8])
@pytest.mark.parametrize("drop_last", [False, True])
def test_partition_matches_distributed_sampler(order, records, replicas, drop_last):
    common = dict(order=order, seed=17, epoch=3, block_size=8, window=16)
    base = urec_sample(records, **common)
    assert sorted(base) == list(range(records))
    counts = set()
    for rank in range(replicas):
        reference = torch_data.DistributedSampler(
            _Ordered(base), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        expected = [base[i] for i in reference]
        got = urec_sample(records, num_shards=replicas, shard_id=rank, drop_last=drop_last, **common)
        assert got == expected, f"rank {rank}"
        counts.add(len(got))
    assert len(counts) == 1, "every rank must read the same number of ids"


def test_same_order_across_runs_and_resume_from_position():
    first = urec_sample(5000, seed=4, epoch=1, num_shards=4, shard_id=2)
    assert first == urec_sample(5000, seed=4, epoch=1, num_shards=4, shard_id=2)
    assert first[300:] == urec_sample(5000, seed=4, epoch=1, num_shards=4, shard_id=2, start=300)
    assert first != urec_sample(5000, seed=4, epoch=2, num_shards=4, shard_id=2)


def test_bad_options_exit_with_usage_error():
    result = subprocess.run([UREC, "sample", "--records", "10", "--num-shards", "2", "--shard-id", "2"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "shard_id 2" in result.stderr


@pytest.mark.parametrize("replicas", [1, 3])
def test_a_mixture_is_partitioned_as_one_dataset_in_its_proportions(replicas):
    """--records A,B --weights: ids number B's records after A's; the one-rank
    order holds each source's share of --epoch-size within binomial error,
    and ranks take DistributedSampler's partition of it."""
    common = dict(records="3000,500", weights="0.25,0.75", epoch_size=4000, seed=5, epoch=2)
    base = urec_sample(**common)
    assert len(base) == 4000 and all(0 <= i < 3500 for i in base)
    second = sum(i >= 3000 for i in base)
    assert abs(second - 3000) < 4 * (4000 * 0.25 * 0.75) ** 0.5  # 4 sigma
    for rank in range(replicas):
        reference = torch_data.DistributedSampler(_Ordered(base), num_replicas=replicas, rank=rank, shuffle=False)
        assert urec_sample(num_shards=replicas, shard_id=rank, **common) == [base[i] for i in reference]
    assert base != urec_sample(**{**common, "epoch": 3})


def test_a_bad_mixture_exits_with_a_usage_error():
    result = subprocess.run([UREC, "sample", "--records", "10,5", "--weights", "1"], capture_output=True, text=True)
    assert result.returncode == 2 and "weight" in result.stderr


def sample_check(*args):
    return subprocess.run([UREC, "sample", "--check", *map(str, args)], capture_output=True, text=True)


@pytest.mark.parametrize("options", [
    ["--records", 90, "--num-shards", 4],
    ["--records", 90, "--num-shards", 4, "--drop-last", "--order", "block", "--block-size", 8],
    ["--records", "90,18", "--weights", "0.6,0.4", "--epoch-size", 200, "--num-shards", 3, "--ids"],
    ["--records", 90, "--num-shards", 4, "--num-workers", 2, "--stop", 5, "--resume-shards", 3, "--ids"],
    ["--records", 1000, "--num-shards", 8, "--stop", 30, "--resume-shards", 5],
])
def test_check_plans_every_rank_and_finds_the_epoch_exact(options):
    result = sample_check("--seed", 5, "--epoch", 2, *options)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: epoch 2: every record exactly once")


def test_check_of_a_wrong_resume_names_the_records():
    # 4 ranks stop after 8 ids each: positions [0, 32) read. Resumed at 28,
    # positions 28..31 are read twice; at 35, 32..34 never.
    order = urec_sample(90, seed=5)
    early = sample_check("--records", 90, "--num-shards", 4, "--seed", 5, "--stop", 8, "--resume-shards", 3,
                         "--resume-position", 28, "--ids")
    assert early.returncode == 1
    assert "4 repeated (ids " + ", ".join(map(str, sorted(order[28:32]))) + ")" in early.stderr, early.stderr
    late = sample_check("--records", 90, "--num-shards", 4, "--seed", 5, "--stop", 8, "--resume-shards", 3,
                        "--resume-position", 35)
    assert late.returncode == 1 and "3 missing, 0 repeated" in late.stderr, late.stderr


@pytest.mark.parametrize("args", [["--stop", 3], ["--resume-position", 3], ["--start", 5, "--resume-shards", 2]])
def test_check_options_out_of_place_are_usage_errors(args):
    with_check = sample_check("--records", 20, *args)
    assert with_check.returncode == 2, with_check.stderr
    without = subprocess.run([UREC, "sample", "--records", "20", "--ids"], capture_output=True, text=True)
    assert without.returncode == 2 and "--check" in without.stderr
