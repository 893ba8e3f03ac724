"""The pieces scale/faults.py and scale/figures.py share: Kafka brokers through
scale/kafka.sh, and `datalith serve` nodes driven over HTTP in tagged JSON."""

import hashlib
import http.client
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KAFKA = os.path.join(HERE, "kafka.sh")


def say(*a):
    print("[scale]", *a, file=sys.stderr, flush=True)


class Node:
    """One `datalith serve --log` process on its own directory."""

    def __init__(self, name, binary, root, log_url, extra=()):
        self.name = name
        self.binary = binary
        self.dir = os.path.join(root, name)
        os.makedirs(self.dir, exist_ok=True)
        self.log_url = log_url
        self.extra = list(extra)
        self.proc = None
        self.host = None
        self.port = None
        self.starts = 0
        self.paused = False

    def start(self):
        stderr = open(os.path.join(self.dir, f"stderr-{self.starts}.txt"), "w")
        self.starts += 1
        log = ["--log", self.log_url] if self.log_url else []
        self.proc = subprocess.Popen(
            [self.binary, "serve", os.path.join(self.dir, "db"), "--listen", "127.0.0.1:0",
             *log, "--max-concurrent", "256", *self.extra],
            stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        if "listening on " not in line:
            raise SystemExit(f"{self.name} did not start: {line!r}; see {stderr.name}")
        url = line.split("listening on ")[1].split()[0]
        hostport = url.split("//")[1]
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        say(f"{self.name} listening on {url}")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        say(f"{self.name} killed (SIGKILL)")

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def request(self, method, path, body=None, timeout=90):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            headers = {"Accept": "application/json"}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read() or b"null")
        finally:
            conn.close()

    def stat(self):
        status, body = self.request("GET", "/db/db/stat")
        if status != 200:
            raise RuntimeError(f"{self.name} stat: {status} {body}")
        return body

    def digest(self, basis):
        """sha256 of every datom at `basis`, in EAVT order, and how many there are."""
        h = hashlib.sha256()
        offset, count = 0, 0
        while True:
            body = {":index": {"#kw": ":eavt"}, ":limit": 100000, ":offset": offset,
                    ":basis-t": basis}
            status, page = self.request("POST", "/db/db/datoms", body)
            if status != 200:
                raise RuntimeError(f"{self.name} datoms: {status} {page}")
            for d in page[":result"]:
                h.update(json.dumps(d, sort_keys=True).encode())
                h.update(b"\n")
                count += 1
            nxt = page.get(":next-offset")
            if nxt is None:
                return h.hexdigest(), count
            offset = nxt

    def keys(self, basis):
        """Every :fault/key the node holds at `basis`."""
        body = {":query": "[:find [?k ...] :where [_ :fault/key ?k]]", ":basis-t": basis,
                ":timeout": 60000}
        status, out = self.request("POST", "/db/db/q", body)
        if status != 200:
            raise RuntimeError(f"{self.name} keys: {status} {out}")
        return set(out[":result"] or [])


def kafka(*args):
    out = subprocess.run([KAFKA, *args], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def partition_leader(topic):
    """The broker number leading partition 0 of `topic` (Kafka's own topic tool)."""
    cp = open(os.path.join(HERE, ".cache", "classpath.txt")).read().strip()
    out = subprocess.run(
        ["java", "-cp", cp, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
         kafka("bootstrap"), "--describe", "--topic", topic],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "Leader:" in line:
            return int(line.split("Leader:")[1].split()[0])
    raise RuntimeError(f"no leader in: {out}")


def percentiles(xs):
    if not xs:
        return None, None
    xs = sorted(xs)
    pick = lambda q: round(1000 * xs[min(len(xs) - 1, int(q * len(xs)))], 2)
    return pick(0.50), pick(0.99)
