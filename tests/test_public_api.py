"""The public API is exactly what ``__all__`` says, every name in it exists, and the stage
entry points are importable from ``reviewbench`` itself."""

import subprocess
import sys

import reviewbench

STAGES = ("mine_corpus", "validate_corpus", "run_experiment", "register", "score_run", "build_report",
          "mine_tasks", "grade_solutions")  # fmt: skip


def test_exported_members():
    exported = set(reviewbench.__all__)
    for name in exported:
        assert getattr(reviewbench, name) is not None, name
    # Nothing public beyond __all__, but the subpackages imported as a side effect.
    public = {name for name in dir(reviewbench) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(reviewbench, name)).__name__ == "module"}
    assert public - modules == exported - {"__version__"}
    assert set(STAGES) <= exported
    for name in STAGES:
        assert callable(getattr(reviewbench, name)), name


def test_stage_packages_export_what_they_list():
    import importlib

    for package in ("mine", "validate", "review", "reviewers", "score", "report", "store", "tasks", "git"):
        module = importlib.import_module(f"reviewbench.{package}")
        for name in module.__all__:
            assert hasattr(module, name), f"reviewbench.{package}.{name}"


def test_importing_the_package_stays_cheap():
    # The CLI imports `reviewbench` first: stage entry points load on first use only.
    code = ("import sys, reviewbench; heavy = [m for m in ('httpx', 'numpy', 'scipy', 'libcst', 'jinja2') "
            "if m in sys.modules]; print(','.join(heavy))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_unknown_attribute_is_an_attribute_error():
    import pytest

    with pytest.raises(AttributeError):
        reviewbench.no_such_thing  # noqa: B018


def test_the_cli_starts_without_the_heavy_libraries():
    """Every `reviewbench` command pays the CLI's import: numpy and scipy (half a second),
    httpx, libcst and jinja2 load only in the commands that use them."""
    code = ("import sys, reviewbench.cli; heavy = [m for m in ('httpx', 'numpy', 'scipy', 'libcst', 'jinja2', "
            "'reviewbench.score', 'reviewbench.report') if m in sys.modules]; "
            "print(','.join(heavy))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_run_and_register_read_the_gates_without_scipy():
    """`reviewbench run` and `register` read the gates file (score.gates) but compute no
    statistic: scipy's half second is paid by the commands that score."""
    code = ("import sys, reviewbench.score.registration, reviewbench.review.runner, reviewbench.score.gates; "
            "heavy = [m for m in ('numpy', 'scipy', 'reviewbench.score._api') if m in sys.modules]; "
            "print(','.join(heavy))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""
    from reviewbench.score import score_run  # the package still exports it, on first use

    assert callable(score_run)
