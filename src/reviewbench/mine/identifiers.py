"""Renaming one identifier everywhere the repository uses it: a function, method, class or
module-level name, with its callers, for rename variants.

A function with no local to rename (``def is_expired(self): return ...``) or a defect at
module level (``_PATTERN = re.compile(...)``) can still be shown under another name if the
name itself, and every use of it, is renamed. That is only safe when nothing outside the
code we rewrite can refer to it, so the rule is conservative:

- the word appears, at the case's base commit, in Python files (and stubs) only, or in prose no test
  runs (``.rst``/``.md``/``.txt`` docs and changelogs, left as they are, unless the test
  settings run doctests on text files); a mention in a config file or in a string (e.g.
  ``__all__`` or ``getattr(obj, "name")``) refuses it;
- in those files every occurrence is a name token (or a comment, rewritten too): a
  definition, a plain use, ``from <the repository's own module> import name``, or an
  attribute of ``self``, ``cls``, ``super()`` or one of the repository's own modules and
  classes (or a new instance of one, ``Key().name``); a public name reached as an attribute of anything else (``key.sign()``) might
  be another library's, and a keyword argument names another callable's parameter, so
  those two are allowed only for private (``_``-prefixed) names;
- never a dunder, a test or fixture hook name, a builtin, or a name imported by ``import``;
- the new name is spelled nowhere in the repository.

Every rewritten file is then compiled on both sides: the code must be the same with that
one name changed in every name table and qualified name, and nothing else.
"""

from __future__ import annotations

import ast
import io
import random
import re
import tokenize
import types
from dataclasses import dataclass
from pathlib import PurePosixPath

from .head import HeadTree
from .rename import _IDENTIFIER, _RESERVED, choose_names

__all__ = ["Owners", "RepositoryNames", "alpha_equal", "renamable_name", "rename_identifier", "touched_names"]

_NEVER = re.compile(r"^(test|Test|setup|teardown|setUp|tearDown|pytest_|conftest$)")
_STRINGY = frozenset({tokenize.STRING, *(getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
                                          if hasattr(tokenize, n))})  # fmt: skip


class _RenameRefused(Exception):  # noqa: N818 - a control-flow signal inside this module, never shown
    """A use of the name this module cannot prove safe to rewrite."""


@dataclass(frozen=True)
class Owners:
    """What the repository defines at the base: its module names and its class names.
    An attribute ``X.name`` is the repository's own when ``X`` is one of these."""

    modules: frozenset[str]
    classes: frozenset[str]
    packages: frozenset[str]


def renamable_name(name: str) -> bool:
    """Whether ``name`` is the kind of name this module ever renames."""
    return (name.isidentifier() and name not in _RESERVED and not (name.startswith("__") and name.endswith("__"))
            and not _NEVER.match(name) and name not in ("self", "cls") and len(name) > 1)  # fmt: skip


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")


def _rewrite(text: str, old: str, new: str, owners: Owners) -> str:
    """``text`` with every occurrence of ``old`` renamed ``new``; raises
    :class:`_RenameRefused` at the first occurrence that is not provably ours."""
    private = old.startswith("_")
    word = _word(old)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError) as exc:
        raise _RenameRefused("untokenizable") from exc
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int]] = []  # (row, col, length) to replace, in order
    significant = [t for t in tokens if t.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT,
                                                        tokenize.DEDENT, tokenize.ENCODING)]  # fmt: skip
    depth = 0
    statement: list[tokenize.TokenInfo] = []
    for index, tok in enumerate(significant):
        if tok.type == tokenize.NEWLINE:
            statement = []
            continue
        statement.append(tok)
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        if tok.type in _STRINGY and word.search(tok.string):
            raise _RenameRefused("named in a string")
        if tok.type != tokenize.NAME or tok.string != old:
            continue
        before = significant[index - 1] if index else None
        after = significant[index + 1] if index + 1 < len(significant) else None
        head = statement[0].string
        if head == "import" or (head == "from" and "import" not in [t.string for t in statement[:-1]]):
            raise _RenameRefused("a module of that name")
        if head == "from" and not private:
            source = statement[1]
            if source.string != "." and source.string.split(".")[0] not in owners.packages | owners.modules:
                raise _RenameRefused("imported from another library")
        if before is not None and before.string == ".":
            owner = significant[index - 2] if index >= 2 else None
            ours = owner is not None and (
                owner.string in ("self", "cls") or owner.string in owners.modules or owner.string in owners.classes
                or owner.string == ")" and index >= 4 and significant[index - 3].string == "("
                and significant[index - 4].string in owners.classes | {"super"})  # fmt: skip
            if not (ours or private):
                raise _RenameRefused("an attribute of something that may not be ours")
        elif (after is not None and after.string == "=" and depth > 0 and before is not None
              and before.string in ("(", ",")):  # fmt: skip
            if not private:
                raise _RenameRefused("a keyword argument of another callable")
        edits.append((tok.start[0], tok.start[1], len(old)))
    for tok in tokens:  # comments follow the rename, so that no stale mention is left
        if tok.type == tokenize.COMMENT:
            for match in word.finditer(tok.string):
                edits.append((tok.start[0], tok.start[1] + match.start(), len(old)))
    for row, col, length in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + new + line[col + length :]
    return "".join(lines)


def _mapped(value: str, mapping: dict[str, str]) -> str:
    return ".".join(mapping.get(part, part) for part in value.split("."))


def alpha_equal(old: types.CodeType, new: types.CodeType, mapping: dict[str, str]) -> bool:
    """Whether ``new`` is ``old`` with the names in ``mapping`` renamed and nothing else:
    same bytecode, every name table and (qualified) name mapped, constants equal (a string
    constant may differ only as a renamed dotted name: keyword names, ``__qualname__``)."""
    if old.co_code != new.co_code or len(old.co_consts) != len(new.co_consts):
        return False
    for field in ("co_names", "co_varnames", "co_cellvars", "co_freevars"):
        if tuple(mapping.get(n, n) for n in getattr(old, field)) != getattr(new, field):
            return False
    if mapping.get(old.co_name, old.co_name) != new.co_name:
        return False
    if hasattr(old, "co_qualname") and _mapped(old.co_qualname, mapping) != new.co_qualname:
        return False
    return all(_const_equal(a, b, mapping) for a, b in zip(old.co_consts, new.co_consts, strict=True))


def _const_equal(a: object, b: object, mapping: dict[str, str]) -> bool:
    if isinstance(a, types.CodeType):
        return isinstance(b, types.CodeType) and alpha_equal(a, b, mapping)
    if type(a) is not type(b):
        return False
    if isinstance(a, str):
        return a == b or _mapped(a, mapping) == b
    if isinstance(a, frozenset):  # iteration order differs between two compilations: compare as sets
        return frozenset(_mapped(x, mapping) if isinstance(x, str) else x for x in a) == b
    if isinstance(a, tuple) and isinstance(b, tuple):  # b is: the types are the same
        return len(a) == len(b) and all(_const_equal(x, y, mapping) for x, y in zip(a, b, strict=False))
    return a == b


def rename_identifier(texts: dict[str, str], old: str, new: str, owners: Owners) -> dict[str, str] | None:
    """Every text of ``texts`` (path → Python source: all the files that mention ``old``)
    with ``old`` renamed ``new``, or None when some use is not provably safe to rewrite or
    a rewritten file does not compile to the same code, names aside."""
    if not renamable_name(old) or not renamable_name(new):
        return None
    done: dict[str, str] = {}
    for path, text in texts.items():
        try:
            renamed = _rewrite(text, old, new, owners)
        except _RenameRefused:
            return None
        if len(renamed.splitlines()) != len(text.splitlines()):
            return None
        try:
            before = compile(text, path, "exec", dont_inherit=True)
            after = compile(renamed, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return None
        if not alpha_equal(before, after, {old: new}):
            return None
        done[path] = renamed
    return done


def touched_names(source: str, lines: list[int]) -> tuple[list[str], list[str], bool]:
    """Names a defect on ``lines`` touches that could be renamed with all their uses: the
    innermost function holding each line; in a class body, the class attributes the line
    binds, then the class; at module level, the module-level names the line binds or
    reads. Then the fallbacks: the classes around a touched method, innermost first (a
    method whose name cannot change may still sit in a class whose name can). Also says
    whether every line lies outside any function."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return [], [], False
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    found: list[str] = []
    fallback: list[str] = []
    module_level = True
    for line in sorted(set(lines)):
        around = [n for n in scopes if _first(n) <= line <= (n.end_lineno or n.lineno)]
        functions = [n for n in around if not isinstance(n, ast.ClassDef)]
        if functions:
            module_level = False
            found.append(max(functions, key=_first).name)
            classes = [n for n in around if isinstance(n, ast.ClassDef)]
            fallback.extend(n.name for n in sorted(classes, key=_first, reverse=True))
        elif around:
            owner = max(around, key=_first)
            for statement in owner.body:
                if statement.lineno <= line <= (statement.end_lineno or statement.lineno) and isinstance(
                        statement, (ast.Assign, ast.AnnAssign)):  # fmt: skip
                    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                    found.extend(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            found.append(owner.name)
        else:
            for statement in tree.body:
                if statement.lineno <= line <= (statement.end_lineno or statement.lineno):
                    found.extend(n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id in bound
                                 and n.lineno <= line <= (n.end_lineno or n.lineno))  # fmt: skip
    return list(dict.fromkeys(found)), [n for n in dict.fromkeys(fallback) if n not in found], module_level


def _first(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _styled(candidate: str, like: str) -> str:
    """``candidate`` written the way ``like`` is: leading underscore, CONSTANT or CamelCase."""
    lead = "_" if like.startswith("_") else ""
    body, bare = candidate.strip("_"), like.lstrip("_")
    if bare.isupper():
        body = body.upper()
    elif bare[:1].isupper():
        body = "".join(part[:1].upper() + part[1:] for part in body.split("_"))
    return lead + body


_PROSE = frozenset({".rst", ".md", ".txt", ".adoc"})
_TEST_SETTINGS = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "noxfile.py", "Makefile")


class RepositoryNames:
    """The repository at one commit, asked which files spell a word and what they hold."""

    #: A name spelled in more files than this is left alone (a rename that large is noise).
    MAX_FILES = 40

    def __init__(self, tree: HeadTree) -> None:
        self.tree = tree
        self._owners: Owners | None = None
        self._doctests: bool | None = None

    def files_with(self, word: str) -> list[str]:
        """Tracked files at the commit that spell ``word`` as a whole word."""
        out = self.tree.repo.run("grep", "-l", "-z", "-w", "-F", "-I", "-e", word, self.tree.commit, "--",
                                 check=False)  # fmt: skip
        prefix = f"{self.tree.commit}:"
        return [p[len(prefix) :] for p in out.split("\0") if p.startswith(prefix)]

    def prose(self, path: str) -> bool:
        """Whether ``path`` is prose no test runs (docs, a changelog): a mention there is
        left as it is; the repository's test settings enabling doctests on text files
        make every such file count as code."""
        if PurePosixPath(path).suffix.lower() not in _PROSE:
            return False
        if self._doctests is None:
            out = self.tree.repo.run("grep", "-l", "-I", "-E", "doctest-glob|doctest_glob|doctest-rst",
                                     self.tree.commit, "--", *_TEST_SETTINGS, check=False)  # fmt: skip
            self._doctests = bool(out.strip())
        return not self._doctests

    def spelled(self, word: str) -> bool:
        return bool(self.files_with(word))

    @property
    def owners(self) -> Owners:
        if self._owners is None:
            paths = [PurePosixPath(p) for p in self.tree.files if p.endswith(".py")]
            modules = {p.stem for p in paths} | {part for p in paths for part in p.parent.parts}
            out = self.tree.repo.run("grep", "-h", "-E", r"^\s*class\s+[A-Za-z_]", self.tree.commit, "--", "*.py",
                                     check=False)  # fmt: skip
            classes = {m.group(1) for m in re.finditer(r"class\s+([A-Za-z_]\w*)", out)}
            self._owners = Owners(frozenset(modules), frozenset(classes), frozenset(modules))
        return self._owners

    def rename(self, name: str, sides: dict[str, tuple[str, str]], rng: random.Random,
               current: dict[str, str] | None = None,
               ) -> tuple[str, dict[str, tuple[str, str]], dict[str, tuple[str, str]]] | None:  # fmt: skip
        """Rename ``name`` everywhere: in both sides of the edited files (``path → (base,
        patched)``) and in every other file spelling it at the commit (``current``: the
        texts of other files an earlier rename already rewrote).

        Returns:
            (the new name, the edited files' renamed sides, ``path → (text, renamed)`` of
            the other files), or None when that is not provably safe.
        """
        if not renamable_name(name):
            return None
        files = [p for p in self.files_with(name) if not self.prose(p)]
        others = [p for p in files if p not in sides]
        if len(files) > self.MAX_FILES or any(not p.endswith((".py", ".pyi")) for p in others):
            return None
        texts = {**self.tree.texts(others), **{p: t for p, t in (current or {}).items() if p in others}}
        other_texts: dict[str, str] = {}
        for p in others:
            text = texts.get(p)
            if text is None:
                return None
            other_texts[p] = text
        words = {w for pair in sides.values() for text in pair for w in _IDENTIFIER.findall(text)}
        new = None
        for _ in range(4):
            candidate = _styled(choose_names([name], words, rng)[name], name)
            if renamable_name(candidate) and candidate not in words and not self.spelled(candidate):
                new = candidate
                break
            words.add(candidate)
        if new is None:
            return None
        owners = self.owners
        base = rename_identifier({p: old for p, (old, _new) in sides.items()}, name, new, owners)
        patched = rename_identifier({p: new_text for p, (_old, new_text) in sides.items()}, name, new, owners)
        rest = rename_identifier(other_texts, name, new, owners)
        if base is None or patched is None or rest is None:
            return None
        return (new, {p: (base[p], patched[p]) for p in sides},
                {p: (other_texts[p], rest[p]) for p in others})
