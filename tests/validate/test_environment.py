"""Validation runs the tree's code, in the project's environment (issue 18)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.errors import ValidationStopped
from reviewbench.validate import validate_corpus

from . import envs

ADD_BUG = "VERSION = '2.0'\n\ndef add(a, b):\n    return a - b\n"
ADD_OK = "VERSION = '2.0'\n\ndef add(a, b):\n    return a + b\n"
ADD_TEST = "from tinylib import add\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def _config(**values) -> ValidateConfig:
    values.setdefault("jobs", 2)
    values.setdefault("timeout", 60)
    return ValidateConfig(**values)


def _validations(corpus: Path) -> dict[str, object]:
    return {g.provenance.subject: g.validation for g in read_corpus(corpus).gold}


@pytest.fixture
def src_layout(git_repo):
    """A src-layout package whose fix comes with a test."""
    repo = git_repo("tinylib")
    repo.commit("init", {"src/tinylib/__init__.py": ADD_BUG, "tests/test_version.py": "def test_v():\n    pass\n",
                         "pyproject.toml": "[project]\nname = 'tinylib'\nversion = '2.0'\n"})  # fmt: skip
    repo.commit("Fix add", {"src/tinylib/__init__.py": ADD_OK, "tests/test_add.py": ADD_TEST})
    return repo


@pytest.fixture
def shadowing_env(tmp_path):
    """An environment with pytest and an older, correct tinylib 1.0 installed."""
    wheel = envs.wheel(tmp_path / "wheels", "tinylib", "1.0",
                       {"tinylib/__init__.py": "VERSION = '1.0'\n\ndef add(a, b):\n    return a + b\n"})  # fmt: skip
    return envs.venv(tmp_path / "env", [wheel])


def test_an_installed_copy_shadowing_the_tree_is_an_error_naming_both(src_layout, shadowing_env, tmp_path):
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=src_layout.path, mirrors=False), corpus)
    # Without src on PYTHONPATH the tests import the installed 1.0, which has no bug: the
    # old tool said not_observed about code no test ran.
    validate_corpus(corpus, _config(test_cmd=f"{shlex.quote(str(shadowing_env))} -m pytest"))
    validation = _validations(corpus)["Fix add"]
    assert validation.status == "error"
    assert "package 'tinylib' was imported from " + str(shadowing_env.parent.parent) in validation.reason
    assert "not from the tree's src/tinylib" in validation.reason


def test_by_default_a_src_layout_runs_the_trees_code_in_the_active_environment(src_layout, shadowing_env, tmp_path,
                                                                                monkeypatch):  # fmt: skip
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=src_layout.path, mirrors=False), corpus)
    monkeypatch.setenv("VIRTUAL_ENV", str(shadowing_env.parent.parent))
    summary = validate_corpus(corpus, _config())
    assert summary.test_cmd == f"PYTHONPATH=src {shadowing_env} -m pytest"
    assert _validations(corpus)["Fix add"].status == "observed"
    assert summary.environment.interpreter == str(shadowing_env)


def test_the_default_interpreter_is_python3_on_path_without_an_active_environment(git_repo, tmp_path, monkeypatch):
    from reviewbench.validate.testcmd import detect_test_command

    repo = git_repo()
    repo.commit("init", {"tests/test_a.py": "def test_a():\n    pass\n"})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(envs.venv(tmp_path / "env"))
    monkeypatch.delenv("VIRTUAL_ENV")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert detect_test_command(repo.path) == f"{bin_dir / 'python3'} -m pytest"
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "env"))
    assert detect_test_command(repo.path) == f"{tmp_path / 'env' / 'bin' / 'python'} -m pytest"


@pytest.fixture
def needs_helper(git_repo, tmp_path):
    """Six fixes on six bases whose tests import ``helperlib``, which only a setup
    command installs (from a wheel built here); and that setup command, counting its runs."""
    repo = git_repo("needs")
    files = {"pkg/__init__.py": ""}
    files.update({f"pkg/f{i}.py": f"def f():\n    return {i} - 1\n" for i in range(6)})
    files["tests/test_helper.py"] = "import helperlib\n\ndef test_helper():\n    assert helperlib.ONE == 1\n"
    repo.commit("init", files)
    for i in range(6):
        repo.commit(f"Fix f{i}", {f"pkg/f{i}.py": f"def f():\n    return {i}\n",
                                  f"tests/test_f{i}.py": f"import helperlib\nfrom pkg.f{i} import f\n\n"
                                                         f"def test_f():\n    assert f() == {i} * helperlib.ONE\n"})  # fmt: skip
    wheel = envs.wheel(tmp_path / "wheels", "helperlib", "1.0", {"helperlib/__init__.py": "ONE = 1\n"})
    # The setup runs sandboxed: it may write only its environment's own folder. Each run
    # leaves a mark there; the count is over every environment built under tmp_path.
    def count() -> int:
        return sum(p.read_text().count("run") for p in tmp_path.rglob("setup-runs.txt"))

    outer = sysconfig.get_paths()["purelib"]
    see_pytest = f"import sysconfig, pathlib; pathlib.Path(sysconfig.get_paths()['purelib'], 'outer.pth').write_text({outer!r})"
    setup = ('echo run >> "$VIRTUAL_ENV/setup-runs.txt" && python -m pip install -q --no-index --no-deps '
             f"{shlex.quote(str(wheel))} && python -c {shlex.quote(see_pytest)}")  # fmt: skip
    return repo, setup, count


def test_a_missing_test_dependency_stops_early_and_names_the_remedy(needs_helper, tmp_path):
    repo, _, _ = needs_helper
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False), corpus)
    with pytest.raises(ValidationStopped) as stopped:
        validate_corpus(corpus, _config(jobs=1))
    message = str(stopped.value)
    assert "the first 5 cases (5 bases) all ended base_failing with: ModuleNotFoundError: No module named 'helperlib'" in message
    assert "--setup auto" in message and "--keep-going" in message
    assert all(g.validation is None for g in read_corpus(corpus).gold)  # nothing recorded as a label
    summary = validate_corpus(corpus, _config(jobs=1, keep_going=True))
    assert summary.by_status == {"base_failing": 6}
    assert summary.reasons == {"base_failing": [("ModuleNotFoundError: No module named 'helperlib'", 6)]}


def test_setup_builds_one_environment_per_corpus_and_reuses_it(needs_helper, tmp_path):
    repo, setup, count = needs_helper
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False), corpus)
    first = validate_corpus(corpus, _config(setup=setup))
    assert first.by_status == {"observed": 6}
    assert first.environment_built and count() == 1
    python = first.environment.interpreter
    assert python.startswith(str(corpus / "envs")) and first.test_cmd == f"{python} -m pytest"
    again = validate_corpus(corpus, _config(setup=setup, force=True))
    assert again.by_status == {"observed": 6}
    assert not again.environment_built and count() == 1  # reused, not rebuilt
    assert again.environment == first.environment
    assert {g.validation.environment for g in read_corpus(corpus).gold} == {first.environment}
    assert read_corpus(corpus).meta.environment == first.environment
    shown = subprocess.run([sys.executable, "-m", "reviewbench", "show", str(corpus)], capture_output=True,
                           text=True, check=True).stdout  # piped: never wrapped, however long the path
    assert f"Test environment: {python} (Python " in shown and "built by --setup" in shown
    # Another command is another environment.
    validate_corpus(corpus, _config(setup=setup + " && true", force=True))
    assert count() == 2


def test_a_test_cmd_under_setup_runs_in_the_built_environment(needs_helper, tmp_path):
    """Trial on sanic-org/sanic: ``--setup … --test-cmd "python -m pytest --ignore=…"`` ran
    the host's ``python``, which had no pytest: every base failed. Under ``--setup`` the
    test command runs with the environment activated (its ``bin`` first on ``PATH``)."""
    repo, setup, _ = needs_helper
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False), corpus)
    summary = validate_corpus(corpus, _config(setup=setup, test_cmd="python -m pytest -q -p no:randomly"))
    assert summary.by_status == {"observed": 6}
    assert summary.environment.interpreter.startswith(str(corpus / "envs"))
    assert summary.environment.setup == setup  # said as built by --setup, not "your active environment"


def test_a_pth_file_the_setup_plants_never_runs_on_the_host(needs_helper, tmp_path):
    """The setup (the project's own install) writes the environment; reviewbench then ran
    that environment's interpreter on the host (its version and packages, pytest's entry
    point), and a ``.pth`` planted in its site-packages ran there too: it wrote outside
    every scratch area. Those probes run sandboxed now."""
    repo, setup, _ = needs_helper
    marker = tmp_path / "planted-by-pth"
    pth = f"import os; open({str(marker)!r}, 'a').write(str(os.getpid()))\n"
    plant = f"import sysconfig, pathlib; pathlib.Path(sysconfig.get_paths()['purelib'], 'zz_plant.pth').write_text({pth!r})"
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False), corpus)
    summary = validate_corpus(corpus, _config(setup=f"{setup} && python -c {shlex.quote(plant)}"))
    assert summary.by_status == {"observed": 6}
    assert summary.environment.packages > 0 and summary.environment.python_version
    assert not marker.exists()


def test_statuses_from_another_environment_are_validated_again(needs_helper, tmp_path):
    """Trial on jaraco/inflect: ``validate --setup B`` after a run under setup A kept every
    status A gave ("0 cases, 38 already done") and then blamed B's environment for A's
    failures. A status from another environment is not reused, and the summary says so."""
    repo, setup, count = needs_helper
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False), corpus)
    first = validate_corpus(corpus, _config(setup=setup))
    assert first.by_status == {"observed": 6} and first.attempted == 6
    same = validate_corpus(corpus, _config(setup=setup))
    assert same.attempted == 0 and same.skipped == 6  # the same environment: nothing to redo
    other = validate_corpus(corpus, _config(setup=setup + " && true"))
    assert count() == 2 and other.attempted == 6 and other.by_status == {"observed": 6}
    assert "6 of 6 cases were validated in another test environment: validated again in this one" in other.notes
    assert {g.validation.environment for g in read_corpus(corpus).gold} == {other.environment}


def test_tasks_mine_and_grade_take_setup_too(needs_helper, tmp_path, monkeypatch):
    from reviewbench.tasks import mine_tasks

    repo, setup, count = needs_helper
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    summary = mine_tasks(MineConfig(repo=repo.path), tmp_path / "tasks", _config(setup=setup))
    assert summary.meta.counts.tasks == 6
    assert summary.meta.test_cmd.startswith(str(tmp_path / "cache" / "reviewbench" / "envs"))
    assert count() == 1


@pytest.mark.parametrize("warm", ["1", "0"])
def test_a_mutation_in_a_module_no_test_imports_is_not_exercised(git_repo, tmp_path, monkeypatch, warm):
    monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", warm)  # the probe works in both
    repo = git_repo()
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/used.py": "def inc(x):\n    return x + 1\n",
        "pkg/unused.py": "def clamp(x, top):\n    if x > top:\n        return top\n    return x\n",
        "tests/test_used.py": "from pkg.used import inc\n\ndef test_inc():\n    assert inc(1) == 2\n",
    })  # fmt: skip
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, fixes=False, mutations=2, controls_ratio=0, paths=("pkg/unused.py",)), corpus)
    validate_corpus(corpus, _config())
    gold = read_corpus(corpus).gold
    assert gold and {g.validation.status.value for g in gold} == {"not_exercised"}
    assert {g.validation.reason for g in gold} == {"no test imported pkg/unused.py from the tree"}
    logs = "".join(p.read_text() for p in (corpus / "logs").iterdir())
    assert (", warm)" in logs) == (warm == "1")


def test_auto_setup_installs_the_project_with_its_test_extras_and_requirements(tmp_path):
    from reviewbench.validate.environment import auto_setup_command

    project = tmp_path / "project"
    (project / "requirements").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'p'\nversion = '1'\n[project.optional-dependencies]\ntests = ['hypothesis']\ndocs = ['x']\n"
        "[dependency-groups]\ntest = ['pretend']\n"
    )
    (project / "requirements" / "test.txt").write_text("pretend\n")
    assert auto_setup_command(project, "/bin/uv") == (
        "/bin/uv pip install -e '.[tests]' -r requirements/test.txt --group test pytest"
    )
    assert auto_setup_command(project, None) == (
        "python -m pip install --disable-pip-version-check -e '.[tests]' -r requirements/test.txt pytest"
    )
    # A commit of January 2024 gets the pytest of its day (thefuck's head: pytest 8 broke its conftest).
    assert auto_setup_command(project, None, "2024-01-25T20:52:35+01:00").endswith(" 'pytest<8'")


@pytest.mark.parametrize(("files", "plugins"), [
    # tqdm: addopts "--asyncio-mode=strict", "timeout = 30"; its extras name neither plugin.
    ({"pyproject.toml": "[project]\nname = 'p'\nversion = '1'\n[tool.pytest.ini_options]\ntimeout = 30\n"
                        "addopts = \"-v -W=error --asyncio-mode=strict\"\n"}, ["pytest-asyncio", "pytest-timeout"]),
    ({"setup.py": "", "setup.cfg": "[tool:pytest]\naddopts = --cov=pkg -n 2\n"}, ["pytest-cov", "pytest-xdist"]),
    ({"setup.py": "", "setup.cfg": "[tool:pytest]\naddopts = --cov-report=term -nauto\n"}, ["pytest-cov", "pytest-xdist"]),
    ({"setup.py": "", "pytest.ini": "[pytest]\nasyncio_mode = auto\n"}, ["pytest-asyncio"]),
    ({"setup.py": "", "tox.ini": "[pytest]\naddopts = --numprocesses=auto --timeout=5\n"}, ["pytest-timeout", "pytest-xdist"]),
    ({"setup.py": "", "pytest.ini": "[pytest]\naddopts = -ra\n"}, []),
    ({"setup.py": "", "pytest.ini": "[pytest\nbroken"}, []),  # a config pytest cannot read adds nothing
])  # fmt: skip
def test_auto_setup_adds_the_pytest_plugins_the_projects_config_needs(tmp_path, files, plugins):
    """Trial on tqdm/tqdm: ``--setup auto`` left pytest-asyncio out, and every base failed
    with "unrecognized arguments: --asyncio-mode=strict"."""
    from reviewbench.validate.environment import auto_setup_command

    project = tmp_path / "project"
    project.mkdir()
    for name, text in files.items():
        (project / name).write_text(text)
    words = auto_setup_command(project, "/bin/uv").split()
    assert words[words.index("pytest") + 1:] == plugins


@pytest.mark.parametrize(("date", "pin"), [
    ("2017-05-01T00:00:00Z", "pytest<4"), ("2018-11-13T00:00:00Z", "pytest<5"), ("2022-02-02", "pytest<7"),
    ("2030-01-01", "pytest"), (None, "pytest"),
])  # fmt: skip
def test_pytest_for_a_commit_date(date, pin):
    from reviewbench.validate.environment import pytest_for

    assert pytest_for(date) == pin


def test_cli_stops_with_one_line_then_setup_works_on_a_relative_corpus_path(needs_helper, tmp_path):
    """Regression: a relative CORPUS made --setup clone into a path relative to the wrong folder."""
    repo, setup, count = needs_helper
    mine_corpus(MineConfig(repo=repo.path, mirrors=False), tmp_path / "corpus")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "reviewbench", "validate", "corpus", "--jobs", "2", *args],
                              capture_output=True, text=True, cwd=tmp_path)  # fmt: skip

    stopped = cli()
    assert stopped.returncode == 1
    assert stopped.stderr.startswith("reviewbench: error: validation stopped: the first 5 cases")
    assert len(stopped.stderr.strip().splitlines()) == 1 and "--setup auto" in stopped.stderr
    done = cli("--setup", setup, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["by_status"] == {"observed": 6}


@pytest.mark.parametrize("command", [
    "python -m pytest -o 'python_files=tests.py test_*.py'",
    "python -m pytest -o'python_files=tests.py test_*.py' -q",
    "python -m pytest --override-ini='python_files=tests.py test_*.py'",
    "python -m pytest --override-ini 'python_files=tests.py test_*.py' tests.py",
])  # fmt: skip
def test_the_command_lines_python_files_wins_over_the_configuration(tmp_path, command):
    from reviewbench.validate.environment import test_file_patterns

    (tmp_path / "pytest.ini").write_text("[pytest]\npython_files = check_*.py\n")
    assert test_file_patterns(tmp_path) == ("check_*.py",)
    assert test_file_patterns(tmp_path, command) == ("tests.py", "test_*.py")
    assert test_file_patterns(tmp_path, "python -m pytest -o-x") == ("check_*.py",)
