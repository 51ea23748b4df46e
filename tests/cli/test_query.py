"""`urec query` against SQLite (Python's sqlite3) loaded with the same records.

Random expression trees over int, float and string fields (indexed and not)
must give the ids and counts SQLite gives, on datasets of 1, 2 and 5 shards.

Floats: unirecord compares them by the IEEE-754 total order of its sorted
indexes (format/SPEC.md 8.3: -nan < -inf < ... < -0.0 < 0.0 < ... < inf < nan).
SQLite would store NaN as NULL and make -0.0 equal 0.0, so the reference maps
every float, stored value and literal alike, to its total-order key (a signed
64-bit integer whose integer order is that total order) and SQLite compares
the keys. float32 values are compared widened to float64, as stored.
"""
import json
import math
import random
import sqlite3
import struct

import pytest

from conftest import run_urec

unirecord = pytest.importorskip("unirecord")
np = pytest.importorskip("numpy")

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
NAN = float("nan")
RECORDS = 300

INT_POOL = [INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1, 0, -1, 1, 2, 3, 5, 7, 100, -100, 2**40]
INT32_POOL = [INT32_MIN, INT32_MAX, 0, -1, 1, 2, 3, 10, -10]
FLOAT_POOL = [NAN, -NAN, math.inf, -math.inf, 0.0, -0.0, 1.5, -2.25, 1e300, -1e300, 5e-324, -5e-324, 0.1, 3.0, 1.0]
FLOAT32_POOL = [NAN, -NAN, math.inf, -math.inf, 0.0, -0.0, 0.5, -1.25, 3.4028234663852886e38, 1.401298464324817e-45, 0.1, 2.0]
STRING_POOL = ["", "a", "b", "ab", "abc", "B", "\u00e9", "zz", "a b", 'q"uote', "back\\slash", "\u65e5\u672c"]
ABSENT = {
    "int": [4, 6, -7, 99999, INT64_MIN + 2, INT64_MAX - 2, 1000003],
    "float": [0.7, -3.5, 2.0, 1e308, -1e-300, 2.5],
    "string": ["aa", "c", "zzz", "A", "\u00e9\u00e9"],
}

# field -> (kind, indexed): i int64 indexed, k int32 scanned, f float64 indexed,
# g float32 scanned, s string scanned.
FIELDS = {"i": ("int", True), "k": ("int", False), "f": ("float", True), "g": ("float", False), "s": ("string", False)}


def total_order_key(x):
    """SPEC 8.3's float order as a signed int: flip every bit of a negative,
    the sign bit of a positive; then shift into the signed range."""
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    key = (~bits) & (2**64 - 1) if bits >> 63 else bits | (1 << 63)
    return key - (1 << 63)


def widen32(x):
    with np.errstate(over="ignore"):  # beyond float32: inf, as the Writer stores it
        return float(np.float32(x))


def float_literal(x):
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return repr(x)


def string_literal(s, rng):
    if rng.random() < 0.5:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def make_records(rng, zero_shard_rows=0):
    """Values of RECORDS records; the first zero_shard_rows hold values no
    pool has, so that a shard made of them matches (almost) nothing."""
    records = []
    for n in range(RECORDS):
        if n < zero_shard_rows:
            records.append({"i": 10**6 + n, "k": 555, "f": 12345.5, "g": 777.0, "s": f"shard0-{n}"})
        else:
            records.append(
                {
                    "i": rng.choice(INT_POOL),
                    "k": rng.choice(INT32_POOL),
                    "f": rng.choice(FLOAT_POOL),
                    "g": rng.choice(FLOAT32_POOL),
                    "s": rng.choice(STRING_POOL),
                }
            )
    return records


def write_dataset(path, records, num_shards, contiguous):
    schema = unirecord.Schema(
        {
            "blob": "bytes",
            "i": unirecord.Field("i", "int64", indexed=True),
            "k": "int32",
            "f": unirecord.Field("f", "float64", indexed=True),
            "g": "float32",
            "s": "string",
        }
    )
    options = {"expected_records": len(records)} if contiguous else {}
    with unirecord.Writer(path, schema, "q", num_shards=num_shards, sync=False, **options) as w:
        for n, r in enumerate(records):
            w.write({"blob": bytes([n % 256]) * (n % 5), **r})
    # Ids are shard-major (docs: WriterOptions): the k-th written record is id k
    # in the contiguous mode, first_id(k % N) + k // N in the round-robin one.
    if contiguous:
        return list(range(len(records)))
    sizes = [len(range(s, len(records), num_shards)) for s in range(num_shards)]
    firsts = [sum(sizes[:s]) for s in range(num_shards)]
    return [firsts[n % num_shards] + n // num_shards for n in range(len(records))]


def load_sqlite(records, ids):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, k INTEGER, f INTEGER, g INTEGER, s TEXT)")
    db.executemany(
        "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
        [(ids[n], r["i"], r["k"], total_order_key(r["f"]), total_order_key(widen32(r["g"])), r["s"]) for n, r in enumerate(records)],
    )
    return db


@pytest.fixture(scope="module", params=[(1, True), (2, False), (5, True)], ids=["1-shard", "2-shards", "5-shards"])
def dataset(request, tmp_path_factory):
    num_shards, contiguous = request.param
    rng = random.Random(1000 + num_shards)
    # With 5 contiguous shards, shard 0 is the first 60 records.
    zero_shard_rows = RECORDS // num_shards if num_shards == 5 else 0
    records = make_records(rng, zero_shard_rows)
    path = tmp_path_factory.mktemp(f"query{num_shards}")
    ids = write_dataset(path, records, num_shards, contiguous)
    return path, load_sqlite(records, ids), zero_shard_rows


class ExpressionMaker:
    """Random expression trees, as unirecord text and as SQL + parameters."""

    def __init__(self, rng):
        self.rng = rng

    def value(self, field):
        kind, _ = FIELDS[field]
        rng = self.rng
        if kind == "string":
            s = rng.choice(STRING_POOL if rng.random() < 0.7 else ABSENT["string"])
            return string_literal(s, rng), s
        if kind == "int":
            pool = INT_POOL if field == "i" else INT32_POOL
            v = rng.choice(pool if rng.random() < 0.7 else ABSENT["int"])
            return str(v), v
        if rng.random() < 0.15:  # an integer literal for a float field
            v = rng.choice([0, 1, 3, -2, 7])
            return str(v), total_order_key(float(v))
        pool = FLOAT_POOL if field == "f" else FLOAT32_POOL
        x = rng.choice(pool if rng.random() < 0.7 else ABSENT["float"])
        if field == "g" and rng.random() < 0.5:
            x = widen32(x)  # the exact stored value, so that == can match
        return float_literal(x), total_order_key(x)

    def comparison(self):
        rng = self.rng
        field = rng.choice(list(FIELDS))
        op = rng.choice(["==", "!=", "<", "<=", ">", ">=", "in", "not in", "between"])
        if op in ("in", "not in"):
            values = [self.value(field) for _ in range(rng.randint(0, 4))]
            text = f"{field} {op} [{', '.join(v[0] for v in values)}]"
            sql = f"{field} {op.upper()} ({', '.join('?' for _ in values)})"
            return text, sql, [v[1] for v in values]
        if op == "between":
            lo, hi = self.value(field), self.value(field)
            return f"{field} between {lo[0]} and {hi[0]}", f"{field} BETWEEN ? AND ?", [lo[1], hi[1]]
        v = self.value(field)
        return f"{field} {op} {v[0]}", f"{field} {op} ?", [v[1]]

    def tree(self, depth=0):
        rng = self.rng
        r = rng.random()
        if depth >= 3 or r < 0.35:
            return self.comparison()
        if r < 0.5:
            text, sql, params = self.tree(depth + 1)
            return f"not ({text})", f"NOT ({sql})", params
        word = "and" if r < 0.75 else "or"
        parts = [self.tree(depth + 1) for _ in range(rng.randint(2, 3))]
        return (
            f" {word} ".join(f"({p[0]})" for p in parts),
            f" {word.upper()} ".join(f"({p[1]})" for p in parts),
            [x for p in parts for x in p[2]],
        )


def urec_ids(path, expression):
    out = run_urec("query", path, expression, "--ids").stdout
    return [int(line) for line in out.split()]


def test_random_expressions_match_sqlite(urec, dataset):
    path, db, zero_shard_rows = dataset
    maker = ExpressionMaker(random.Random(7))
    results = set()
    shard0_empty = 0  # results with matches elsewhere but none in shard 0
    for _ in range(200):
        text, sql, params = maker.tree()
        expected = [row[0] for row in db.execute(f"SELECT id FROM t WHERE {sql} ORDER BY id", params)]
        assert urec_ids(path, text) == expected, text
        count = int(run_urec("query", path, text, "--count").stdout)
        assert count == len(expected), text
        results.add("none" if not expected else "all" if len(expected) == RECORDS else "some")
        shard0_empty += bool(expected) and expected[0] >= zero_shard_rows
    # The trees reached empty, partial and full results.
    assert results == {"none", "some", "all"}
    if zero_shard_rows:
        assert shard0_empty >= 20


def test_boundary_comparisons_match_sqlite(urec, dataset):
    path, db, _ = dataset
    cases = [
        ("i == -9223372036854775808", "i = ?", [INT64_MIN]),
        ("i >= -9223372036854775808", "i >= ?", [INT64_MIN]),
        ("i > 9223372036854775807", "i > ?", [INT64_MAX]),
        ("i != 9223372036854775807", "i != ?", [INT64_MAX]),
        ("i < -9223372036854775807", "i < ?", [INT64_MIN + 1]),
        ("k == -2147483648 or k == 2147483647", "k = ? OR k = ?", [INT32_MIN, INT32_MAX]),
        ("k > 2147483647", "k > ?", [INT32_MAX]),
        ("f == nan", "f = ?", [total_order_key(NAN)]),
        ("f == -nan", "f = ?", [total_order_key(-NAN)]),
        ("f > inf", "f > ?", [total_order_key(math.inf)]),
        ("f < -inf", "f < ?", [total_order_key(-math.inf)]),
        ("f == -0.0", "f = ?", [total_order_key(-0.0)]),
        ("f == 0.0", "f = ?", [total_order_key(0.0)]),
        ("f between -0.0 and 0.0", "f BETWEEN ? AND ?", [total_order_key(-0.0), total_order_key(0.0)]),
        ("g == nan or g == -nan", "g = ? OR g = ?", [total_order_key(NAN), total_order_key(-NAN)]),
        ("g >= 3.4028234663852886e38", "g >= ?", [total_order_key(3.4028234663852886e38)]),
        ("g == 0.1", "g = ?", [total_order_key(0.1)]),  # float32 0.1 widened is not 0.1
        ("s == ''", "s = ?", [""]),
        ("s > 'z'", "s > ?", ["z"]),
        ('s == "q\\"uote" or s == "back\\\\slash"', "s = ? OR s = ?", ['q"uote', "back\\slash"]),
        ("s in []", "s IN ()", []),
        ("not s in []", "NOT s IN ()", []),
    ]
    for text, sql, params in cases:
        expected = [row[0] for row in db.execute(f"SELECT id FROM t WHERE {sql} ORDER BY id", params)]
        assert urec_ids(path, text) == expected, text


def test_group_by_matches_sqlite(urec, dataset):
    path, db, _ = dataset
    out = run_urec("query", path, "k >= 0", "--group-by", "s", "--json").stdout
    got = [(o["s"], o["count"]) for o in map(json.loads, out.splitlines())]
    expected = db.execute("SELECT s, count(*) FROM t WHERE k >= 0 GROUP BY s ORDER BY CAST(s AS BLOB)").fetchall()
    assert got == expected
    out = run_urec("query", path, "s != ''", "--group-by", "i").stdout
    got = [tuple(map(int, line.split("\t"))) for line in out.splitlines()]
    assert got == db.execute("SELECT i, count(*) FROM t WHERE s != '' GROUP BY i ORDER BY i").fetchall()


@pytest.fixture(scope="module")
def images(urec, tmp_path_factory):
    src = tmp_path_factory.mktemp("qsynth") / "train"
    urec("synth-imagefolder", src, "--classes", 3, "--per-class", 4, "--width", 64, "--height", 48)
    out = tmp_path_factory.mktemp("qrecords")
    urec("convert", "imagefolder", src, out, "--shards", 2)
    return out


def test_json_records_are_those_of_urec_cat(urec, images):
    out = urec("query", images, "label == 1", "--json").stdout.splitlines()
    assert len(out) == 4
    for line in out:
        record = json.loads(line)
        assert record["label"] == 1
        assert record == json.loads(urec("cat", images, record["id"]).stdout)
    limited = urec("query", images, "label >= 0", "--fields", "path,label", "--limit", 3).stdout.splitlines()
    assert [list(json.loads(line)) for line in limited] == [["id", "path", "label"]] * 3


def test_class_names_resolve_through_the_classes_metadata(urec, images):
    classes = json.loads(urec("inspect", images, "--json").stdout)["metadata"]["classes"].split("\n")
    by_name = urec("query", images, f'label == "{classes[2]}"').stdout
    assert by_name == urec("query", images, "label == 2").stdout
    groups = urec("query", images, "width > 0", "--group-by", "label").stdout.splitlines()
    assert groups == [f"{c}\t4\t{name}" for c, name in enumerate(classes)]


def test_explain_names_each_plan(urec, images):
    plan = urec("query", images, "path < 'n' and label in [0, 2]", "--explain").stdout
    assert "label in [0, 2]  ->  sorted index: binary search for 2 ranges" in plan
    assert "path < 'n'  ->  check of the rows kept so far in the scalar pages" in plan
    assert plan.index("label in") < plan.index("path <")
    assert plan.rstrip().endswith("of 12 records match")


@pytest.mark.parametrize(
    "expression, column, message",
    [
        ("widht > 3", 1, "unknown field 'widht'"),
        ("label == 1 and (width > 3", 16, "unbalanced '('"),
        ("image == 3", 1, "bytes field"),
        ("width >= 2.5", 10, "not an integer"),
        ("label == 1 and path == 3", 24, "write the value in quotes"),
        ('label == "no-such-class"', 10, "no class named"),
        ("label = 1", 7, "use '=='"),
    ],
)
def test_errors_show_a_caret_under_the_column(urec, images, expression, column, message):
    result = urec("query", images, expression, check=False)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"urec query: error: query: column {column}: ") and message in lines[0]
    assert lines[1] == "  " + expression
    assert lines[2] == "  " + " " * (column - 1) + "^"
    assert result.stdout == ""


def test_conflicting_options_are_usage_errors(urec, images):
    assert urec("query", images, "label == 1", "--count", "--ids", check=False).returncode == 2
    assert urec("query", images, "label == 1", "--group-by", "image", check=False).returncode == 2
