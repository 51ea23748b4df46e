"""unirecord.write_dataset: a JSON Lines text corpus (generated here, from a
fixed seed) tokenised by a toy whitespace tokenizer written here, in this
process, in local processes and on a Dask cluster: byte-identical files,
exactly the tokens of a plain Python loop, and errors that name the input."""
import functools
import json
import random
import time
import traceback

import numpy as np
import pytest

import unirecord

SCHEMA = {"tokens": unirecord.Field("tokens", "int32", shape=(-1,)), "text": "string"}
SHARDS = 7

# The toy tokenizer: a word of VOCABULARY is 3 + its index, any other word
# its UTF-8 bytes (3 + len(VOCABULARY) + byte); 1 and 2 begin and end a document.
VOCABULARY = ["the", "a", "record", "shard", "token", "loader", "dataset", "of", "to", "and", "in", "is", "batch",
              "epoch", "model", "write", "read", "file", "index", "seed"]
WORD_IDS = {word: 3 + k for k, word in enumerate(VOCABULARY)}
BOS, EOS = 1, 2


def tokenize_text(text):
    ids = [BOS]
    for word in text.split():
        if word in WORD_IDS:
            ids.append(WORD_IDS[word])
        else:
            ids.extend(3 + len(VOCABULARY) + b for b in word.encode("utf-8"))
    ids.append(EOS)
    return np.array(ids, dtype=np.int32)


def tokenize(line):
    """One sample per line."""
    text = json.loads(line)["text"]
    return {"tokens": tokenize_text(text), "text": text}


def sentences(line):
    """Zero samples for an empty text, else one per sentence ('.'), as a generator."""
    for sentence in json.loads(line)["text"].split("."):
        if sentence.strip():
            yield {"tokens": tokenize_text(sentence), "text": sentence.strip()}


class TokenizerError(Exception):
    pass


def tokenize_failing_at(index, line):
    if json.loads(line)["id"] == index:
        raise TokenizerError("cannot tokenise document %d" % index)
    return tokenize(line)


def tokenize_wrongly_at(index, wrong, line):
    sample = tokenize(line)
    if json.loads(line)["id"] == index:
        if wrong == "dtype":
            sample["tokens"] = sample["tokens"] + 0.5
        else:
            sample["label"] = 3
    return [sample]


def nothing(line):
    return []


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A JSON Lines corpus of 300 documents: random words, one empty text,
    a few very long texts (tens of thousands of words), some non-ASCII."""
    rng = random.Random(34)
    words = VOCABULARY + ["unknown", "zürich", "naïve", "x", "tokenizer"]
    lines = []
    for k in range(300):
        if k == 5:
            text = ""
        elif k in (40, 41, 250):
            text = " ".join(rng.choice(words) for _ in range(rng.randrange(20000, 40000)))
        else:
            text = ". ".join(" ".join(rng.choice(words) for _ in range(rng.randrange(1, 30)))
                             for _ in range(rng.randrange(1, 5)))
        lines.append(json.dumps({"id": k, "text": text}, ensure_ascii=False))
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path.read_text(encoding="utf-8").splitlines()


def files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def write(fn, inputs, out, **kwargs):
    kwargs = dict(dict(schema=SCHEMA, num_shards=SHARDS, name="corpus", sync=False, progress=False), **kwargs)
    return unirecord.write_dataset(fn, inputs, out, **kwargs)


@pytest.fixture(scope="module")
def reference(corpus, tmp_path_factory):
    """The corpus written in this process, one shard per task."""
    out = tmp_path_factory.mktemp("reference")
    report = write(tokenize, corpus, out)
    return out, report


def test_reads_back_the_tokens_of_a_plain_loop(corpus, reference):
    out, report = reference
    expected = [tokenize(line) for line in corpus]
    assert report["written"] == report["records"] == len(corpus) == report["inputs"]
    assert report["name"] == "corpus" and report["shards"] == SHARDS and report["tasks"] == SHARDS
    assert report["uuid"] and report["manifest_path"] == str(out / "corpus.uset")
    ds = unirecord.Dataset(str(out / "corpus.uset"))
    assert len(ds) == len(corpus) and ds.num_files == SHARDS
    for i, sample in enumerate(expected):
        record = ds[i]
        assert record["tokens"].dtype == np.int32
        assert np.array_equal(record["tokens"], sample["tokens"]), i
        assert record["text"] == sample["text"]
    assert len(ds[5]["tokens"]) == 2  # the empty text: BOS, EOS
    assert max(len(ds[i]["tokens"]) for i in (40, 41, 250)) > 20000


def test_shards_are_the_fixed_input_ranges(corpus, reference):
    out, report = reference
    n = len(corpus)
    shards = unirecord.Dataset(str(out / "corpus.uset")).shards
    assert [shard["records"] for shard in shards] == [(s + 1) * n // SHARDS - s * n // SHARDS for s in range(SHARDS)]


def test_byte_identical_in_local_processes(corpus, reference, tmp_path):
    seen = []
    report = write(tokenize, corpus, tmp_path, processes=2, shards_per_task=2, progress=seen.append)
    assert files(tmp_path) == files(reference[0])
    assert report["uuid"] == reference[1]["uuid"] and report["tasks"] == 4
    assert sorted(p["tasks_done"] for p in seen) == [1, 2, 3, 4]
    assert seen[-1]["files_done"] == seen[-1]["files_total"] == len(corpus)
    assert seen[-1]["written"] == len(corpus)


def test_byte_identical_on_dask(corpus, reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    # Worker processes: fn, its inputs and its error travel pickled, as on a real cluster.
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        report = write(tokenize, corpus, tmp_path / "dask", client=client, shards_per_task=3)
        assert files(tmp_path / "dask") == files(reference[0])
        assert report["tasks"] == 3 and report["written"] == len(corpus)
        # A task's error comes back from the worker with its note.
        with pytest.raises(TokenizerError) as raised:
            write(functools.partial(tokenize_failing_at, 123), corpus, tmp_path / "dask", client=client, retries=0)
        assert "unirecord.write_dataset: raised by fn(inputs[123])" in raised.value.__notes__
        # A task already running when the run failed runs on to its end (as unirecord.distributed's
        # docstring says), then stages nothing and removes its files.
        deadline = time.monotonic() + 60
        while any(client.run(lambda dask_worker: len(dask_worker.active_threads)).values()):
            assert time.monotonic() < deadline, "tasks of the failed run still running"
            time.sleep(0.05)
        assert files(tmp_path / "dask") == files(reference[0])


def test_zero_or_several_samples_per_input(corpus, tmp_path):
    expected = [sample for line in corpus for sample in sentences(line)]
    assert len(expected) > len(corpus)
    report = write(sentences, corpus, tmp_path / "local")
    assert report["written"] == len(expected) and report["inputs"] == len(corpus)
    ds = unirecord.Dataset(str(tmp_path / "local" / "corpus.uset"))
    assert len(ds) == len(expected)
    for i, sample in enumerate(expected):
        assert np.array_equal(ds[i]["tokens"], sample["tokens"]) and ds[i]["text"] == sample["text"]
    n = len(corpus)
    assert [shard["records"] for shard in ds.shards] == [
        sum(len(list(sentences(line))) for line in corpus[s * n // SHARDS:(s + 1) * n // SHARDS])
        for s in range(SHARDS)]
    write(sentences, corpus, tmp_path / "processes", processes=2)
    assert files(tmp_path / "processes") == files(tmp_path / "local")


def test_no_sample_at_all_commits_only_with_allow_empty(corpus, reference, tmp_path):
    with pytest.raises(ValueError, match=r"fn gave no sample for any of the 300 inputs.*allow_empty=True"):
        write(nothing, corpus, tmp_path)
    assert list(tmp_path.iterdir()) == []
    report = write(nothing, corpus, tmp_path, allow_empty=True)
    assert report["written"] == 0 and report["shards"] == SHARDS
    assert len(unirecord.Dataset(str(tmp_path / "corpus.uset"))) == 0


@pytest.mark.parametrize("processes", [None, 2])
def test_fn_raising_commits_nothing_and_names_the_input(corpus, reference, tmp_path, processes):
    write(tokenize, corpus, tmp_path)
    before = files(tmp_path)
    with pytest.raises(TokenizerError, match="cannot tokenise document 123") as raised:
        write(functools.partial(tokenize_failing_at, 123), corpus, tmp_path, processes=processes)
    assert "unirecord.write_dataset: raised by fn(inputs[123])" in raised.value.__notes__
    assert "raised by fn(inputs[123])" in "".join(traceback.format_exception(raised.value))
    assert files(tmp_path) == before  # the earlier dataset, and nothing staged left behind
    assert len(unirecord.Dataset(str(tmp_path / "corpus.uset"))) == len(corpus)


@pytest.mark.parametrize("wrong, message", [
    ("dtype", r"fn\(inputs\[77\]\), sample 0: .*field 'tokens' \(int32\): values of dtype float64 .* cannot be cast"),
    ("field", r"fn\(inputs\[77\]\), sample 0: record has a value for 'label', which is not a field"),
])
@pytest.mark.parametrize("processes", [None, 2])
def test_a_sample_the_schema_refuses_names_input_and_field(corpus, tmp_path, wrong, message, processes):
    write(tokenize, corpus, tmp_path)
    before = files(tmp_path)
    with pytest.raises(ValueError, match=message):
        write(functools.partial(tokenize_wrongly_at, 77, wrong), corpus, tmp_path, processes=processes)
    assert files(tmp_path) == before


def test_fn_must_return_samples(corpus, tmp_path):
    with pytest.raises(TypeError, match=r"fn\(inputs\[0\]\) returned NoneType: it must return a dict"):
        write(lambda line: None, corpus, tmp_path)
    with pytest.raises(TypeError, match=r"fn\(inputs\[0\]\), sample 0: record must be a dict"):
        write(lambda line: [[1, 2]], corpus, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_arguments_refused(corpus, tmp_path):
    with pytest.raises(ValueError, match="num_shards=11 is more than the 10 inputs"):
        write(tokenize, corpus[:10], tmp_path, num_shards=11)
    with pytest.raises(ValueError, match="num_shards=1 is more than the 0 inputs"):
        write(tokenize, [], tmp_path, num_shards=1)
    with pytest.raises(ValueError, match="num_shards must be a positive int"):
        write(tokenize, corpus, tmp_path, num_shards=0)
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        write(tokenize, iter(corpus), tmp_path)
    with pytest.raises(TypeError, match=r"fn must be picklable to run in processes=2 .*processes=None"):
        write(lambda line: tokenize(line), corpus, tmp_path, processes=2)
    with pytest.raises(ValueError, match="processes and client exclude each other"):
        write(tokenize, corpus, tmp_path, processes=2, client=object())
    with pytest.raises(ValueError, match="processes must be None or an int >= 0"):
        write(tokenize, corpus, tmp_path, processes=-1)
    assert list(tmp_path.iterdir()) == []
    # Exactly one shard per input is allowed.
    report = write(tokenize, corpus[:10], tmp_path, num_shards=10)
    assert report["shards"] == 10 and report["written"] == 10
