"""The quiz check: real choices in every question, right answers spread over the positions."""

from pathlib import Path
from textwrap import dedent

import pytest
from fake_course import make_course
from mkdocs_quiz.parsing import find_quizzes, mask_code_blocks
from mkdocs_quiz.plugin import MkDocsQuizPlugin

from clawbook.course.chapters import load
from clawbook.instructor import quizzes, verify

ROOT = Path(__file__).resolve().parents[2]


def quiz(right: int, options: int = 4, question: str = "Which one?") -> str:
    lines = [f"- [{'x' if n == right else ' '}] answer {n}" for n in range(1, options + 1)]
    return "<quiz>\n" + question + "\n" + "\n".join(lines) + "\n\nBecause.\n</quiz>\n\n"


@pytest.fixture
def course(tmp_path):
    return make_course(tmp_path / "course")


def plant(course, page: str, text: str) -> None:
    path = course.book / page
    path.write_text(path.read_text() + "\n" + text)


def test_quiz_check_passes_questions_spread_over_every_position(course):
    plant(course, "ch01.md", "".join(quiz(right) for right in (1, 2, 3, 4, 2, 4, 1, 3)))
    outcome = verify.check_quizzes(course)
    assert outcome.ok, outcome.details
    assert outcome.summary.startswith("8 quiz questions")


def test_quiz_check_names_an_option_wrapped_onto_a_second_line(course):
    plant(course, "ch01.md", "".join(quiz(right) for right in (1, 2, 3, 4, 2, 4, 1, 3)))
    plant(
        course,
        "ch02.md",
        dedent("""\
            <quiz>
            Why?
            - [ ] No
            - [x] Because the tool in flight is stopped, and the
              history stays valid
            - [ ] Never
            - [ ] Maybe

            Said.
            </quiz>
            """),
    )
    lines = (course.book / "ch02.md").read_text().splitlines()
    wrapped = lines.index("  history stays valid") + 1
    asked = lines.index("<quiz>") + 1
    outcome = verify.check_quizzes(course)
    assert not outcome.ok
    assert outcome.details == [
        f"book/ch02.md:{wrapped}: a quiz option goes on onto this line; mkdocs-quiz reads an "
        "option from its one line and shows the rest as explanation: put the option on one line",
        f"book/ch02.md:{asked}: the question offers 2 option(s); give it at least 3",
    ]


def test_quiz_check_refuses_a_question_of_two_options(course):
    plant(course, "ch01.md", "".join(quiz(right) for right in (1, 2, 3, 4, 2, 4, 1, 3)))
    plant(course, "ch02.md", quiz(2, options=2))
    outcome = verify.check_quizzes(course)
    assert not outcome.ok
    assert any(
        line.startswith("book/ch02.md:") and "offers 2 option(s)" in line
        for line in outcome.details
    )


def test_quiz_check_refuses_right_answers_that_are_never_the_last_option(course):
    # 12 questions: fair share 3 a position, so 1.5 to 4.5 right answers each is allowed.
    plant(course, "ch01.md", "".join(quiz(right) for right in (1, 2, 3) * 4))
    outcome = verify.check_quizzes(course)
    assert not outcome.ok
    assert (
        'part 1 ("Only part"): option 4 is the right answer 0 times; its fair share is 3 '
        "(allowed 1.5 to 4.5)"
    ) in outcome.details
    assert "the whole book: option 4 is the right answer 0 times" in " ".join(outcome.details)


def test_quiz_rule_bounds_are_half_and_one_and_a_half_fair_shares():
    rights = (1, 1, 1, 2, 2, 3, 4, 4)
    at = [quizzes.QuizQuestion("p.md", n, 4, (right,)) for n, right in enumerate(rights)]
    # Fair share 2 each: position 1 holds 3 (the most allowed), 3 holds 1 (the fewest).
    assert quizzes.imbalance(at) == []
    more = [
        *at,
        quizzes.QuizQuestion("p.md", 9, 4, (1,)),
        quizzes.QuizQuestion("p.md", 10, 4, (3,)),
    ]
    assert quizzes.imbalance(more) == [
        "option 1 is the right answer 4 times; its fair share is 2.5 (allowed 1.25 to 3.75)"
    ]


def test_quiz_rule_leaves_a_rare_position_unjudged():
    few = [quizzes.QuizQuestion("p.md", n, 4, (1,)) for n in range(7)]
    # Fair share 1.75 a position: too few questions to judge any of them.
    assert quizzes.imbalance(few) == []


def test_quiz_reading_matches_mkdocs_quiz_on_every_question_of_the_book():
    plugin = MkDocsQuizPlugin()
    curriculum = load()
    for chapter in curriculum.chapters:
        if chapter.page is None:
            continue
        text = (ROOT / "book" / chapter.page).read_text()
        ours = quizzes.questions(chapter.page, text)
        masked, _ = mask_code_blocks(text)
        theirs = []
        for match in find_quizzes(masked):
            body = dedent(match.group(1)).strip("\n").splitlines()
            _, answers, right, _, _ = plugin._parse_quiz_question_and_answers(body)
            theirs.append((len(answers), tuple(n for n, a in enumerate(answers, 1) if a in right)))
        assert [(q.options, q.right) for q in ours] == theirs, chapter.page


def test_quiz_reading_matches_mkdocs_quiz_on_a_wrapped_option():
    body = ["Why?", "- [ ] No", "- [x] Because the", "  rest", "- [ ] Never", "", "Said."]
    _, answers, _, _, _ = MkDocsQuizPlugin()._parse_quiz_question_and_answers(body)
    (ours,) = quizzes.questions("p.md", "<quiz>\n" + "\n".join(body) + "\n</quiz>\n")
    assert ours.options == len(answers) == 2
    assert ours.wrapped == (5,)


def test_the_books_quizzes_pass_the_check():
    assert quizzes.problems(ROOT / "book", load()) == []


def test_the_quiz_check_runs_in_verify_even_with_fast():
    checks = {name: (check, slow) for name, check, slow in verify.CHECKS}
    assert checks["quizzes"] == (verify.check_quizzes, False)
