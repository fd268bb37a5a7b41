"""Experiment files: loading, errors that name line and field, the template, the schema."""

from __future__ import annotations

import json

import pytest

from reviewbench.errors import UsageError
from reviewbench.review.experiment import TEMPLATE, ExperimentConfig, load_experiment

from ..conftest import run_cli


def _write(tmp_path, text: str):
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    return path


def test_template_is_a_valid_experiment(tmp_path):
    experiment = load_experiment(_write(tmp_path, TEMPLATE))
    assert [c.name for c in experiment.config.condition] == ["silent", "A"]
    a = experiment.config.condition[1]
    assert a.reviewer.kind == "openai" and a.reviewer.api_key_env == "OLLAMA_KEY"
    assert a.concurrency == 8 and a.rate_per_minute == 60 and a.timeout_s == 120
    assert experiment.corpus_path == (tmp_path / "corpus").resolve()


def test_toml_syntax_error_names_the_line(tmp_path):
    with pytest.raises(UsageError, match="line 3"):
        load_experiment(_write(tmp_path, 'corpus = "c"\nrepeats = 3\n[[condition]\n'))


def test_bad_field_is_named(tmp_path):
    text = 'corpus = "c"\n[[condition]]\nname = "A"\nreviewer = { kind = "openai" }\n'
    with pytest.raises(UsageError, match=r"condition A: reviewer\.model: Field required"):
        load_experiment(_write(tmp_path, text))


def test_unknown_reviewer_kind(tmp_path):
    text = 'corpus = "c"\n[[condition]]\nname = "A"\nreviewer = { kind = "magic" }\n'
    with pytest.raises(UsageError, match="unknown reviewer kind 'magic'"):
        load_experiment(_write(tmp_path, text))


def test_duplicate_condition_names(tmp_path):
    text = 'corpus = "c"\n' + '[[condition]]\nname = "A"\nreviewer = { kind = "silent" }\n' * 2
    with pytest.raises(UsageError, match="repeated: A"):
        load_experiment(_write(tmp_path, text))


def test_unknown_top_level_key(tmp_path):
    text = 'corpus = "c"\nrepeat = 2\n[[condition]]\nname = "A"\nreviewer = { kind = "silent" }\n'
    with pytest.raises(UsageError, match="unknown key 'repeat' — did you mean 'repeats'\\?"):
        load_experiment(_write(tmp_path, text))


@pytest.mark.parametrize(("text", "line"), [
    # Regressions (issue 27): "Extra inputs are not permitted", "condition: Field required", condition[2].
    ('corpus = "c"\nrepaets = 3\n[[condition]]\nname = "A"\nreviewer = { kind = "silent" }\n',
     "unknown key 'repaets' — did you mean 'repeats'?"),
    ('corpus = "c"\n[[conditon]]\nname = "A"\nreviewer = { kind = "silent" }\n',
     "unknown key 'conditon' — did you mean 'condition'?"),
    (('corpus = "c"\n[[condition]]\nname = "A"\nreviewer = { kind = "silent" }\n[[condition]]\nname = "B"\n'
      'reviewer = { kind = "silent" }\n[[condition]]\nname = "C"\nreviewer = { kind = "openai" }\n'),
     "condition C: reviewer.model: Field required"),
    ('corpus = "c"\n[[condition]]\nname = "A"\nconcurency = 2\nreviewer = { kind = "silent" }\n',
     "condition A: unknown key 'concurency' — did you mean 'concurrency'?"),
    ('corpus = "c"\n[[condition]]\nname = "B"\nreviewer = { kind = "openai", model = "m", temprature = 0.0 }\n',
     "condition B: reviewer: unknown key 'temprature' — did you mean 'temperature'?"),
    ('corpus = "c"\n[[condition]]\nreviewer = { kind = "silent" }\n', "condition 1 (unnamed): name: Field required"),
    ('corpus = "c"\nzzzz = 1\n[[condition]]\nname = "A"\nreviewer = { kind = "silent" }\n', "unknown key 'zzzz'"),
])  # fmt: skip
def test_toml_mistakes_read_as_what_to_fix(tmp_path, text, line):
    with pytest.raises(UsageError) as raised:
        load_experiment(_write(tmp_path, text))
    assert str(raised.value).split(": ", 1)[1] == line


def test_missing_file(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        load_experiment(tmp_path / "nope.toml")


def test_experiment_hash_changes_with_content(tmp_path):
    one = load_experiment(_write(tmp_path, TEMPLATE))
    two = load_experiment(_write(tmp_path, TEMPLATE.replace("repeats = 3", "repeats = 2")))
    assert one.sha256 != two.sha256
    assert one.sha256 == load_experiment(_write(tmp_path, TEMPLATE)).sha256


def test_cli_init_and_schema(tmp_path):
    target = tmp_path / "e.toml"
    proc = run_cli("experiment", "init", str(target))
    assert proc.returncode == 0 and target.read_text() == TEMPLATE
    again = run_cli("experiment", "init", str(target))
    assert again.returncode == 1 and "exists" in again.stderr
    schema = json.loads(run_cli("schema", "experiment").stdout)
    assert schema == {**ExperimentConfig.model_json_schema(by_alias=True),
                      "$schema": "https://json-schema.org/draft/2020-12/schema"}  # fmt: skip


def _cli(*args):
    return run_cli(*args)


def _one_error_line(proc, code, needle):
    assert proc.returncode == code, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reviewbench: error: ") and needle in lines[0], proc.stderr


def test_run_bad_input_is_one_line(tmp_path):
    bad = _write(tmp_path, 'corpus = "c"\nrepeats = [\n')
    _one_error_line(_cli("run", str(bad), "--out", str(tmp_path / "r")), 2, "invalid TOML")
    missing = _write(tmp_path, 'corpus = "nope"\n[[condition]]\nname = "A"\nreviewer = { kind = "silent" }\n')
    _one_error_line(_cli("run", str(missing), "--out", str(tmp_path / "r")), 1, "not a corpus directory")
    _one_error_line(_cli("runs", str(tmp_path / "nowhere")), 1, "not a run directory")
    _one_error_line(_cli("export", str(tmp_path / "nowhere")), 1, "not a run directory")
