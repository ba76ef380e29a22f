"""`clawbook grade` against submissions written to attack it (issue 17), one test per attack.

Each test builds a synthetic submission that performs one attack and passes only because the
attack fails. The attacks that only an operating-system sandbox can stop (reading another
process's environment, importing the instructor's ``solution/``, leaving a process behind)
need bubblewrap; they skip, saying why, where ``bwrap`` cannot run. The others hold with or
without it.
"""

import csv
import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
import zipfile
from pathlib import Path

import pytest

from clawbook.course import stubgen
from clawbook.course.chapters import load
from clawbook.harness.report import Outcome
from clawbook.instructor import grade, gradebook, intake, reference, sandbox
from clawbook.instructor.rows import Failure, Grade, RowStatus

REPO = Path(__file__).resolve().parents[2]
BODY = "        return len(self._script)\n"
"""The body of MockProvider.remaining (ch01), where a probe goes."""
OWN_VARIABLES = ("CLAW_IMPL", "CLAW_IMPL_PATH", "CLAWBOOK_REPORT", "CLAWBOOK_CHAPTERS")
SECRET = "sk-attack-" + uuid.uuid4().hex
BWRAP_PROBLEM = sandbox.bwrap_problem()
needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None,
    reason=f"bubblewrap cannot run here ({BWRAP_PROBLEM}): the attacks only a sandbox stops "
    "are not tested (CI installs it: .ci/run)",
)


def filled(folder: Path, *chapters: str) -> Path:
    """A submission: ``folder/starter`` with the regions of ``chapters`` filled in."""
    stubgen.write_tree(
        stubgen.render_tree(REPO / "solution", keep=set(chapters)), folder / "starter"
    )
    return folder


def append(folder: Path, module: str, code: str) -> Path:
    """Add ``code`` at the end of one of the submission's modules."""
    path = folder / "starter" / module
    path.write_text(path.read_text() + "\n" + code)
    return folder


def plant(folder: Path, old: str, new: str) -> Path:
    """Replace ``old`` (once) in the submission's mock.py."""
    mock = folder / "starter" / "mock.py"
    text = mock.read_text()
    assert text.count(old) == 1
    mock.write_text(text.replace(old, new))
    return folder


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in OWN_VARIABLES}


def processes_with(marker: str) -> list[int]:
    """The processes whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                if marker.encode() in file.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


TIMEOUT = 15
"""Seconds per test: ch01's Hypothesis test needs about 5 on a busy machine of two cores."""


@pytest.fixture(scope="module")
def course():
    """ch01, its reference run done once."""
    curriculum = load()
    prepared = reference.Course(
        curriculum,
        [curriculum.get("ch01")],
        limits=reference.SubmissionLimits(test_timeout=TIMEOUT),
    )
    prepared.prepare()
    return prepared


# ---------------------------------------------------------------- a class of attackers


LINGER = """
import glob, os, sys, time
marker, temp = sys.argv[1], sys.argv[2]
mine = os.path.dirname(os.getcwd())
out = None
for path in glob.glob('/proc/*/cmdline'):
    try:
        words = open(path, 'rb').read().split(b'\\0')
    except OSError:
        continue
    if b'grade' in words and b'--out' in words:
        out = words[words.index(b'--out') + 1].decode()
end = time.time() + 60
while time.time() < end:
    for victim in glob.glob(temp + '/clawbook-grade-*/work/starter/mock.py'):
        if not victim.startswith(mine + '/'):
            try:
                open(victim, 'w').write('raise SystemExit(1)\\n')
            except OSError:
                pass
    if out:
        try:
            open(out + '/gradebook.csv', 'a').write(marker + ',rewritten\\n')
        except OSError:
            pass
    time.sleep(0.1)
"""

PROBE = """\
        import glob, json, os
        facts = {}
        facts["solution"] = os.path.exists(%(solution)r)
        facts["checkout"] = os.path.exists(%(readme)r)
        facts["others"] = os.path.exists(%(others)r)
        facts["tmp"] = sorted(os.listdir("/tmp"))
        facts["interfaces"] = sorted(
            line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]
        )
        facts["pids"] = len([p for p in os.listdir("/proc") if p.isdigit()])
        try:
            open(os.path.join(os.getcwd(), "tests", "test_mock_provider.py"), "a").close()
            facts["tests_writable"] = True
        except OSError:
            facts["tests_writable"] = False
        assert 0, "FACTS" + json.dumps(facts) + "FACTS"
"""

FORMULA_NAME = '=HYPERLINK("http:\\\\evil.example","grades")'


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """Grade a class of attackers once with the real command, one worker, chapter 1."""
    base = tmp_path_factory.mktemp("attackers")
    subs = base / "submissions"
    marker = "clawbook-lingerer-" + uuid.uuid4().hex
    # Reads every environment block it can see, the grader's included, into a failure message.
    spy = plant(
        filled(subs / "spy", "ch01"),
        BODY,
        "        import glob\n        seen = []\n"
        "        for path in glob.glob('/proc/*/environ'):\n"
        "            try:\n                seen.append(open(path, 'rb').read().decode('latin-1'))\n"
        "            except OSError:\n                pass\n"
        "        assert 0, ' '.join(v for s in seen for v in s.split('\\0') if 'KEY' in v)\n",
    )
    # Hands the instructor's reference to the tests in place of its own stubs.
    cheat = append(
        filled(subs / "cheat"),
        "mock.py",
        "try:\n    from solution.mock import *  # noqa: F403\nexcept ImportError:\n    pass\n",
    )
    # Starts a process of its own session that outlives its run: it breaks every other
    # learner's scratch copy it can find and appends to the gradebook once it is written.
    lingerer = append(
        filled(subs / "a-lingerer", "ch01"),
        "mock.py",
        "import subprocess as _sp, sys as _sys, tempfile as _tf\n"
        f"_sp.Popen([_sys.executable, '-c', {LINGER!r}, {marker!r},\n"
        f"           {str(Path(tempfile.gettempdir()).resolve())!r}],\n"
        "          start_new_session=True, stdin=_sp.DEVNULL, stdout=_sp.DEVNULL,\n"
        "          stderr=_sp.DEVNULL)\n",
    )
    victim = filled(subs / "b-victim", "ch01")
    probe = plant(
        filled(subs / "probe", "ch01"),
        BODY,
        PROBE
        % {
            "solution": str(REPO / "solution" / "mock.py"),
            "readme": str(REPO / "README.md"),
            "others": str(victim / "starter" / "mock.py"),
        },
    )
    formula = filled(subs / FORMULA_NAME)
    out = base / "out"
    paths = [spy, cheat, lingerer, victim, probe, formula]
    result = subprocess.run(
        [sys.executable, "-m", "clawbook", "grade", *map(str, paths), "--out", str(out),
         "--chapters", "ch01", "--workers", "1", "--timeout", str(TIMEOUT), "--gradescope"],
        cwd=REPO, env={**environment(), "OPENROUTER_API_KEY": SECRET},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    time.sleep(2)  # what a process left behind would do next
    rows = {}
    if (out / "gradebook.csv").exists():
        with (out / "gradebook.csv").open(newline="") as file:
            rows = {row[0]: row for row in csv.reader(file)}
    data = json.loads((out / "gradebook.json").read_text()) if out.exists() else {}
    yield {
        "result": result,
        "out": out,
        "rows": rows,
        "json": {s["submission"]: s for s in data.get("submissions", [])},
        "left": processes_with(marker),
        "marker": marker,
    }
    for pid in processes_with(marker):  # ours, left behind when the attack worked
        os.kill(pid, signal.SIGKILL)


def written(graded) -> str:
    """Everything the grader wrote: CSV, JSON, the report, every results.json."""
    return "\n".join(
        p.read_text(errors="replace") for p in sorted(graded["out"].rglob("*")) if p.is_file()
    )


@needs_bwrap
def test_grade_attack_reading_the_graders_environment_leaks_no_key(attacked):
    assert attacked["result"].stdout.splitlines()[0].startswith("Grading"), attacked["result"]
    assert attacked["json"]["spy"]["failures"]  # the probe ran and reported what it saw
    assert SECRET not in written(attacked)


@needs_bwrap
def test_grade_attack_importing_the_instructors_solution_scores_nothing(attacked):
    cheat = attacked["json"]["cheat"]
    assert cheat["total"] > 0
    assert cheat["passed"] == 0


@needs_bwrap
def test_grade_attack_a_process_left_behind_is_gone_with_its_run(attacked):
    assert not attacked["left"], "a process of the submission outlived its run"
    assert attacked["marker"] not in (attacked["out"] / "gradebook.csv").read_text()
    victim = attacked["json"]["b-victim"]
    assert victim["status"] == "ok"
    assert victim["passed"] == victim["total"] > 0


@needs_bwrap
def test_grade_attack_probe_sees_only_its_own_scratch_copy(attacked):
    [failure, *_] = attacked["json"]["probe"]["failures"]
    facts = json.loads(failure["message"].split("FACTS")[1])
    assert facts["solution"] is False and facts["checkout"] is False
    assert facts["others"] is False
    # A fresh /tmp: nothing in it but the way to its own scratch folder, and the way to the
    # read-only course environment when that lives under /tmp (a CI clone in /tmp, say).
    bound = {
        path.parts[2]
        for path in (REPO, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve())
        if len(path.parts) > 2 and path.parts[1] == "tmp"
    }
    scratch = [n for n in facts["tmp"] if n.startswith("clawbook-grade-")]
    assert len(scratch) <= 1 and set(facts["tmp"]) - set(scratch) <= bound, facts["tmp"]
    assert facts["interfaces"] == ["lo"]  # no network
    assert facts["pids"] < 10  # a PID namespace of its own: the grader is not in it
    assert facts["tests_writable"] is False


def test_grade_attack_a_formula_as_a_name_is_text_in_gradebook_csv(tmp_path):
    names = [FORMULA_NAME, "+1+1", "-1+1", "@SUM(1)", "\tx", "\rx"]
    rows = [
        Grade(s.name, RowStatus.ERROR, detail="=1+1 in the detail too")
        for s in intake.submissions(tmp_path / name for name in names)
    ]
    gradebook.write_csv(tmp_path / "gradebook.csv", [], rows)
    with (tmp_path / "gradebook.csv").open(newline="") as file:
        read = list(csv.reader(file))
    cells = [cell for row in read[1:] for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert [row[0] for row in read[1:]] == [f"'{name}" for name in names]


@needs_bwrap
def test_grade_attack_a_formula_as_a_name_through_the_command(attacked):
    assert f"'{FORMULA_NAME}" in attacked["rows"]


# ---------------------------------------------------------------- copying and unpacking


COPY = """
import sys
from pathlib import Path
from clawbook.course import stubgen
from clawbook.instructor import grade, intake, reference
from clawbook.course.chapters import load
curriculum = load()
course = reference.Course(curriculum, [curriculum.get("ch01")])
course.starter = stubgen.render_tree(course.root / "solution")
scratch = Path(sys.argv[2])
try:
    grade._set_up(course, intake.Submission("x", Path(sys.argv[1])), scratch)
    print("copied", sum(1 for _ in scratch.rglob("*")))
except intake.InvalidSubmission as error:
    print("invalid", error)
"""


def copied(submission: Path, scratch: Path) -> int:
    """How many entries the grader's copy of ``submission`` holds (``COPY``, in a process)."""
    scratch.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", COPY, str(submission), str(scratch)], cwd=REPO, env=environment(),
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    verdict, count = result.stdout.split()[:2]
    assert verdict == "copied", result.stdout
    return int(count)


@pytest.mark.parametrize("form", ["folder", "tar.gz", "zip"])
def test_grade_attack_links_to_their_own_folder_do_not_make_the_copy_recurse(tmp_path, form):
    sub = filled(tmp_path / "loops", "ch01")
    plain = copied(sub, tmp_path / "plain")  # the same submission without the links
    for name in ("a", "b"):
        (sub / "starter" / name).symlink_to(".")
    (sub / "c").symlink_to(".")
    path = sub
    if form == "tar.gz":
        path = tmp_path / "loops.tar.gz"
        with tarfile.open(path, "w:gz") as tarred:
            tarred.add(sub, "loops")
    elif form == "zip":
        path = tmp_path / "loops.zip"
        with zipfile.ZipFile(path, "w") as zipped:
            for file in sorted(sub.rglob("*"), key=str):
                if "/a/" in str(file) or "/b/" in str(file) or "/c/" in str(file):
                    continue
                name = "loops/" + str(file.relative_to(sub))
                if file.is_symlink():
                    info = zipfile.ZipInfo(name)
                    info.external_attr = 0o120777 << 16
                    zipped.writestr(info, os.readlink(file))
                elif file.is_file():
                    zipped.write(file, name)
    # Before the fix the copy followed the links: 2**40 folders, until the process was killed.
    # Now the copy is bounded: an archive's link to its own folder is copied once at most, so
    # never more than twice the entries of the same submission without the links.
    assert copied(path, tmp_path / "scratch") <= 2 * plain


def chained_zip(path: Path) -> None:
    """Links that each stay inside, lexically, but lead outside once they exist."""
    with zipfile.ZipFile(path, "w") as zipped:
        zipped.writestr("starter/__init__.py", "")
        for name, target in (("a", "."), ("a/a/b", "../.."), ("b/escaped", "."),
                             ("b/made/deep", ".")):  # fmt: skip
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            zipped.writestr(info, target)


def chained_tar(path: Path) -> None:
    with tarfile.open(path, "w:gz") as tarred:
        init = tarfile.TarInfo("starter/__init__.py")
        tarred.addfile(init, io.BytesIO(b""))
        for name, target in (("a", "."), ("a/a/b", "../.."), ("b/escaped", ".")):
            link = tarfile.TarInfo(name)
            link.type, link.linkname = tarfile.SYMTYPE, target
            tarred.addfile(link)


@pytest.mark.parametrize(("suffix", "build"), [(".zip", chained_zip), (".tar.gz", chained_tar)])
def test_grade_attack_chained_links_in_an_archive_write_nothing_outside(tmp_path, suffix, build):
    archive = tmp_path / ("chained" + suffix)
    build(archive)
    into = tmp_path / "scratch" / "unpacked"
    into.parent.mkdir()
    before = sorted(tmp_path.iterdir())
    with pytest.raises(intake.InvalidSubmission, match="outside"):
        intake.extract(archive, into)
    assert sorted(tmp_path.iterdir()) == before
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "made").exists()


# ---------------------------------------------------------------- running


def test_grade_attack_printing_keeps_only_a_bounded_tail_in_memory(course, tmp_path, monkeypatch):
    sub = append(
        filled(tmp_path / "loud", "ch01"),
        "__init__.py",
        "import atexit as _a, os as _o\n_a.register(lambda: _o.write(1, b'x' * (24 * 2**20)))\n",
    )
    outputs = []
    real = grade.run_pytest

    def recorded(*args, **kwargs):
        run = real(*args, **kwargs)
        outputs.append(len(run.output))
        return run

    monkeypatch.setattr(grade, "run_pytest", recorded)
    result = grade.grade_submission(course, intake.Submission("loud", sub))
    assert result.status == RowStatus.OK, result
    assert result.passed == result.total
    assert outputs and max(outputs) <= 2**20, outputs


def test_grade_attack_a_connection_at_import_time_is_refused(course, tmp_path):
    sub = append(
        filled(tmp_path / "early", "ch01"),
        "__init__.py",
        "import socket as _s\ntry:\n"
        "    _s.create_connection(('192.0.2.1', 9), timeout=0.5).close()\n"
        "except Exception:\n    pass\n",
    )
    result = grade.grade_submission(course, intake.Submission("early", sub))
    assert result.status == RowStatus.CANNOT_IMPORT, result
    assert "network" in result.detail and "192.0.2.1" in result.detail


def test_grade_attack_a_hang_at_import_is_hung_not_ok(course, tmp_path):
    sub = append(filled(tmp_path / "stuck", "ch01"), "__init__.py", "while True:\n    pass\n")
    quick = dataclasses.replace(course, limits=reference.SubmissionLimits(test_timeout=5))
    result = grade.grade_submission(quick, intake.Submission("stuck", sub))
    assert result.status == RowStatus.HUNG, result
    assert "import" in result.detail
    assert "starter/__init__.py" in result.detail
    assert result.passed == 0
    assert result.standing.startswith("stuck at ch01: hung: "), result.standing


# ---------------------------------------------------------------- without bubblewrap


def test_grade_without_bwrap_says_so_first_and_in_the_report(tmp_path):
    sub = filled(tmp_path / "plain", "ch01")
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "clawbook", "grade", str(sub), "--out", str(out),
         "--chapters", "ch01", "--workers", "1", "--timeout", str(TIMEOUT)],
        cwd=REPO, env={**environment(), sandbox.BWRAP_ENV: str(tmp_path / "no-bwrap")},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert "bubblewrap" in first and "not" in first, first
    assert "no-bwrap" in first
    assert "without bubblewrap" in (out / "report.html").read_text()
    data = json.loads((out / "gradebook.json").read_text())
    assert data["isolation"]["sandbox"] is None
    assert "no-bwrap" in data["isolation"]["problem"]
    assert data["submissions"][0]["passed"] == data["submissions"][0]["total"] > 0


def test_grade_attack_a_key_read_without_bwrap_is_blanked_in_the_gradebook(tmp_path, monkeypatch):
    """The fallback's second line of defence: the key's value never reaches what is written."""
    monkeypatch.setenv("CLAWBOOK_TEST_API_KEY", SECRET)
    course = reference.Course(load(), [load().get("ch01")])
    row = Grade(
        f"spy-{SECRET}", RowStatus.OK, detail=f"OPENROUTER_API_KEY={SECRET}",
        failures=[Failure("t", "ch01", Outcome.FAILED, f"AssertionError: {SECRET}", "x:1")],
    )  # fmt: skip
    out = tmp_path / "out"
    gradebook.write_all(out, course, [row], gradescope=True)
    assert SECRET not in "".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert "[redacted]" in (out / "gradebook.json").read_text()
