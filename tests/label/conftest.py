"""A small real corpus and run store for the labelling tests, written as mining and running
write them (``CorpusWriter``, ``RunStore``). Condition and model names are unusual strings
so a test can prove no page or packet names them.

case-1 has a mirror (the same change the other way, a clean case) that both conditions
review in silence: a claim naming d-1 identifies it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from reviewbench.records import (
    Case,
    CorpusCounts,
    CorpusMeta,
    Defect,
    Finding,
    GoldRecord,
    Location,
    Provenance,
    RepoInfo,
    Validation,
)
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunRow, RunStore

from ..score.mirrors import mirror_id, paired

CONDITIONS = ("condalphasecret", "condbetasecret")
MODEL = "modelzetasecret-7b"
PROMPT_SHA = "f" * 64

PATCH = """\
diff --git a/app/{name}.py b/app/{name}.py
--- a/app/{name}.py
+++ b/app/{name}.py
@@ -1,3 +1,3 @@
 def parse(items):
-    return items[0:len(items)]
+    return items[0:len(items) - 1]
 # end
"""

MIRROR_PATCH = """\
diff --git a/app/{name}.py b/app/{name}.py
--- a/app/{name}.py
+++ b/app/{name}.py
@@ -1,3 +1,3 @@
 def parse(items):
-    return items[0:len(items) - 1]
+    return items[0:len(items)]
 # end
"""

# case id: (defects [(id, description, line)], validation status)
CASES = {
    "case-1": ([("d-1", "slice drops the last item (off by one)", 2)], "observed"),
    "case-2": ([("d-2", "wrong key used for lookup", 2), ("d-3", "missing None check", 3)], "observed"),
    "case-3": ([], "not_observed"),
}
# What names a defect (the enclosing `parse` says only where).
HINTS = {"d-1": ["last item"]}
MIRRORED = ("case-1",)
CASE_IDS = (*CASES, *(mirror_id(c) for c in MIRRORED))

LONG = ("The slice now stops one item early, so the last element is silently dropped. "
        "Callers that page through results will lose one record per page. "
        "Restore the old bound, or add a regression test that covers the final element of the list so it stays fixed.")  # fmt: skip

# (condition, case) -> claims
FINDINGS = {
    (CONDITIONS[0], "case-1"): ["parse drops the last item <script>window.__xss=1</script>", "style nit"],
    (CONDITIONS[1], "case-1"): [LONG],
    (CONDITIONS[0], "case-2"): ["lookup uses the wrong key", "None is not checked", "rename variable"],
    (CONDITIONS[1], "case-2"): ["maybe a problem here"],
    (CONDITIONS[0], "case-3"): ["unused import"],
}


def run_id(case_id: str, condition: str, rep: int = 0) -> str:
    return hashlib.sha256(f"{case_id}\0{condition}\0{rep}".encode()).hexdigest()[:16]


def write_corpus(out: Path) -> Path:
    with CorpusWriter(out) as writer:
        for cid, (defects, status) in CASES.items():
            gold_defects = [
                Defect(defect_id=did, defect_class="fix_reversal", description=desc,
                       locations=[Location(path=f"app/{cid}.py", start_line=line, end_line=line, symbol="parse")],
                       hint_terms=HINTS.get(did, []))
                for did, desc, line in defects
            ]  # fmt: skip
            case = Case(case_id=cid, base="0" * 40, title="Update parser module", patch=f"patches/{cid}.diff",
                        paths=[f"app/{cid}.py"], language="python")
            gold = GoldRecord(case_id=cid, stratum="control" if not defects else "fix_reversal",
                              expect_finding=bool(defects), defects=gold_defects, provenance=Provenance(),
                              validation=Validation(status=status, test_cmd="pytest -q", exit_code=1 if defects else 0,
                                                    failing_tests=["tests/test_parse.py::test_last"] if defects else []))
            records = paired(case, gold) if cid in MIRRORED else [(case, gold)]
            for (c, g), patch in zip(records, (PATCH, MIRROR_PATCH), strict=False):
                writer.add(c, g, patch.format(name=cid).encode())
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=len(CASE_IDS), by_stratum={"fix_reversal": 2, "control": 1, "mirror": 1},
                                matched_commits=2, dropped={}),
        ))  # fmt: skip
    (out / "logs").mkdir()
    (out / "logs" / "case-1.log").write_text("=== patched (suite) run 1\nFAILED tests/test_parse.py::test_last - "
                                              "assert [1, 2] == [1, 2, 3]\n=== status: observed\n")
    return out


def write_runs(out: Path, corpus: Path, findings: dict | None = None, repeats: int = 1,
               extra: dict | None = None) -> Path:
    """Runs of every condition on every case, ``repeats`` times each (the same findings every
    time, plus ``extra[(condition, case, repetition)]``); the run store is created if new.
    A claim is its text (at line 2) or a (text, line) pair."""
    findings_by_run = FINDINGS if findings is None else findings
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out.mkdir(parents=True, exist_ok=True)
    store = RunStore(out / "runs.sqlite", create=True)
    experiment = {"corpus": str(corpus), "condition": [{"name": c, "reviewer": {"kind": "openai", "model": MODEL}}
                                                       for c in CONDITIONS]}  # fmt: skip
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha, "experiment": json.dumps(experiment)})
    for condition, case_id, rep in ((c, k, r) for c in CONDITIONS for k in CASE_IDS for r in range(repeats)):
        claims = [*findings_by_run.get((condition, case_id), []), *(extra or {}).get((condition, case_id, rep), [])]
        placed = [c if isinstance(c, tuple) else (c, 2) for c in claims]
        findings = [Finding(path=f"app/{case_id}.py", line=line, claim=c, raw=f"app/{case_id}.py:{line} {c}")
                    for c, line in placed]  # fmt: skip
        store.record(RunRow(
            run_id=run_id(case_id, condition, rep), case_id=case_id, condition=condition, repetition=rep,
            variant="original", state="completed_findings" if findings else "completed_no_findings",
            started_at=None, ended_at=None, latency_s=1.0, attempts=1, cached=False,
            model_requested=MODEL, model_returned=MODEL, params={}, prompt_sha256=PROMPT_SHA,
            guidance_sha256=None, gold_sha256=gold_sha, tool_version="test", tokens_in=1, tokens_out=1,
            raw_output="\n".join(f.raw for f in findings) or "NO_ISSUES", unparsed=[], error=None,
            cache_key=f"k-{condition}-{case_id}-{rep}", findings=findings,
        ), None)  # fmt: skip
    store.close()
    return out


@pytest.fixture
def rundir(tmp_path) -> Path:
    return write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"))


def label_all(rundir: Path, tmp_path: Path, decide) -> None:
    """Export the packets of ``rundir`` and import, as two agreeing raters (ann, bob: final
    labels), ``decide(packet, claim)``'s label row for every claim."""
    from ..conftest import run_cli

    packets = tmp_path / "packets.jsonl"
    assert run_cli("label", "export", rundir, "--out", packets).returncode == 0
    rows = []
    for line in packets.read_text().splitlines():
        packet = json.loads(line)
        for claim in packet["claims"]:
            rows.append({"comment_id": claim["comment_id"], "part": claim["part"], **decide(packet, claim)})
    for rater in ("ann", "bob"):
        path = tmp_path / f"{rater}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert run_cli("label", "import", rundir, path, "--rater", rater).returncode == 0


@pytest.fixture
def serve():
    """Start the labelling app for a run directory on a free loopback port (uvicorn, in a
    thread); stop it afterwards. Returns the base URL."""
    import socket
    import threading
    import time

    import uvicorn

    from reviewbench.label.app import build_app

    servers = []

    def start(options) -> str:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(build_app(options), log_level="warning", access_log=False))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "the app did not start"
            time.sleep(0.02)
        servers.append((server, thread, sock))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    yield start
    for server, thread, sock in servers:
        server.should_exit = True
        thread.join(10)
        sock.close()


class Http:
    """Plain HTTP requests to the app (no redirects followed): status, headers, body."""

    def __init__(self, base: str) -> None:
        self.base = base

    def __call__(self, method: str, path: str, body: bytes | None = None,
                 headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:  # fmt: skip
        import http.client
        from urllib.parse import urlsplit

        url = urlsplit(self.base)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, \
                response.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        return self("GET", path, headers=headers)

    def post_json(self, path: str, data: object,
                  headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:  # fmt: skip
        payload = data if isinstance(data, bytes) else json.dumps(data).encode()
        return self("POST", path, payload, {"content-type": "application/json", **(headers or {})})
