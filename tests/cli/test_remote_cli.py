"""urec inspect/cat/query/bench on remote datasets: nginx on 127.0.0.1 (with
the fault proxy of tests/remote_servers.py in front where a test needs it)
against the same dataset on disk; the Unavailable exit code; S3 URLs signed
by libcurl's SigV4, path-style and virtual-hosted, checked against an
independent SigV4 computation (hashlib/hmac)."""
import hashlib
import hmac
import json
import os
import pathlib
import re
import sys
import time
import urllib.parse

import pytest

from conftest import run_urec

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from remote_servers import FaultProxy, Nginx  # noqa: E402

PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy", "no_proxy",
              "NO_PROXY")
AWS_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
            "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in PROXY_VARS + AWS_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.aws of the user's


@pytest.fixture(scope="module")
def served(urec, tmp_path_factory):
    www = tmp_path_factory.mktemp("www")
    src = tmp_path_factory.mktemp("synth") / "train"
    urec("synth-imagefolder", src, "--classes", 3, "--per-class", 8, "--width", 96, "--height", 72)
    urec("convert", "imagefolder", src, www / "ds", "--name", "train", "--shards", 3)
    nginx = Nginx(www)
    proxy = FaultProxy(nginx.port, bucket="bucket")
    yield {"local": www / "ds", "nginx": nginx, "proxy": proxy}
    proxy.stop()
    nginx.stop()


def without_paths(inspect_json):
    inspect_json.pop("path")
    for shard in inspect_json["shard_files"]:
        shard.pop("path")
        shard.pop("index_path")
    return inspect_json


def test_inspect_cat_query_equal_local(urec, served, tmp_path):
    url = served["nginx"].url + "/ds/"
    cache = ["--cache-dir", tmp_path / "cache"]
    local = json.loads(urec("inspect", served["local"], "--json").stdout)
    remote = json.loads(urec("inspect", url, "--json", *cache).stdout)
    assert remote["shard_files"][0]["path"].startswith(url)
    assert without_paths(remote) == without_paths(local)
    for record_id in range(local["records"]):
        assert urec("cat", url, record_id, "--json", *cache).stdout == urec("cat", served["local"], record_id,
                                                                            "--json").stdout
        assert (urec("cat", url, record_id, "--field", "image", *cache, text=False).stdout ==
                urec("cat", served["local"], record_id, "--field", "image", text=False).stdout)
    for expr in ("label == 1", "label in [0, 2] and width >= 50", "path != 'x'"):
        assert urec("query", url, expr, *cache).stdout == urec("query", served["local"], expr).stdout
    assert urec("inspect", url, "--verify", *cache).returncode == 0
    bench = json.loads(urec("bench", url, "--json", "--threads", 2, "--batch", 8, "--epochs", 2, *cache).stdout)
    assert bench["samples"] == 2 * local["records"]
    assert bench["epochs"][1]["remote"]["requests"] == 0  # the second epoch reads the cache


def test_unavailable_exit_code_names_url_and_status(urec, served, tmp_path):
    proxy = served["proxy"]
    proxy.clear()
    proxy.add("status", "train.uset", value=503)
    result = urec("inspect", proxy.url + "/ds/train.uset", "--cache-dir", tmp_path, check=False)
    proxy.clear()
    assert result.returncode == 3
    assert f"{proxy.url}/ds/train.uset: HTTP 503 (Service Unavailable) (after 5 attempts)" in result.stderr
    missing = urec("inspect", served["nginx"].url + "/nope/train.uset", "--cache-dir", tmp_path, check=False)
    assert missing.returncode == 1 and "/nope/train.uset: HTTP 404" in missing.stderr


@pytest.mark.parametrize("fault,value,options,message", [
    # A stall mid-body: each attempt ends within a second of --timeout-s
    # (libcurl's low speed check: --timeout-s + ~6 s, 186 s in all with the
    # defaults).
    ("stall", None, ["--timeout-s", 1], r"no byte received for 1 s \(timeout_s\) \(after 2 attempts\)"),
    # 16 bytes a second: never idle, too slow.
    ("trickle", 16, ["--min-rate-bytes-per-s", 100, "--min-rate-window-s", 1],
     r"[0-9]+ bytes received in 1 s, fewer than 100 \(min_rate_bytes_per_s 100 over min_rate_window_s\) "
     r"\(after 2 attempts\)"),
    # 64 bytes a second with no minimum rate: the deadline ends the request.
    ("trickle", 64, ["--min-rate-bytes-per-s", 0, "--request-deadline-s", 2],
     r"out of time: request_deadline_s 2 \(1 attempt in 2(\.[0-9])? s\)"),
])
def test_slow_servers_end_in_exit_code_3_on_time(urec, served, tmp_path, fault, value, options, message):
    proxy = served["proxy"]
    proxy.clear()
    index = sorted(p.name for p in served["local"].glob("*.uidx"))[0]  # about 1 kB
    proxy.add(fault, index, value=value)
    t0 = time.monotonic()
    result = urec("inspect", proxy.url + "/ds/train.uset", "--cache-dir", tmp_path, "--attempts", 2,
                  "--retry-backoff-ms", 0, *options, check=False)
    elapsed = time.monotonic() - t0
    proxy.clear()
    assert result.returncode == 3, result.stderr
    assert re.search(re.escape(f"{proxy.url}/ds/{index}: ") + message, result.stderr), result.stderr
    assert elapsed < 4.5, elapsed


def sigv4_signature(secret, region, method, path, query, headers, signed):
    """The AWS Signature Version 4 of a request, computed from its parts as received."""
    canonical_query = "&".join(
        f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
        for k, v in sorted(urllib.parse.parse_qsl(query, keep_blank_values=True)))
    lower = {k.lower(): v.strip() for k, v in headers.items()}
    canonical_headers = "".join(f"{name}:{lower[name]}\n" for name in signed)
    payload = lower.get("x-amz-content-sha256", hashlib.sha256(b"").hexdigest())
    canonical = "\n".join([method, path, canonical_query, canonical_headers, ";".join(signed), payload])
    amz_date = lower["x-amz-date"]
    scope = f"{amz_date[:8]}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in (amz_date[:8], region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def check_signed(entry, key_id, secret, region):
    method, target, host, headers = entry
    headers = {k.title(): v for k, v in headers.items()}
    auth = headers["Authorization"]
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={key_id}/")
    fields = dict(part.strip().split("=", 1) for part in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    date = headers["X-Amz-Date"]
    assert fields["Credential"] == f"{key_id}/{date[:8]}/{region}/s3/aws4_request"
    signed = fields["SignedHeaders"].split(";")
    assert "host" in signed and "x-amz-date" in signed
    assert len(fields["Signature"]) == 64
    parts = urllib.parse.urlsplit(target)
    assert fields["Signature"] == sigv4_signature(secret, region, method, parts.path, parts.query, headers, signed)


def test_s3_path_style_signed(urec, served, tmp_path, monkeypatch):
    proxy = served["proxy"]
    proxy.clear()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret/key+1")
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
    local = json.loads(urec("inspect", served["local"], "--json").stdout)
    remote = json.loads(urec("inspect", "s3://bucket/ds/train.uset", "--json", "--cache-dir", tmp_path).stdout)
    assert without_paths(remote) == without_paths(local)
    assert urec("cat", "s3://bucket/ds/", 4, "--json", "--cache-dir", tmp_path).stdout == urec(
        "cat", served["local"], 4, "--json").stdout
    targets = [entry[1] for entry in proxy.log]
    assert "/bucket/ds/train.uset" in targets
    assert "/bucket/?delimiter=%2F&list-type=2&prefix=ds%2F" in targets  # the folder's listing  # the folder's listing
    for entry in proxy.log:
        assert entry[2] == f"127.0.0.1:{proxy.port}"
        check_signed(entry, "AKIDTEST", "secret/key+1", "eu-west-3")


def test_s3_virtual_hosted_from_aws_files(urec, served, tmp_path, monkeypatch):
    proxy = served["proxy"]
    proxy.clear()
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("[default]\naws_access_key_id = AKIDFILE\n"
                                              "aws_secret_access_key = filesecret\naws_session_token = tok123\n")
    (home / ".aws" / "config").write_text("[default]\nregion = ap-south-1\n")
    # No DNS for BUCKET.s3.test: libcurl sends the requests to the proxy as a forward proxy.
    monkeypatch.setenv("http_proxy", proxy.url)
    result = urec("cat", "s3://bucket/ds/train", 2, "--json", "--cache-dir", tmp_path / "c",
                  "--s3-endpoint", "http://s3.test", "--s3-addressing", "virtual")
    assert result.stdout == urec("cat", served["local"], 2, "--json").stdout
    assert proxy.log
    for entry in proxy.log:
        method, target, host, headers = entry
        assert host == "bucket.s3.test"
        assert target.startswith("http://bucket.s3.test/ds/train")
        lower = {k.lower(): v for k, v in headers.items()}
        assert lower["x-amz-security-token"] == "tok123"
        assert "x-amz-security-token" in lower["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
        check_signed(entry, "AKIDFILE", "filesecret", "ap-south-1")
