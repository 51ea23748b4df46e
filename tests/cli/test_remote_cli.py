"""urec inspect/cat/query/bench on remote datasets: nginx on 127.0.0.1 (with
the fault proxy of tests/remote_servers.py in front where a test needs it)
against the same dataset on disk; the Unavailable exit code, also for
servers that stall, trickle or outlast a deadline; S3 URLs signed by
libcurl's SigV4, path-style and virtual-hosted, checked against an
independent SigV4 computation (hashlib/hmac), every page of a folder's
listing too; a folder of two datasets refused remotely as on disk; and the
same against s3rver, an S3 implementation written elsewhere (listing, ranged
GETs, both addressings, wrong credentials)."""
import json
import os
import pathlib
import re
import shutil
import sys
import urllib.parse

import pytest

from conftest import run_urec

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from remote_servers import FaultProxy, Nginx, S3rver, sigv4_signature  # noqa: E402

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
    result = urec("inspect", proxy.url + "/ds/train.uset", "--cache-dir", tmp_path, "--attempts", 2,
                  "--retry-backoff-ms", 0, *options, check=False)
    proxy.clear()
    assert result.returncode == 3, result.stderr
    # The message carries the attempts and seconds the client counted.
    assert re.search(re.escape(f"{proxy.url}/ds/{index}: ") + message, result.stderr), result.stderr


def check_signed(entry, key_id, secret, region):
    method, target, host, headers = entry
    headers = {k.title(): v for k, v in headers.items()}
    auth = headers["Authorization"]
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={key_id}/")
    fields = dict(part.strip().split("=", 1) for part in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    date = headers["X-Amz-Date"]
    assert fields["Credential"] == f"{key_id}/{date[:8]}/{region}/s3/aws4_request"
    signed = fields["SignedHeaders"].split(";")
    assert "host" in signed and "x-amz-date" in signed and "x-amz-content-sha256" in signed
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


def s3_fake_env(monkeypatch, proxy):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret/key+1")
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)


@pytest.fixture
def small_pages(served):
    """The fake S3 answers listings 2 keys a page."""
    proxy = served["proxy"]
    proxy.clear()
    proxy.s3_page_keys = 2
    yield proxy
    proxy.s3_page_keys = 1000
    proxy.clear()


def test_s3_listing_pages_are_all_read_each_signed(urec, served, small_pages, tmp_path, monkeypatch):
    """A listing of 2 keys a page: the folder's files span several pages;
    read one, the manifest is not in it ("its listing names no manifest").
    Each next page's request carries the token, encoded ('+', '/', '='), and
    is signed as the independent computation signs it."""
    proxy = small_pages
    s3_fake_env(monkeypatch, proxy)
    local = json.loads(urec("inspect", served["local"], "--json").stdout)
    remote = json.loads(urec("inspect", "s3://bucket/ds/", "--json", "--cache-dir", tmp_path).stdout)
    assert without_paths(remote) == without_paths(local)
    listings = [entry[1] for entry in proxy.log if "list-type=2" in entry[1]]
    files = [p for p in os.listdir(served["local"]) if not p.startswith(".")]
    assert len(files) > 4 and len(listings) == (len(files) + 1) // 2
    assert listings[0] == "/bucket/?delimiter=%2F&list-type=2&prefix=ds%2F"
    for listing in listings[1:]:
        assert re.fullmatch(r"/bucket/\?continuation-token=%2B%2F[A-Za-z0-9%]+%3D%3D&delimiter=%2F&list-type=2"
                            r"&prefix=ds%2F", listing), listing
    for entry in proxy.log:
        check_signed(entry, "AKIDTEST", "secret/key+1", "eu-west-3")


def test_s3_folder_of_two_datasets_is_refused_as_on_disk(urec, served, small_pages, tmp_path, monkeypatch):
    """Read one page, the listing showed the first dataset's keys only."""
    two = served["local"].parent / "two"
    shutil.copytree(served["local"], two)
    try:
        src = tmp_path / "src"
        urec("synth-imagefolder", src, "--classes", 2, "--per-class", 2, "--width", 64, "--height", 48)
        urec("convert", "imagefolder", src, two, "--name", "val", "--shards", 2)
        s3_fake_env(monkeypatch, small_pages)
        on_disk = urec("inspect", two, check=False)
        remote = urec("inspect", "s3://bucket/two/", "--cache-dir", tmp_path / "cache", check=False)
        assert on_disk.returncode == remote.returncode == 2, remote.stderr
        shape = ": holds more than one dataset (train, val); open one as DIR/NAME"
        assert f"{two}{shape}, or its shards with a glob like DIR/NAME-*.urec" in on_disk.stderr
        assert f"s3://bucket/two/{shape}\n" in remote.stderr
        named = json.loads(urec("inspect", "s3://bucket/two/val", "--json", "--cache-dir", tmp_path / "cache").stdout)
        assert named["records"] == 4
    finally:
        shutil.rmtree(two)


@pytest.fixture(scope="module")
def s3(urec, tmp_path_factory):
    """s3rver holding a dataset under bucket/big/ whose 2 shards are larger
    than 128 KiB, so that opening fetches their frames by ranged GETs."""
    src = tmp_path_factory.mktemp("synth") / "train"
    urec("synth-imagefolder", src, "--classes", 2, "--per-class", 4, "--width", 640, "--height", 480)
    local = tmp_path_factory.mktemp("s3") / "big"
    urec("convert", "imagefolder", src, local, "--name", "train", "--shards", 2)
    server = S3rver()
    server.put_folder(local, "big")
    yield {"server": server, "local": local}
    server.stop()


def s3rver_credentials(monkeypatch, key_id=S3rver.KEY):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", S3rver.SECRET)
    monkeypatch.setenv("AWS_REGION", S3rver.REGION)


def equal_to_local(urec, location, local, options):
    """inspect --json and every record of `location` equal the local dataset's; the shards' URLs."""
    expected = json.loads(urec("inspect", local, "--json").stdout)
    remote = json.loads(urec("inspect", location, "--json", *options).stdout)
    urls = [shard["path"] for shard in remote["shard_files"]]
    assert without_paths(remote) == without_paths(expected)
    for record_id in range(expected["records"]):
        assert urec("cat", location, record_id, "--json", *options).stdout == urec("cat", local, record_id,
                                                                                    "--json").stdout
    assert (urec("cat", location, 5, "--field", "image", *options, text=False).stdout ==
            urec("cat", local, 5, "--field", "image", text=False).stdout)
    assert urec("inspect", location, "--verify", *options).returncode == 0
    return urls


def test_s3rver_path_style_listing_and_ranged_gets(urec, s3, tmp_path, monkeypatch):
    """Path-style against s3rver: the folder listed by ListObjectsV2, the
    shards' frames by ranged GETs (206), every record equal to the local
    one. Before the requests carried x-amz-content-sha256, which S3 requires
    of every SigV4 request, each was refused: HTTP 400 (InvalidRequest)."""
    server = s3["server"]
    s3rver_credentials(monkeypatch)
    ranged_before = server.answers(206)
    urls = equal_to_local(urec, "s3://bucket/big/", s3["local"], ["--s3-endpoint", server.url, "--cache-dir", tmp_path])
    assert len(urls) == 2 and all(url.startswith(f"{server.url}/bucket/big/train-") for url in urls)
    assert server.answers(206) - ranged_before >= 2 * len(urls)  # both ends of each shard
    # The manifest named, no listing; the cache already holds the rest.
    assert urec("cat", "s3://bucket/big/train.uset", 0, "--json", "--s3-endpoint", server.url, "--cache-dir",
                tmp_path).stdout == urec("cat", s3["local"], 0, "--json").stdout


def test_s3rver_virtual_hosted(urec, s3, tmp_path, monkeypatch):
    """BUCKET.s3.localhost: s3rver takes the bucket from the host name
    (libcurl resolves *.localhost to 127.0.0.1 itself). The same endpoint
    path-style names the bucket in the path: both read the same records."""
    server = s3["server"]
    s3rver_credentials(monkeypatch)
    endpoint = f"http://s3.localhost:{server.port}"
    urls = equal_to_local(urec, "s3://bucket/big/", s3["local"], ["--s3-endpoint", endpoint, "--s3-addressing",
                                                                    "virtual", "--cache-dir", tmp_path / "v"])
    assert all(url.startswith(f"http://bucket.s3.localhost:{server.port}/big/train-") for url in urls)
    path_style = json.loads(urec("inspect", "s3://bucket/big/", "--json", "--s3-endpoint", endpoint,
                                 "--s3-addressing", "path", "--cache-dir", tmp_path / "p").stdout)
    assert path_style["shard_files"][0]["path"].startswith(f"{endpoint}/bucket/big/train-")


def test_s3rver_wrong_credentials_name_the_403_once(urec, s3, tmp_path, monkeypatch):
    """An access key s3rver does not know: exit 3 at the first answer, naming
    the 403 and S3's error code, with no retry (a retry would
    log a second 403 at s3rver). s3rver 3.7.1 does not check
    SigV4 signatures themselves (tests/remote_servers.py, S3rver), so a
    wrong secret key cannot be tested against it."""
    server = s3["server"]
    s3rver_credentials(monkeypatch, key_id="AKIDWRONG")
    for location in ("s3://bucket/big/", "s3://bucket/big/train"):
        refused_before = server.answers(403)
        result = urec("inspect", location, "--s3-endpoint", server.url, "--cache-dir", tmp_path,
                      "--retry-backoff-ms", 2000, check=False)
        assert result.returncode == 3, result.stderr
        assert ("HTTP 403 (Forbidden) (InvalidAccessKeyId: The AWS Access Key Id you provided does not exist "
                "in our records.)") in result.stderr
        assert "attempt" not in result.stderr
        assert server.answers(403) == refused_before + 1
