"""The permission scenarios (chapter 13): rule sets × modes × calls.

Each scenario is one call under one rule set and mode; ``oracle.record`` runs them through
Claude Code and ``tests/test_permissions_oracle.py`` runs them through claw. Sections:

- ``doc-``: the examples of Claude Code's permission pages, as chapter 13's documented-rows
  table (tests/test_permissions_claude_code.py) holds them, asked of the program itself;
- ``mode-``: every mode, with no rule, over the same calls (looking, editing, running, inside
  and outside the project);
- ``rule-``: every rule form (exact, ``:*``, `` *``, ``*`` inside, bare tool, ``Bash(*)``; path
  rules with ``./``, ``/``, ``//``, ``~/``, ``**``, one segment) against the calls they should and
  should not match;
- ``compound-``, ``wrapper-``, ``redirect-``: the shell forms a rule must see through;
- ``flags-``: rules given with ``--allowedTools`` and ``--disallowedTools`` instead of a file;
- ``webfetch-``: ``WebFetch`` in every mode and under ``domain:`` rules.

Paths: a file tool's ``path`` is relative to the project, ``~/...`` (the scratch home) or
absolute under ``/tmp/claw-oracle`` (``oracle.sandbox.ROOT``); rules name the same places.
Commands that would run long or reach outside the scratch folders are not in the table (an
allowed command really runs, as the unprivileged user, inside the namespace).
"""

from __future__ import annotations

from typing import Any

from oracle.runner import Scenario

OUT = "/tmp/claw-oracle/outside"
"""A folder outside the project (and outside the home)."""

Call = tuple[str, dict[str, Any]]


def sh(command: str) -> Call:
    """A Bash call."""
    return ("Bash", {"command": command})


def read(path: str) -> Call:
    """A Read call."""
    return ("Read", {"path": path})


def write(path: str) -> Call:
    """A Write call of a new file."""
    return ("Write", {"path": path, "content": "x\n"})


def grep(path: str) -> Call:
    """A Grep call searching ``path``."""
    return ("Grep", {"pattern": "a", "path": path})


def glob(path: str) -> Call:
    """A Glob call under ``path``."""
    return ("Glob", {"pattern": "**/*", "path": path})


SCENARIOS: list[Scenario] = []
"""Every permission scenario, in the order they run."""


def add(
    name: str,
    call: Call,
    *,
    allow: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    mode: str = "default",
    via: str = "project",
    note: str = "",
) -> None:
    """Add one scenario (names are unique)."""
    assert all(s.name != name for s in SCENARIOS), name
    tool, arguments = call
    SCENARIOS.append(
        Scenario(name, tool, arguments, allow, ask, deny, mode, via, note=note)  # type: ignore[arg-type]
    )


# doc-: the documented examples -------------------------------------------------------------

NPM_TEST = ("Bash(npm test *)",)
DOCUMENTED: list[tuple[str, Call, dict[str, Any]]] = [
    (
        "broad-deny-beats-narrow-allow",
        sh("aws s3 ls"),
        {"allow": ("Bash(aws s3 ls)",), "deny": ("Bash(aws *)",)},
    ),
    (
        "ask-beats-more-specific-allow",
        sh("git push origin main"),
        {"allow": ("Bash(git push origin main)",), "ask": ("Bash(git push *)",)},
    ),
    ("bare-Bash-allows-every-command", sh("make deploy"), {"allow": ("Bash",)}),
    ("Bash(*)-is-Bash", sh("make deploy"), {"allow": ("Bash(*)",)}),
    ("bare-Read-deny", read("a.py"), {"deny": ("Read",)}),
    ("exact-command", sh("npm run build"), {"allow": ("Bash(npm run build)",)}),
    ("exact-command-not-longer", sh("npm run build --prod"), {"allow": ("Bash(npm run build)",)}),
    ("Read(./.env)", read(".env"), {"deny": ("Read(./.env)",)}),
    ("npm-run-star", sh("npm run lint"), {"allow": ("Bash(npm run *)",)}),
    ("git-star-main-checkout", sh("git checkout main"), {"allow": ("Bash(git * main)",)}),
    ("git-star-main-push", sh("git push origin main"), {"allow": ("Bash(git * main)",)}),
    ("star-version", sh("python3 --version"), {"allow": ("Bash(* --version)",)}),
    ("star-help-star", sh("cargo build --help all"), {"allow": ("Bash(* --help *)",)}),
    (
        "deny-git-push-star",
        sh("git push origin dev"),
        {"allow": ("Bash(git *)",), "deny": ("Bash(git push *)",)},
    ),
    ("colon-star-suffix", sh("npm run test"), {"allow": ("Bash(npm run:*)",)}),
    ("colon-only-at-end", sh("git push"), {"allow": ("Bash(git:* push)",)}),
    ("space-star-word-boundary", sh("makepkg"), {"allow": ("Bash(make *)",)}),
    ("no-space-no-boundary", sh("makepkg"), {"allow": ("Bash(make*)",)}),
    ("space-star-matches-bare", sh("make"), {"allow": ("Bash(make *)",)}),
    ("star-denies-every-tool", read("a.py"), {"deny": ("*",)}),
    ("star-asks-every-tool", sh("ls"), {"ask": ("*",)}),
    ("compound-needs-each-part", sh("npm test && rm -rf build"), {"allow": NPM_TEST}),
    (
        "compound-each-part-allowed",
        sh("npm test && make"),
        {"allow": ("Bash(npm test *)", "Bash(make)")},
    ),
    ("compound-pipe-separator", sh("make |& tee-like"), {"allow": ("Bash(make)",)}),
    ("timeout-stripped", sh("timeout 30 npm test"), {"allow": NPM_TEST}),
    ("time-stripped", sh("time npm test"), {"allow": NPM_TEST}),
    ("nice-stripped", sh("nice -n 10 npm test"), {"allow": NPM_TEST}),
    ("nohup-stripped", sh("nohup npm test"), {"allow": NPM_TEST}),
    ("stdbuf-stripped", sh("stdbuf -oL npm test"), {"allow": NPM_TEST}),
    ("command-stripped", sh("command npm test"), {"allow": NPM_TEST}),
    ("command-v-not-stripped", sh("command -v npm"), {"allow": ("Bash(npm *)",)}),
    ("safe-env-stripped", sh("NODE_ENV=test npm test"), {"allow": NPM_TEST}),
    ("other-env-stops-allow", sh("PATH=/tmp/evil npm test"), {"allow": NPM_TEST}),
    ("deny-past-any-assignment", sh("FOO=bar rm -rf tmp/"), {"deny": ("Bash(rm *)",)}),
    ("bare-xargs-stripped", sh("xargs npm test < /dev/null"), {"allow": NPM_TEST}),
    ("xargs-with-flags-not-stripped", sh("xargs -n1 npm test < /dev/null"), {"allow": NPM_TEST}),
    (
        "runner-prefix-matches-anything",
        sh("devbox run rm -rf build"),
        {"allow": ("Bash(devbox run *)",)},
    ),
    ("setsid-never-prefix-allowed", sh("setsid make"), {"allow": ("Bash(setsid *)",)}),
    ("find-delete-not-covered", sh("find . -name x -delete"), {"allow": ("Bash(find *)",)}),
    ("find-exec-not-covered", sh("find . -exec make {} +"), {"allow": ("Bash(find *)",)}),
    ("find-unquoted-glob-prefix-rule", sh("find . -name *.py"), {"allow": ("Bash(find *)",)}),
    ("exec-wrapper-name-as-an-argument", sh("make watch"), {"allow": ("Bash(make *)",)}),
    (
        "find-delete-exact-rule",
        sh("find . -name nothing-here -delete"),
        {"allow": ("Bash(find . -name nothing-here -delete)",)},
    ),
    ("read-only-ls", sh("ls -la"), {}),
    ("read-only-cat", sh("cat README.md"), {}),
    ("read-only-grep", sh("grep -rn TODO src"), {}),
    ("read-only-head-pipe-wc", sh("head -5 a.py | wc -l"), {}),
    ("read-only-pwd-echo", sh("pwd && echo done"), {}),
    ("read-only-git-status", sh("git status"), {}),
    ("read-only-git-log", sh("git log --oneline -5"), {}),
    ("read-only-cd-then-ls", sh("cd src && ls"), {}),
    ("read-only-in-plan", sh("ls -la"), {"mode": "plan"}),
    ("read-only-in-dontAsk", sh("git diff"), {"mode": "dontAsk"}),
    ("read-only-ask-rule-prompts", sh("cat a.py"), {"ask": ("Bash(cat *)",)}),
    ("not-read-only-make", sh("make"), {}),
    ("git-commit-not-read-only", sh("git commit -m x"), {}),
    ("find-delete-not-read-only", sh("find . -name nothing-here -delete"), {}),
    ("redirect-target-asks", sh("ls > out.txt"), {}),
    (
        "redirect-edit-deny",
        sh("echo hi > secrets/token"),
        {"allow": ("Bash(echo *)",), "deny": ("Edit(./secrets/**)",)},
    ),
    (
        "redirect-rule-allows-command-not-target",
        sh("git commit -m x > notes2.txt"),
        {"allow": ("Bash(git commit *)",)},
    ),
    (
        "redirect-edit-allow",
        sh("git commit -m x > notes2.txt"),
        {"allow": ("Bash(git commit *)", "Edit(/notes2.txt)")},
    ),
    ("redirect-dev-null-unchecked", sh("make 2>/dev/null"), {"allow": ("Bash(make)",)}),
    ("redirect-tilde-needs-approval", sh("echo x > ~/x"), {"mode": "acceptEdits"}),
    ("redirect-glob-needs-approval", sh("echo x > *.txt"), {"mode": "acceptEdits"}),
    ("redirect-in-acceptEdits", sh("ls > out.txt"), {"mode": "acceptEdits"}),
    ("redirect-outside-project", sh("git status > ../x"), {"mode": "acceptEdits"}),
    ("redirect-tilde-asks-in-plan", sh("echo x > ~/x"), {"mode": "plan"}),
    ("input-redirect-read-deny", sh("wc -l < .env"), {"deny": ("Read(./.env)",)}),
    ("descriptor-duplication", sh("make 2>&1 >&2"), {"allow": ("Bash(make)",)}),
    ("redirect-and-to-a-file", sh("make >& out.txt"), {"allow": ("Bash(make)",)}),
    ("words-after-a-redirection", sh("cat 2>/dev/null .env"), {"deny": ("Read(./.env)",)}),
    ("read-deny-blocks-write", write(".env"), {"deny": ("Read(./.env)",)}),
    ("read-deny-blocks-cat", sh("cat .env"), {"deny": ("Read(./.env)",)}),
    ("read-deny-blocks-tail-in-pipe", sh("tail -n 5 .env | head"), {"deny": ("Read(./.env)",)}),
    ("edit-deny-blocks-sed-i", sh("sed -i s/a/b/ .env"), {"deny": ("Edit(./.env)",)}),
    (
        "edit-deny-blocks-sed-in-place",
        sh("sed --in-place s/a/b/ .env"),
        {"deny": ("Edit(./.env)",)},
    ),
    ("sed-without-i", sh("sed s/a/b/ .env"), {"deny": ("Edit(./.env)",)}),
    ("read-deny-blocks-grep-file", sh("grep x .env notes.txt"), {"deny": ("Read(./.env)",)}),
    ("read-deny-blocks-grep-e-file", sh("grep -eTODO .env"), {"deny": ("Read(./.env)",)}),
    ("read-deny-blocks-find", sh("find secrets -name k"), {"deny": ("Read(./secrets/**)",)}),
    ("grep-pattern-is-no-file", sh("grep .env notes.txt"), {"deny": ("Read(./.env)",)}),
    ("echo-reads-no-file", sh("echo .env"), {"deny": ("Read(./.env)",)}),
    ("read-deny-past-timeout", sh("timeout -k 1 5 cat .env"), {"deny": ("Read(./.env)",)}),
    ("read-deny-past-nice", sh("nice cat .env"), {"deny": ("Read(./.env)",)}),
    ("read-deny-past-command", sh("command cat .env"), {"deny": ("Read(./.env)",)}),
    ("read-deny-past-env-u", sh("env -u HOME cat .env"), {"deny": ("Read(./.env)",)}),
    (
        "read-deny-past-xargs-options",
        sh("xargs -I {} -n 1 cat .env < /dev/null"),
        {"deny": ("Read(./.env)",)},
    ),
    ("Edit(/docs/**)", write("docs/new.md"), {"allow": ("Edit(/docs/**)",)}),
    ("Edit(/docs/**)-not-nested", write("x/docs/new.md"), {"allow": ("Edit(/docs/**)",)}),
    ("Edit(//outside)", write(f"{OUT}/scratch.txt"), {"allow": (f"Edit(/{OUT}/scratch.txt)",)}),
    ("bare-filename-any-depth", read("config/prod/.env"), {"deny": ("Read(.env)",)}),
    ("allow-single-segment-anchored", write("vendor/pkg/src/new.js"), {"allow": ("Edit(src/**)",)}),
    ("allow-single-segment-top", write("src/new.ts"), {"allow": ("Edit(src/**)",)}),
    ("deny-single-segment-any-depth", write("vendor/pkg/src/new.js"), {"deny": ("Edit(src/**)",)}),
    ("deny-secrets-any-depth", read("a/b/secrets/key"), {"deny": ("Read(secrets/**)",)}),
    ("slash-anchored-deny", write("vendor/pkg/src/new.js"), {"deny": ("Edit(/src/**)",)}),
    ("double-star-any-depth", write("vendor/pkg/src/new.js"), {"allow": ("Edit(**/src/**)",)}),
    ("Read-rule-covers-grep", grep("secrets"), {"deny": ("Read(./secrets/**)",)}),
    ("default-write-asks", write("new.py"), {}),
    ("acceptEdits-write", write("new.py"), {"mode": "acceptEdits"}),
    ("acceptEdits-mkdir", sh("mkdir -p build/out"), {"mode": "acceptEdits"}),
    ("acceptEdits-touch", sh("touch notes.md"), {"mode": "acceptEdits"}),
    ("acceptEdits-mv-cp", sh("cp a.py b.py && mv b.py c.py"), {"mode": "acceptEdits"}),
    ("acceptEdits-rm", sh("rm -rf build"), {"mode": "acceptEdits"}),
    ("acceptEdits-outside-asks", sh(f"mkdir {OUT}/elsewhere"), {"mode": "acceptEdits"}),
    ("acceptEdits-rm-of-the-project", sh("rm -rf ."), {"mode": "acceptEdits"}),
    ("acceptEdits-other-command-asks", sh("make"), {"mode": "acceptEdits"}),
    (
        "acceptEdits-edit-deny-holds",
        sh("touch secrets/x"),
        {"mode": "acceptEdits", "deny": ("Edit(./secrets/**)",)},
    ),
    ("plan-write", write("new.py"), {"mode": "plan"}),
    ("plan-command", sh("make"), {"mode": "plan"}),
    ("dontAsk-denies-what-would-ask", sh("make"), {"mode": "dontAsk"}),
    ("dontAsk-allow-rule-runs", sh("npm test"), {"mode": "dontAsk", "allow": ("Bash(npm test)",)}),
    ("dontAsk-ask-rule-denies", sh("git push"), {"mode": "dontAsk", "ask": ("Bash(git push *)",)}),
    ("dontAsk-reads", read("a.py"), {"mode": "dontAsk"}),
    ("bypass-everything", sh("make"), {"mode": "bypassPermissions"}),
    ("bypass-deny-holds", sh("rm -rf tmp"), {"mode": "bypassPermissions", "deny": ("Bash(rm *)",)}),
    (
        "bypass-ask-holds",
        sh("git push"),
        {"mode": "bypassPermissions", "ask": ("Bash(git push *)",)},
    ),
    ("auto-mode-make", sh("make"), {"mode": "auto"}),
    (
        "extra-spaces-dodge-deny",
        sh("curl  http://github.com/x"),
        {"deny": ("Bash(curl http://github.com/*)",)},
    ),
    ("unquoted-glob-find-prompts", sh("find . *"), {}),
    ("quoted-glob-find-runs", sh("find . -name '*.py'"), {}),
    ("unquoted-glob-ls-runs", sh("ls *.py"), {}),
    ("edit-deny-blocks-tee", sh("echo x | tee secrets/a"), {"deny": ("Edit(./secrets/**)",)}),
    ("git-c-alias", sh("git -c alias.x=!true x"), {"allow": ("Bash(git *)",)}),
    ("git-exec-path", sh("git --exec-path=/tmp/x status"), {"allow": ("Bash(git *)",)}),
    ("git-plain-allowed", sh("git fetch origin"), {"allow": ("Bash(git *)",)}),
    ("git-listing-runs", sh("git branch -a && git tag --list && git remote -v"), {}),
    ("git-new-branch-asks", sh("git branch feature"), {}),
    ("git-new-tag-asks", sh("git tag v1"), {}),
    ("bare-git", sh("git"), {}),
    ("escaped-glob-runs", sh("find . -name \\*.py"), {}),
    ("substitution-first-denied", sh("$(rm -rf build)"), {"deny": ("Bash(rm *)",)}),
    (
        "exact-deny-inside-substitution",
        sh("echo $(rm -rf build) done"),
        {"deny": ("Bash(rm -rf build)",)},
    ),
    (
        "exact-deny-inside-backticks",
        sh("echo `ls` `rm -rf build`"),
        {"deny": ("Bash(rm -rf build)",)},
    ),
    ("deny-bin-rm", sh("/bin/rm -rf x"), {"deny": ("Bash(rm *)",)}),
    ("deny-env-rm", sh("env -i rm -rf x"), {"deny": ("Bash(rm *)",)}),
    (
        "deny-xargs-flags-rm",
        sh("ls nothing-here 2>/dev/null | xargs -n1 rm"),
        {"deny": ("Bash(rm *)",)},
    ),
    ("deny-nice-rm", sh("nice -n 5 rm x"), {"deny": ("Bash(rm *)",)}),
    ("deny-command-rm", sh("command rm x"), {"deny": ("Bash(rm *)",)}),
    ("deny-quoted-rm", sh("'r''m' -rf x"), {"deny": ("Bash(rm *)",)}),
    ("deny-backslash-rm", sh("\\rm -rf x"), {"deny": ("Bash(rm *)",)}),
    ("deny-bash-c-rm", sh("bash -c 'rm -rf x'"), {"deny": ("Bash(rm *)",)}),
    ("deny-eval-rm", sh("eval rm -rf x"), {"deny": ("Bash(rm *)",)}),
    (
        "deny-find-execdir-rm",
        sh("find . -name nothing-here -execdir rm -rf {} +"),
        {"deny": ("Bash(rm *)",)},
    ),
    ("deny-subshell-rm", sh("echo $(rm -rf x)"), {"deny": ("Bash(rm *)",)}),
    ("ifs-dodge", sh("rm${IFS}-rf${IFS}x"), {"deny": ("Bash(rm *)",)}),
    ("variable-program", sh("$X -rf x"), {"deny": ("Bash(rm *)",)}),
    ("bash-c-not-allowed-by-inner-rule", sh("bash -c 'npm test'"), {"allow": NPM_TEST}),
    ("pipe-into-sh", sh("echo true | sh"), {"deny": ("Bash(rm *)",)}),
    ("bash-script", sh("bash cleanup.sh"), {"deny": ("Bash(rm *)",)}),
]
for name, call, options in DOCUMENTED:
    add(f"doc-{name}", call, **options)


# mode-: every mode, no rule --------------------------------------------------------------

MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]
GRID: dict[str, Call] = {
    "ls": sh("ls -la"),
    "cat": sh("cat README.md"),
    "git-status": sh("git status"),
    "make": sh("make"),
    "npm-test": sh("npm test"),
    "rm-build": sh("rm -rf build"),
    "mkdir": sh("mkdir -p build/out"),
    "touch": sh("touch made.md"),
    "cp": sh("cp a.py copy.py"),
    "sed-i": sh("sed -i s/a/b/ notes.txt"),
    "redirect-inside": sh("ls > listing.txt"),
    "redirect-outside": sh(f"ls > {OUT}/listing.txt"),
    "mkdir-outside": sh(f"mkdir -p {OUT}/made"),
    "lsof": sh("lsof -v"),
    "uptime": sh("uptime"),
    "read-inside": read("a.py"),
    "read-home": read("~/notes.txt"),
    "read-outside": read(f"{OUT}/x.txt"),
    "write-inside": write("made.txt"),
    "write-home": write("~/made.txt"),
    "write-outside": write(f"{OUT}/made.txt"),
    "grep-inside": grep("src"),
    "grep-outside": grep(OUT),
    "glob-outside": glob(OUT),
}
for mode in MODES:
    for name, call in GRID.items():
        add(f"mode-{mode}-{name}", call, mode=mode)
for name in ("make", "ls", "write-inside"):
    add(f"mode-manual-{name}", GRID[name], mode="manual")


# rule-: rule forms --------------------------------------------------------------------------

BASH_RULES: list[tuple[str, list[str]]] = [
    ("Bash(npm test)", ["npm test", "npm test --watch", "npm tests", "npm  test"]),
    ("Bash(npm test:*)", ["npm test", "npm test --watch", "npm tests", "npm run test"]),
    ("Bash(npm test *)", ["npm test", "npm test --watch", "npm tests"]),
    ("Bash(npm *)", ["npm test", "npm", "npx test"]),
    ("Bash(npm*)", ["npm test", "npx test", "npm"]),
    ("Bash(* test)", ["npm test", "make test", "test"]),
    ("Bash(git * main)", ["git merge main", "git main", "git push origin main --force"]),
    ("Bash(make)", ["make", "make all", "make && make"]),
    ("Bash(./build.sh)", ["./build.sh", "build.sh", "./build.sh --fast"]),
    ("Bash(python3 -c *)", ["python3 -c 'print(1)'", "python3 x.py"]),
    ("Bash(echo *)", ["echo hi", "echo hi > echoed.txt", "echo $(make)", "echo `make`"]),
]
for rule, commands in BASH_RULES:
    for command in commands:
        add(f"rule-allow-{rule}-{command}", sh(command), allow=(rule,))
        add(f"rule-deny-{rule}-{command}", sh(command), deny=(rule,))

PATH_RULES: list[tuple[str, list[str]]] = [
    ("./.env", [".env", "config/.env", "config/prod/.env"]),
    (".env", [".env", "config/.env"]),
    ("/.env", [".env", "config/.env"]),
    ("/src/**", ["src/app.ts", "src/lib/util.ts", "vendor/pkg/src/lib.js"]),
    ("src/**", ["src/app.ts", "vendor/pkg/src/lib.js"]),
    ("./src/**", ["src/app.ts", "vendor/pkg/src/lib.js"]),
    ("**/src/**", ["src/app.ts", "vendor/pkg/src/lib.js"]),
    ("*.ts", ["src/app.ts", "src/lib/util.ts", "a.py"]),
    ("src/*.ts", ["src/app.ts", "src/lib/util.ts"]),
    ("/src/*", ["src/app.ts", "src/lib/util.ts"]),
    ("~/notes.txt", ["~/notes.txt", "notes.txt"]),
    ("~/**", ["~/notes.txt", "~/.ssh/id_rsa", "a.py"]),
    (f"/{OUT}/**", [f"{OUT}/x.txt", f"{OUT}/docs/a.md", "a.py"]),
    (f"{OUT}/**", [f"{OUT}/x.txt", "a.py"]),
    ("secrets", ["secrets/token"]),
    ("secrets/", ["secrets/token"]),
    (".", ["a.py", "src/app.ts"]),
]
for pattern, paths in PATH_RULES:
    for path in paths:
        add(f"rule-deny-Read({pattern})-read-{path}", read(path), deny=(f"Read({pattern})",))
        add(
            f"rule-allow-Read({pattern})-read-{path}",
            read(path),
            allow=(f"Read({pattern})",),
            mode="dontAsk",
        )
        add(f"rule-allow-Edit({pattern})-write-{path}", write(path), allow=(f"Edit({pattern})",))
for pattern, paths in [("./.env", [".env"]), ("/src/**", ["src"]), ("secrets/**", ["secrets"])]:
    for path in paths:
        add(f"rule-deny-Read({pattern})-grep-{path}", grep(path), deny=(f"Read({pattern})",))
        add(f"rule-deny-Read({pattern})-glob-{path}", glob(path), deny=(f"Read({pattern})",))
add("rule-deny-Read-cat-outside", sh(f"cat {OUT}/x.txt"), deny=(f"Read(/{OUT}/**)",))
add("rule-deny-Read-cat-home", sh("cat ~/.ssh/id_rsa"), deny=("Read(~/.ssh/**)",))
add("rule-deny-Edit-tee-home", sh("echo x | tee ~/.ssh/x"), deny=("Edit(~/.ssh/**)",))
add("rule-deny-Edit-blocks-read", read("secrets/token"), deny=("Edit(./secrets/**)",))
add("rule-deny-Read-blocks-write", write("secrets/new"), deny=("Read(./secrets/**)",))
add("rule-allow-Read-not-write", write("docs/new.md"), allow=("Read(./docs/**)",))
add("rule-allow-Edit-reads", read("docs/a.md"), allow=("Edit(./docs/**)",), mode="dontAsk")
add("rule-Write-rule-deny", write("docs/new.md"), deny=("Write(./docs/**)",))
add("rule-Write-rule-allow", write("docs/new.md"), allow=("Write(./docs/**)",))
add("rule-Glob-rule-deny", glob("src"), deny=("Glob(./src/**)",))
add("rule-bare-Edit-allow", write("made.txt"), allow=("Edit",))
add("rule-bare-Write-deny", write("made.txt"), deny=("Write",))
add("rule-bare-Bash-deny-ls", sh("ls"), deny=("Bash",))
add("rule-bare-Read-ask", read("a.py"), ask=("Read",))
add("rule-bare-Read-deny-cat", sh("cat a.py"), deny=("Read",))
add("rule-bare-Read-deny-ls", sh("ls"), deny=("Read",))
add("rule-star-ask-read", read("a.py"), ask=("*",))
add("rule-ask-beats-allow-read", read("a.py"), allow=("Read",), ask=("Read(./a.py)",))
add("rule-deny-beats-allow-bash", sh("make"), allow=("Bash(make)",), deny=("Bash(make)",))
add("rule-ask-Bash-readonly", sh("ls -la"), ask=("Bash(ls *)",))
add("rule-ask-Bash-bypass", sh("make"), ask=("Bash(make)",), mode="bypassPermissions")
add("rule-ask-Bash-acceptEdits-mkdir", sh("mkdir made"), ask=("Bash(mkdir *)",), mode="acceptEdits")
add("rule-allow-Bash-plan", sh("make"), allow=("Bash(make)",), mode="plan")
add("rule-allow-Edit-plan", write("made.txt"), allow=("Edit",), mode="plan")
add("rule-deny-Bash-dontAsk-readonly", sh("ls"), deny=("Bash(ls)",), mode="dontAsk")
add("rule-deny-Read-bypass", read(".env"), deny=("Read(./.env)",), mode="bypassPermissions")
add(
    "rule-deny-Edit-bypass",
    write("secrets/new"),
    deny=("Edit(./secrets/**)",),
    mode="bypassPermissions",
)


# compound-, wrapper-, redirect-: shell forms -----------------------------------------------

MAKE = ("Bash(make)",)
SHELL_FORMS: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = [
    # name, command, allow, deny
    ("and-both-allowed", "make && npm test", ("Bash(make)", "Bash(npm test)"), ()),
    ("or-both-allowed", "make || npm test", ("Bash(make)", "Bash(npm test)"), ()),
    ("semicolon-both-allowed", "make ; npm test", ("Bash(make)", "Bash(npm test)"), ()),
    ("pipe-both-allowed", "make | npm test", ("Bash(make)", "Bash(npm test)"), ()),
    ("background-both-allowed", "make & npm test", ("Bash(make)", "Bash(npm test)"), ()),
    ("newline-both-allowed", "make\nnpm test", ("Bash(make)", "Bash(npm test)"), ()),
    ("and-one-allowed", "make && npm test", MAKE, ()),
    ("pipe-into-readonly", "make | head -3", MAKE, ()),
    ("pipe-into-grep", "make | grep error", MAKE, ()),
    ("subshell", "(make)", MAKE, ()),
    ("braces", "{ make; }", MAKE, ()),
    ("if", "if true; then make; fi", MAKE, ()),
    ("for", "for x in a b; do make; done", MAKE, ()),
    ("substitution-readonly", "echo $(ls)", (), ()),
    ("substitution-allowed", "echo $(make)", MAKE, ()),
    ("backticks-allowed", "echo `make`", MAKE, ()),
    ("and-deny-second", "ls && rm -rf build", (), ("Bash(rm *)",)),
    ("or-deny-second", "false || rm -rf build", (), ("Bash(rm *)",)),
    ("pipe-deny-second", "ls | rm -rf build", (), ("Bash(rm *)",)),
    ("semicolon-deny-second", "ls; rm -rf build", (), ("Bash(rm *)",)),
    ("background-deny-first", "rm -rf build & ls", (), ("Bash(rm *)",)),
    ("subshell-deny", "(rm -rf build)", (), ("Bash(rm *)",)),
    ("if-deny", "if true; then rm -rf build; fi", (), ("Bash(rm *)",)),
    ("heredoc-deny", "cat <<EOF\nrm -rf build\nEOF", (), ("Bash(rm *)",)),
    ("whole-deny", "make && make", (), ("Bash(make && make)",)),
    ("whole-allow", "make && npm test", ("Bash(make && npm test)",), ()),
    ("wrapper-timeout", "timeout 5 make", MAKE, ()),
    ("wrapper-timeout-signal", "timeout -s KILL 5 make", MAKE, ()),
    ("wrapper-time", "time make", MAKE, ()),
    ("wrapper-nice", "nice make", MAKE, ()),
    ("wrapper-nice-n", "nice -n 5 make", MAKE, ()),
    ("wrapper-nohup", "nohup make", MAKE, ()),
    ("wrapper-stdbuf", "stdbuf -oL make", MAKE, ()),
    ("wrapper-command", "command make", MAKE, ()),
    ("wrapper-builtin", "builtin make", MAKE, ()),
    ("wrapper-exec", "exec make", MAKE, ()),
    ("wrapper-env", "env make", MAKE, ()),
    ("wrapper-env-assign", "env A=1 make", MAKE, ()),
    ("wrapper-env-i", "env -i make", MAKE, ()),
    ("wrapper-sudo", "sudo make", MAKE, ()),
    ("wrapper-xargs", "xargs make < /dev/null", MAKE, ()),
    ("wrapper-setsid", "setsid make", MAKE, ()),
    ("wrapper-ionice", "ionice -c 3 make", MAKE, ()),
    ("wrapper-chrt", "chrt -f 10 make", MAKE, ()),
    ("wrapper-taskset", "taskset 0x3 make", MAKE, ()),
    ("wrapper-flock", "flock /tmp/claw-oracle/lock make", MAKE, ()),
    ("wrapper-assign-lang", "LANG=C make", MAKE, ()),
    ("wrapper-assign-lc-all", "LC_ALL=C make", MAKE, ()),
    ("wrapper-assign-node-env", "NODE_ENV=test make", MAKE, ()),
    ("wrapper-assign-debug", "DEBUG=1 make", MAKE, ()),
    ("wrapper-assign-path", "PATH=/tmp make", MAKE, ()),
    ("wrapper-assign-ld-preload", "LD_PRELOAD=x.so make", MAKE, ()),
    ("wrapper-two-wrappers", "nice timeout 5 make", MAKE, ()),
    ("deny-timeout", "timeout 5 rm -rf build", (), ("Bash(rm *)",)),
    ("deny-sudo", "sudo rm -rf build", (), ("Bash(rm *)",)),
    ("deny-nohup", "nohup rm -rf build", (), ("Bash(rm *)",)),
    ("deny-xargs", "xargs rm -rf < /dev/null", (), ("Bash(rm *)",)),
    ("deny-env-assign", "env A=1 rm -rf build", (), ("Bash(rm *)",)),
    ("deny-path-assign", "PATH=/x rm -rf build", (), ("Bash(rm *)",)),
    ("deny-usr-bin-rm", "/usr/bin/rm -rf build", (), ("Bash(rm *)",)),
    ("deny-double-quoted-rm", '"rm" -rf build', (), ("Bash(rm *)",)),
    ("deny-sh-c", "sh -c 'rm -rf build'", (), ("Bash(rm *)",)),
    ("deny-find-exec", "find . -name nothing-here -exec rm {} +", (), ("Bash(rm *)",)),
    ("deny-sudo-rule-sudo", "sudo make", (), ("Bash(sudo *)",)),
    ("deny-sudo-rule-nice-sudo", "nice sudo make", (), ("Bash(sudo *)",)),
    ("redirect-append", "make >> made.log", MAKE, ()),
    ("redirect-stderr", "make 2> made.log", MAKE, ()),
    ("redirect-both", "make &> made.log", MAKE, ()),
    ("redirect-dev-null-both", "make &>/dev/null", MAKE, ()),
    ("redirect-dev-null-stdout", "make > /dev/null", MAKE, ()),
    ("redirect-stdin", "make < notes.txt", MAKE, ()),
    ("redirect-here-string", "make <<< x", MAKE, ()),
    ("redirect-2-to-1", "make 2>&1", MAKE, ()),
    ("redirect-to-outside", f"make > {OUT}/made.log", MAKE, ()),
    ("redirect-to-home", "make > ~/made.log", MAKE, ()),
    ("redirect-to-parent", "make > ../made.log", MAKE, ()),
    ("redirect-readonly-to-file", "ls > listing.txt", (), ()),
    ("redirect-readonly-to-dev-null", "ls > /dev/null", (), ()),
    ("redirect-readonly-stderr-dev-null", "ls 2>/dev/null", (), ()),
    ("redirect-tee", "ls | tee listing.txt", (), ()),
    ("redirect-edit-deny-append", "echo x >> secrets/token", (), ("Edit(./secrets/**)",)),
    ("redirect-read-deny-stdin", "cat < secrets/token", (), ("Read(./secrets/**)",)),
    ("readonly-cat-readonly-ok", "cat notes.txt | sort | uniq -c", (), ()),
    ("readonly-sort-o", "sort -o sorted.txt notes.txt", (), ()),
    ("readonly-xargs-flagged", "echo a | xargs -n1 echo", (), ()),
    ("readonly-xargs-bare", "echo a | xargs echo", (), ()),
    ("readonly-diff", "diff a.py notes.txt", (), ()),
    ("readonly-wc", "wc -l a.py", (), ()),
    ("readonly-stat", "stat a.py", (), ()),
    ("readonly-which", "which ls", (), ()),
    ("readonly-file", "file a.py", (), ()),
    ("readonly-du", "du -sh .", (), ()),
    ("readonly-df", "df -h", (), ()),
    ("readonly-ps", "ps aux", (), ()),
    ("readonly-date", "date", (), ()),
    ("readonly-whoami", "whoami", (), ()),
    ("readonly-env-bare", "env", (), ()),
    ("readonly-printenv", "printenv HOME", (), ()),
    ("readonly-tree", "tree", (), ()),
    ("readonly-git-diff", "git diff HEAD", (), ()),
    ("readonly-git-show", "git show HEAD", (), ()),
    ("readonly-git-blame", "git blame a.py", (), ()),
    ("readonly-git-branch-d", "git branch -d x", (), ()),
    ("readonly-sed-n", "sed -n 1p a.py", (), ()),
    ("readonly-awk", "awk '{print $1}' a.py", (), ()),
    ("readonly-jq", "jq . nothing.json", (), ()),
    ("readonly-python-version", "python3 --version", (), ()),
    ("readonly-cd-outside", f"cd {OUT} && ls", (), ()),
    ("readonly-cat-outside", f"cat {OUT}/x.txt", (), ()),
    ("readonly-ls-home", "ls ~", (), ()),
    ("readonly-find-glob-name", "find . -name '*.py' -type f", (), ()),
]
for name, command, allow_rules, deny_rules in SHELL_FORMS:
    section = name.split("-")[0]
    prefix = {
        "wrapper": "wrapper",
        "deny": "wrapper",
        "redirect": "redirect",
        "readonly": "readonly",
    }.get(section, "compound")
    add(
        f"{prefix}-{name}" if not name.startswith(prefix) else name,
        sh(command),
        allow=allow_rules,
        deny=deny_rules,
    )


# flags-: rules from the command line --------------------------------------------------------

add("flags-allow-exact", sh("npm test"), allow=("Bash(npm test)",), via="flags")
add("flags-allow-prefix", sh("npm test --watch"), allow=("Bash(npm test:*)",), via="flags")
add("flags-deny-prefix", sh("rm -rf build"), deny=("Bash(rm:*)",), via="flags")
add("flags-deny-read", read(".env"), deny=("Read(./.env)",), via="flags")
add("flags-allow-edit", write("docs/new.md"), allow=("Edit(./docs/**)",), via="flags")
add("flags-allow-bare-tool", sh("make"), allow=("Bash",), via="flags")
add("flags-deny-bare-tool", read("a.py"), deny=("Read",), via="flags")


# webfetch-: WebFetch and domain rules ------------------------------------------------------


def fetch(url: str) -> Call:
    """A WebFetch call (it cannot reach anything from the namespace; deciding comes first)."""
    return ("WebFetch", {"url": url, "prompt": "What does the page say?"})


for mode in MODES:
    add(f"webfetch-mode-{mode}", fetch("https://example.com/"), mode=mode)
DOMAIN_RULES: list[tuple[str, list[str]]] = [
    ("example.com", ["example.com", "sub.example.com", "example.org", "EXAMPLE.COM"]),
    ("*.example.com", ["sub.example.com", "a.b.example.com", "example.com"]),
    ("example.*", ["example.org", "example.evil.com"]),
    ("EXAMPLE.com", ["example.com"]),
    ("*", ["example.com"]),
]
for pattern, hosts in DOMAIN_RULES:
    for host in hosts:
        rule = f"WebFetch(domain:{pattern})"
        add(f"webfetch-allow-{pattern}-{host}", fetch(f"https://{host}/page"), allow=(rule,))
        add(f"webfetch-deny-{pattern}-{host}", fetch(f"https://{host}/page"), deny=(rule,))
add("webfetch-allow-bare", fetch("https://example.com/"), allow=("WebFetch",))
add(
    "webfetch-deny-bypass",
    fetch("https://example.com/"),
    deny=("WebFetch(domain:example.com)",),
    mode="bypassPermissions",
)
add(
    "webfetch-allow-trailing-dot",
    fetch("https://example.com./"),
    allow=("WebFetch(domain:example.com)",),
)
add(
    "webfetch-allow-port",
    fetch("https://example.com:8443/"),
    allow=("WebFetch(domain:example.com)",),
)
add("webfetch-allow-http", fetch("http://example.com/"), allow=("WebFetch(domain:example.com)",))
add(
    "webfetch-allow-plan",
    fetch("https://example.com/"),
    allow=("WebFetch(domain:example.com)",),
    mode="plan",
)


# edit-: the Edit tool (its file exists and is read first) -----------------------------------


def edit(path: str) -> Call:
    """An Edit call replacing the whole text of ``path`` (the runner writes ``old``, reads it)."""
    return ("Edit", {"path": path, "old_string": "old text", "new_string": "new text"})


for mode in MODES:
    for name, path in [
        ("inside", "notes.txt"),
        ("home", "~/notes.txt"),
        ("outside", f"{OUT}/x.txt"),
    ]:
        if mode != "dontAsk" or name == "inside":  # dontAsk refuses the Read an Edit needs
            add(f"edit-mode-{mode}-{name}", edit(path), mode=mode)
add("edit-allow-bare-Edit", edit("notes.txt"), allow=("Edit",))
add("edit-allow-Edit-path", edit("docs/a.md"), allow=("Edit(/docs/**)",))
add("edit-allow-Edit-path-other", edit("notes.txt"), allow=("Edit(/docs/**)",))
add("edit-allow-Edit-any-depth", edit("vendor/pkg/src/lib.js"), allow=("Edit(src/**)",))
add("edit-allow-Edit-dot-slash-any-depth", edit("config/.env"), allow=("Edit(./.env)",))
add("edit-allow-Edit-outside", edit(f"{OUT}/x.txt"), allow=(f"Edit(/{OUT}/**)",))
add("edit-allow-Edit-home", edit("~/notes.txt"), allow=("Edit(~/notes.txt)",))
add("edit-deny-Edit-path", edit("docs/a.md"), deny=("Edit(./docs/**)",))
add("edit-deny-Edit-bypass", edit("docs/a.md"), deny=("Edit(./docs/**)",), mode="bypassPermissions")
add("edit-ask-Edit-acceptEdits", edit("docs/a.md"), ask=("Edit(./docs/**)",), mode="acceptEdits")
add("edit-allow-Write-rule", edit("notes.txt"), allow=("Write",))
add("edit-allow-Edit-plan", edit("notes.txt"), allow=("Edit",), mode="plan")
add("edit-allow-Edit-dontAsk", edit("notes.txt"), allow=("Edit(./notes.txt)",), mode="dontAsk")
