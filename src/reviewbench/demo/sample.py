"""The embedded sample project of the demo: a small, original Python library ("shelfkit")
whose history is built deterministically, commit by commit, in a temporary folder.

Its history holds 13 genuine fixes, each with the test that catches the bug, among
ordinary commits and look-alikes (a docs-only "fix"). Modules are kept as ordered
function snippets so that a fix replaces one function and the file is rebuilt.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["FIX_COUNT", "build_sample_repository"]

_HEADERS = {
    "shelfkit/pricing.py": '"""Prices, discounts and totals."""\n',
    "shelfkit/inventory.py": '"""Stock levels: what is on the shelf, what is reserved."""\n',
    "shelfkit/textutil.py": '"""Text helpers for labels and catalogue entries."""\n\nimport re\n',
    "shelfkit/dates.py": '"""Dates of deliveries and opening days."""\n\nfrom datetime import date\n',
}

# (module, function name) -> source of the first, buggy version.
_BUGGY = {
    ("shelfkit/pricing.py", "apply_discount"):
        "def apply_discount(price, percent):\n    \"\"\"The price after a percentage discount.\"\"\"\n"
        "    return price * percent / 100\n",
    ("shelfkit/pricing.py", "bulk_total"):
        "def bulk_total(items):\n    \"\"\"Total of (unit price, quantity) pairs.\"\"\"\n    total = 0\n"
        "    for price, quantity in items:\n        subtotal = price * quantity\n    return total\n",
    ("shelfkit/pricing.py", "round_price"):
        "def round_price(amount):\n    \"\"\"An amount rounded to cents.\"\"\"\n    return int(amount * 100) / 100\n",
    ("shelfkit/inventory.py", "in_stock"):
        "def in_stock(count, reserved):\n    \"\"\"Whether any item is left for sale.\"\"\"\n"
        "    return count - reserved >= 0\n",
    ("shelfkit/inventory.py", "take"):
        "def take(stock, name, quantity):\n    \"\"\"Remove items from the stock.\"\"\"\n"
        "    stock[name] = stock.get(name, 0) - quantity\n    return stock[name]\n",
    ("shelfkit/inventory.py", "restock"):
        "def restock(stock, name, quantity):\n    \"\"\"Add a delivery to the stock.\"\"\"\n"
        "    stock[name] = quantity\n    return stock[name]\n",
    ("shelfkit/textutil.py", "slugify"):
        "def slugify(title):\n    \"\"\"A URL-safe label for a title.\"\"\"\n"
        "    return re.sub(r\"[^a-zA-Z0-9]+\", \"-\", title).strip(\"-\")\n",
    ("shelfkit/textutil.py", "truncate"):
        "def truncate(text, width):\n    \"\"\"Text cut to at most width characters, with an ellipsis.\"\"\"\n"
        "    if len(text) <= width:\n        return text\n    return text[:width] + \"…\"\n",
    ("shelfkit/textutil.py", "word_count"):
        "def word_count(text):\n    \"\"\"Number of words in a text.\"\"\"\n    return len(text.split(\" \"))\n",
    ("shelfkit/textutil.py", "parse_tags"):
        "def parse_tags(text):\n    \"\"\"Tags from a comma-separated list.\"\"\"\n"
        "    return [tag.strip() for tag in text.split(\",\")]\n",
    ("shelfkit/dates.py", "days_between"):
        "def days_between(first, second):\n    \"\"\"Days from one date to another, whatever their order.\"\"\"\n"
        "    return (second - first).days\n",
    ("shelfkit/dates.py", "is_weekend"):
        "def is_weekend(day):\n    \"\"\"Whether the shop is closed that day.\"\"\"\n    return day.weekday() > 5\n",
    ("shelfkit/dates.py", "parse_date"):
        "def parse_date(text):\n    \"\"\"A date from YYYY-MM-DD.\"\"\"\n    return datetime.strptime(text, \"%Y-%m-%d\").date()\n",
}

# The fixes, in history order: (message, function, fixed source, test file, test source).
_FIXES = [
    ("Fix apply_discount returning the discount instead of the price", ("shelfkit/pricing.py", "apply_discount"),
     "def apply_discount(price, percent):\n    \"\"\"The price after a percentage discount.\"\"\"\n"
     "    return price * (100 - percent) / 100\n",
     "tests/test_pricing.py",
     "def test_apply_discount():\n    assert apply_discount(200, 25) == 150\n"),
    ("Fix bulk_total ignoring every item", ("shelfkit/pricing.py", "bulk_total"),
     "def bulk_total(items):\n    \"\"\"Total of (unit price, quantity) pairs.\"\"\"\n    total = 0\n"
     "    for price, quantity in items:\n        total += price * quantity\n    return total\n",
     "tests/test_pricing.py",
     "def test_bulk_total():\n    assert bulk_total([(2, 3), (1, 4)]) == 10\n"),
    ("fix: in_stock is true when everything is reserved (closes #4)", ("shelfkit/inventory.py", "in_stock"),
     "def in_stock(count, reserved):\n    \"\"\"Whether any item is left for sale.\"\"\"\n"
     "    return count - reserved > 0\n",
     "tests/test_inventory.py",
     "def test_in_stock_when_all_reserved():\n    assert not in_stock(3, 3)\n    assert in_stock(4, 3)\n"),
    ("Fix slugify keeping capital letters", ("shelfkit/textutil.py", "slugify"),
     "def slugify(title):\n    \"\"\"A URL-safe label for a title.\"\"\"\n"
     "    return re.sub(r\"[^a-z0-9]+\", \"-\", title.lower()).strip(\"-\")\n",
     "tests/test_textutil.py",
     "def test_slugify():\n    assert slugify(\"Big Red Shelf\") == \"big-red-shelf\"\n"),
    ("Fix take allowing negative stock", ("shelfkit/inventory.py", "take"),
     "def take(stock, name, quantity):\n    \"\"\"Remove items from the stock.\"\"\"\n"
     "    if quantity > stock.get(name, 0):\n        raise ValueError(f\"only {stock.get(name, 0)} {name} left\")\n"
     "    stock[name] = stock.get(name, 0) - quantity\n    return stock[name]\n",
     "tests/test_inventory.py",
     "def test_take_more_than_stock():\n    import pytest\n\n    with pytest.raises(ValueError):\n"
     "        take({\"pen\": 1}, \"pen\", 2)\n"),
    ("bugfix: truncate returns one character too many", ("shelfkit/textutil.py", "truncate"),
     "def truncate(text, width):\n    \"\"\"Text cut to at most width characters, with an ellipsis.\"\"\"\n"
     "    if len(text) <= width:\n        return text\n    return text[: width - 1] + \"…\"\n",
     "tests/test_textutil.py",
     "def test_truncate_width():\n    assert truncate(\"abcdef\", 4) == \"abc…\"\n"),
    ("Fix days_between for dates given in reverse order", ("shelfkit/dates.py", "days_between"),
     "def days_between(first, second):\n    \"\"\"Days from one date to another, whatever their order.\"\"\"\n"
     "    return abs((second - first).days)\n",
     "tests/test_dates.py",
     "def test_days_between_reversed():\n    assert days_between(date(2024, 1, 4), date(2024, 1, 1)) == 3\n"),
    ("Fix is_weekend missing Saturdays", ("shelfkit/dates.py", "is_weekend"),
     "def is_weekend(day):\n    \"\"\"Whether the shop is closed that day.\"\"\"\n    return day.weekday() >= 5\n",
     "tests/test_dates.py",
     "def test_saturday_is_weekend():\n    assert is_weekend(date(2024, 6, 1))\n    assert not is_weekend(date(2024, 6, 3))\n"),
    ("Fix word_count with repeated spaces", ("shelfkit/textutil.py", "word_count"),
     "def word_count(text):\n    \"\"\"Number of words in a text.\"\"\"\n    return len(text.split())\n",
     "tests/test_textutil.py",
     "def test_word_count_spaces():\n    assert word_count(\"red  shelf \") == 2\n"),
    ("hotfix: restock overwrote the current stock", ("shelfkit/inventory.py", "restock"),
     "def restock(stock, name, quantity):\n    \"\"\"Add a delivery to the stock.\"\"\"\n"
     "    stock[name] = stock.get(name, 0) + quantity\n    return stock[name]\n",
     "tests/test_inventory.py",
     "def test_restock_adds():\n    assert restock({\"pen\": 2}, \"pen\", 3) == 5\n"),
    ("Fix round_price truncating instead of rounding", ("shelfkit/pricing.py", "round_price"),
     "def round_price(amount):\n    \"\"\"An amount rounded to cents.\"\"\"\n    return round(amount, 2)\n",
     "tests/test_pricing.py",
     "def test_round_price():\n    assert round_price(1.999) == 2.0\n"),
    ("Fix parse_tags keeping empty tags", ("shelfkit/textutil.py", "parse_tags"),
     "def parse_tags(text):\n    \"\"\"Tags from a comma-separated list.\"\"\"\n"
     "    return [tag.strip() for tag in text.split(\",\") if tag.strip()]\n",
     "tests/test_textutil.py",
     "def test_parse_tags_skips_empty():\n    assert parse_tags(\"a, ,b,\") == [\"a\", \"b\"]\n"),
    ("Fix parse_date: datetime was never imported", ("shelfkit/dates.py", "parse_date"),
     "def parse_date(text):\n    \"\"\"A date from YYYY-MM-DD.\"\"\"\n"
     "    from datetime import datetime\n\n    return datetime.strptime(text, \"%Y-%m-%d\").date()\n",
     "tests/test_dates.py",
     "def test_parse_date():\n    assert parse_date(\"2024-01-02\") == date(2024, 1, 2)\n"),
]

FIX_COUNT = len(_FIXES)

_TEST_HEADERS = {
    "tests/test_pricing.py": "from shelfkit.pricing import apply_discount, bulk_total, round_price\n",
    "tests/test_inventory.py": "from shelfkit.inventory import in_stock, restock, take\n",
    "tests/test_textutil.py": "from shelfkit.textutil import parse_tags, slugify, truncate, word_count\n",
    "tests/test_dates.py": "from datetime import date\n\nfrom shelfkit.dates import days_between, is_weekend, parse_date\n",
}


class _Project:
    """The project's files as snippets, rendered to text on each commit."""

    def __init__(self) -> None:
        self.functions: dict[str, dict[str, str]] = {m: {} for m in _HEADERS}
        self.tests: dict[str, list[str]] = {t: [] for t in _TEST_HEADERS}
        self.extra: dict[str, str] = {}

    def files(self) -> dict[str, str]:
        out = {"shelfkit/__init__.py": '"""shelfkit: small helpers for a small shop."""\n', **self.extra}
        for module, functions in self.functions.items():
            if functions:
                out[module] = _HEADERS[module] + "".join(f"\n\n{src}" for src in functions.values())
        for path, tests in self.tests.items():
            if tests:
                out[path] = _TEST_HEADERS[path] + "".join(f"\n\n{src}" for src in tests)
        return out


def _git(repo: Path, *args: str, when: int) -> None:
    stamp = f"{1_700_000_000 + when * 3600} +0000"
    env = {**os.environ, "GIT_AUTHOR_NAME": "Sam Shelf", "GIT_AUTHOR_EMAIL": "sam@shelfkit.example",
           "GIT_COMMITTER_NAME": "Sam Shelf", "GIT_COMMITTER_EMAIL": "sam@shelfkit.example",
           "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull}  # fmt: skip
    subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)


def build_sample_repository(path: Path) -> Path:
    """Create the sample repository at ``path`` (which must not exist); same history every time."""
    path.mkdir(parents=True)
    project = _Project()
    step = 0

    def commit(message: str) -> None:
        nonlocal step
        step += 1
        for name, text in project.files().items():
            target = path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        _git(path, "add", "-A", when=step)
        _git(path, "commit", "-q", "-m", message, when=step)

    _git(path, "init", "-q", "-b", "main", when=0)
    project.extra = {
        "README.md": "# shelfkit\n\nSmall helpers for a small shop: prices, stock, labels, dates.\n",
        "pyproject.toml": '[project]\nname = "shelfkit"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\n'
                          'testpaths = ["tests"]\n',
        "tests/conftest.py": "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).parents[1]))\n",
    }  # fmt: skip
    for (module, name), source in _BUGGY.items():
        if module == "shelfkit/pricing.py":
            project.functions[module][name] = source
    commit("Start shelfkit with pricing helpers")
    for module in ("shelfkit/inventory.py", "shelfkit/textutil.py", "shelfkit/dates.py"):
        for (owner, name), source in _BUGGY.items():
            if owner == module:
                project.functions[module][name] = source
        commit(f"Add {module.split('/')[1].removesuffix('.py')} module")
    ordinary = {
        3: ("Document the pricing rules", lambda: project.extra.update(
            {"docs/pricing.md": "Discounts are percentages of the list price.\n"})),
        6: ("docs: fix typo in README", lambda: project.extra.update(
            {"README.md": project.extra["README.md"].replace("shop:", "shop -")})),
        9: ("Add a changelog", lambda: project.extra.update({"CHANGELOG.md": "## 0.1.0\n\n- First release.\n"})),
    }  # fmt: skip
    for index, (message, key, fixed, test_path, test_source) in enumerate(_FIXES):
        project.functions[key[0]][key[1]] = fixed
        project.tests[test_path].append(test_source)
        commit(message)
        if index in ordinary:
            text, change = ordinary[index]
            change()
            commit(text)
    return path
