"""`nmt-desktop serve` under load (issue 43): 1, 8 and 32 concurrent clients, each sending single sentences.

A real server process is started (`python -m nmt_desktop serve -m MODEL --port 0 --log-json`, the bundled
en-de by default; its port read from the "listening" line). The sentences are the first `--sentences` unique
English sentences of /work/shared/data's Tatoeba en-de dev set (never committed). For each client count, the
clients (threads) take the next sentence from a shared list and POST it alone to LibreTranslate's `/translate`
({"q": sentence, "source": "en", "target": "de", "format": "text"}) until the list is done. Each client is one
keep-alive socket that sends the request's bytes and reads the reply by its Content-Length (`RawClient`, 0.1-0.3 s
of CPU per 1,500 requests); `--client httpx` uses an `httpx.Client` per thread instead, as runs before 2026-11-28
20:00 did (1.0-1.4 s of CPU per 1,500 requests: on a 2-core machine, CPU taken from the server it measures).
Reported per client count: sentences/s (sentences / wall time of the pass), p50 and p99 latency of one request.
Then:

* offline: `Translator.translate_batch` on the same sentences in this process, with the server's decoding
  (greedy, cross-attention on, no alternatives, batches of 32) and the same thread count; the server's
  throughput at 32 clients as a ratio of it (the issue's goal: >= 0.8), and the CPU time the two spent
  (the server's from /proc: a ratio a busy machine changes less than wall time);
* same answers: every answer at 32 clients equals the one client's (sequential) answer for that sentence.

`--rounds` (default 3) repeats every pass and the baseline, interleaved, so that a change in the machine's load
falls on all of them alike; the figures are medians, each round's ratio is kept in the JSON.

`--peer NAME=URL` (repeatable) sends the same sentences with the same clients to another LibreTranslate-API
server already running (LibreTranslate's own on our weights: benchmarks/argos_package.py builds the package,
benchmarks/libretranslate_offline.py runs it), and reports the ratio of its 32-client throughput to ours.

`--in-process` also starts `serve --decode-in-process` (the decoding on a thread of the HTTP process, as before
the decode processes) and measures it in the same rounds: both ratios in one run; `--whole-batches` likewise
starts `serve --whole-batches` (plain lines in whole batches, as before continuous batching). The server's CPU is its
process's and its children's (the decode processes) summed.

Torch threads: `--threads` (default 1) for the server child (`serve --threads`) and for the baseline, so the
two decode on as many cores. The 1-minute load average is recorded: a shared machine shows in it.

    nice -n 19 .venv/bin/python benchmarks/serve_load.py --json /tmp/serve_load.json
    nice -n 19 .venv/bin/python benchmarks/serve_load.py --sentences 100 --clients 1,8 --rounds 1   # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "tatoeba" / "en-de" / "dev.tsv"
sys.path.insert(0, str(ROOT))


@dataclass
class Pass:
    """One server, one client count: every sentence sent once."""

    server: str
    clients: int
    sentences: int
    wall_s: float
    sentences_per_s: float
    p50_ms: float
    p99_ms: float
    errors: int
    client_cpu_s: float  # CPU time of this process (the clients) during the pass
    server_cpu_s: float | None  # CPU time of the server process during the pass (ours only: its pid is known)
    answers: list[str] = field(default_factory=list, repr=False)


def read_sentences(path: Path, count: int) -> list[str]:
    """The first `count` unique English sentences of a Tatoeba TSV (English<TAB>German)."""
    seen: dict[str, None] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        english = line.split("\t", 1)[0].strip()
        if english and english not in seen:
            seen[english] = None
            if len(seen) == count:
                break
    return list(seen)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of `values`."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


class ServerChild:
    """`nmt-desktop serve` in a child process; stdout drained on a thread (a full pipe would stall the server)."""

    def __init__(self, model: str, threads: int, extra: list[str]):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1",
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        command = [sys.executable, "-m", "nmt_desktop", "serve", "-m", model, "--port", "0", "--log-json",
                   "--threads", str(threads), *extra]
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.listening: queue.Queue = queue.Queue()
        self.requests = 0
        threading.Thread(target=self._read, daemon=True).start()
        try:
            event = self.listening.get(timeout=300)
        except queue.Empty:
            event = None
        if event is None:
            self.proc.kill()
            raise SystemExit(f"the server did not start: {self.proc.stderr.read().strip()[-500:]}")
        self.url = f"http://{event['host']}:{event['port']}"
        self.models = event.get("models", [])

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "listening":
                self.listening.put(event)
            elif event.get("event") == "request":
                self.requests += 1
        self.listening.put(None)

    def stop(self) -> int:
        self.proc.terminate()
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def _stat(pid: int | str) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time of a process and of its children (the server's decode processes) so far
    (Linux /proc), None when unknown."""
    if pid is None:
        return None
    fields = _stat(pid)
    if fields is None:
        return None
    ticks = int(fields[11]) + int(fields[12])
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (child := _stat(entry.name)) is not None and child[1] == str(pid):
            ticks += int(child[11]) + int(child[12])
    return ticks / os.sysconf("SC_CLK_TCK")


class RawClient:
    """One keep-alive HTTP/1.1 connection that POSTs prepared JSON bytes and reads the reply by its Content-Length:
    a load generator that costs the machine little (httpx spends about 0.8 ms of CPU per request here, CPU the
    server on the same 2 cores then lacks), so the figures are the server's rather than the client library's."""

    def __init__(self, url: str, timeout: float = 300):
        import socket
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        self.host = parts.netloc
        self.sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout)
        self.buffer = b""

    def post_json(self, path: str, payload: dict) -> tuple[int, bytes]:
        body = json.dumps(payload).encode()
        head = (f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        self.sock.sendall(head + body)
        while b"\r\n\r\n" not in self.buffer:
            self._read()
        header, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = header.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next((int(v) for k, _, v in (line.partition(":") for line in lines[1:])
                       if k.strip().lower() == "content-length"), None)
        if length is None:
            raise ValueError(f"a reply without Content-Length from {self.host}: use --client httpx")
        while len(self.buffer) < length:
            self._read()
        reply, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, reply

    def _read(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


def run_pass(name: str, url: str, sentences: list[str], clients: int, source: str, target: str,
             server_pid: int | None = None, client_kind: str = "raw") -> Pass:
    """Send every sentence once from `clients` threads (a RawClient or an httpx.Client each); the answers in
    sentence order."""
    import httpx

    answers: list[str] = [""] * len(sentences)
    latencies: list[float] = []
    errors: list[str] = []
    next_index = iter(range(len(sentences)))
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)

    def post(http, payload: dict) -> tuple[bool, str]:
        if client_kind == "httpx":
            reply = http.post("/translate", json=payload)
            ok = reply.status_code == 200
            return ok, reply.json().get("translatedText", "") if ok else reply.text[:200]
        status, body = http.post_json("/translate", payload)
        return status == 200, json.loads(body).get("translatedText", "") if status == 200 else body[:200].decode()

    def client() -> None:
        http = httpx.Client(base_url=url, timeout=300) if client_kind == "httpx" else RawClient(url)
        try:
            start.wait()
            while True:
                with lock:
                    i = next(next_index, None)
                if i is None:
                    return
                t0 = time.perf_counter()
                try:
                    ok, text = post(http, {"q": sentences[i], "source": source, "target": target, "format": "text"})
                except (httpx.HTTPError, OSError, ValueError) as exc:
                    ok, text = False, f"{type(exc).__name__}: {exc}"
                ms = 1000 * (time.perf_counter() - t0)
                with lock:
                    latencies.append(ms)
                    if ok:
                        answers[i] = text
                    else:
                        errors.append(text)
        finally:
            http.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0, cpu0, server0 = time.perf_counter(), time.process_time(), cpu_seconds(server_pid)
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    client_cpu, server1 = time.process_time() - cpu0, cpu_seconds(server_pid)
    server_cpu = round(server1 - server0, 2) if server0 is not None and server1 is not None else None
    if errors:
        print(f"  {name}: {len(errors)} errors, first: {errors[0]}", file=sys.stderr)
    return Pass(name, clients, len(sentences), round(wall, 3), round(len(sentences) / wall, 2),
                round(percentile(latencies, 50), 1), round(percentile(latencies, 99), 1), len(errors),
                round(client_cpu, 2), server_cpu, answers)


class Offline:
    """`Translator.translate_batch` in this process with the server's decoding (greedy, cross-attention on, no
    alternatives) and thread count: the baseline the server's throughput is a ratio of."""

    def __init__(self, model: str, threads: int):
        import torch

        from nmt_desktop.core.config import DecodeConfig
        from nmt_desktop.core.decoding.translator import Translator

        torch.set_num_threads(threads)
        self.translator = Translator.load(model)
        self.cfg = DecodeConfig(beam_size=1, attention=True, alternatives=0)

    def batched(self, sentences: list[str]) -> tuple[float, float, list[str]]:
        """(sentences/s, CPU seconds, translations) in batches of 32, as the server batches."""
        t0, cpu0 = time.perf_counter(), time.process_time()
        results = self.translator.translate_batch(sentences, self.cfg, batch_size=32)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        return len(sentences) / wall, cpu, [r.text for r in results]

    def one_by_one(self, sentences: list[str]) -> float:
        """Sentences/s one sentence per call: the best one client's requests could get."""
        t0 = time.perf_counter()
        for sentence in sentences:
            self.translator.translate_batch([sentence], self.cfg, batch_size=1)
        return len(sentences) / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "en-de"), help="model to serve (default: bundled en-de)")
    parser.add_argument("--data", type=Path, default=DATA, help="Tatoeba TSV to take English sentences from")
    parser.add_argument("--sentences", type=int, default=300, help="how many unique sentences (default 300)")
    parser.add_argument("--clients", default="1,8,32", help="client counts, comma-separated (default 1,8,32)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every pass and the baseline (default 3)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the server and the baseline")
    parser.add_argument("--source", default="en")
    parser.add_argument("--target", default="de")
    parser.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                        help="one more argument for `serve` (repeatable)")
    parser.add_argument("--peer", action="append", default=[], metavar="NAME=URL",
                        help="another LibreTranslate-API server already running, measured alike")
    parser.add_argument("--in-process", action="store_true",
                        help="also run `serve --decode-in-process` (decoding on a thread of the HTTP process, as "
                             "before the decode processes) in the same rounds, as server \"ours-in-process\"")
    parser.add_argument("--whole-batches", action="store_true",
                        help="also run `serve --whole-batches` (plain lines in whole batches, as before continuous "
                             "batching) in the same rounds, as server \"ours-whole-batches\"")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw",
                        help="raw: one keep-alive socket per client thread, little CPU (default); httpx: an "
                             "httpx.Client per thread, as earlier runs measured")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the results as JSON here")
    args = parser.parse_args(argv)

    counts = [int(c) for c in args.clients.split(",")]
    top = max(counts)
    sentences = read_sentences(args.data, args.sentences)
    load_before = os.getloadavg()[0]
    print(f"{len(sentences)} sentences from {args.data}; clients {counts}; {args.rounds} rounds; {args.threads} "
          f"thread(s); load average {load_before:.2f} on {os.cpu_count()} CPUs", flush=True)

    baseline = Offline(args.model, args.threads)
    baseline.batched(sentences[:32])  # warm-up: first-call allocations
    children = {"ours": ServerChild(args.model, args.threads, args.serve_arg)}
    variants = {"ours-in-process": "--decode-in-process", "ours-whole-batches": "--whole-batches"}
    for name, flag in variants.items():
        if getattr(args, name.removeprefix("ours-").replace("-", "_")):
            children[name] = ServerChild(args.model, args.threads, [*args.serve_arg, flag])
    servers = [(name, child.url) for name, child in children.items()] + [tuple(peer.split("=", 1)) for peer in args.peer]
    passes: list[Pass] = []
    rounds: list[dict] = []
    try:
        for name, url in servers:
            run_pass(name, url, sentences[:8], 1, args.source, args.target, client_kind=args.client)  # warm-up
        for r in range(args.rounds):  # every server and the baseline in each round: a load change hits all alike
            this: dict = {"round": r + 1, "load": round(os.getloadavg()[0], 2)}
            tops: dict[str, Pass] = {}
            for name, url in servers:
                pid = children[name].proc.pid if name in children else None
                for n in counts:
                    passes.append(run_pass(name, url, sentences, n, args.source, args.target, pid, args.client))
                    _print(passes[-1])
                    this[f"{name}_{n}"] = passes[-1].sentences_per_s
                    if n == top:
                        tops[name] = passes[-1]
            rate, cpu, offline_texts = baseline.batched(sentences)
            this.update(offline=round(rate, 2), offline_cpu_s=round(cpu, 2))
            for name in children:
                suffix = "" if name == "ours" else "_" + name.removeprefix("ours-").replace("-", "_")
                this["ratio" + suffix] = round(this[f"{name}_{top}"] / rate, 3)
                this["cpu_ratio" + suffix] = (round(cpu / tops[name].server_cpu_s, 3) if tops[name].server_cpu_s
                                              else None)
                print(f"  round {r + 1}: offline translate_batch {rate:.2f} sentences/s ({cpu:.1f} s CPU); {name} "
                      f"at {top} clients / offline = {this['ratio' + suffix]}, offline CPU / server CPU = "
                      f"{this['cpu_ratio' + suffix]}", flush=True)
            rounds.append(this)
        if 1 not in counts:  # the sequential answers the top count's must equal: one client, once
            passes.append(run_pass("ours", children["ours"].url, sentences, 1, args.source, args.target, client_kind=args.client))
    finally:
        codes = {name: child.stop() for name, child in children.items()}
        code = codes["ours"]
    alone = baseline.one_by_one(sentences)
    print(f"offline one sentence per call: {alone:.2f} sentences/s", flush=True)

    def median_of(name: str, n: int, key: str) -> float:
        return round(statistics.median(getattr(p, key) for p in passes if p.server == name and p.clients == n), 2)

    report: dict = {"sentences": len(sentences), "data": str(args.data), "threads": args.threads, "client": args.client,
                    "model": args.model, "load_before": round(load_before, 2),
                    "load_after": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(), "server_exit_code": code,
                    "medians": {f"{name} {n}": {k: median_of(name, n, k) for k in ("sentences_per_s", "p50_ms",
                                                                                  "p99_ms")}
                                for name, _ in servers for n in counts},
                    "offline_sentences_per_s": round(statistics.median(r["offline"] for r in rounds), 2),
                    "offline_one_by_one_sentences_per_s": round(alone, 2),
                    f"ratio_{top}_clients_to_offline": round(statistics.median(r["ratio"] for r in rounds), 3),
                    "rounds": rounds}
    if all(r["cpu_ratio"] for r in rounds):
        report["offline_cpu_to_server_cpu"] = round(statistics.median(r["cpu_ratio"] for r in rounds), 3)
    for name, child in children.items():  # every client count's ratios, medians over the rounds
        cpus = {n: [p.server_cpu_s for p in passes if p.server == name and p.clients == n] for n in counts}
        report[f"{name} to offline"] = {n: {
            "ratio": round(statistics.median(r[f"{name}_{n}"] / r["offline"] for r in rounds), 3),
            "cpu_ratio": (round(statistics.median(r["offline_cpu_s"] / c for r, c in zip(rounds, cpus[n])), 3)
                          if all(cpus[n]) else None)} for n in counts}
    for name in children:
        if name != "ours":
            report["server_exit_code_" + name.removeprefix("ours-").replace("-", "_")] = codes[name]
    ours = {p.clients: p for p in passes if p.server == "ours"}  # the last round's
    sequential = next(p for p in passes if p.server == "ours" and p.clients == 1)
    differ = [i for p in passes if p.server == "ours" and p.clients == top
              for i, (a, b) in enumerate(zip(sequential.answers, p.answers)) if a != b]
    report[f"answers_{top}_equal_sequential"] = not differ
    report["answers_differing"] = [{"source": sentences[i], "sequential": sequential.answers[i]} for i in differ[:5]]
    report["answers_equal_offline"] = sum(a == b for a, b in zip(ours[top].answers, offline_texts))
    report["answers_unlike_offline"] = [{"source": s, "served": a, "offline": b} for s, a, b in
                                        zip(sentences, ours[top].answers, offline_texts) if a != b][:5]
    for name in children:
        if name != "ours":
            theirs = {p.clients: p for p in passes if p.server == name}
            report["answers_equal_" + name.removeprefix("ours-").replace("-", "_")] = sum(
                a == b for a, b in zip(ours[top].answers, theirs[top].answers))
    for peer, _ in servers[len(children):]:
        theirs = {p.clients: p for p in passes if p.server == peer}
        report[f"ratio_{top}_clients_{peer}_to_ours"] = round(
            median_of(peer, top, "sentences_per_s") / median_of("ours", top, "sentences_per_s"), 3)
        report[f"answers_equal_{peer}"] = sum(a == b for a, b in zip(ours[top].answers, theirs[top].answers))
    report["passes"] = [{k: v for k, v in asdict(p).items() if k != "answers"} for p in passes]
    print(json.dumps({k: v for k, v in report.items() if k not in ("passes", "rounds")}, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


def _print(p: Pass) -> None:
    server_cpu = f", server CPU {p.server_cpu_s:.1f} s" if p.server_cpu_s is not None else ""
    print(f"  {p.server:>14} {p.clients:>3} clients: {p.sentences_per_s:8.2f} sentences/s, p50 {p.p50_ms:7.1f} ms, "
          f"p99 {p.p99_ms:7.1f} ms, {p.errors} errors, client CPU {p.client_cpu_s:.1f} s{server_cpu}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
