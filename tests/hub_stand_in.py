"""A local stand-in for the Hugging Face Hub: an HTTP server on 127.0.0.1 serving repos in the
Hub's URL layout, reached by huggingface_hub through HF_ENDPOINT; and a tiny random Marian repo
made with transformers' own `save_pretrained` (the layout of a real OPUS-MT repo).

Endpoints (what huggingface_hub 0.30-2.x asks for):
  GET  /api/models?author=&search=&limit=&expand=   the listing of `HfApi.list_models`
  GET  /api/models/OWNER/NAME[/revision/REV]?blobs=1 `HfApi.model_info(files_metadata=True)`
  HEAD|GET /OWNER/NAME/resolve/REV/FILE              `hf_hub_download` (Range requests honoured)

Fault injection, per file name: `drop_once[name] = n` sends only n bytes of the first GET and
closes the connection (huggingface_hub then resumes with a Range request); `corrupt` serves bytes
that differ from the listed checksums; `forbidden` answers HTTP 403.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

LFS_SUFFIXES = (".safetensors", ".bin", ".spm", ".h5", ".ot")


@dataclass
class StandInRepo:
    repo: str
    files: dict[str, bytes]
    sha: str = "0123456789abcdef0123456789abcdef01234567"
    tags: list[str] = field(default_factory=lambda: ["transformers", "marian", "translation", "license:cc-by-4.0"])
    downloads: int = 1000
    parameters: int | None = None
    license: str = "cc-by-4.0"  # the model card's metadata (cardData), as model_info returns it

    def sibling(self, name: str) -> dict:
        data = self.files[name]
        entry = {"rfilename": name, "size": len(data),
                 "blobId": hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()}
        if name.endswith(LFS_SUFFIXES):
            entry["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
        return entry

    def etag(self, name: str) -> str:
        s = self.sibling(name)
        return s["lfs"]["sha256"] if "lfs" in s else s["blobId"]


class HubStandIn:
    """The server; use as a context manager. `url` is what HF_ENDPOINT should be set to."""

    def __init__(self, repos: list[StandInRepo] | None = None):
        self.repos = {r.repo: r for r in repos or []}
        self.requests: list[tuple[str, str, str]] = []  # (method, path, Range header)
        self.drop_once: dict[str, int] = {}
        self.corrupt: set[str] = set()
        self.forbidden: set[str] = set()  # files answered with HTTP 403 (a download that fails midway)
        self.delay_s = 0.0  # before each 64 KiB chunk of a file, to make downloads slow enough to cancel
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def add(self, repo: StandInRepo) -> None:
        self.repos[repo.repo] = repo

    def __enter__(self) -> "HubStandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def range_requests(self, name: str) -> list[str]:
        return [r for m, p, r in self.requests if m == "GET" and p.endswith("/" + name) and r]

    def _handler(self) -> type:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _send_json(self, data: object, status: int = 200) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _error(self, status: int, code: str, message: str) -> None:
                body = json.dumps({"error": message}).encode()
                self.send_response(status)
                self.send_header("X-Error-Code", code)
                self.send_header("X-Error-Message", message)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def do_HEAD(self) -> None:
                self.do_GET()

            def do_GET(self) -> None:
                url = urlparse(self.path)
                path = unquote(url.path)
                with hub._lock:
                    hub.requests.append((self.command, path, self.headers.get("Range", "")))
                if path == "/api/models":
                    return self._list(parse_qs(url.query))
                m = re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/([^/]+))?", path)
                if m:
                    return self._info(m.group(1))
                m = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
                if m:
                    return self._file(m.group(1), m.group(2), m.group(3))
                self._error(404, "NotFound", f"no route {path}")

            def _list(self, query: dict) -> None:
                author = (query.get("author") or [""])[0]
                search = (query.get("search") or [""])[0].lower()
                items = []
                for r in hub.repos.values():
                    if author and not r.repo.startswith(author + "/"):
                        continue
                    if search and search not in r.repo.lower():
                        continue
                    item = {"id": r.repo, "modelId": r.repo, "tags": r.tags, "downloads": r.downloads}
                    if r.parameters:
                        item["safetensors"] = {"parameters": {"F32": r.parameters}, "total": r.parameters}
                    items.append(item)
                self._send_json(items)

            def _info(self, repo: str) -> None:
                r = hub.repos.get(repo)
                if r is None:
                    return self._error(404, "RepoNotFound", "Repository not found")
                self._send_json({"id": r.repo, "modelId": r.repo, "sha": r.sha, "tags": r.tags,
                                 "downloads": r.downloads, "cardData": {"license": r.license} if r.license else {},
                                 "siblings": [r.sibling(n) for n in sorted(r.files)]})

            def _file(self, repo: str, revision: str, name: str) -> None:
                r = hub.repos.get(repo)
                if r is None:
                    return self._error(404, "RepoNotFound", "Repository not found")
                if revision not in (r.sha, "main"):
                    return self._error(404, "RevisionNotFound", "Invalid rev id")
                if name not in r.files:
                    return self._error(404, "EntryNotFound", "Entry not found")
                if name in hub.forbidden:
                    return self._error(403, "Forbidden", "Access to this file is forbidden")
                data = r.files[name]
                if name in hub.corrupt:
                    data = bytes([data[0] ^ 0xFF]) + data[1:]
                start = 0
                rng = self.headers.get("Range", "")
                m = re.fullmatch(r"bytes=(\d+)-", rng)
                if m and self.command == "GET":
                    start = int(m.group(1))
                self.send_response(206 if start else 200)
                self.send_header("X-Repo-Commit", r.sha)
                self.send_header("ETag", f'"{r.etag(name)}"')
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(len(data) - start))
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if self.command == "HEAD":
                    return
                body = data[start:]
                with hub._lock:
                    cut = hub.drop_once.pop(name, None) if not start else None
                if cut is not None:
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                try:
                    for i in range(0, len(body), 1 << 16):
                        if hub.delay_s:
                            time.sleep(hub.delay_s)
                        self.wfile.write(body[i:i + (1 << 16)])
                except (BrokenPipeError, ConnectionResetError):  # the client cancelled or went away
                    self.close_connection = True

        return Handler


_WORDS = ("the house is small and the garden is big . a cat sat on the mat . we like green trees "
          "and red birds ; where is the station ? it is near the old bridge").split()


def _spm(folder: Path, name: str, seed: int) -> Path:
    import sentencepiece as spm

    rng = random.Random(seed)
    corpus = folder / f"{name}.txt"
    corpus.write_text("\n".join(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12)))
                                for _ in range(300)) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / name), model_type="unigram",
                                   vocab_size=40, character_coverage=1.0, num_threads=1, minloglevel=2)
    return folder / f"{name}.model"


def make_marian_repo(folder: Path, repo: str = "Helsinki-NLP/opus-mt-en-de", weights: str = "safetensors",
                     seed: int = 0, d_model: int = 16, layers: int = 1, heads: int = 2) -> StandInRepo:
    """A random MarianMTModel (tiny by default: d 16, 1+1 layers) saved by transformers as a Hub repo's files."""
    import sentencepiece as spm
    import torch
    from transformers import MarianConfig, MarianMTModel

    folder.mkdir(parents=True, exist_ok=True)
    src, tgt = _spm(folder, "src", seed + 1), _spm(folder, "tgt", seed + 2)
    vocab = {"</s>": 0, "<unk>": 1}
    for model in (src, tgt):
        sp = spm.SentencePieceProcessor(model_file=str(model))
        for i in range(sp.get_piece_size()):
            if not (sp.is_control(i) or sp.is_unknown(i)):
                vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    config = MarianConfig(vocab_size=len(vocab), d_model=d_model, encoder_layers=layers, decoder_layers=layers,
                          encoder_attention_heads=heads, decoder_attention_heads=heads, encoder_ffn_dim=4 * d_model,
                          decoder_ffn_dim=4 * d_model,
                          max_position_embeddings=64, pad_token_id=vocab["<pad>"], eos_token_id=0,
                          decoder_start_token_id=vocab["<pad>"], forced_eos_token_id=0, scale_embedding=True)
    torch.manual_seed(seed)
    model = MarianMTModel(config).eval()
    out = folder / "hf"
    model.save_pretrained(out, safe_serialization=(weights == "safetensors"))
    if weights == "bin" and not (out / "pytorch_model.bin").is_file():  # newer transformers always write safetensors
        from safetensors.torch import load_file

        torch.save(load_file(str(out / "model.safetensors")), out / "pytorch_model.bin")
        (out / "model.safetensors").unlink()
    files = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    files["source.spm"], files["target.spm"] = src.read_bytes(), tgt.read_bytes()
    files["vocab.json"] = json.dumps(vocab, ensure_ascii=False).encode()
    files["tokenizer_config.json"] = json.dumps({"source_lang": "en", "target_lang": "de"}).encode()
    files["README.md"] = b"---\nlicense: cc-by-4.0\n---\n# tiny random stand-in\n"
    files["tf_model.h5"] = b"\0" * 4096  # a file the converter does not need: must not be downloaded
    params = sum(p.numel() for p in model.parameters())
    return StandInRepo(repo, files, parameters=params)
