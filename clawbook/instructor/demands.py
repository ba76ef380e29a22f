r"""The wording tests demand, and whether the lesson text states it (issue 9).

A learner must be able to pass every test from the lesson text alone; the folded solution is for
checking, not for discovering the contract. So every word a test demands of the learner's output
must be stated outside the collapsed blocks, in the section of the chapter's page that lists the
test (a ``##`` section that names it in backticks: whole, as a ``test_x_*`` pattern or by its
ending, ``..._refuses_text``), where the learner reads the step's contract before coding. A
demand an earlier chapter's page states counts too: the learner met that wording already.

``python -m clawbook.instructor.demands [chapter-id ...]`` prints one line per unstated demand;
``clawbook verify`` runs the same check.

What counts as a demand
    In the test files of a chapter with stubs (a reading chapter's tests pass from the start and
    ask nothing of the learner), for each test function:

    * ``pytest.raises(E, match=PATTERN)``: the literal fragments of the pattern. Escapes are
      undone (``\[DONE\]`` is ``[DONE]``), the pattern is cut at regex syntax (classes, groups,
      anchors, ``.``; a quantified character is dropped), a top-level ``|`` gives alternatives,
      and fragments shorter than three characters or without a letter are ignored.
      ``match=re.escape("...")`` is the literal itself.
    * ``assert "words" in OUTPUT``, including ``or`` of several and
      ``any(w in OUTPUT for w in ("a", "b"))``: any one of the literals.
    * ``assert OUTPUT == "text"`` (and tuples compared element by element): the words of the
      literal, each on its own.
    * ``assert OUTPUT.replace("<title>5</title>", ...) == ...``: the replaced text, whole and
      exact (the test relies on its format, ``5`` and not ``5.0``), even where the test's own
      inputs spell its parts.

    ``OUTPUT`` must come from the learner's code: an exception caught by ``pytest.raises``, the
    result of a call, or a name bound to one. Comparisons on values the test built itself
    (literals, f-strings, containers of them, module constants, parametrized arguments) are not
    demands, and neither are ``not in`` and ``!=`` (absence is behaviour, not wording) nor live
    tests (marked ``allow_network``: they check a real model's words).

Echoed data is not a demand
    A literal the test put in itself (anywhere in the test file's inputs, scripted replies,
    helpers and the ``tests/`` modules it imports; not in docstrings, assertion messages, the
    expected side of comparisons, ``match=`` patterns, parametrize ids or environment variable
    names) is echoed data, not wording the learner must invent. One thing is still demanded of
    an echo: that the output carries that input. When the test hands the value to the learner's
    code as an argument (a keyword, or a positional parameter of a class or function of the
    solution or of the test's own helpers), the demand becomes the parameter's name: ``base_url``
    for ``OpenRouterProvider(..., base_url=base_url)``, ``id`` for
    ``ToolCallStart(0, "call_7", "read")``. An echo handed over in no such way demands nothing.
    For ``==`` a word that occurs inside any input is echoed; for ``in`` and ``match=`` a
    literal is echoed when it is a whole word or phrase of an input, or when inputs cover all of
    it but punctuation.

What counts as stating a demand is ``clawbook.course.lesson``'s business.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clawbook.course.chapters import Chapter, Curriculum, load, load_file
from clawbook.course.lesson import Lesson, Section, contains, fold, read_lesson, read_sections
from clawbook.harness.runner import ROOT, chapter_test_files

# ---------------------------------------------------------------- demands


@dataclass(frozen=True)
class Demand:
    """One piece of wording a test requires of the learner's output."""

    test_file: str
    """The test file, relative to the repository root."""
    line: int
    test: str
    """The test function."""
    kind: str
    """How the test looks: ``match=``, ``in`` or ``==``."""
    words: tuple[str, ...]
    """The wording; any one of them will do (the test accepts alternatives)."""
    names: tuple[str, ...] = ()
    """For an echo: the parameter names under which the test passed the echoed value."""
    echo: str | None = None
    """For an echo: the value the test passed in, as the test spells it."""
    ignore_case: bool = False
    """The test lowers the output before it looks."""

    @property
    def location(self) -> str:
        """``tests/test_x.py:LINE``."""
        return f"{self.test_file}:{self.line}"

    @property
    def wanted(self) -> str:
        """What must be stated, for a report: ``'mid-response'``, ``'a' or 'b'``."""
        return " or ".join(repr(w) for w in (self.names or self.words))

    @property
    def how(self) -> str:
        """How the test looks for it: ``match=``, or ``in, echoing 'call_7'``."""
        return f"{self.kind}, echoing {self.echo}" if self.echo else self.kind


STRING_METHODS = {"lower", "casefold", "upper", "strip", "rstrip", "lstrip"}
NOT_INPUT_KEYWORDS = {"ids", "reason"}
ENVIRONMENT = {"monkeypatch", "os"}
LIVE_MARK = "allow_network"
SHORT = 3
WORD = re.compile(r"[^\W\d_][\w-]*\w|[^\W\d_]")

Function = ast.FunctionDef | ast.AsyncFunctionDef


def regex_fragments(pattern: str) -> tuple[list[list[str]], bool]:
    r"""The literal fragments of a regex, one list per top-level alternative, and ``(?i)``.

    Fragments inside a group that has alternatives or a quantifier are left out: the match
    may do without them.

    >>> regex_fragments(r"\[DONE\]|no (end|stop) marker")
    ([['[DONE]'], ['no ', ' marker']], False)
    """
    alternatives: list[list[str]] = [[]]
    current: list[str] = []
    groups: list[tuple[int, bool]] = []  # (fragments before the group, has a "|")
    i = 0

    def cut() -> None:
        if current:
            alternatives[-1].append("".join(current))
            current.clear()

    while i < len(pattern):
        char = pattern[i]
        i += 1
        if char == "\\" and i < len(pattern):
            escaped = pattern[i]
            i += 1
            if escaped in "nt":
                current.append("\n" if escaped == "n" else "\t")
            elif escaped.isalnum():
                cut()  # \b, \d, \w, \1 ...: not a literal
            else:
                current.append(escaped)
        elif char in "*?{":
            if current:
                current.pop()  # the quantified character may be absent
            cut()
            if char == "{":
                close = pattern.find("}", i)
                i = close + 1 if close >= 0 else len(pattern)
        elif char == "[":
            cut()
            close = pattern.find("]", i + 1)
            i = close + 1 if close >= 0 else len(pattern)
        elif char == "(":
            cut()
            marker = re.match(r"\?(?::|P<\w+>|<?[=!])?", pattern[i:])
            extension = marker.group() if marker else ""
            if extension in ("?", "?P") or extension.startswith("?P="):
                close = pattern.find(")", i)  # inline flags (?i), or a back reference
                i = close + 1 if close >= 0 else len(pattern)
            else:
                i += len(extension)  # lookarounds may match nothing: treat them as optional
                groups.append((len(alternatives[-1]), extension[-1:] in ("=", "!")))
        elif char == ")":
            cut()
            if groups:
                start, branched = groups.pop()
                if branched or pattern[i : i + 1] in ("*", "?", "{"):
                    del alternatives[-1][start:]
        elif char == "|":
            cut()
            if groups:
                groups[-1] = (groups[-1][0], True)
            else:
                alternatives.append([])
        elif char in "+^$.":
            cut()
        else:
            current.append(char)
    cut()
    return alternatives, "(?i" in pattern


def _meaningful(piece: str) -> bool:
    piece = piece.strip()
    return len(piece) >= SHORT and any(c.isalpha() for c in piece)


def uncovered(literal: str, inputs: Iterable[str], ignore_case: bool = False) -> list[str]:
    """The meaningful parts of ``literal`` not made of the test's own inputs.

    Empty when the literal is a word or phrase of one input, or when inputs of three or more
    characters cover all of it but punctuation and short scraps.
    """
    text = fold(literal, ignore_case)
    covered = [False] * len(text)
    for item in inputs:
        source = fold(item, ignore_case)
        if contains(source, text):
            return []
        if len(source.strip()) < SHORT:
            continue
        start = text.find(source)
        while start >= 0:
            covered[start : start + len(source)] = [True] * len(source)
            start = text.find(source, start + 1)
    pieces = re.split(
        "\0+", "".join("\0" if c else ch for ch, c in zip(literal, covered, strict=True))
    )
    return [piece.strip() for piece in pieces if _meaningful(piece)]


@dataclass
class _Needle:
    """One alternative of what a check looks for: literal fragments, or a name the test bound."""

    fragments: list[str] = field(default_factory=list)
    literal: str | None = None
    name: str | None = None


@dataclass
class _Check:
    """A check of the learner's output, before echoes are taken out."""

    line: int
    kind: str
    options: list[_Needle]
    ignore_case: bool


@dataclass
class _Scope:
    """What the names inside one test function stand for."""

    caught: set[str] = field(default_factory=set)
    assigned: dict[str, ast.expr | None] = field(default_factory=dict)
    loops: dict[str, ast.expr] = field(default_factory=dict)
    parameters: set[str] = field(default_factory=set)


def _is_pytest_raises(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "raises"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "pytest"
    )


def _string(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and _string(first.value) is not None:
                found.add(id(first.value))
    return found


def _expected(operand: ast.expr) -> set[int]:
    """The nodes of a comparison operand that are expected values rather than inputs."""
    if isinstance(operand, ast.Constant):
        return {id(operand)}
    if isinstance(operand, ast.Tuple | ast.List | ast.Set):
        return {i for element in operand.elts for i in _expected(element)}
    return set()


def _texts(tree: ast.AST, skip: set[int]) -> Iterator[str]:
    """Every string in ``tree`` (numbers as written, ``"a" * 5`` worked out), but in ``skip``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if id(node) in skip:
            continue
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mult)
            and (text := _string(node.left)) is not None
            and isinstance(node.right, ast.Constant)
            and isinstance(node.right.value, int)
            and node.right.value <= 1000
        ):
            yield text * node.right.value
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str):
                yield value
            elif isinstance(value, bytes):
                yield value.decode("utf-8", "replace")
            elif isinstance(value, int | float) and not isinstance(value, bool):
                yield repr(value)
        stack.extend(ast.iter_child_nodes(node))


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[str]:
    """The positional parameter names of a function, or of a class's constructor or fields."""
    if isinstance(node, ast.ClassDef):
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                return _parameters(item)[1:]
        return [
            item.target.id
            for item in node.body
            if isinstance(item, ast.AnnAssign)
            and isinstance(item.target, ast.Name)
            and "ClassVar" not in ast.unparse(item.annotation)
        ]
    return [a.arg for a in (*node.args.posonlyargs, *node.args.args)]


class _TestFile:
    """One test file, parsed, and what its names stand for."""

    def __init__(self, path: Path, root: Path) -> None:
        self.root = root
        self.name = path.relative_to(root).as_posix()
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.imports: dict[str, str] = {}
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = node.module
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.imports[alias.asname or alias.name.split(".")[0]] = alias.name
        self.defs = {
            node.name: node
            for node in self.tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        self.constants: dict[str, ast.expr] = {
            target.id: node.value
            for node in self.tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        self.helpers: dict[str, ast.Module] = {}
        for module in sorted(set(self.imports.values())):
            helper = root / "tests" / f"{module}.py"
            if "." not in module and helper.is_file():
                self.helpers[module] = ast.parse(helper.read_text(encoding="utf-8"))

    def tests(self) -> Iterator[Function]:
        """The test functions, without live tests (they check a real model's words)."""
        for node in self.tree.body:
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name.startswith("test")
                and not any(LIVE_MARK in ast.unparse(d) for d in node.decorator_list)
            ):
                yield node

    def inputs(self) -> list[str]:
        """Every string the file feeds in: arguments, scripted replies, helpers, fixtures.

        Left out: docstrings, assertion messages, expected values in comparisons, ``match=``
        patterns, parametrize ids and skip reasons, and the names of environment variables.
        """
        skip = _docstrings(self.tree)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assert):
                if node.msg is not None:
                    skip.add(id(node.msg))
                for part in ast.walk(node.test):
                    if isinstance(part, ast.Compare):
                        for operand in (part.left, *part.comparators):
                            skip.update(_expected(operand))
                    elif isinstance(part, ast.comprehension):
                        skip.add(id(part.iter))
            elif isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg in NOT_INPUT_KEYWORDS or (
                        keyword.arg == "match" and _is_pytest_raises(node)
                    ):
                        skip.add(id(keyword.value))
                root = node.func
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in ENVIRONMENT and node.args:
                    skip.add(id(node.args[0]))
        texts = list(_texts(self.tree, skip))
        for helper in self.helpers.values():
            texts.extend(_texts(helper, _docstrings(helper)))
        return texts

    # ------------------------------------------------------------ the checks of a test

    def scope(self, test: Function) -> _Scope:
        """Bind the names of a test: caught exceptions, assignments, loops, parameters."""
        scope = _Scope()
        for decorator in test.decorator_list:
            if isinstance(decorator, ast.Call):  # parametrize("a, b", ...), given(a=...)
                names = _string(decorator.args[0]) if decorator.args else None
                if names:
                    scope.parameters.update(n.strip() for n in names.split(","))
                for arg in decorator.args:
                    if isinstance(arg, ast.Tuple | ast.List):
                        scope.parameters.update(s for e in arg.elts if (s := _string(e)))
                scope.parameters.update(k.arg for k in decorator.keywords if k.arg)
        for node in ast.walk(test):
            if isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    if _is_pytest_raises(item.context_expr) and isinstance(
                        item.optional_vars, ast.Name
                    ):
                        scope.caught.add(item.optional_vars.id)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(scope, target, node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._bind(scope, node.target, node.value)
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) and isinstance(
                node.target, ast.Name
            ):
                scope.loops[node.target.id] = node.iter
        return scope

    @staticmethod
    def _bind(scope: _Scope, target: ast.expr, value: ast.expr) -> None:
        pairs: list[tuple[ast.expr, ast.expr | None]] = [(target, value)]
        if isinstance(target, ast.Tuple | ast.List):
            same_shape = isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(
                target.elts
            )
            values = value.elts if isinstance(value, ast.Tuple | ast.List) else []
            pairs = [(t, values[n] if same_shape else None) for n, t in enumerate(target.elts)]
        for name, bound in pairs:
            if isinstance(name, ast.Name):  # bound twice: too clever to follow
                scope.assigned[name.id] = None if name.id in scope.assigned else bound

    def checks(self, test: Function, scope: _Scope) -> Iterator[_Check]:
        """The checks of the learner's output that a test makes."""
        for node in ast.walk(test):
            if _is_pytest_raises(node):
                assert isinstance(node, ast.Call)
                yield from self._match(node)
            elif isinstance(node, ast.Assert):
                yield from self._asserted(node.test, scope)

    def _match(self, call: ast.Call) -> Iterator[_Check]:
        for keyword in call.keywords:
            if keyword.arg != "match":
                continue
            value = keyword.value
            if isinstance(value, ast.Name) and value.id in self.constants:
                value = self.constants[value.id]  # match=MESSAGE, a module constant
            pattern = _string(value)
            if pattern is not None:
                alternatives, ignore_case = regex_fragments(pattern)
                options = [_Needle(fragments=a, literal=pattern) for a in alternatives]
            elif (
                isinstance(value, ast.Call)
                and ast.unparse(value.func) == "re.escape"
                and value.args
                and (text := _string(value.args[0])) is not None
            ):
                options, ignore_case = [_Needle(fragments=[text], literal=text)], False
            else:
                continue
            yield _Check(call.lineno, "match=", options, ignore_case)

    def _asserted(self, expr: ast.expr, scope: _Scope) -> Iterator[_Check]:
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.And):
            for value in expr.values:
                yield from self._asserted(value, scope)
        elif isinstance(expr, ast.BoolOp):  # or: any one of the alternatives will do
            parts = [list(self._asserted(value, scope)) for value in expr.values]
            if all(len(part) == 1 and part[0].kind == "in" for part in parts):
                first = parts[0][0]
                first.options = [part[0].options[0] for part in parts]
                first.ignore_case = any(part[0].ignore_case for part in parts)
                yield first
        elif isinstance(expr, ast.Call):
            yield from self._any_of(expr, scope)
        elif isinstance(expr, ast.Compare) and len(expr.ops) == 1:
            op, left, right = expr.ops[0], expr.left, expr.comparators[0]
            if isinstance(op, ast.In):
                yield from self._contained(expr.lineno, left, right, scope)
            elif isinstance(op, ast.Eq):
                yield from self._equal(expr.lineno, left, right, scope)
                for side in (left, right):
                    yield from self._replaced(expr.lineno, side, scope)

    def _any_of(self, call: ast.Call, scope: _Scope) -> Iterator[_Check]:
        """``any(w in OUTPUT for w in ("a", "b"))``."""
        if not (
            isinstance(call.func, ast.Name)
            and call.func.id == "any"
            and len(call.args) == 1
            and isinstance(call.args[0], ast.GeneratorExp)
        ):
            return
        generator = call.args[0]
        loop, element = generator.generators[0], generator.elt
        if not (
            isinstance(element, ast.Compare)
            and isinstance(element.ops[0], ast.In)
            and isinstance(element.left, ast.Name)
            and isinstance(loop.target, ast.Name)
            and element.left.id == loop.target.id
            and isinstance(loop.iter, ast.Tuple | ast.List)
        ):
            return
        words = [_string(e) for e in loop.iter.elts]
        produced, ignore_case = self._produced(element.comparators[0], scope)
        if produced and words and all(words):
            options = [_Needle(fragments=[w], literal=w) for w in words if w]
            yield _Check(call.lineno, "in", options, ignore_case)

    def _contained(
        self, line: int, needle: ast.expr, haystack: ast.expr, scope: _Scope
    ) -> Iterator[_Check]:
        produced, ignore_case = self._produced(haystack, scope)
        if not produced:
            return
        literal = _string(needle)
        if literal is not None:
            yield _Check(line, "in", [_Needle([literal], literal)], ignore_case)
        elif isinstance(needle, ast.Name) and self._built(needle.id, scope):
            yield _Check(line, "in", [_Needle(name=needle.id)], ignore_case)

    def _equal(self, line: int, left: ast.expr, right: ast.expr, scope: _Scope) -> Iterator[_Check]:
        for expected, actual in ((right, left), (left, right)):
            pairs: list[tuple[ast.expr, ast.expr]] = [(expected, actual)]
            if isinstance(expected, ast.Tuple | ast.List):
                if isinstance(actual, ast.Tuple | ast.List) and len(actual.elts) == len(
                    expected.elts
                ):
                    pairs = list(zip(expected.elts, actual.elts, strict=True))
                else:
                    pairs = [(element, actual) for element in expected.elts]
            for value, output in pairs:
                literal = _string(value)
                if literal is None or not literal.strip():
                    continue
                produced, ignore_case = self._produced(output, scope)
                if produced:
                    yield _Check(line, "==", [_Needle([literal], literal)], ignore_case)

    def _replaced(self, line: int, side: ast.expr, scope: _Scope) -> Iterator[_Check]:
        """``OUTPUT.replace("<title>5</title>", ...) == ...``: the text replaced, exactly.

        A test that rewrites a piece of the output before comparing it whole demands that
        piece as written, to the character (a number's format, say: ``5`` and not ``5.0``).
        """
        pieces: list[str] = []
        node = side
        while (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "replace"
            and node.args
        ):
            old = _string(node.args[0])
            if old is not None and _meaningful(old):
                pieces.append(old)
            node = node.func.value
        if pieces and self._produced(node, scope)[0]:
            for piece in reversed(pieces):
                yield _Check(line, "replace", [_Needle([piece], piece)], False)

    def _built(self, name: str, scope: _Scope, seen: frozenset[str] = frozenset()) -> bool:
        """True when ``name`` holds a value the test made itself, without the learner's code."""
        if name in seen:
            return False
        if name in scope.parameters or (name in self.constants and name not in scope.assigned):
            return True
        value = scope.assigned.get(name)
        return value is not None and self._made_by_test(value, scope, seen | {name})

    def _made_by_test(self, node: ast.expr, scope: _Scope, seen: frozenset[str]) -> bool:
        """True for literals, f-strings, and containers and sums of them."""
        if isinstance(node, ast.Constant | ast.JoinedStr):
            return True
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return all(self._made_by_test(e, scope, seen) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(self._made_by_test(e, scope, seen) for e in (*node.keys, *node.values) if e)
        if isinstance(node, ast.BinOp):
            return self._made_by_test(node.left, scope, seen) and self._made_by_test(
                node.right, scope, seen
            )
        if isinstance(node, ast.Name):
            return self._built(node.id, scope, seen)
        return False

    def _produced(self, expr: ast.expr, scope: _Scope) -> tuple[bool, bool]:
        """Whether ``expr`` is output of the learner's code; and whether it is lowered first."""
        ignore_case = False
        seen: set[str] = set()
        node = expr
        while True:
            if isinstance(node, ast.Await):
                node = node.value
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in STRING_METHODS:
                    ignore_case = ignore_case or func.attr in ("lower", "casefold", "upper")
                    node = func.value
                elif isinstance(func, ast.Name) and func.id in ("str", "repr") and node.args:
                    node = node.args[0]
                else:
                    return True, ignore_case  # what a call returned
            elif isinstance(node, ast.Attribute | ast.Subscript):
                node = node.value
            elif isinstance(node, ast.Name):
                name = node.id
                if name in scope.caught or name in seen:
                    return True, ignore_case
                seen.add(name)
                if name in scope.loops:
                    iterable = scope.loops[name]
                    if isinstance(iterable, ast.Tuple | ast.List) and iterable.elts:
                        produced = all(self._produced(e, scope)[0] for e in iterable.elts)
                        return produced, ignore_case
                    node = iterable
                elif self._built(name, scope):
                    return False, ignore_case
                elif (value := scope.assigned.get(name)) is not None:
                    node = value
                else:
                    return True, ignore_case  # a fixture, or bound in a way not followed
            else:
                return False, ignore_case

    # ------------------------------------------------------------ echoes and their names

    def names_of(
        self, test: Function, scope: _Scope, needle: _Needle, ignore_case: bool
    ) -> list[str]:
        """The parameter names under which the test hands ``needle`` to the learner's code."""
        found: list[str] = []
        for call in ast.walk(test):
            if not isinstance(call, ast.Call):
                continue
            positional, keywords = self._signature(call.func, scope)
            for keyword in call.keywords:
                if (
                    keyword.arg
                    and keywords
                    and self._holds(keyword.value, needle, scope, ignore_case)
                ):
                    found.append(keyword.arg)
            for index, arg in enumerate(call.args[: len(positional)]):
                if self._holds(arg, needle, scope, ignore_case):
                    found.append(positional[index])
        return list(dict.fromkeys(found))

    def _holds(self, node: ast.expr, needle: _Needle, scope: _Scope, ignore_case: bool) -> bool:
        """``node`` is exactly the echoed value (or a name the test bound to it)."""
        if needle.name is not None:
            return isinstance(node, ast.Name) and node.id == needle.name
        if isinstance(node, ast.Name) and self._built(node.id, scope):
            value = scope.assigned.get(node.id) or self.constants.get(node.id)
            return value is not None and self._holds(value, needle, scope, ignore_case)
        value_text = _string(node)
        return value_text is not None and fold(value_text, ignore_case) == fold(
            needle.literal or "", ignore_case
        )

    def _signature(self, func: ast.expr, scope: _Scope) -> tuple[list[str], bool]:
        """The positional parameter names of a callee, and whether its keywords name roles.

        Roles come from the learner's side: classes and functions of the solution, the test's
        own helpers, and methods of objects the test made. Test infrastructure (pytest, the
        loopback server, fixtures, the standard library) names none.
        """
        if isinstance(func, ast.Attribute):
            root: ast.expr = func.value
            while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
                root = root.func if isinstance(root, ast.Call) else root.value
            local = isinstance(root, ast.Name) and (
                root.id in scope.assigned or self.imports.get(root.id, "").startswith("claw")
            )
            return [], local
        if not isinstance(func, ast.Name):
            return [], False
        if func.id in self.defs:
            return _parameters(self.defs[func.id]), True
        module = self.imports.get(func.id, "")
        if module in self.helpers:
            return self._lookup(self.helpers[module], func.id), True
        if module == "claw" or module.startswith("claw."):
            relative = module.removeprefix("claw").strip(".").replace(".", "/") or "__init__"
            for candidate in (f"solution/{relative}.py", f"solution/{relative}/__init__.py"):
                source = self.root / candidate
                if source.is_file():
                    tree = ast.parse(source.read_text(encoding="utf-8"))
                    return self._lookup(tree, func.id), True
            return [], True
        return [], False

    @staticmethod
    def _lookup(tree: ast.Module, name: str) -> list[str]:
        for node in tree.body:
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name == name
            ):
                return _parameters(node)
        return []


def file_demands(path: Path, root: Path) -> list[Demand]:
    """The wording the tests of one file demand of the learner's output, in line order."""
    tests = _TestFile(path, root)
    inputs = tests.inputs()
    found: set[Demand] = set()
    for test in tests.tests():
        scope = tests.scope(test)
        for check in tests.checks(test, scope):
            found.update(_resolve(tests, test, scope, check, inputs))
    return sorted(found, key=lambda d: (d.line, d.words, d.names))


def _resolve(
    tests: _TestFile, test: Function, scope: _Scope, check: _Check, inputs: list[str]
) -> list[Demand]:
    """Turn one check into demands: what the test put in itself is echoed, the rest invented."""
    words: list[list[str]] = []
    echoes: list[tuple[list[str], str, str | None]] = []
    if check.kind == "replace":
        # Exact text, never an echo: the test's inputs may well spell its parts (``title``).
        needle = check.options[0]
        return [Demand(tests.name, check.line, test.name, check.kind, tuple(needle.fragments))]
    for needle in check.options:
        pieces: list[str] = []
        for fragment in needle.fragments:
            left = uncovered(fragment, inputs, check.ignore_case)
            if check.kind == "==":
                candidates = (w for p in left for w in WORD.findall(p) if _meaningful(w))
                pieces.extend(w for w in candidates if not any(w in item for item in inputs))
            elif left and _meaningful(fragment):
                pieces.append(fragment.strip())
        if pieces:
            words.append(pieces)
            continue
        if check.kind == "==":
            return []  # an echoed value, passed through unchanged: behaviour, not wording
        names = tests.names_of(test, scope, needle, check.ignore_case)
        if not names:
            return []  # echoed, and handed over in no way the learner can be told about
        shown = needle.name if needle.name else repr(needle.literal)
        echoes.append((names, shown, needle.literal))

    def demand(found: Sequence[str], names: Sequence[str] = (), echo: str | None = None) -> Demand:
        return Demand(
            test_file=tests.name,
            line=check.line,
            test=test.name,
            kind=check.kind,
            words=tuple(dict.fromkeys(found)),
            names=tuple(dict.fromkeys(names)),
            echo=echo,
            ignore_case=check.ignore_case,
        )

    if len(check.options) == 1 and words:
        return [demand([piece]) for piece in words[0]]  # every fragment is required
    if len(check.options) == 1:
        names, shown, literal = echoes[0]
        return [demand([literal] if literal else [], names, shown)]
    alternatives = [pieces[0] for pieces in words] + [e[2] for e in echoes if e[2]]
    return [demand(alternatives, [n for e in echoes for n in e[0]])]


# ---------------------------------------------------------------- chapters and pages


@dataclass(frozen=True)
class Finding:
    """A demand, and the page that should state it."""

    demand: Demand
    chapter: str
    page: str
    """The chapter's page, relative to the repository root."""
    stated: bool
    sections: tuple[str, ...] = ()
    """The titles of the page's sections that list the test: where the demand must be stated."""

    def __str__(self) -> str:
        d = self.demand
        if not self.sections:
            where = f"{self.page}: no section lists {d.test}, so no step states it"
        else:
            titles = " or ".join(f"'{title}'" for title in self.sections)
            where = f"not stated in {self.page}'s section {titles} outside collapsed solutions"
        return f"{d.location} {d.test} demands {d.wanted} ({d.how}): {where}"


def checked_chapters(curriculum: Curriculum, ids: Sequence[str] = ()) -> list[Chapter]:
    """The chapters whose demands are checked: written, with stubs and tests (or as named)."""
    chapters = [curriculum.get(i) for i in ids] if ids else list(curriculum.chapters)
    return [c for c in chapters if c.written and c.has_stubs and c.tests]


def findings(root: Path, curriculum: Curriculum, ids: Sequence[str] = ()) -> list[Finding]:
    """Every demand of the chosen chapters, each with whether its lesson text states it."""
    lessons: dict[str, Lesson] = {}
    sections: dict[str, list[Section]] = {}
    out: list[Finding] = []
    for chapter in checked_chapters(curriculum, ids):
        readable = [c for c in curriculum.chapters[: curriculum.index(chapter.id) + 1] if c.page]
        for earlier in readable:
            if earlier.id not in lessons and earlier.page is not None:
                source = root / "book" / earlier.page
                # A missing page is the chapter-data check's to report; here it states nothing.
                lessons[earlier.id] = (
                    read_lesson(source, root) if source.is_file() else Lesson(earlier.page)
                )
        page = f"book/{chapter.page}"
        source = root / page
        sections[chapter.id] = read_sections(source, root) if source.is_file() else []
        for test_file in chapter_test_files(chapter, root, curriculum):
            try:
                found = file_demands(root / test_file, root)
            except SyntaxError:
                continue  # the test run reports a file that does not parse
            for demand in found:
                listing = [s for s in sections[chapter.id] if s.lists(demand.test)]
                # Strict: stated in a section that lists the test, where the learner reads the
                # step's contract; wording an earlier chapter taught is known already.
                here = [s.lesson for s in listing]
                before = [lessons[c.id] for c in readable if c is not chapter]
                stated = any(
                    lesson.states(
                        demand.words,
                        demand.names,
                        ignore_case=demand.ignore_case,
                        code=lesson in here,
                    )
                    for lesson in (*here, *before)
                )
                where = tuple(s.title for s in listing)
                out.append(Finding(demand, chapter.id, page, stated, where))
    return out


HOW_TO_STATE = (
    "state each word in the section that lists its test, outside ??? blocks, quoted after a "
    "wording cue (its message contains `mid-response`), or name the input it echoes (names the "
    "`base_url`)"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Print every unstated demand of the chapters named (every written one by default)."""
    parser = argparse.ArgumentParser(
        prog="python -m clawbook.instructor.demands",
        description="Check that every word a test demands is stated in the lesson text.",
    )
    parser.add_argument("chapters", nargs="*", help="chapter ids (default: every written one)")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="the course to check (default: this checkout)"
    )
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    chapters_file = root / "clawbook" / "chapters.toml"
    curriculum = load() if root == ROOT else load_file(chapters_file)
    try:
        found = findings(root, curriculum, args.chapters)
    except KeyError as error:
        print(error.args[0], file=sys.stderr)
        return 2
    missing = [f for f in found if not f.stated]
    for finding in missing:
        print(finding)
    if missing:
        print(f"{len(missing)} of {len(found)} demands not stated: {HOW_TO_STATE}")
        return 1
    chapters = len({f.chapter for f in found})
    print(f"all {len(found)} demands of {chapters} chapter(s) are stated in the lesson text")
    return 0


if __name__ == "__main__":
    sys.exit(main())
