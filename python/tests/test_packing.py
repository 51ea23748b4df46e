"""Loader(pack=unirecord.Pack(...)): documents packed into rows natively,
checked against a packer written plainly here (the rows, segment ids,
positions, cu_seqlens and ids of every batch, for every strategy), for every
token of the epoch once, exact resume from any batch, ranks that partition
documents, and hostile documents and options."""
import json
import os
import pathlib
import pickle
import shutil
import struct
import sys
from collections import Counter

import numpy as np
import pytest

import unirecord

torch = pytest.importorskip("torch")
import cuda_check  # noqa: E402  (python/tests)

SEQ_LEN = 64
DOCS = 600


def lengths(seed=1, n=DOCS):
    """Log-normal lengths around a fifth of a row, a tail past several rows,
    and empty documents."""
    rng = np.random.default_rng(seed)
    out = np.minimum(rng.lognormal(np.log(SEQ_LEN / 5), 1.0, n).astype(int), 10 * SEQ_LEN)
    out[::97] = 0
    out[5] = 9 * SEQ_LEN + 3  # longer than many rows
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """(path, documents): tokens int32 in 1..4999 and a uint8 loss mask per document."""
    path = tmp_path_factory.mktemp("packing")
    rng = np.random.default_rng(2)
    schema = unirecord.Schema({"tokens": unirecord.Field("tokens", "int32", shape=(-1,)),
                               "mask": unirecord.Field("mask", "uint8", shape=(-1,)),
                               "text": "string"})
    with unirecord.Writer(path, schema, "docs", num_shards=3, sync=False) as w:
        for i, n in enumerate(lengths()):
            tokens = rng.integers(1, 5000, n).astype(np.int32)
            mask = rng.integers(0, 2, n).astype(np.uint8)
            w.write({"tokens": tokens, "mask": mask, "text": f"doc {i}"})
    # By record id (the writer spreads the records over its shards).
    dataset = unirecord.Dataset(path)
    docs = [(np.array(r["tokens"]), np.array(r["mask"])) for r in (dataset[i] for i in range(len(dataset)))]
    assert sorted(len(t) for t, _ in docs) == sorted(lengths())
    return path, docs


def document_order(path, window, field="text", **sampler):
    """The rank's documents in loader order, window by window (a plain
    Loader over the same sampler options: the order packing reads)."""
    loader = unirecord.Loader(path, window, True, threads=1,
                              fields=unirecord.Fields([field], image_field=None, label_field=None), **sampler)
    return [batch["id"].tolist() for batch in loader]


def reference_rows(windows, lengths_of, strategy, overlong="split"):
    """Rows of (id, first token, length) pieces, packed plainly."""
    rows = []
    if strategy == "concat":
        row, used = [], 0
        for window in windows:
            for doc in window:
                start, left = 0, lengths_of(doc)
                while left > 0:
                    take = min(SEQ_LEN - used, left)
                    row.append((doc, start, take))
                    used, start, left = used + take, start + take, left - take
                    if used == SEQ_LEN:
                        rows.append(row)
                        row, used = [], 0
        if row:
            rows.append(row)
        return rows
    for window in windows:
        items = []
        for doc in window:
            n = lengths_of(doc)
            if n <= SEQ_LEN:
                if n:
                    items.append((doc, 0, n))
            elif overlong == "split":
                items += [(doc, s, min(SEQ_LEN, n - s)) for s in range(0, n, SEQ_LEN)]
            elif overlong == "truncate":
                items.append((doc, 0, SEQ_LEN))
        if strategy == "best_fit":
            items.sort(key=lambda item: -item[2])  # stable: equal lengths keep their order
        window_rows, room = [], []
        for item in items:
            fits = [r for r in range(len(window_rows)) if room[r] >= item[2]]
            if not fits:
                window_rows.append([])
                room.append(SEQ_LEN)
                fits = [len(window_rows) - 1]
            r = fits[0] if strategy == "first_fit" else min(fits, key=lambda r: (room[r], r))
            window_rows[r].append(item)
            room[r] -= item[2]
        rows += window_rows
    return rows


def reference_batches(rows, docs, batch_size, eos=None, pad=0):
    """The batches those rows make: what the Loader must return."""
    out = []
    for b in range(0, len(rows), batch_size):
        chunk = rows[b:b + batch_size]
        tokens = np.full((len(chunk), SEQ_LEN), pad, np.int32)
        mask = np.full((len(chunk), SEQ_LEN), pad, np.uint8)
        segments = np.zeros((len(chunk), SEQ_LEN), np.int32)
        positions = np.zeros((len(chunk), SEQ_LEN), np.int32)
        cu, ids = [0], []
        for r, row in enumerate(chunk):
            at = 0
            for s, (doc, first, n) in enumerate(row):
                t, m = docs[doc]
                if eos is not None:
                    t, m = np.append(t, np.int32(eos)), np.append(m, np.uint8(pad))
                tokens[r, at:at + n] = t[first:first + n]
                mask[r, at:at + n] = m[first:first + n]
                segments[r, at:at + n] = s + 1
                positions[r, at:at + n] = np.arange(n)
                cu.append(cu[-1] + n)
                ids.append(doc)
                at += n
        out.append(dict(tokens=tokens, mask=mask, segment_ids=segments, positions=positions,
                        cu_seqlens=np.array(cu, np.int32), id=np.array(ids, np.int64),
                        max_seqlen=max(np.diff(cu)) if ids else 0))
    return out


def packing_loader(path, strategy, batch_size=4, window=32, **kwargs):
    pack = unirecord.Pack(SEQ_LEN, strategy=strategy, window=window,
                          **{k: kwargs.pop(k) for k in ("overlong", "eos", "pad_value") if k in kwargs})
    return unirecord.Loader(path, batch_size, True, pack=pack, threads=2, seed=11,
                            fields=unirecord.Fields(["tokens", "mask"], image_field=None, label_field=None), **kwargs)


def as_numpy(batch):
    return {k: (v if isinstance(v, int) else v.numpy()) for k, v in batch.items()}


def assert_batches_equal(got, want):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert set(g) == set(w), k
        for name in w:
            np.testing.assert_array_equal(g[name], w[name], err_msg=f"batch {k}, {name}")


@pytest.mark.parametrize("strategy", ["concat", "first_fit", "best_fit"])
def test_batches_equal_a_plain_python_packer(corpus, strategy):
    path, docs = corpus
    loader = packing_loader(path, strategy)
    got = [as_numpy(b) for b in loader]
    windows = document_order(path, 32, seed=11)
    want = reference_batches(reference_rows(windows, lambda d: len(docs[d][0]), strategy), docs, 4)
    assert_batches_equal(got, want)
    stats = loader.stats()
    assert stats["documents"] == DOCS and stats["empty"] == sum(len(t) == 0 for t, _ in docs)
    assert stats["tokens"] == sum(len(t) for t, _ in docs)
    assert stats["tokens"] + stats["padding"] == stats["samples"] * SEQ_LEN


@pytest.mark.parametrize("strategy,overlong", [("first_fit", "truncate"), ("best_fit", "drop")])
def test_overlong_documents_truncated_or_dropped_as_the_plain_packer(corpus, strategy, overlong):
    path, docs = corpus
    loader = packing_loader(path, strategy, overlong=overlong)
    got = [as_numpy(b) for b in loader]
    windows = document_order(path, 32, seed=11)
    want = reference_batches(reference_rows(windows, lambda d: len(docs[d][0]), strategy, overlong), docs, 4)
    assert_batches_equal(got, want)
    overlong_docs = [t for t, _ in docs if len(t) > SEQ_LEN]
    assert loader.stats()["overlong"] == len(overlong_docs)
    cut = sum(len(t) - SEQ_LEN for t in overlong_docs) if overlong == "truncate" else sum(map(len, overlong_docs))
    assert loader.stats()["cut_tokens"] == cut
    assert loader.stats()["dropped"] == (len(overlong_docs) if overlong == "drop" else 0)


def test_eos_and_pad_value(corpus):
    path, docs = corpus
    got = [as_numpy(b) for b in packing_loader(path, "concat", eos=-1, pad_value=0)]
    windows = document_order(path, 32, seed=11)
    want = reference_batches(reference_rows(windows, lambda d: len(docs[d][0]) + 1, "concat"), docs, 4, eos=-1)
    assert_batches_equal(got, want)
    assert sum(int((b["tokens"] == -1).sum()) for b in got) == DOCS


@pytest.mark.parametrize("strategy", ["concat", "best_fit"])
@pytest.mark.parametrize("world", [1, 3])
def test_every_token_once_per_epoch_over_the_ranks(corpus, strategy, world):
    path, docs = corpus
    seen = {}
    for rank in range(world):
        sampler = unirecord.Sampler(num_shards=world, shard_id=rank, drop_last=True)
        for batch in packing_loader(path, strategy, sampler=sampler):
            flat = batch["tokens"][batch["segment_ids"] != 0].numpy()
            cu = batch["cu_seqlens"].numpy()
            for s, doc in enumerate(batch["id"].tolist()):
                seen.setdefault(doc, []).append(flat[cu[s]:cu[s + 1]])
    kept = (DOCS // world) * world  # sampler_drop_last: the order's last DOCS % world positions are not read
    assert len([d for d in range(DOCS) if len(docs[d][0])]) - len(seen) <= DOCS - kept
    for doc, pieces in seen.items():
        assert sorted(np.concatenate(pieces).tolist()) == sorted(docs[doc][0].tolist()), doc


@pytest.mark.parametrize("strategy", ["concat", "first_fit", "best_fit"])
def test_resume_from_any_batch_gives_the_uninterrupted_rows(corpus, strategy):
    path, _ = corpus
    loader = packing_loader(path, strategy)
    states, whole = [], []
    while True:
        states.append(loader.state_dict())
        batch = loader.next_batch()
        if batch is None:
            break
        whole.append(as_numpy(batch))
    assert set(states[0]) == {"pack_state", "seed", "epoch", "coverage"} and len(states[0]["pack_state"]) == 88
    for k in (1, 2, len(whole) // 2, len(whole) - 1):
        resumed = packing_loader(path, strategy)
        resumed.load_state_dict(states[k])
        assert_batches_equal([as_numpy(b) for b in resumed], whole[k:])


ELASTIC_DOCS = 240  # a multiple of the old rank counts: no padding before the resume


@pytest.fixture(scope="module")
def numbered_corpus(tmp_path_factory):
    """(path, lengths): document i's token j is 1000 i + j + 1, so a delivered
    token names its (document, token) pair."""
    path = tmp_path_factory.mktemp("numbered")
    n = np.minimum(np.random.default_rng(3).lognormal(np.log(24), 1.0, ELASTIC_DOCS).astype(int), 200)
    n[::31] = 0
    schema = unirecord.Schema({"tokens": unirecord.Field("tokens", "int32", shape=(-1,))})
    with unirecord.Writer(path, schema, "docs", num_shards=2, sync=False) as w:
        for i, length in enumerate(n):
            w.write({"tokens": (1000 * i + np.arange(length) + 1).astype(np.int32)})
    return path, n


def run_ranks(world, *args):
    import pack_elastic_worker
    from test_elastic import free_port

    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not available")
    out = args[-1]
    # fork: the ranks start with torch and unirecord imported (see test_elastic.py).
    torch.multiprocessing.start_processes(pack_elastic_worker.run, args=(world, free_port(), *args), nprocs=world,
                                          join=True, start_method="fork")
    return json.loads(pathlib.Path(out).read_text())


@pytest.mark.parametrize("strategy", ["concat", "best_fit"])
@pytest.mark.parametrize("world, steps, new_world", [(3, 4, 2), (2, 3, 3), (4, 2, 1)])
def test_elastic_resume_over_torch_distributed_delivers_every_token_once(numbered_corpus, tmp_path, strategy, world,
                                                                         steps, new_world):
    import pack_elastic_worker

    path, n = numbered_corpus
    states = tmp_path / "states.pickle"
    stopped = run_ranks(world, str(path), strategy, "stop", steps, str(states), str(tmp_path / "stop.json"))
    resumed = run_ranks(new_world, str(path), strategy, "resume", 0, str(states), str(tmp_path / "resume.json"))
    delivered = Counter(tuple(t) for r in stopped + resumed for t in r["delivered"])
    # The epoch: every position of the order once, then the new ranks'
    # padding (DistributedSampler's) from the epoch's start. The combined
    # state's position (bytes 32..40, SPEC.md 13.1) is where they partition from.
    with open(states, "rb") as f:
        gathered = pickle.load(f)
    loader = pack_elastic_worker.loader_for(path, strategy, sampler=unirecord.Sampler(num_shards=new_world, shard_id=0))
    combined = loader._core.combine(gathered)["pack_state"]
    g = struct.unpack_from("<Q", combined, 32)[0]
    order = [i for window in document_order(path, pack_elastic_worker.WINDOW, field="tokens", seed=7) for i in window]
    padded = g + -(-(ELASTIC_DOCS - g) // new_world) * new_world
    epoch = Counter((d, j) for p in range(padded) for d in [order[p % ELASTIC_DOCS]] for j in range(n[d]))
    assert delivered == epoch
    assert sum(len(r["delivered"]) for r in stopped) > 0 and sum(len(r["delivered"]) for r in resumed) > 0


def test_elastic_resume_refuses_an_incomplete_or_mixed_list(numbered_corpus):
    from pack_elastic_worker import loader_for

    path, _ = numbered_corpus
    ranks = [loader_for(path, "concat", sampler=unirecord.Sampler(num_shards=3, shard_id=r)) for r in range(3)]
    for loader in ranks:
        loader.next_batch()
    states = [loader.state_dict() for loader in ranks]
    new = loader_for(path, "concat", sampler=unirecord.Sampler(num_shards=2, shard_id=0))
    with pytest.raises(ValueError, match="2 states of 3 ranks; every rank's state is needed"):
        new.load_state_dict(states[:2])
    with pytest.raises(ValueError, match="give each rank's state once"):
        new.load_state_dict([states[0], states[0], states[1]])
    with pytest.raises(ValueError, match="combine the states of all ranks"):
        new.load_state_dict(states[0])
    with pytest.raises(TypeError, match="state_dict\\(\\) returned"):
        new.load_state_dict([states[0], b"x", states[2]])
    with pytest.raises(ValueError, match="no 'sampler_state'"):  # a plain Loader combines its own states only
        unirecord.Loader(path, 4, True,
                         fields=unirecord.Fields(["tokens"], image_field=None, label_field=None)).load_state_dict(states)
    new.load_state_dict(states)  # the list itself restores
    assert new.next_batch() is not None


def test_a_state_restores_only_on_its_rank_and_options(corpus):
    path, _ = corpus
    loader = packing_loader(path, "best_fit")
    next(iter(loader))
    state = loader.state_dict()
    with pytest.raises(ValueError, match="taken on rank 0 of 1, restored on rank 1 of 2"):
        packing_loader(path, "best_fit", sampler=unirecord.Sampler(num_shards=2, shard_id=1)).load_state_dict(state)
    with pytest.raises(ValueError, match="other packing options"):
        packing_loader(path, "first_fit").load_state_dict(state)
    with pytest.raises(ValueError, match="pack_state"):
        packing_loader(path, "best_fit").load_state_dict({"sampler_state": b"x"})


def test_hostile_options_and_documents(corpus, tmp_path):
    path, _ = corpus
    with pytest.raises(TypeError, match="has no len"):
        len(packing_loader(path, "concat"))
    with pytest.raises(TypeError, match="pack must be a unirecord.Pack"):
        unirecord.Loader(path, 4, True, pack={"seq_len": 8}, fields=unirecord.Fields(["tokens"], image_field=None))
    with pytest.raises(ValueError, match="unknown packing strategy 'greedy'"):
        unirecord.Loader(path, 4, True, pack=unirecord.Pack(8, strategy="greedy"),
                         fields=unirecord.Fields(["tokens"], image_field=None))
    with pytest.raises(ValueError, match="seq_len"):
        unirecord.Loader(path, 4, True, pack=unirecord.Pack(0), fields=unirecord.Fields(["tokens"], image_field=None))
    with pytest.raises(ValueError, match="field 'text' is"):
        unirecord.Loader(path, 4, True, pack=unirecord.Pack(8), fields=unirecord.Fields(["text"], image_field=None))
    # A 2-D token field; fields of unequal lengths in one record.
    schema = unirecord.Schema({"tokens": unirecord.Field("tokens", "int64", shape=(-1, 2)),
                               "flat": unirecord.Field("flat", "int64", shape=(-1,)),
                               "mask": unirecord.Field("mask", "uint8", shape=(-1,))})
    with unirecord.Writer(tmp_path / "bad", schema, "bad", sync=False) as w:
        w.write({"tokens": np.zeros((3, 2), np.int64), "flat": [1, 2, 3], "mask": [1, 1, 1]})
        w.write({"tokens": np.zeros((1, 2), np.int64), "flat": [4, 5], "mask": [1]})
    with pytest.raises(ValueError, match=r"field 'tokens' is .*shape \[-1\]"):
        unirecord.Loader(tmp_path / "bad", 2, False, pack=unirecord.Pack(4),
                         fields=unirecord.Fields(["tokens"], image_field=None))
    loader = unirecord.Loader(tmp_path / "bad", 2, False, pack=unirecord.Pack(4),
                              fields=unirecord.Fields(["flat", "mask"], image_field=None))
    with pytest.raises(ValueError, match="pack: record 1: field 'mask' has 1 values, 'flat' 2"):
        list(loader)
    # Only empty documents: no rows, every one counted.
    schema = unirecord.Schema({"tokens": unirecord.Field("tokens", "int32", shape=(-1,))})
    with unirecord.Writer(tmp_path / "empty", schema, "empty", sync=False) as w:
        for _ in range(10):
            w.write({"tokens": np.zeros(0, np.int32)})
    loader = unirecord.Loader(tmp_path / "empty", 2, True, pack=unirecord.Pack(4, window=3),
                              fields=unirecord.Fields(["tokens"], image_field=None))
    assert list(loader) == []
    assert loader.stats()["empty"] == 10 and loader.stats()["documents"] == 10


def test_a_remote_dataset_packs_as_the_local_one(corpus, tmp_path):
    """Over HTTP (nginx on 127.0.0.1, stopped by the test): the same batches."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
    from remote_servers import Nginx

    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        os.environ.pop(name, None)  # requests to 127.0.0.1 must not leave through a proxy
    path, _ = corpus
    www = tmp_path / "www"
    shutil.copytree(path, www / "ds")
    nginx = Nginx(www)
    try:
        remote = unirecord.Loader(f"http://127.0.0.1:{nginx.port}/ds/", 4, True, threads=2, seed=11,
                                  pack=unirecord.Pack(SEQ_LEN, strategy="best_fit", window=32),
                                  fields=unirecord.Fields(["tokens", "mask"], image_field=None, label_field=None),
                                  remote=unirecord.Remote(cache_dir=tmp_path / "cache"))
        assert_batches_equal([as_numpy(b) for b in remote], [as_numpy(b) for b in packing_loader(path, "best_fit")])
        # Weights in tokens count a remote dataset's tokens from its index alone.
        mixed = [unirecord.Loader([first, path], 4, True, threads=2, seed=11,
                                  pack=unirecord.Pack(SEQ_LEN, window=32, weight_unit="tokens"),
                                  sampler=unirecord.Sampler(weights=[0.8, 0.2], epoch_size=900),
                                  fields=unirecord.Fields(["tokens", "mask"], image_field=None, label_field=None),
                                  remote=unirecord.Remote(cache_dir=tmp_path / "cache"))
                 for first in (f"http://127.0.0.1:{nginx.port}/ds/", path)]
        assert_batches_equal([as_numpy(b) for b in mixed[0]], [as_numpy(b) for b in mixed[1]])
    finally:
        nginx.stop()


@pytest.mark.parametrize("device", cuda_check.DEVICES)
def test_packed_batches_on_the_device_equal_the_host_batches(corpus, device):
    """device= has the native loader upload each packed batch there
    (bench/run_gpu.sh runs the cuda case on a GPU; the emulated device is
    the host device, in ordinary memory)."""
    cuda_check.require(device)
    path, _ = corpus
    on_device = packing_loader(path, "best_fit", device=device)
    expected = "cpu" if device == "emulated" else "cuda"
    got = []
    for batch in on_device:
        assert all(v.device.type == expected for k, v in batch.items() if k != "max_seqlen")
        # Copies: a device batch's tensors hold one of the loader's prefetch + 1 buffers there.
        got.append({k: (v if isinstance(v, int) else v.cpu().numpy().copy()) for k, v in batch.items()})
    assert_batches_equal(got, [as_numpy(b) for b in packing_loader(path, "best_fit")])


def write_lengths(path, lengths_):
    schema = unirecord.Schema({"tokens": unirecord.Field("tokens", "int32", shape=(-1,))})
    with unirecord.Writer(path, schema, "docs", sync=False) as w:
        for n in lengths_:
            w.write({"tokens": np.full(n, 3, np.int32)})
    return str(path)


def reference_counts(token_weights, lengths_per_dataset, epoch_size):
    """Documents per dataset for weights in tokens, written plainly: document
    weights w_i * n_i / T_i, cumulative quotas of the epoch rounded down."""
    weights = [w * len(ls) / sum(ls) for w, ls in zip(token_weights, lengths_per_dataset)]
    counts, before, cumulative = [], 0, 0.0
    for i, w in enumerate(weights):
        cumulative += w
        end = epoch_size if i + 1 == len(weights) else int(np.floor(epoch_size * cumulative / sum(weights)))
        counts.append(end - before)
        before = end
    return counts


@pytest.mark.parametrize("strategy", ["concat", "best_fit"])
def test_weights_in_tokens_give_the_token_shares(tmp_path, strategy):
    # Short documents against long ones: 70/30 in documents would be about
    # 30/70 in tokens. Lengths up to a row, so a fit strategy's segments are documents.
    rng = np.random.default_rng(4)
    short = rng.integers(1, SEQ_LEN // 8, 300).tolist()
    long_ = rng.integers(SEQ_LEN // 2, SEQ_LEN, 200).tolist()
    paths = [write_lengths(tmp_path / "short", short), write_lengths(tmp_path / "long", long_)]

    def shares(weight_unit):
        loader = unirecord.Loader(paths, 4, True, seed=2, fields=unirecord.Fields(["tokens"], image_field=None),
                                  sampler=unirecord.Sampler(weights=[0.7, 0.3], epoch_size=3000),
                                  pack=unirecord.Pack(SEQ_LEN, strategy=strategy, window=32,
                                                      weight_unit=weight_unit))
        tokens, segments = [0, 0], [0, 0]
        for batch in loader:
            cu = batch["cu_seqlens"].numpy()
            for k, doc in enumerate(batch["id"].tolist()):
                source = 0 if doc < len(short) else 1
                tokens[source] += int(cu[k + 1] - cu[k])
                segments[source] += 1
        return tokens, segments

    tokens, segments = shares("tokens")
    total = sum(tokens)
    # Several passes of each dataset and a part of one: within 1 % of the weights.
    assert abs(tokens[0] / total - 0.7) < 0.01 and abs(tokens[1] / total - 0.3) < 0.01, tokens
    if strategy == "best_fit":
        assert segments == reference_counts([0.7, 0.3], [short, long_], 3000)
    by_documents, _ = shares("documents")
    assert by_documents[0] / sum(by_documents) < 0.5
    with pytest.raises(ValueError, match="unknown weight unit 'bytes'"):
        unirecord.Loader(paths, 4, True, pack=unirecord.Pack(SEQ_LEN, weight_unit="bytes"),
                         sampler=unirecord.Sampler(weights=[1, 1]),
                         fields=unirecord.Fields(["tokens"], image_field=None, label_field=None))
