"""What a trial on a hatch-vcs project (python-humanize) found: files the setup generates
into the project reach every scratch tree; the reported error line is the meaningful
one, free of colour codes; the remedy fits what the user already typed."""

from __future__ import annotations

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
from reviewbench.git.scratch import ScratchClone
from reviewbench.sandbox import reset_cancel
from reviewbench.validate import validate_corpus
from reviewbench.validate.probe import first_error_line
from reviewbench.validate.products import SetupProducts
from reviewbench.validate.worker import ScratchTree

from . import envs

#: Makes a venv built by --setup see this interpreter's site-packages (pytest is there).
_OUTER = sysconfig.get_paths()["purelib"]
SEE_PYTEST = "python -c " + shlex.quote(
    f"import sysconfig, pathlib; pathlib.Path(sysconfig.get_paths()['purelib'], 'outer.pth').write_text({_OUTER!r})"
)
COLOR = "[tool.pytest.ini_options]\naddopts = '--color=yes'\n"


@pytest.fixture(autouse=True)
def _uncancel():
    """A run stopped early cancels its sandboxes process-wide (``kill_all``); the next
    ``run_jobs`` resets that, but tests calling ``validate_case`` directly do not."""
    yield
    reset_cancel()


def _config(**values) -> ValidateConfig:
    values.setdefault("jobs", 2)
    values.setdefault("timeout", 60)
    return ValidateConfig(**values)


def _pytest(folder: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--color=yes", *args],
                          cwd=folder, capture_output=True, text=True, check=False)  # fmt: skip
    return proc.stdout + proc.stderr


def test_the_error_line_is_the_exception_raised_last_not_the_one_it_replaced(tmp_path):
    # importlib.metadata raises PackageNotFoundError while handling a StopIteration: pytest
    # shows both, the StopIteration first; the old picker reported "StopIteration".
    (tmp_path / "test_meta.py").write_text(
        "import importlib.metadata\n\nVERSION = importlib.metadata.version('reviewbench-no-such-dist')\n\n"
        "def test_v():\n    assert VERSION\n"
    )
    output = _pytest(tmp_path)
    assert "\x1b[" in output and "StopIteration" in output  # colour on, and the chained context shown
    assert first_error_line(output, tmp_path) == (
        "importlib.metadata.PackageNotFoundError: No package metadata was found for reviewbench-no-such-dist"
    )


def test_a_syntax_error_is_reported_by_its_message_not_by_where_it_is(tmp_path):
    # pallets/itsdangerous's 2011 tests.py (Python 2: "except BadSignature, e:"): the E block
    # starts with the location, and the old picker reported 'File "<tree>/tests.py", line 60'.
    (tmp_path / "test_old.py").write_text("def test_x():\n    try:\n        pass\n    except ValueError, e:\n"
                                          "        pass\n")  # fmt: skip
    assert first_error_line(_pytest(tmp_path), tmp_path) == (
        "SyntaxError: multiple exception types must be parenthesized")


def test_an_assertion_keeps_its_first_line_and_loses_its_colour(tmp_path):
    (tmp_path / "test_add.py").write_text("def test_add():\n    assert 1 + 1 == 3\n\ndef test_b():\n    raise KeyError('b')\n")
    line = first_error_line(_pytest(tmp_path), tmp_path)
    assert line == "assert (1 + 1) == 3"


def test_a_usage_error_reports_what_pytest_refused_not_its_rootdir(tmp_path):
    # jaraco/inflect's 2019 pytest.ini asked for plugins no longer installed (--flake8
    # --black --cov): pytest exits 4 with its usage, "python -m pytest: error: unrecognized
    # arguments: ...", then "inifile:" and "rootdir:" lines; the old picker fell through to
    # the last line and reported "rootdir: <tree>" for ten cases.
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --no-such-plugin-option\n")
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    output = _pytest(tmp_path)
    assert output.rstrip().splitlines()[-1].strip().startswith("rootdir:")  # the line the old picker took
    line = first_error_line(output, tmp_path)
    assert line is not None and line.endswith(": error: unrecognized arguments: --no-such-plugin-option")  # the prog name varies


def _hatch_like(repo, bases: int = 3) -> None:
    """A src-layout package whose ``__init__`` imports ``_version.py``, a git-ignored file
    only installing the project generates (as hatch-vcs and setuptools-scm do); ``bases``
    fixes, each with its test, on as many bases."""
    files = {".gitignore": "src/*/_version.py\n", "pyproject.toml": "[project]\nname = 'tinyv'\ndynamic = ['version']\n",
             "src/tinyv/__init__.py": "from ._version import version\n"}  # fmt: skip
    files.update({f"src/tinyv/f{i}.py": f"def f():\n    return {i} - 1\n" for i in range(bases)})
    repo.commit("init", files)
    for i in range(bases):
        repo.commit(f"Fix f{i}", {f"src/tinyv/f{i}.py": f"def f():\n    return {i}\n",
                                  f"tests/test_f{i}.py": f"import tinyv\nfrom tinyv.f{i} import f\n\n"
                                                         f"def test_f():\n    assert tinyv.version and f() == {i}\n"})  # fmt: skip


GENERATE = "printf 'version = \"1.0\"\\n' > src/tinyv/_version.py"


def test_a_version_file_the_setup_generates_reaches_every_scratch_tree(git_repo, tmp_path):
    repo = git_repo("tinyv")
    _hatch_like(repo)
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    summary = validate_corpus(corpus, _config(setup=f"{GENERATE} && {SEE_PYTEST}", keep_going=True))
    assert summary.by_status == {"observed": 3}, summary.reasons
    for log in (corpus / "logs").iterdir():  # every case says where the file came from
        assert "copied from the setup: src/tinyv/_version.py" in log.read_text()
    assert not (repo.path / "src" / "tinyv" / "_version.py").exists()  # the user's checkout untouched


def _scratch(repo, tmp_path: Path, setup_cmd: str | None = None) -> ScratchTree:
    (tmp_path / "scratch").mkdir()
    return ScratchTree(repo.path, tmp_path / "scratch" / "tree", _config(setup_cmd=setup_cmd))


def test_setup_cmd_products_come_back_after_a_checkout_that_cleaned_them(git_repo, tmp_path):
    repo = git_repo()
    old = repo.commit("init", {"src/tinyv/__init__.py": "version = '0'\n"})  # the file is not ignored here
    new = repo.commit("generate the version", {".gitignore": "src/*/_version.py\n",
                                               "src/tinyv/__init__.py": "from ._version import version\n"})  # fmt: skip
    tree = _scratch(repo, tmp_path, setup_cmd=GENERATE)
    generated = tree.path / "src" / "tinyv" / "_version.py"
    log = tmp_path / "case.log"
    log.write_text("")
    tree.checkout(new)
    tree.setup(log)
    assert generated.read_text() == 'version = "1.0"\n'
    tree.checkout(old)
    assert not generated.exists()  # untracked, not ignored there: cleaned, and not put back
    tree.checkout(new)
    assert generated.read_text() == 'version = "1.0"\n'


def test_products_never_reach_through_a_symlink_or_over_a_file_of_the_commit(git_repo, tmp_path):
    source = tmp_path / "built"
    (source / "src" / "pkg").mkdir(parents=True)
    (source / "src" / "pkg" / "_version.py").write_text("version = '9'\n")
    (source / "kept.txt").write_text("from the setup\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = git_repo()
    repo.write({".gitignore": "_version.py\nkept.txt\n", "kept.txt": "the commit's\n"})
    os.makedirs(repo.path / "src")
    os.symlink(outside, repo.path / "src" / "pkg")
    repo.git("add", "-f", "-A")
    repo.git("commit", "-q", "-m", "link")
    tree = _scratch(repo, tmp_path)
    tree.checkout("HEAD")
    restored = SetupProducts(source, ("src/pkg/_version.py", "kept.txt")).restore(tree)
    assert restored == []
    assert list(outside.iterdir()) == []
    assert (tree.path / "kept.txt").read_text() == "the commit's\n"


def test_products_are_generated_files_not_caches_links_or_binaries(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"README": "x\n"})
    clone = ScratchClone(repo.path, tmp_path / "project")
    clone.checkout("HEAD")
    project = clone.path
    for name in ("src/pkg/_version.py", "src/pkg/__pycache__/x.cpython-311.pyc", "src/pkg/_speedups.so",
                 "src/pkg.egg-info/PKG-INFO", "build/lib/pkg/x.py", ".venv/lib/site.py"):  # fmt: skip
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x\n")
    os.symlink("/etc/passwd", project / "src" / "pkg" / "linked.py")
    assert SetupProducts.of(clone).files == ("src/pkg/_version.py",)


def _needs_metadata(repo) -> None:
    """Six fixes on six bases whose package reads its version from its installed metadata
    (as hatch-vcs projects did before writing a version file); tests in colour."""
    files = {"pkg/__init__.py": "import importlib.metadata\n\nVERSION = importlib.metadata.version('tinymeta')\n",
             "pyproject.toml": COLOR}  # fmt: skip
    files.update({f"pkg/f{i}.py": f"def f():\n    return {i} - 1\n" for i in range(6)})
    files["tests/test_pkg.py"] = "import pkg\n\ndef test_pkg():\n    assert pkg.VERSION\n"
    repo.commit("init", files)
    for i in range(6):
        repo.commit(f"Fix f{i}", {f"pkg/f{i}.py": f"def f():\n    return {i}\n",
                                  f"tests/test_f{i}.py": f"import pkg\nfrom pkg.f{i} import f\n\n"
                                                         f"def test_f():\n    assert f() == {i}\n"})  # fmt: skip


def test_a_missing_installed_project_stops_with_its_real_error_and_no_colour_codes(git_repo, tmp_path):
    repo = git_repo("meta")
    _needs_metadata(repo)
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    python = envs.venv(tmp_path / "env")
    cli = subprocess.run([sys.executable, "-m", "reviewbench", "validate", str(corpus), "--jobs", "2",
                          "--test-cmd", f"{python} -m pytest"], capture_output=True, text=True, check=False)  # fmt: skip
    assert cli.returncode == 1
    assert cli.stderr.startswith("reviewbench: error: validation stopped: the first 5 cases (5 bases) all ended "
                                 "base_failing with: importlib.metadata.PackageNotFoundError: No package metadata "
                                 "was found for tinymeta — ")  # fmt: skip
    assert "--setup auto" in cli.stderr and "\x1b" not in cli.stderr and "\\x1b" not in cli.stderr
    kept = subprocess.run([sys.executable, "-m", "reviewbench", "validate", str(corpus), "--jobs", "2",
                           "--test-cmd", f"{python} -m pytest", "--keep-going"], capture_output=True, text=True, check=False)  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    assert "No package metadata was found for tinymeta" in kept.stdout
    assert "hint: 6 cases failed like" in kept.stderr
    for text in (kept.stdout, kept.stderr):
        assert "\x1b" not in text and "\\x1b" not in text and "[0m" not in text
    assert {g.validation.reason for g in read_corpus(corpus).gold} == {
        "importlib.metadata.PackageNotFoundError: No package metadata was found for tinymeta"
    }


def test_with_setup_the_remedy_is_not_to_pass_setup(needs_helper_repo, tmp_path):
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=needs_helper_repo.path, mirrors=False), corpus)
    with pytest.raises(ValidationStopped) as stopped:
        validate_corpus(corpus, _config(jobs=1, setup=SEE_PYTEST))  # installs nothing the tests need
    message = str(stopped.value)
    assert "No module named 'helperlib'" in message
    assert "pass --setup auto" not in message
    assert "the environment built by --setup" in message and "helperlib" in message.split(" — ", 1)[1]


@pytest.fixture
def needs_helper_repo(git_repo):
    """Six fixes on six bases whose tests import ``helperlib``, which nothing installs."""
    repo = git_repo("needs")
    files = {"pkg/__init__.py": ""}
    files.update({f"pkg/f{i}.py": f"def f():\n    return {i} - 1\n" for i in range(6)})
    repo.commit("init", files)
    for i in range(6):
        repo.commit(f"Fix f{i}", {f"pkg/f{i}.py": f"def f():\n    return {i}\n",
                                  f"tests/test_f{i}.py": f"import helperlib\nfrom pkg.f{i} import f\n\n"
                                                         f"def test_f():\n    assert f() == {i}\n"})  # fmt: skip
    return repo


def test_different_missing_modules_on_every_base_still_stop_early(git_repo, tmp_path):
    # dateutil's old commits need six, its newer ones hypothesis: every case failed, with
    # two lines, and the run went on to the end.
    repo = git_repo("two")
    files = {"pkg/__init__.py": ""}
    files.update({f"pkg/f{i}.py": f"def f():\n    return {i} - 1\n" for i in range(6)})
    repo.commit("init", files)
    for i in range(6):
        needed = "sixlib" if i % 3 else "hypolib"
        repo.commit(f"Fix f{i}", {f"pkg/f{i}.py": f"def f():\n    return {i}\n",
                                  f"tests/test_f{i}.py": f"import {needed}\nfrom pkg.f{i} import f\n\n"
                                                         f"def test_f():\n    assert f() == {i}\n"})  # fmt: skip
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    with pytest.raises(ValidationStopped) as stopped:
        validate_corpus(corpus, _config(jobs=1))
    message = str(stopped.value)
    assert "all ended base_failing with: ModuleNotFoundError: No module named 'sixlib' (and 1 other line of " \
           "that kind: ModuleNotFoundError: No module named 'hypolib')" in message  # fmt: skip
    assert "pass --setup auto" in message and "\n" not in message


def test_a_missing_pytest_plugin_is_blamed_on_the_environment():
    from reviewbench.validate.reasons import blames_environment, remedy

    # pluggy's tests use pytest-benchmark's fixture: without the plugin, pytest says only this.
    line = "fixture 'benchmark' not found"
    assert blames_environment(line)
    assert "pytest plugin" in remedy(line) and "--setup auto" in remedy(line)
    assert "--setup auto" not in remedy(line, "auto") and "'benchmark'" in remedy(line, "auto")


def test_a_pytest_too_new_or_too_old_for_the_commits_gets_a_pin_to_type(git_repo, tmp_path):
    from reviewbench.validate.reasons import remedy

    # dateutil's old commits under pytest 9 (filterwarnings = error), pluggy's under pytest 7.
    too_new = "pytest.PytestRemovedIn10Warning: Passing a non-Collection iterable to parametrize is deprecated."
    assert "'pytest<9'" in remedy(too_new, "auto") and "--since" in remedy(too_new, "auto")
    too_old = "UsageError: <tree>/tox.ini: 'minversion' requires pytest-8.0, actual pytest-7.4.4'"
    assert "'pytest>=8.0'" in remedy(too_old) and "--setup auto" in remedy(too_old)
    # ... and the summary says it too, not only a stopped run.
    repo = git_repo("warns")
    files = {"pkg/__init__.py": "", "pyproject.toml": "[tool.pytest.ini_options]\nfilterwarnings = ['error']\n"}
    files.update({f"pkg/f{i}.py": f"def f():\n    return {i} - 1\n" for i in range(3)})
    repo.commit("init", files)
    for i in range(3):
        repo.commit(f"Fix f{i}", {f"pkg/f{i}.py": f"def f():\n    return {i}\n",
                                  f"tests/test_f{i}.py": "import warnings\n\nimport pytest\n\n"
                                  f"warnings.warn(pytest.PytestRemovedIn10Warning('old style {i}'))\n\n"
                                  f"from pkg.f{i} import f\n\ndef test_f():\n    assert f() == {i}\n"})  # fmt: skip
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    cli = subprocess.run([sys.executable, "-m", "reviewbench", "validate", str(corpus), "--jobs", "2"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert "hint: 3 cases failed like \"pytest.PytestRemovedIn10Warning: old style" in cli.stderr  # 3 lines, 1 kind
    assert "'pytest<9'" in cli.stderr, cli.stderr


def test_tasks_mine_carries_the_setups_generated_files_into_its_trees_too(git_repo, tmp_path):
    """Fix tasks run in the same scratch trees: without the generated ``_version.py`` every
    task's tests fail to import at its base, before and after the gold patch alike."""
    from reviewbench.tasks import mine_tasks

    repo = git_repo("tinyv")
    _hatch_like(repo, bases=2)
    summary = mine_tasks(MineConfig(repo=repo.path), tmp_path / "tasks", _config(setup=f"{GENERATE} && {SEE_PYTEST}"))
    assert summary.meta.counts.tasks == 2, summary.meta.counts
    for log in (tmp_path / "tasks" / "logs").iterdir():
        assert "copied from the setup: src/tinyv/_version.py" in log.read_text()
    # Grading checks the same trees out: the gold patches resolve there too.
    from reviewbench.tasks.grade_run import grade_solutions
    from reviewbench.tasks.solutions import Solution
    from reviewbench.tasks.store import read_tasks

    taskset = read_tasks(tmp_path / "tasks")
    gold = [Solution(run_id=f"A-{t.instance_id}-0", instance_id=t.instance_id, condition="A", repetition=0,
                     state="patched", patch=t.patch) for t in taskset.tasks]  # fmt: skip
    grades = grade_solutions(tmp_path / "runs", taskset, gold, _config(setup=f"{GENERATE} && {SEE_PYTEST}")).grades
    assert [g.tests_pass for g in grades] == [True, True], [g.reason for g in grades]


def test_an_old_suite_using_a_removed_pytest_api_gets_a_pin_naming_the_pytest(git_repo, tmp_path):
    """Issue 28: under pytest 8 an old conftest failed 18 of 31 cases with "'Function' object
    has no attribute 'get_marker'"; the hint names the pytest that ran and a pin below it."""
    import pytest as running

    from reviewbench.validate.reasons import remedy

    line = "AttributeError: 'Function' object has no attribute 'get_marker'"
    assert "pytest 8.1.0 no longer has" in remedy(line, None, "8.1.0") and "'pytest<8'" in remedy(line, None, "8.1.0")
    assert "'pytest<N'" in remedy("Failed: Marks cannot be applied to fixtures.")
    repo = git_repo("old-suite")
    files = {"pkg/__init__.py": "", "tests/conftest.py": "def pytest_runtest_setup(item):\n"
                                                          "    item.get_marker('slow')\n"}  # fmt: skip
    files.update({f"pkg/f{i}.py": f"def f():\n    return {i} - 1\n" for i in range(3)})
    repo.commit("init", files)
    for i in range(3):
        repo.commit(f"Fix f{i}", {f"pkg/f{i}.py": f"def f():\n    return {i}\n",
                                  f"tests/test_f{i}.py": f"from pkg.f{i} import f\n\ndef test_f():\n    assert f() == {i}\n"})  # fmt: skip
    corpus = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), corpus)
    cli = subprocess.run([sys.executable, "-m", "reviewbench", "validate", str(corpus), "--jobs", "2"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    said = " ".join(cli.stderr.split())  # the hint wraps on a narrow terminal
    assert "object has no attribute 'get_marker'" in said
    major = running.__version__.split(".")[0]
    assert f"pytest {running.__version__} no longer has" in said and f"'pytest<{major}'" in said, said


def test_a_nose_era_suite_is_told_which_interpreter_and_pytest_it_needs():
    from reviewbench.validate.reasons import blames_environment, remedy

    # jmespath/jmespath.py before 2022: nose's yield tests (pytest < 4), nose itself (Python < 3.10).
    for line in ("ModuleNotFoundError: No module named 'nose'",
                 "ModuleNotFoundError: No module named 'nose.tools'",
                 "AttributeError: module 'collections' has no attribute 'Callable'"):  # fmt: skip
        for setup in (None, "auto"):
            said = remedy(line, setup)
            assert "--python python3.7" in said and "'pytest<4'" in said and "nose" in said, (line, setup, said)
    assert blames_environment("ModuleNotFoundError: No module named 'nose'")
    # Another missing module keeps its own advice.
    assert "nose" not in remedy("ModuleNotFoundError: No module named 'yaml'", "auto")


def test_python_2_code_is_told_to_mine_a_recent_range_not_to_install_a_package():
    from reviewbench.validate.reasons import remedy

    # pallets/itsdangerous before 2016: its tests.py ran on Python 2.
    for line in ("ImportError: cannot import name 'izip' from 'itertools' (unknown location)",
                 "ModuleNotFoundError: No module named 'urlparse'",
                 "ModuleNotFoundError: No module named 'cPickle'",
                 "ImportError: cannot import name 'imap' from 'itertools' (/usr/lib/python3.11/itertools.py)",
                 "SyntaxError: multiple exception types must be parenthesized",
                 "SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?"):  # fmt: skip
        for setup in (None, "auto"):
            said = remedy(line, setup)
            assert said.startswith("these commits are Python 2 code") and "mine --since" in said, (line, said)
            assert "pip install" not in said
    assert "Python 2" not in remedy("ModuleNotFoundError: No module named 'six'", "auto")  # an installable package
