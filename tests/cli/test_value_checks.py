"""What urec says about the values and names it is given (issue 47): a
byte-order mark only at the start of a file, an integer past int64 named as
written, field names escaped and bounded in errors, and the one float policy
of every writer."""
import json

import numpy as np
import pytest

from conftest import run_urec


@pytest.fixture
def dataset(urec, tmp_path):
    (tmp_path / "schema.json").write_text(json.dumps({"fields": [{"name": "label", "type": "int64"}]}))
    (tmp_path / "m.jsonl").write_text("".join(json.dumps({"label": i}) + "\n" for i in range(3)))
    urec("convert", "jsonl", tmp_path / "m.jsonl", tmp_path / "out", "--schema", tmp_path / "schema.json")
    return tmp_path / "out" / "m"


def add_field(urec, path, tmp_path, fields, lines):
    (tmp_path / "add.json").write_text(json.dumps({"fields": fields}))
    (tmp_path / "v.jsonl").write_bytes(lines)
    return urec("add-field", path, tmp_path / "v.jsonl", "--schema", tmp_path / "add.json", check=False)


def error(result, code=2):
    assert result.returncode == code, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


# Before: a byte-order mark was skipped at the start of every line.
def test_a_byte_order_mark_starts_the_file_only(urec, dataset, tmp_path):
    bom = b"\xef\xbb\xbf"
    fields = [{"name": "n", "type": "int64"}]
    result = add_field(urec, dataset, tmp_path, fields, bom + b'{"id": 0, "n": 1}\n{"id": 1, "n": 2}\n{"id": 2, "n": 3}\n')
    assert result.returncode == 0, result.stderr
    result = add_field(urec, dataset, tmp_path, fields, b'{"id": 0, "n": 1}\n' + bom + b'{"id": 1, "n": 2}\n{"id": 2, "n": 3}\n')
    assert (f"{tmp_path / 'v.jsonl'} line 2: a UTF-8 byte-order mark starts the value (only a file's first bytes "
            f"may hold one)") in error(result)
    # convert jsonl: a rejects row naming the line.
    (tmp_path / "c.jsonl").write_bytes(bom + b'{"label": 1}\n' + bom + b'{"label": 2}\n')
    done = urec("convert", "jsonl", tmp_path / "c.jsonl", tmp_path / "c", "--schema", tmp_path / "schema.json")
    assert "1 written, 1 rejected" in done.stdout, done.stdout
    rows = next((tmp_path / "c").glob("c.rejects.g*.tsv")).read_text().splitlines()[1:]
    assert rows == ["line 2\ta UTF-8 byte-order mark starts the value (only a file's first bytes may hold one)"]


# Before: "-9.223372036854776e+18 is not an integer" (rounded, the wrong reason).
@pytest.mark.parametrize("given", ["-9223372036854775809", "18446744073709551616", "123456789012345678901234567890"])
def test_an_integer_past_int64_is_out_of_range_as_written(urec, dataset, tmp_path, given):
    lines = "".join('{"id": %d, "n": %s}\n' % (i, given if i == 1 else "1") for i in range(3))
    result = add_field(urec, dataset, tmp_path, [{"name": "n", "type": "int64"}], lines.encode())
    assert f"line 2: field 'n': {given} is out of int64's range" in error(result)


def test_a_float_past_float32_is_refused_and_underflow_rounds(urec, dataset, tmp_path):
    fields = [{"name": "v", "type": "float32"}]
    result = add_field(urec, dataset, tmp_path, fields, b'{"id": 0, "v": 1}\n{"id": 1, "v": 1e39}\n{"id": 2, "v": 1}\n')
    assert "line 2: field 'v': 1e+39 is out of float32's range" in error(result)
    # docs/cli.md: rounded to the nearest float32; FLT_MAX as printed, a subnormal, a signed zero.
    result = add_field(urec, dataset, tmp_path, fields,
                       b'{"id": 0, "v": 3.4028235e38}\n{"id": 1, "v": 1e-45}\n{"id": 2, "v": -1e-46}\n')
    assert result.returncode == 0, result.stderr
    values = [np.float32(json.loads(run_urec("cat", dataset, i, "--json").stdout)["v"]) for i in range(3)]
    assert values == [np.finfo(np.float32).max, np.float32(2.0 ** -149), 0] and np.signbit(values[2]), values


# Before: the message ended at the NUL, and a 2 MB name was echoed whole.
def test_field_names_in_errors_are_escaped_and_bounded(urec, dataset, tmp_path):
    result = add_field(urec, dataset, tmp_path, [{"name": "a\u0000b", "type": "int64"}], b"")
    assert "schema field 'a\\x00b': name contains a NUL byte" in error(result)
    result = add_field(urec, dataset, tmp_path, [{"name": "n" * (2 << 20), "type": "int64"}], b"")
    message = error(result)
    assert len(message) < 1000 and "... (2097152 bytes)': name longer than 255 bytes" in message, message[:1000]
    result = add_field(urec, dataset, tmp_path, [{"name": "n", "type": "int64"}],
                       ('{"id": 0, "n": 1, "%s": 2}\n' % ("k" * (2 << 20))).encode())
    message = error(result)
    assert len(message) < 1000 and "... (2097152 bytes)' is not a field of the schema" in message, message[:1000]
