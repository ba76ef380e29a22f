"""The lesson text of a page: what a learner reads before opening any folded block.

``instructor.demands`` asks of it whether a piece of wording a test demands is stated there.

The lesson text is the page with every ``???``/``???+`` block (the folded solutions and
examples) and every ``<quiz>`` removed, and with the ``--8<--`` includes left outside those
blocks resolved (``solution/`` files rendered without region markers, the named section
cut out). A demanded word is stated when

* a sentence of prose quotes it (in backticks or double quotes) at most ``WINDOW`` words
  after a wording cue: ``says``, ``contains``, ``includes``, ``mentions``, ``names``,
  ``quotes``, ``words``, ``spells``, ``accepts``, ``looks for``, ``asks for``,
  ``matches``...  For example "its message contains `mid-response`". A word merely used in
  passing ("a body that is not JSON") is not a statement of wording; or
* a string literal of the code shown contains it (given code states its own wording), but
  not a docstring, a comment, a diagram label, or a key or value of a dict or JSON object.

An echo's parameter name is stated when it follows a wording cue within ``ROLE_WINDOW``
words, quoted or not ("names the path", "naming the call's `id`"); quoting the test's own
example value after a cue also states it.

Matching is case-sensitive unless the test lowers the output first (``.lower()``), and a
word must not be part of a longer word (``add`` is not in ``added``). Whitespace in the page
is collapsed, so a statement may wrap across lines.
"""

from __future__ import annotations

import fnmatch
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clawbook.course import stubgen

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
COLLAPSED = re.compile(r"^(?P<indent>\s*)\?\?\?\+?\s")
SNIPPET = re.compile(r'^(?P<indent>\s*)--8<--\s+"(?P<spec>[^"]+)"\s*$')
SECTION_MARK = re.compile(r"^\s*# --8<-- \[(?P<edge>start|end):(?P<name>[-\w]+)\]\s*$")
BLOCK_START = re.compile(r"^(?:[-*+]|\d+\.)\s|^\||^#+\s|^!!!|^===")
SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
CUE = re.compile(
    r"\b(?:says?|saying|said|contain(?:s|ing)?|include(?:s|ing)?|mention(?:s|ing)?|names|"
    r"naming|quot(?:e|es|ed|ing)|words?|wording|spel(?:ls?|led|t)|accept(?:s|ed)?|"
    r"(?:looks?|ask(?:s|ed)?) for|match(?:es)?)\b",
    re.IGNORECASE,
)
QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|“([^”]+)”")
STRING = re.compile(r"""(?<![\w"'])[rbfuRBFU]{0,2}("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""")
WINDOW = 12
"""How many words after a wording cue may come before the quoted demanded word."""
ROLE_WINDOW = 3
"""How many determiners and possessives may stand between a wording cue and an echo's name."""


@dataclass
class Lesson:
    """What a learner reads on a page before opening any folded block."""

    page: str
    """The page, relative to the repository root (``book/ch01-first-llm-call.md``)."""
    sentences: list[str] = field(default_factory=list)
    """The prose, one sentence each, whitespace collapsed, bold markers removed."""
    strings: list[str] = field(default_factory=list)
    """The string literals of the code shown that may be wording (see ``code_strings``)."""

    def states(
        self,
        words: Sequence[str],
        names: Sequence[str] = (),
        *,
        ignore_case: bool = False,
        code: bool = True,
    ) -> bool:
        """True when this text states one of ``words`` (or, for an echo, one of ``names``)."""
        return self.statement(words, names, ignore_case=ignore_case, code=code) is not None

    def statement(
        self,
        words: Sequence[str],
        names: Sequence[str] = (),
        *,
        ignore_case: bool = False,
        code: bool = True,
    ) -> str | None:
        """The sentence (or, with ``code``, the code string) that states it, if any."""
        for sentence in self.sentences:
            if any(quoted_after_cue(sentence, w, ignore_case) for w in words):
                return sentence
            if any(phrase_after_cue(sentence, w, ignore_case) for w in words):
                return sentence
            if any(named_after_cue(sentence, name) for name in names):
                return sentence
        if names or not code:
            return None
        for string in self.strings:
            if any(contains(fold(string, ignore_case), fold(word, ignore_case)) for word in words):
                return string
        return None


def read_lesson(page: Path, root: Path) -> Lesson:
    """The lesson text of a page: prose sentences and the string literals of its code."""
    return lesson_of(lesson_lines(page, root), _page_name(page, root))


def _page_name(page: Path, root: Path) -> str:
    return page.relative_to(root).as_posix() if page.is_relative_to(root) else page.name


@dataclass
class Section:
    """One ``##`` section of a page (with its ``###`` subsections): a step, usually."""

    title: str
    lesson: Lesson
    """The section's own lesson text."""
    names: set[str] = field(default_factory=set)
    """The test names and patterns it quotes in backticks (``test_x``, ``test_x_*``,
    ``..._suffix``): the tests this section lists."""

    def lists(self, test: str) -> bool:
        """True when this section names ``test``: whole, by a ``*`` pattern or by its ending."""
        for name in self.names:
            if name == test:
                return True
            if "*" in name and fnmatch.fnmatchcase(test, name):
                return True
            for ellipsis in ("...", "…"):
                if name.startswith(ellipsis) and test.endswith(name[len(ellipsis) :]):
                    return True
        return False


TEST_NAME = re.compile(r"`((?:test_|\.\.\._|…_)[\w*]+)`")


def read_sections(page: Path, root: Path) -> list[Section]:
    """The page cut at its ``##`` headings, each part with its lesson text and listed tests.

    The text before the first ``##`` heading is a section too (titled ``""``).
    """
    name = _page_name(page, root)
    parts: list[tuple[str, list[str]]] = [("", [])]
    fence: str | None = None
    for line in lesson_lines(page, root):
        stripped = line.strip()
        if fence is None:
            opening = FENCE.match(line)
            if opening:
                fence = opening.group("fence")
            elif line.startswith("## "):
                parts.append((line[3:].strip(), []))
                continue
        elif _closes(stripped, fence):
            fence = None
        parts[-1][1].append(line)
    return [
        Section(title, lesson_of(lines, name), set(TEST_NAME.findall("\n".join(lines))))
        for title, lines in parts
    ]


def lesson_of(lines: Iterable[str], name: str) -> Lesson:
    """The lesson text of some page lines (already without folded blocks)."""
    found = Lesson(name)
    prose: list[str] = []
    code: list[str] | None = None
    fence, language = "", ""
    header: list[str] | None = None

    def add(text: str) -> None:
        found.sentences.extend(s for s in SENTENCE_END.split(text.replace("**", "")) if s)

    def end_prose() -> None:
        if prose:
            add(" ".join(prose))
            prose.clear()

    for line in lines:
        stripped = line.strip()
        if code is None and stripped.startswith("|"):
            end_prose()
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            if header is None:
                header = cells
            elif not all(set(cell) <= set("-: ") for cell in cells):
                # A cell is read under its column's heading: "the error result must contain:
                # the tool's name" states what the result contains.
                for title, cell in zip(header, cells, strict=False):
                    add(f"{title}: {cell}")
            continue
        header = None
        if code is not None:
            if _closes(stripped, fence):
                if language != "mermaid":
                    found.strings.extend(code_strings(code))
                code = None
            else:
                code.append(line)
            continue
        match = FENCE.match(line)
        if match:
            end_prose()
            fence = match.group("fence")
            language = (match.group("info").split() or [""])[0].lower()
            code = []
            continue
        if not stripped or BLOCK_START.match(stripped):
            end_prose()
        if stripped:
            prose.append(stripped)
    end_prose()
    return found


def _closes(stripped: str, fence: str) -> bool:
    return stripped.startswith(fence) and not stripped.strip(fence[0])


def lesson_lines(page: Path, root: Path) -> list[str]:
    """The page's lines without collapsed blocks and quizzes, with snippet includes resolved.

    A collapsed block is a ``???`` or ``???+`` line (pymdownx.details) and every following
    line that is blank or indented deeper than it.
    """
    kept: list[str] = []
    fence: str | None = None
    folded_at: int | None = None
    in_quiz = False
    for line in page.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if folded_at is not None:
            if not stripped or len(line) - len(line.lstrip()) > folded_at:
                continue
            folded_at = None
        if in_quiz:
            in_quiz = not stripped.startswith("</quiz>")
            continue
        if fence is None:
            if stripped.startswith("<quiz"):
                in_quiz = not stripped.endswith("</quiz>")
                continue
            collapsed = COLLAPSED.match(line)
            if collapsed:
                folded_at = len(collapsed.group("indent"))
                continue
            opening = FENCE.match(line)
            if opening:
                fence = opening.group("fence")
        elif _closes(stripped, fence):
            fence = None
        snippet = SNIPPET.match(line)
        if snippet:
            indent = snippet.group("indent")
            kept.extend(indent + s for s in included(snippet.group("spec"), root))
        else:
            kept.append(line)
    return kept


def included(spec: str, root: Path) -> list[str]:
    """The lines a ``--8<-- "path:section"`` include shows, as the book renders them."""
    path, _, section = spec.partition(":")
    file = root / path
    if not file.is_file():
        return []
    text = file.read_text(encoding="utf-8")
    if path.startswith("solution/") and file.suffix == ".py":
        chapters = {region.chapter for region in stubgen.find_regions(text, path)}
        text = stubgen.render(text, path, chapters, for_book=True)
    lines = text.splitlines()
    if section and not section[0].isdigit():
        inside = False
        cut: list[str] = []
        for line in lines:
            mark = SECTION_MARK.match(line)
            if mark and mark.group("name") == section:
                inside = mark.group("edge") == "start"
            elif inside and not mark:  # as pymdownx: other markers go before the dedent
                cut.append(line)
        lines = textwrap.dedent("\n".join(cut)).splitlines()
    return [line for line in lines if not SECTION_MARK.match(line)]


def code_strings(lines: Iterable[str]) -> list[str]:
    """The string literals of some code that may be wording.

    Left out: docstrings, comments, and the keys and values of dicts and JSON objects (a
    ``"type": "object"`` states no error message).
    """
    found: list[str] = []
    in_docstring = False
    for line in lines:
        stripped = line.strip()
        if in_docstring or stripped.startswith(('"""', "'''")):
            if (stripped.count('"""') + stripped.count("'''")) % 2 == 1:
                in_docstring = not in_docstring
            continue
        if stripped.startswith("#"):
            continue
        for match in STRING.finditer(line):
            if line[: match.start()].rstrip().endswith(":"):
                continue
            if line[match.end() :].lstrip().startswith(":"):
                continue
            found.append(match.group(1)[1:-1])
    return found


def contains(text: str, part: str) -> bool:
    """``part`` occurs in ``text``, and not as a piece of a longer word.

    ``add`` is not in ``added``; ``[DONE]`` is in ``data: [DONE]``.
    """
    if not part:
        return False
    before = r"(?<!\w)" if part[0].isalnum() or part[0] == "_" else ""
    after = r"(?!\w)" if part[-1].isalnum() or part[-1] == "_" else ""
    return re.search(before + re.escape(part) + after, text) is not None


def fold(text: str, ignore_case: bool) -> str:
    """``text`` as compared: lowered when case does not matter."""
    return text.lower() if ignore_case else text


def quoted_after_cue(sentence: str, word: str, ignore_case: bool = False) -> bool:
    """``word`` is quoted in ``sentence`` at most ``WINDOW`` words after a wording cue."""
    cues = [cue.end() for cue in CUE.finditer(sentence)]
    if not cues:
        return False
    for quote in QUOTED.finditer(sentence):
        content = next(group for group in quote.groups() if group is not None)
        if not contains(fold(content, ignore_case), fold(word, ignore_case)):
            continue
        if any(
            end <= quote.start() and len(sentence[end : quote.start()].split()) <= WINDOW
            for end in cues
        ):
            return True
    return False


def phrase_after_cue(sentence: str, phrase: str, ignore_case: bool = False) -> bool:
    """A phrase of several words follows a wording cue closely, quoted or not.

    "says it was not found" states ``not found``; a single word needs quotes, because a word
    like JSON is used in passing far more often than it is stated as wording.
    """
    if len(phrase.split()) < 2:
        return False
    for cue in CUE.finditer(sentence):
        words = sentence[cue.end() :].replace("`", "").split()[: len(phrase.split()) + ROLE_WINDOW]
        if contains(fold(" ".join(words), ignore_case), fold(phrase, ignore_case)):
            return True
    return False


def named_after_cue(sentence: str, name: str) -> bool:
    """``name`` is what a wording cue says the output carries: ``names the path``.

    Between the cue and the name may stand only a few determiners and possessives (``the``,
    ``its``, ``the call's``), so "ask for it by name" states nothing. Any case; ``base_url``
    may also be written ``base URL``.
    """
    variants = [v.split() for v in {name.lower(), name.lower().replace("_", " ")}]
    for cue in CUE.finditer(sentence):
        after = sentence[cue.end() :].replace("`", "").lower().split()
        words = [w for w in (w.strip(".,;:!?()[]\"'") for w in after) if w]
        for start in range(min(len(words), ROLE_WINDOW + 1)):
            if any(words[start : start + len(v)] == v for v in variants):
                return True
            if not _determiner(words[start]):
                break
    return False


DETERMINERS = {"the", "a", "an", "its", "their", "his", "her", "each", "every", "that", "this"}


def _determiner(word: str) -> bool:
    return word in DETERMINERS or word.endswith(("'s", "s'", "’s"))
