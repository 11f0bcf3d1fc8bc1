"""A loopback fake of the Hugging Face Hub endpoints that ``huggingface_hub`` 2.4.0 ``snapshot_download`` uses.

Read from the installed huggingface_hub 2.4.0 (``_snapshot_download.py``, ``file_download.py``, ``hf_api.py``):
- ``GET  /api/models/{repo}/revision/{rev}``  -> model info JSON; ``sha`` is the commit (``HfApi.model_info``)
- ``GET  /api/models/{repo}/tree/{commit}?recursive=True`` -> ``[{"type": "file", "path", "size", "oid", "lfs"?}]``
  (``HfApi.list_repo_tree``; pagination by a ``Link`` header, none here)
- ``HEAD /{repo}/resolve/{commit}/{file}`` -> ``X-Repo-Commit``, ``ETag``, ``Content-Length`` (``get_hf_file_metadata``)
- ``GET  /{repo}/resolve/{commit}/{file}`` -> the bytes; ``Range: bytes=N-`` answered 206 (``http_get`` resumes)
- (``GET /api/agent-harnesses``, huggingface_hub's best-effort agent registry, gets a 404 and is ignored by it)
Errors carry ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``) as the Hub does, which
``hf_raise_for_status`` maps to its exception types. Binds 127.0.0.1 on a random port; nothing else is contacted.

``python tests/retrieval/fake_hub.py`` builds a tiny cross-encoder and serves it until Ctrl-C (for the demo).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

_INFO = re.compile(r"^/api/models/([^/]+/[^/]+)/revision/([^/]+)$")
_TREE = re.compile(r"^/api/models/([^/]+/[^/]+)/tree/([^/]+)$")
_RESOLVE = re.compile(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")


@dataclass
class FakeRepo:
    files: dict[str, bytes]
    commit: str = ""
    revisions: dict[str, str] = field(default_factory=dict)  # branch/tag -> commit

    def __post_init__(self) -> None:
        if not self.commit:
            digest = hashlib.sha1(b"".join(sorted(hashlib.sha1(v).digest() for v in self.files.values())))
            self.commit = digest.hexdigest()
        self.revisions.setdefault("main", self.commit)

    def commit_for(self, rev: str) -> str | None:
        return self.commit if rev == self.commit else self.revisions.get(rev)


@dataclass
class FakeHub:
    """The server's state: repos, a request log, and a file whose downloads are cut mid-way when ``drop`` is set."""

    repos: dict[str, FakeRepo] = field(default_factory=dict)
    drop: str | None = None  # a file name: GET sends half of it then closes; resumed (Range) GETs are refused
    stall: str | None = None  # a file name: GET sends half of it, sets ``stalled`` and waits for ``release``
    stalled: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    requests: list[tuple[str, str]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeHub:
        hub = self

        class Handler(_Handler):
            state = hub

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def repo_from_dir(folder: Path) -> FakeRepo:
    return FakeRepo({p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
                     if p.is_file()})


def _git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    state: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        self.state.requests.append((self.command, path))
        if m := _INFO.match(path):
            return self._info(m.group(1), m.group(2))
        if m := _TREE.match(path):
            return self._tree(m.group(1), m.group(2))
        if m := _RESOLVE.match(path):
            return self._file(m.group(1), m.group(2), m.group(3), head)
        return self._error(404, "EntryNotFound", f"no route {path}")

    def _repo(self, rid: str, rev: str) -> tuple[FakeRepo, str] | None:
        repo = self.state.repos.get(rid)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return None
        commit = repo.commit_for(rev)
        if commit is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            return None
        return repo, commit

    def _info(self, rid: str, rev: str) -> None:
        if (found := self._repo(rid, rev)) is None:
            return
        repo, commit = found
        self._json({"id": rid, "modelId": rid, "sha": commit, "private": False,
                    "siblings": [{"rfilename": p} for p in repo.files]})

    def _tree(self, rid: str, rev: str) -> None:
        if (found := self._repo(rid, rev)) is None:
            return
        repo, _ = found
        items = []
        for p, data in repo.files.items():
            item: dict[str, Any] = {"type": "file", "path": p, "size": len(data), "oid": _git_blob_oid(data)}
            if p.endswith(".safetensors"):
                item["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            items.append(item)
        self._json(items)

    def _file(self, rid: str, rev: str, name: str, head: bool) -> None:
        if (found := self._repo(rid, rev)) is None:
            return
        repo, commit = found
        data = repo.files.get(name)
        if data is None:
            return self._error(404, "EntryNotFound", f"{name} does not exist")
        if self.state.drop == name and "Range" in self.headers and not head:
            self.close_connection = True  # refuse to resume: close without an answer
            return
        start = int(self.headers["Range"].split("=")[1].split("-")[0]) if "Range" in self.headers else 0
        self.send_response(206 if start else 200)
        self.send_header("X-Repo-Commit", commit)
        self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(data) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if head:
            return
        if self.state.stall == name:
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.state.stalled.set()
            self.state.release.wait(60)
            self.close_connection = True
            return
        if self.state.drop == name:
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(data[start:])

    def _json(self, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, code: str, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


WORDS = ("what drove revenue growth data center demand export controls china supply chain risk the a of and in to "
         "for gpu sales rose fell margin guidance quarter year foundry partners constraints cat sat mat")


def build_tiny_cross_encoder(out: Path) -> Path:
    """A 2-layer, 32-wide BERT sequence classifier (num_labels=1, 512 positions like ms-marco-MiniLM-L6-v2) with a
    few-word WordPiece vocab, saved to ``out`` the way cross-encoders are published (config.json, model.safetensors,
    tokenizer files)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    vocab = out / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(WORDS.split())]) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True, model_max_length=512)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main() -> None:  # pragma: no cover - the demo entry point
    import argparse
    import tempfile
    import time

    ap = argparse.ArgumentParser(description="Serve a tiny cross-encoder on a loopback fake Hugging Face Hub.")
    ap.add_argument("--repo", default="cross-encoder/ms-marco-MiniLM-L6-v2")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fake-hub-") as tmp:
        hub = FakeHub({args.repo: repo_from_dir(build_tiny_cross_encoder(Path(tmp) / "model"))}).start()
        print(f"HF_ENDPOINT={hub.url}  serving {args.repo} @ {hub.repos[args.repo].commit}", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            hub.stop()


if __name__ == "__main__":  # pragma: no cover
    main()
