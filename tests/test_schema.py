"""``reviewbench schema``: valid JSON Schemas that every file of a mined corpus satisfies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from .conftest import run_cli

NAMES = ("cases", "gold", "corpus", "dropped")


def reviewbench(*args: object) -> str:
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


@pytest.fixture(scope="module")
def schemas() -> dict[str, dict]:
    return {name: json.loads(reviewbench("schema", name)) for name in NAMES}


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    """A corpus with varied content: odd names, a rename, a deleted and a new file, Go."""
    repo = git_repo()
    repo.commit("Initial import", {
        "calc.py": "def clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n",
        "naïve name.py": "def f(x):\n    return x\n",
        "old.py": "".join(f"def h{i}():\n    return {i}\n\n" for i in range(10)),
        "srv/main.go": "package main\n\nfunc Limit(n int) bool {\n\treturn n <= 3\n}\n",
        "README.md": "# r\n",
    })  # fmt: skip
    repo.commit("Fix clamp for inverted bounds", {
        "calc.py": "def clamp(v, lo, hi):\n    if lo > hi:\n        lo, hi = hi, lo\n"
                   "    return max(lo, min(v, hi))\n",
        "tests/test_calc.py": "def test_clamp():\n    pass\n",
    })  # fmt: skip
    repo.commit('Fix f for "quoted" input', {"naïve name.py": "def f(x):\n    return x.strip()\n"})
    repo.git("mv", "old.py", "new.py")
    new = (repo.path / "new.py").read_text().replace("return 4", "return 40")
    repo.commit("Fix h4 and rename the module", {"new.py": new, "helpers.py": "X = 1\n"})
    go_fixed = "package main\n\nfunc Limit(n int) bool {\n\treturn n < 3\n}\n"
    repo.commit("Fix the limit", {"srv/main.go": go_fixed})
    repo.commit("Fix the title", {"README.md": "# R\n"})
    out = tmp_path / "corpus"
    summary = json.loads(reviewbench("mine", repo.path, "--out", out, "--json"))
    assert summary["by_stratum"]["fix_reversal"] == 4 and summary["by_stratum"]["control"] >= 1
    return out


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_a_valid_draft_2020_12_schema(schemas, name):
    schema = schemas[name]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False


def test_schema_output_is_one_json_document():
    text = reviewbench("schema", "gold")
    assert text.endswith("}\n")
    json.loads(text)


def test_gold_schema_uses_the_field_aliases(schemas):
    defect = schemas["gold"]["$defs"]["Defect"]
    assert "class" in defect["properties"] and "defect_class" not in defect["properties"]


def test_every_file_of_a_mined_corpus_validates(schemas, corpus):
    validators = {name: Draft202012Validator(schema) for name, schema in schemas.items()}
    for name, file in (("cases", "cases.jsonl"), ("gold", "gold.jsonl")):
        lines = (corpus / file).read_text(encoding="utf-8").splitlines()
        assert len(lines) == 10  # 4 fix reversals, their 4 mirrors (base_patch, changed, pair_id), 2 controls
        for number, line in enumerate(lines, start=1):
            errors = list(validators[name].iter_errors(json.loads(line)))
            assert errors == [], f"{file}:{number}: {errors[0].message}"
    meta = json.loads((corpus / "corpus.json").read_text(encoding="utf-8"))
    assert list(validators["corpus"].iter_errors(meta)) == []
    dropped = [json.loads(line) for line in (corpus / "dropped.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(d["subject"], d["reason"]) for d in dropped] == [("Fix the title", "no_source_change")]
    assert all(list(validators["dropped"].iter_errors(d)) == [] for d in dropped)


@pytest.mark.parametrize("name, file, mutate", [
    ("cases", "cases.jsonl", lambda r: {**r, "stratum": "fix_reversal"}),  # a leak of gold
    ("cases", "cases.jsonl", lambda r: {k: v for k, v in r.items() if k != "base"}),
    ("gold", "gold.jsonl", lambda r: {**r, "stratum": "Guess work"}),  # open, but named like an id
    ("gold", "gold.jsonl", lambda r: {**r, "defects": [{**r["defects"][0], "locations": [
        {"path": "a.py", "start_line": -1, "end_line": 2}]}]}),
    ("corpus", "corpus.json", lambda r: {**r, "counts": {**r["counts"], "cases": "four"}}),
])  # fmt: skip
def test_schemas_reject_damaged_records(schemas, corpus, name, file, mutate):
    text = (corpus / file).read_text(encoding="utf-8")
    lines = [] if file.endswith(".json") else [json.loads(line) for line in text.splitlines()]
    record = json.loads(text) if file.endswith(".json") else next(r for r in lines if r.get("defects", [1]))
    validator = Draft202012Validator(schemas[name])
    assert list(validator.iter_errors(record)) == []
    assert list(validator.iter_errors(mutate(record))) != []


def test_schemas_do_not_depend_on_the_environment(schemas):
    # Generated from the records: the same bytes in any working directory.
    env_free = subprocess.run([sys.executable, "-m", "reviewbench", "schema", "corpus"],
                              capture_output=True, text=True, cwd=os.sep, check=True)  # fmt: skip
    assert json.loads(env_free.stdout) == schemas["corpus"]
