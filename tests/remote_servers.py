"""Real servers on 127.0.0.1 for the remote-dataset tests (tests/cli and
python/tests), started and stopped by the tests:

- Nginx: nginx-light serving a folder (Range requests, autoindex listings),
  run as the current user with its own prefix, config, pid and error log in
  a temporary directory.
- FaultProxy: a small HTTP proxy between the client and nginx that injects
  faults per request (added latency, connections dropped mid-body, 500/503
  answers, bodies cut short, one object served in place of another, a
  connection that stalls mid-body, a body trickled a few bytes a second) and
  records each request (method, target, headers) for the S3 tests. It also
  serves as an HTTP forward proxy (absolute request targets), so that S3
  virtual-hosted URLs (http://BUCKET.s3.test/...) reach it through
  `http_proxy` without DNS, and answers S3 ListObjectsV2 from nginx's
  listing, `s3_page_keys` keys a page, later pages named by continuation
  tokens that need encoding ('+', '/', '=').
- S3rver: s3rver (npm; pinned in tests/s3rver/package-lock.json, installed
  by scripts/install-deps.sh), an S3 implementation written elsewhere, on
  127.0.0.1 with one bucket and its data in a temporary directory. Its
  continuation tokens are DES-encrypted, which Node 17+ (OpenSSL 3) refuses
  unless its legacy provider is loaded: without --openssl-legacy-provider
  it answers every truncated listing (over 1,000 keys) with HTTP 500
  (ERR_OSSL_EVP_UNSUPPORTED).
- sigv4_signature: AWS Signature Version 4 from a request's parts, written
  here from AWS's documentation (hashlib/hmac): the S3 tests check libcurl's
  signatures with it and S3rver.put signs its uploads with it.
"""
import base64
import datetime
import hashlib
import hmac
import http.client
import os
import pwd
import re
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape as xml_escape

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
S3RVER = os.environ.get("UREC_S3RVER") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "s3rver",
                                                       "node_modules", ".bin", "s3rver")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port, proc=None, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


class _ServerProcess:
    """A server process listening on 127.0.0.1:self.port, its files in self.prefix."""

    def _wait_until_listening(self, timeout=10.0):
        try:
            _wait_for_port(self.port, self.proc, timeout)
        except Exception:
            self.stop()
            raise

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.prefix, ignore_errors=True)


class Nginx(_ServerProcess):
    """nginx serving `root` on 127.0.0.1:port until stop()."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.prefix = tempfile.mkdtemp(prefix="urec_nginx_")
        self.port = free_port()
        conf = os.path.join(self.prefix, "nginx.conf")
        temp = os.path.join(self.prefix, "temp")
        os.makedirs(temp)
        # As root, nginx's workers would switch to "nobody" and not read the
        # tests' private temporary directories: they stay the current user.
        user = f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""
        with open(conf, "w") as f:
            f.write(f"""
{user}
worker_processes 1;
daemon off;
pid {self.prefix}/nginx.pid;
error_log {self.prefix}/error.log warn;
events {{ worker_connections 512; }}
http {{
  access_log {self.prefix}/access.log;
  client_body_temp_path {temp}/body;
  proxy_temp_path {temp}/proxy;
  fastcgi_temp_path {temp}/fastcgi;
  uwsgi_temp_path {temp}/uwsgi;
  scgi_temp_path {temp}/scgi;
  types {{ }}
  default_type application/octet-stream;
  keepalive_requests 100000;
  server {{
    listen 127.0.0.1:{self.port};
    root {self.root};
    autoindex on;
  }}
}}
""")
        self.proc = subprocess.Popen(
            [NGINX, "-p", self.prefix, "-c", conf, "-e", os.path.join(self.prefix, "error.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._wait_until_listening()

    def requests(self):
        """Lines of the access log so far."""
        try:
            with open(os.path.join(self.prefix, "access.log")) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []



class Fault:
    """One injected fault: applies to requests whose path contains `match`
    (every request when ""), `times` times (None: always).

    kind: "latency" (value: seconds, then forwarded), "status" (value: the
    code answered), "drop" (forward, send the headers and half the body,
    then reset the connection), "truncate" (headers with the full length,
    half the body, then close), "swap" (value: another path on the upstream,
    served instead), "stall" (headers with the full length and half the
    body, then nothing more, the connection held open until the client
    hangs up), "trickle" (value: bytes per second; the whole body at that
    rate, in 4 writes a second)."""

    def __init__(self, kind, match="", times=None, value=None):
        self.kind, self.match, self.times, self.value = kind, match, times, value
        self.hits = 0


class FaultProxy:
    """A proxy on 127.0.0.1:port forwarding to `upstream_port` with faults."""

    def __init__(self, upstream_port, bucket=None):
        self.upstream_port = upstream_port
        self.bucket = bucket  # S3 tests: strip /BUCKET (path-style) or BUCKET. (virtual)
        self.s3_page_keys = 1000  # keys of a ListObjectsV2 page, as S3's default max-keys
        self.faults = []
        self.log = []  # (method, target, host, headers dict)
        self.in_flight = 0
        self.max_in_flight = 0  # requests being answered at once, at most (since clear())
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                proxy._handle(self)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # clients that hang up (after an injected drop) are expected here

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def add(self, kind, match="", times=None, value=None):
        fault = Fault(kind, match, times, value)
        with self.lock:
            self.faults.append(fault)
        return fault

    def clear(self):
        with self.lock:
            self.faults.clear()
            self.log.clear()
            self.max_in_flight = self.in_flight

    def _faults_for(self, path):
        chosen = []
        with self.lock:
            for f in self.faults:
                if f.match in path and (f.times is None or f.hits < f.times):
                    f.hits += 1
                    chosen.append(f)
        return chosen

    def _upstream_path(self, handler):
        """(path on nginx, host, the query of an S3 listing or None)."""
        target = handler.path
        host = handler.headers.get("Host", "")
        if target.startswith("http://"):  # forward-proxy form
            parts = urllib.parse.urlsplit(target)
            host = parts.netloc
            target = parts.path + (("?" + parts.query) if parts.query else "")
        listing = None
        if self.bucket:
            if host.startswith(self.bucket + "."):
                pass  # virtual-hosted: the path is the key
            elif target.startswith("/" + self.bucket):
                target = target[len(self.bucket) + 1:] or "/"
            split = urllib.parse.urlsplit(target)
            query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
            if query.get("list-type") == "2":  # ListObjectsV2: from nginx's listing of the prefix
                listing = query
                target = "/" + query.get("prefix", "")
        return target, host, listing

    def _s3_listing(self, query, html):
        """One ListObjectsV2 page (delimiter "/") of the files nginx's
        listing `html` links to."""
        prefix = query.get("prefix", "")
        names = sorted(urllib.parse.unquote(h) for h in re.findall(r'href="([^"?]+)"', html)
                       if not h.endswith("/"))
        start = 0
        if "continuation-token" in query:
            raw = base64.b64decode(query["continuation-token"], validate=True)  # binascii.Error: not base64
            if raw[:2] != b"\xfb\xff":
                raise ValueError(f"not a token of ours: {query['continuation-token']}")
            start = int(raw[2:])
        page = names[start:start + self.s3_page_keys]
        following = start + len(page)
        truncated = following < len(names)
        xml = ['<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/'
               f'2006-03-01/"><Name>{self.bucket}</Name><Prefix>{xml_escape(prefix)}</Prefix>'
               f'<KeyCount>{len(page)}</KeyCount><MaxKeys>{self.s3_page_keys}</MaxKeys><Delimiter>/</Delimiter>'
               f'<IsTruncated>{"true" if truncated else "false"}</IsTruncated>']
        if truncated:  # base64 of bytes that make '+', '/' and '=' appear
            raw = b"\xfb\xff" + str(following).encode()
            token = base64.b64encode(raw + b" " * ((1 - len(raw)) % 3)).decode()
            xml.append(f"<NextContinuationToken>{token}</NextContinuationToken>")
        for name in page:
            xml.append(f"<Contents><Key>{xml_escape(prefix + name)}</Key><Size>0</Size></Contents>")
        xml.append("</ListBucketResult>")
        return "".join(xml).encode()

    def _handle(self, h):
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._answer(h)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _answer(self, h):
        path, host, listing = self._upstream_path(h)
        with self.lock:
            self.log.append(("GET", h.path, host, dict(h.headers.items())))
        faults = self._faults_for(path)
        for f in faults:
            if f.kind == "latency":
                time.sleep(f.value)
        for f in faults:
            if f.kind == "status":
                body = f"injected {f.value}\n".encode()
                h.send_response(f.value)
                h.send_header("Content-Length", str(len(body)))
                h.end_headers()
                h.wfile.write(body)
                return
            if f.kind == "swap":
                path = f.value
        conn = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=30)
        headers = {"Host": f"127.0.0.1:{self.upstream_port}"}
        if "Range" in h.headers:
            headers["Range"] = h.headers["Range"]
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        if listing is not None and resp.status == 200:
            try:
                body = self._s3_listing(listing, body.decode())
            except ValueError as e:  # binascii.Error too: a token that came back changed
                h.send_response(400)
                body = (f"<Error><Code>InvalidArgument</Code><Message>The continuation token provided is incorrect: "
                        f"{xml_escape(str(e))}</Message></Error>").encode()
                h.send_header("Content-Length", str(len(body)))
                h.end_headers()
                h.wfile.write(body)
                return
        cut = next((f for f in faults if f.kind in ("drop", "truncate", "stall", "trickle")), None)
        h.send_response(resp.status)
        for name, value in resp.getheaders():
            if name.lower() in ("content-range", "content-type", "accept-ranges", "etag", "last-modified"):
                h.send_header(name, value)
        h.send_header("Content-Length", str(len(body)))  # also for nginx's chunked listings
        if cut is not None:
            h.send_header("Connection", "close")
        h.end_headers()
        if cut is None:
            h.wfile.write(body)
            return
        if cut.kind in ("stall", "trickle"):
            self._slow_body(h, body, cut)
            return
        h.wfile.write(body[: len(body) // 2])
        h.wfile.flush()
        h.close_connection = True
        if cut.kind == "drop":  # a reset, not a clean close
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        h.connection.close()

    def _slow_body(self, h, body, fault):
        """A stall or a trickle, until the body ends, the client hangs up
        or stop()."""
        h.close_connection = True
        try:
            if fault.kind == "stall":
                h.wfile.write(body[: len(body) // 2])
                h.wfile.flush()
                # Readable again only when the client closes (nothing more is sent).
                while not self.stopping.is_set():
                    ready, _, _ = select.select([h.connection], [], [], 0.1)
                    if ready and not h.connection.recv(4096, socket.MSG_PEEK):
                        return
                return
            step = max(1, int(fault.value) // 4)
            for pos in range(0, len(body), step):
                if self.stopping.wait(0.25):
                    return
                h.wfile.write(body[pos:pos + step])
                h.wfile.flush()
        except OSError:
            pass  # the client hung up

    def stop(self):
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


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


class S3rver(_ServerProcess):
    """s3rver on 127.0.0.1:port serving `bucket` until stop(), its log in
    self.log_path.

    Its one account's credentials are KEY / SECRET. With --service-endpoint
    localhost it takes BUCKET.s3.localhost as virtual-hosted addressing of
    BUCKET (and s3.localhost, or 127.0.0.1, as path-style); libcurl resolves
    every *.localhost name to the loopback address itself, without DNS or
    /etc/hosts. s3rver 3.7.1 checks of a SigV4 request the form of its
    Authorization header, that the access key id exists (403
    InvalidAccessKeyId), x-amz-content-sha256 (400 without it) and the
    clock (RequestTimeTooSkewed), but not the signature itself
    (lib/middleware/authentication.js: "Signature version 4 calculation is
    unimplemented"; only V2 signatures are checked)."""

    KEY = SECRET = "S3RVER"
    REGION = "us-east-1"

    def __init__(self, bucket="bucket"):
        if not os.access(S3RVER, os.X_OK):
            raise RuntimeError(f"{S3RVER} is missing: run scripts/install-deps.sh (npm ci in tests/s3rver)")
        self.bucket = bucket
        self.prefix = tempfile.mkdtemp(prefix="urec_s3rver_")
        self.port = free_port()
        self.log_path = os.path.join(self.prefix, "s3rver.log")
        data = os.path.join(self.prefix, "data")
        os.makedirs(data)
        # DES for its continuation tokens (the module's docstring).
        env = dict(os.environ, NODE_OPTIONS=(os.environ.get("NODE_OPTIONS", "") + " --openssl-legacy-provider").strip())
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [S3RVER, "-d", data, "-a", "127.0.0.1", "-p", str(self.port), "--service-endpoint", "localhost",
                 "--configure-bucket", bucket], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=env)
        self._wait_until_listening(timeout=30)

    def _send(self, method, key, data, conn, answered):
        """`method` on `key` of the bucket, signed (SigV4), on connection
        `conn` (None: one of its own); refused unless answered `answered`."""
        path = f"/{self.bucket}/{urllib.parse.quote(key)}"
        headers = {"host": f"127.0.0.1:{self.port}",
                   "x-amz-date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"),
                   "x-amz-content-sha256": hashlib.sha256(data).hexdigest()}
        signed = sorted(headers)
        signature = sigv4_signature(self.SECRET, self.REGION, method, path, "", headers, signed)
        headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={self.KEY}/{headers['x-amz-date'][:8]}/"
                                    f"{self.REGION}/s3/aws4_request, SignedHeaders={';'.join(signed)}, "
                                    f"Signature={signature}")
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            if resp.status != answered:
                raise RuntimeError(f"{method} {path}: {resp.status} {body[:300]!r}")
        finally:
            if own:
                conn.close()

    def put(self, key, data, conn=None):
        """PUT bytes `data` at `key` of the bucket, signed (SigV4)."""
        self._send("PUT", key, data, conn, 200)

    def _each_file(self, folder, prefix, send):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            for name in sorted(os.listdir(folder)):
                send(f"{prefix}/{name}", os.path.join(folder, name), conn)
        finally:
            conn.close()

    def put_folder(self, folder, prefix):
        """Every file of `folder` under KEY prefix/NAME, on one connection."""
        def put(key, path, conn):
            with open(path, "rb") as f:
                self.put(key, f.read(), conn)
        self._each_file(folder, prefix, put)

    def delete_folder(self, folder, prefix):
        """The keys prefix/NAME of every file of `folder` deleted."""
        self._each_file(folder, prefix, lambda key, path, conn: self._send("DELETE", key, b"", conn, 204))

    def answers(self, status):
        """How many requests it answered with HTTP `status` (its log)."""
        with open(self.log_path, errors="replace") as f:
            return sum(1 for line in f if f" {status} " in line and "ms" in line)

