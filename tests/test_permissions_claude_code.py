"""ch13 · Permissions against Claude Code's documentation: one row per documented example.

Claude Code's "Configure permissions" page (code.claude.com/docs/en/permissions) and its
"Choose a permission mode" page (.../permission-modes) are the specification. Each row is a
rule set, a tool call, a mode and the decision the page gives, in the section of the page it
comes from; one test per section checks every row of it and names each row that disagrees.
Rows marked "claw:" are where claw deliberately differs or goes further (chapter 13's "How
Claude Code does it" box says why); they hold claw's decision.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claw.permissions import Decision, Mode, Permissions, RuleError
from claw.types import ToolCall

ALLOW, ASK, DENY = Decision.ALLOW, Decision.ASK, Decision.DENY


@dataclass(frozen=True)
class Case:
    """One documented example: rules, the call, the mode, the decision."""

    call: tuple[str, dict[str, Any]]
    expected: Decision
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    mode: str = "default"
    extra: dict[str, Any] = field(default_factory=dict)


def sh(command: str) -> tuple[str, dict[str, Any]]:
    return ("bash", {"command": command})


def read(path: str) -> tuple[str, dict[str, Any]]:
    return ("read", {"path": path})


def edit(path: str) -> tuple[str, dict[str, Any]]:
    return ("edit", {"path": path, "old": "a", "new": "b"})


def write(path: str) -> tuple[str, dict[str, Any]]:
    return ("write", {"path": path, "content": "x"})


def patch(*lines: str, end: str = "\n") -> tuple[str, dict[str, Any]]:
    return ("apply_patch", {"patch": "".join(line + end for line in lines)})


SECTIONS: dict[str, dict[str, Case]] = {
    "manage-permissions": {
        # Manage permissions: deny, then ask, then allow; specificity does not reorder
        "broad-deny-beats-narrow-allow": Case(
            sh("aws s3 ls"), DENY, allow=("Bash(aws s3 ls)",), deny=("Bash(aws *)",)
        ),
        "ask-beats-more-specific-allow": Case(
            sh("git push origin main"), ASK, allow=("Bash(git push origin main)",),
            ask=("Bash(git push *)",),
        ),
    },
    "match-all-uses-of-a-tool": {
        # Match all uses of a tool: "Bash" and "Bash(*)"
        "bare-Bash-allows-every-command": Case(sh("make deploy"), ALLOW, allow=("Bash",)),
        "Bash(*)-is-Bash": Case(sh("make deploy"), ALLOW, allow=("Bash(*)",)),
        "bare-Read-deny": Case(read("a.py"), DENY, deny=("Read",)),
    },
    "specifiers": {
        # Use specifiers for fine-grained control
        "exact-command": Case(sh("npm run build"), ALLOW, allow=("Bash(npm run build)",)),
        "exact-command-not-longer": Case(sh("npm run build --prod"), ASK,
                                         allow=("Bash(npm run build)",)),
        "Read(./.env)": Case(read(".env"), DENY, deny=("Read(./.env)",)),
    },
    "wildcard-patterns": {
        # Wildcard patterns
        "npm-run-star": Case(sh("npm run lint"), ALLOW, allow=("Bash(npm run *)",)),
        "git-star-main-checkout": Case(sh("git checkout main"), ALLOW, allow=("Bash(git * main)",)),
        "git-star-main-push": Case(sh("git push origin main"), ALLOW, allow=("Bash(git * main)",)),
        "star-version": Case(sh("python --version"), ALLOW, allow=("Bash(* --version)",)),
        "star-help-star": Case(sh("cargo build --help all"), ALLOW, allow=("Bash(* --help *)",)),
        "deny-git-push-star": Case(sh("git push origin dev"), DENY, allow=("Bash(git *)",),
                                   deny=("Bash(git push *)",)),
        "colon-star-suffix": Case(sh("npm run test"), ALLOW, allow=("Bash(npm run:*)",)),
        "colon-only-at-end": Case(sh("git push"), ASK, allow=("Bash(git:* push)",)),
        "space-star-word-boundary": Case(sh("makepkg"), ASK, allow=("Bash(make *)",)),
        "no-space-no-boundary": Case(sh("makepkg"), ALLOW, allow=("Bash(make*)",)),
        "space-star-matches-bare": Case(sh("make"), ALLOW, allow=("Bash(make *)",)),
    },
    "tool-name-wildcards": {
        # Tool name wildcards: "*" in deny and ask rules
        "star-denies-every-tool": Case(read("a.py"), DENY, deny=("*",)),
        "star-asks-every-tool": Case(sh("ls"), ASK, ask=("*",)),
    },
    "bash-compound-commands": {
        # Bash: compound commands
        "compound-needs-each-part": Case(sh("npm test && rm -rf build"), ASK,
                                         allow=("Bash(npm test *)",)),
        "compound-each-part-allowed": Case(sh("npm test && make"), ALLOW,
                                           allow=("Bash(npm test *)", "Bash(make)")),
        "compound-pipe-separator": Case(sh("make |& tee-like"), ASK, allow=("Bash(make)",)),
    },
    "bash-wrappers": {
        # Bash: wrappers
        "timeout-stripped": Case(sh("timeout 30 npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "time-stripped": Case(sh("time npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "nice-stripped": Case(sh("nice -n 10 npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "nohup-stripped": Case(sh("nohup npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "stdbuf-stripped": Case(sh("stdbuf -oL npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "command-stripped": Case(sh("command npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "command-v-not-stripped": Case(sh("command -v npm"), ASK, allow=("Bash(npm *)",)),
        "safe-env-stripped": Case(sh("NODE_ENV=test npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "other-env-stops-allow": Case(sh("PATH=/tmp/evil npm test"), ASK,
                                      allow=("Bash(npm test *)",)),
        "deny-past-any-assignment": Case(sh("FOO=bar rm -rf tmp/"), DENY, deny=("Bash(rm *)",)),
        "bare-xargs-stripped": Case(sh("xargs npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "xargs-with-flags-not-stripped": Case(sh("xargs -n1 npm test"), ASK,
                                              allow=("Bash(npm test *)",)),
        "runner-prefix-matches-anything": Case(sh("devbox run rm -rf ."), ALLOW,
                                               allow=("Bash(devbox run *)",)),
        "watch-never-prefix-allowed": Case(sh("watch make"), ASK, allow=("Bash(watch *)",)),
        "setsid-never-prefix-allowed": Case(sh("setsid make"), ASK, allow=("Bash(setsid *)",)),
        "find-delete-not-covered": Case(sh("find . -name x -delete"), ASK, allow=("Bash(find *)",)),
        "find-exec-not-covered": Case(sh("find . -exec make {} +"), ASK, allow=("Bash(find *)",)),
        "find-with-unquoted-glob-prefix-rule": Case(sh("find . -name *.py"), ASK,
                                                    allow=("Bash(find *)",)),
        "exec-wrapper-name-as-an-argument": Case(sh("make watch"), ALLOW, allow=("Bash(make *)",)),
        "find-delete-exact-rule": Case(sh("find . -delete"), ALLOW,
                                       allow=("Bash(find . -delete)",)),
    },
    "bash-read-only-commands": {
        # Bash: read-only commands run without a prompt in every mode
        "read-only-ls": Case(sh("ls -la"), ALLOW),
        "read-only-cat": Case(sh("cat README.md"), ALLOW),
        "read-only-grep": Case(sh("grep -rn TODO src"), ALLOW),
        "read-only-head-pipe-wc": Case(sh("head -5 a.txt | wc -l"), ALLOW),
        "read-only-pwd-echo": Case(sh("pwd && echo done"), ALLOW),
        "read-only-git-status": Case(sh("git status"), ALLOW),
        "read-only-git-log": Case(sh("git log --oneline -5"), ALLOW),
        "read-only-cd-then-ls": Case(sh("cd src && ls"), ALLOW),
        "read-only-in-plan": Case(sh("ls -la"), ALLOW, mode="plan"),
        "read-only-in-dontAsk": Case(sh("git diff"), ALLOW, mode="dontAsk"),
        "read-only-ask-rule-prompts": Case(sh("cat a.txt"), ASK, ask=("Bash(cat *)",)),
        "not-read-only-make": Case(sh("make"), ASK),
        "git-commit-not-read-only": Case(sh("git commit -m x"), ASK),
        "find-delete-not-read-only": Case(sh("find . -delete"), ASK),
    },
    "bash-redirections": {
        # Bash: redirections are file writes
        "redirect-target-asks": Case(sh("ls > out.txt"), ASK),
        "redirect-edit-deny": Case(sh("echo hi > secrets/token"), DENY, allow=("Bash(echo *)",),
                                   deny=("Edit(./secrets/**)",)),
        "redirect-rule-allows-command-not-target": Case(
            sh("git commit -m x > notes.txt"), ASK, allow=("Bash(git commit *)",)
        ),
        "redirect-edit-allow": Case(sh("git commit -m x > notes.txt"), ALLOW,
                                    allow=("Bash(git commit *)", "Edit(/notes.txt)")),
        "redirect-dev-null-unchecked": Case(sh("make 2>/dev/null"), ALLOW, allow=("Bash(make)",)),
        "redirect-tilde-needs-approval": Case(sh("echo x > ~/x"), ASK, mode="acceptEdits"),
        "redirect-glob-needs-approval": Case(sh("echo x > *.txt"), ASK, mode="acceptEdits"),
        "redirect-in-acceptEdits": Case(sh("ls > out.txt"), ALLOW, mode="acceptEdits"),
        "redirect-outside-project": Case(sh("git status > ../x"), ASK, mode="acceptEdits"),
        "redirect-tilde-asks-in-plan": Case(sh("echo x > ~/x"), ASK, mode="plan"),
        "input-redirect-read-deny": Case(sh("wc -l < .env"), DENY, deny=("Read(./.env)",)),
        # claw: a descriptor after >& or <& (2>&1, >&2, 2>&-) names no file; a file after >& does
        "claw-descriptor-duplication-writes-no-file": Case(sh("make 2>&1 >&2 2>&-"), ALLOW,
                                                           allow=("Bash(make)",)),
        "claw-descriptor-duplication-reads-no-file": Case(sh("make <&3"), ALLOW,
                                                          allow=("Bash(make)",), ask=("Read",)),
        "claw-redirect-and-to-a-file-asks": Case(sh("make >& out.txt"), ASK, allow=("Bash(make)",)),
        "claw-redirect-to-a-file-named-1-asks": Case(sh("make > 1"), ASK, allow=("Bash(make)",)),
        "claw-words-after-a-redirection-count": Case(sh("cat 2>/dev/null .env"), DENY,
                                                     deny=("Read(./.env)",)),
        "claw-dangling-redirection-asks": Case(sh("make >"), ASK, allow=("Bash(make)",)),
    },
    "read-and-edit": {
        # Read and Edit
        "read-deny-blocks-edit": Case(edit(".env"), DENY, deny=("Read(./.env)",)),
        "read-deny-blocks-write": Case(write(".env"), DENY, deny=("Read(./.env)",)),
        "read-deny-blocks-cat": Case(sh("cat .env"), DENY, deny=("Read(./.env)",)),
        "read-deny-blocks-tail-in-pipe": Case(sh("tail -n 5 .env | head"), DENY,
                                              deny=("Read(./.env)",)),
        "edit-deny-blocks-sed-i": Case(sh("sed -i s/a/b/ .env"), DENY, deny=("Edit(./.env)",)),
        "edit-deny-blocks-sed-in-place": Case(sh("sed --in-place s/a/b/ .env"), DENY,
                                              deny=("Edit(./.env)",)),
        "edit-deny-blocks-sed-without-i": Case(sh("sed s/a/b/ .env"), DENY,
                                               deny=("Edit(./.env)",)),
        "read-deny-blocks-grep-file": Case(sh("grep x .env notes.txt"), DENY,
                                           deny=("Read(./.env)",)),
        "read-deny-blocks-grep-e-file": Case(sh("grep -eTODO .env"), DENY, deny=("Read(./.env)",)),
        "read-deny-blocks-find": Case(sh("find secrets -name k"), DENY,
                                      deny=("Read(./secrets/**)",)),
        "read-deny-after-double-dash": Case(sh("cat -- -notes.txt"), DENY,
                                            deny=("Read(./-notes.txt)",)),
        # claw: a pattern, or a name echo prints, is not a file read
        "claw-grep-pattern-is-no-file": Case(sh("grep .env notes.txt"), ALLOW,
                                             deny=("Read(./.env)",)),
        "claw-grep-pattern-after-an-option-is-no-file": Case(sh("grep -i .env notes.txt"), ALLOW,
                                                             deny=("Read(./.env)",)),
        "claw-echo-reads-no-file": Case(sh("echo .env"), ALLOW, deny=("Read(./.env)",)),
        # claw: a Read deny holds past the wrappers whose options take a value
        "claw-read-deny-past-xargs-options": Case(sh("xargs -I {} -n 1 cat .env"), DENY,
                                                  deny=("Read(./.env)",)),
        **{
            f"claw-read-deny-past-{'-'.join(command.split()[:-2])}": Case(
                sh(command), DENY, deny=("Read(./.env)",)
            )
            for command in [
                "timeout -k 1 5 cat .env", "nice cat .env", "chrt -f 10 cat .env",
                "taskset 0x3 cat .env", "taskset -c 0 cat .env", "stdbuf -o L cat .env",
                "sudo -C 3 -u root cat .env",
                "doas -u root cat .env", "flock -E 3 -w 5 /tmp/lock cat .env",
                "watch -n 1 cat .env",
                "command cat .env", "env -v cat .env", "nice -n 5 cat .env",
                "ionice -c 3 cat .env", "env -u HOME cat .env",
            ]
        },
        "claw-read-deny-past-flock": Case(sh("flock /tmp/lock cat .env"), DENY,
                                          deny=("Read(./.env)",)),
        "Edit(/docs/**)": Case(edit("docs/a.md"), ALLOW, allow=("Edit(/docs/**)",)),
        "Edit(/docs/**)-not-nested": Case(edit("x/docs/a.md"), ASK, allow=("Edit(/docs/**)",)),
        "Edit(//tmp/scratch.txt)": Case(edit("/tmp/scratch.txt"), ALLOW,
                                        allow=("Edit(//tmp/scratch.txt)",)),
        "bare-filename-any-depth": Case(read("config/prod/.env"), DENY, deny=("Read(.env)",)),
        "allow-single-segment-anchored": Case(edit("vendor/pkg/src/lib.js"), ASK,
                                              allow=("Edit(src/**)",)),
        "allow-single-segment-top": Case(edit("src/app.ts"), ALLOW, allow=("Edit(src/**)",)),
        "deny-single-segment-any-depth": Case(edit("vendor/pkg/src/lib.js"), DENY,
                                              deny=("Edit(src/**)",)),
        "deny-secrets-any-depth": Case(read("a/b/secrets/key"), DENY, deny=("Read(secrets/**)",)),
        "slash-anchored-any-rule": Case(edit("vendor/pkg/src/lib.js"), ASK,
                                        deny=("Edit(/src/**)",)),
        "double-star-any-depth": Case(edit("vendor/pkg/src/lib.js"), ALLOW,
                                      allow=("Edit(**/src/**)",)),
        "Read-rule-covers-grep": Case(("grep", {"pattern": "x", "path": "secrets"}), DENY,
                                      deny=("Read(./secrets/**)",)),
        # claw: a search without a path searches the project: it is decided for "."
        "claw-search-without-a-path-is-of-the-project": Case(("grep", {"pattern": "x"}), DENY,
                                                             deny=("Read(.)",)),
        # claw: Edit rules hold for every path a patch names, added, deleted, updated or moved to
        "claw-patch-update-edit-deny": Case(
            patch("*** Begin Patch", "*** Update File: .env", "@@", "-a", "+b", "*** End Patch"),
            DENY, deny=("Edit(./.env)",),
        ),
        "claw-patch-add-edit-deny": Case(
            patch("*** Begin Patch", "*** Add File: secrets/new.txt", "+x", "*** End Patch"),
            DENY, deny=("Edit(./secrets/**)",),
        ),
        "claw-patch-delete-edit-deny": Case(
            patch("*** Begin Patch", "*** Delete File: .env", "*** End Patch"), DENY,
            deny=("Edit(./.env)",),
        ),
        "claw-patch-move-to-edit-deny": Case(
            patch("*** Begin Patch", "*** Update File: notes.txt", "*** Move to: secrets/notes.txt",
                  "*** End Patch"),
            DENY, deny=("Edit(./secrets/**)",),
        ),
        "claw-patch-allowed-paths": Case(
            patch("*** Begin Patch", "*** Update File: notes.txt", "*** Move to: docs/notes.txt",
                  "*** Add File: docs/new.txt", "+x", "*** End Patch"),
            ALLOW, allow=("Edit(/notes.txt)", "Edit(/docs/**)"),
        ),
        # claw: a patch that does not parse is decided header by header; a \r ending a line
        # (Windows line ends) belongs to the line end, not to the path
        "claw-broken-patch-header-edit-deny": Case(
            patch("*** Begin Patch", "*** Update File: .env", "@@", "-a", "+b"), DENY,
            deny=("Edit(./.env)",),
        ),
        "claw-broken-patch-with-windows-line-ends": Case(
            patch("*** Begin Patch", "*** Update File: notes.txt", "@@", "-a", "+b", end="\r\n"),
            ALLOW, allow=("Edit(/notes.txt)",),
        ),
    },
    "permission-modes": {
        # Permission modes
        "default-edit-asks": Case(edit("a.py"), ASK),
        "acceptEdits-edit": Case(edit("a.py"), ALLOW, mode="acceptEdits"),
        "acceptEdits-mkdir": Case(sh("mkdir -p build/out"), ALLOW, mode="acceptEdits"),
        "acceptEdits-touch": Case(sh("touch notes.md"), ALLOW, mode="acceptEdits"),
        "acceptEdits-mv-cp": Case(sh("mv a.txt b.txt && cp b.txt c.txt"), ALLOW,
                                  mode="acceptEdits"),
        "acceptEdits-rm": Case(sh("rm -rf build"), ALLOW, mode="acceptEdits"),
        "acceptEdits-outside-asks": Case(sh("mkdir /tmp/elsewhere"), ASK, mode="acceptEdits"),
        # permission-modes, "Actions no mode auto-approves": rm of a critical path
        "acceptEdits-rm-of-the-project-asks": Case(sh("rm -rf ."), ASK, mode="acceptEdits"),
        "acceptEdits-other-command-asks": Case(sh("make"), ASK, mode="acceptEdits"),
        "acceptEdits-edit-deny-holds": Case(sh("touch secrets/x"), DENY, mode="acceptEdits",
                                            deny=("Edit(./secrets/**)",)),
        "plan-edit-denied": Case(edit("a.py"), DENY, mode="plan"),
        "plan-command-denied": Case(sh("make"), DENY, mode="plan"),
        "dontAsk-denies-what-would-ask": Case(sh("make"), DENY, mode="dontAsk"),
        "dontAsk-allow-rule-runs": Case(sh("npm test"), ALLOW, mode="dontAsk",
                                        allow=("Bash(npm test)",)),
        "dontAsk-ask-rule-denies": Case(sh("git push"), DENY, mode="dontAsk",
                                        ask=("Bash(git push *)",)),
        "dontAsk-reads": Case(read("a.py"), ALLOW, mode="dontAsk"),
        "bypass-everything": Case(sh("make"), ALLOW, mode="bypassPermissions"),
        "bypass-deny-holds": Case(sh("rm -rf tmp"), DENY, mode="bypassPermissions",
                                  deny=("Bash(rm *)",)),
        "bypass-ask-holds": Case(sh("git push"), ASK, mode="bypassPermissions",
                                 ask=("Bash(git push *)",)),
        # Tools that need no permission (AskUserQuestion, TodoWrite) run in every mode
        "todo-write-in-dontAsk": Case(("todo_write", {"todos": []}), ALLOW, mode="dontAsk"),
        "ask-user-in-plan": Case(("ask_user", {"question": "which?"}), ALLOW, mode="plan"),
        "plan-web-fetch-asks": Case(("web_fetch", {"url": "https://example.com/"}), ASK,
                                    mode="plan"),
        "plan-other-tool-denied": Case(("mcp__s__t", {}), DENY, mode="plan"),
        # claw: remember writes what later sessions read, so the modes treat it as an edit
        "claw-acceptEdits-remember": Case(("remember", {"text": "x"}), ALLOW, mode="acceptEdits"),
        "claw-plan-remember-denied": Case(("remember", {"text": "x"}), DENY, mode="plan"),
        # claw: no classifier, so auto mode asks as default mode does
        "claw-auto-asks": Case(sh("make"), ASK, mode="auto"),
    },
    "bash-rule-limits": {
        # Bash rule limits (warning box): claw matches words, so extra spaces cannot dodge
        # claw: Claude Code's rule misses "curl  http://..."; claw's deny holds
        "claw-extra-spaces-do-not-dodge-deny": Case(
            sh("curl  http://github.com/x"), DENY, deny=("Bash(curl http://github.com/*)",)
        ),
    },
    "claw-every-spelling": {
        # claw: a deny rule holds for every spelling claw recognises, even in bypass mode
        "claw-deny-bin-rm": Case(sh("/bin/rm -rf x"), DENY, mode="bypassPermissions",
                                 deny=("Bash(rm *)",)),
        "claw-deny-env-rm": Case(sh("env -i rm -rf x"), DENY, mode="bypassPermissions",
                                 deny=("Bash(rm *)",)),
        "claw-deny-sudo-rm": Case(sh("sudo -u root rm -rf x"), DENY, mode="bypassPermissions",
                                  deny=("Bash(rm *)",)),
        "claw-deny-xargs-flags-rm": Case(sh("ls | xargs -n1 rm"), DENY, mode="bypassPermissions",
                                         deny=("Bash(rm *)",)),
        "claw-deny-nice-rm": Case(sh("nice -n 5 rm x"), DENY, mode="bypassPermissions",
                                  deny=("Bash(rm *)",)),
        "claw-deny-command-rm": Case(sh("command rm x"), DENY, mode="bypassPermissions",
                                     deny=("Bash(rm *)",)),
        "claw-deny-quoted-rm": Case(sh("'r''m' -rf x"), DENY, mode="bypassPermissions",
                                    deny=("Bash(rm *)",)),
        "claw-deny-backslash-rm": Case(sh("\\rm -rf x"), DENY, mode="bypassPermissions",
                                       deny=("Bash(rm *)",)),
        "claw-deny-bash-c-rm": Case(sh("bash -c 'rm -rf x'"), DENY, mode="bypassPermissions",
                                    deny=("Bash(rm *)",)),
        "claw-deny-eval-rm": Case(sh("eval rm -rf x"), DENY, mode="bypassPermissions",
                                  deny=("Bash(rm *)",)),
        "claw-deny-find-execdir-rm": Case(sh("find . -execdir rm -rf {} +"), DENY,
                                          mode="bypassPermissions", deny=("Bash(rm *)",)),
        "claw-deny-find-okdir-rm": Case(sh("find . -okdir rm {} +"), DENY,
                                        mode="bypassPermissions", deny=("Bash(rm *)",)),
        "claw-deny-find-ok-rm": Case(sh("find . -ok rm {} ;"), DENY, mode="bypassPermissions",
                                     deny=("Bash(rm *)",)),
        "claw-deny-sudo-past-an-assignment": Case(sh("A=1 sudo make"), DENY,
                                                  mode="bypassPermissions", deny=("Bash(sudo *)",)),
        "claw-deny-sudo-behind-nice": Case(sh("nice sudo make"), DENY, mode="bypassPermissions",
                                           deny=("Bash(sudo *)",)),
        "claw-deny-sudo-by-its-path-behind-wrappers": Case(
            sh("nice nice /usr/bin/sudo make"), DENY, mode="bypassPermissions",
            deny=("Bash(sudo *)",),
        ),
        "claw-deny-sudo-rm-by-its-path": Case(sh("/usr/bin/sudo rm -rf x"), DENY,
                                              mode="bypassPermissions", deny=("Bash(sudo rm *)",)),
        "claw-assignment-alone-runs-no-program": Case(sh("X=1"), ALLOW, mode="bypassPermissions",
                                                      deny=("Bash(rm *)",)),
        "claw-deny-subshell-rm": Case(sh("echo $(rm -rf x)"), DENY, mode="bypassPermissions",
                                      deny=("Bash(rm *)",)),
        # claw: what it cannot see through is never allowed when a rule could be dodged
        "claw-ifs-never-allowed": Case(sh("rm${IFS}-rf${IFS}x"), ASK, mode="bypassPermissions",
                                       deny=("Bash(rm *)",)),
        "claw-variable-program-never-allowed": Case(sh("$X -rf x"), ASK, mode="bypassPermissions",
                                                    deny=("Bash(rm *)",)),
        "claw-eval-opaque-never-allowed": Case(sh('eval "$CMD"'), ASK, mode="bypassPermissions",
                                               deny=("Bash(rm *)",), allow=("Bash",)),
        "claw-bash-c-not-allowed-by-inner-rule": Case(sh("bash -c 'npm test'"), ASK,
                                                      allow=("Bash(npm test *)",)),
        # claw: git options that run programs are not covered by Bash(git *)
        "claw-git-c-alias": Case(sh("git -c alias.x=!touch\\ y x"), ASK, allow=("Bash(git *)",)),
        "claw-git-c-fsmonitor": Case(sh("git -c core.fsmonitor=./evil status"), ASK,
                                     allow=("Bash(git *)",)),
        "claw-git-upload-pack": Case(sh("git fetch --upload-pack=./evil origin"), ASK,
                                     allow=("Bash(git *)",)),
        "claw-git-exec-path": Case(sh("git --exec-path=/tmp/x status"), ASK,
                                   allow=("Bash(git *)",)),
        "claw-git-plain-still-allowed": Case(sh("git fetch origin"), ALLOW, allow=("Bash(git *)",)),
        # Read-only commands: "commands with write-capable or exec-capable flags, such as find,
        # sort, sed, and git, prompt when an unquoted glob is present"
        "unquoted-glob-find-prompts": Case(sh("find . *"), ASK),
        "quoted-glob-find-runs": Case(sh("find . -name '*.py'"), ALLOW),
        "unquoted-glob-ls-runs": Case(sh("ls *.ts"), ALLOW),
        # Read and Edit (warning box): deny rules apply to recognised file commands such as tee
        "edit-deny-blocks-tee": Case(sh("echo x | tee secrets/a"), DENY,
                                     deny=("Edit(./secrets/**)",)),
        # claw: a shell reading a script or its input is opaque
        "claw-pipe-into-sh-never-allowed": Case(sh("echo rm -rf x | sh"), ASK,
                                                mode="bypassPermissions", deny=("Bash(rm *)",)),
        "claw-bash-flags-with-capitals": Case(sh("bash -Ec 'rm -rf x'"), DENY,
                                              mode="bypassPermissions", deny=("Bash(rm *)",)),
        "claw-bash-c-without-text-asks": Case(sh("bash -c"), ASK, mode="bypassPermissions",
                                              deny=("Bash(rm *)",)),
        "claw-deny-past-more-wrappers-than-spellings": Case(sh("nice " * 250 + "rm -rf x"), DENY,
                                                            mode="bypassPermissions",
                                                            deny=("Bash(rm *)",)),
        "claw-too-many-wrappers-asks": Case(sh("nice " * 250 + "make"), ASK,
                                            mode="bypassPermissions", deny=("Bash(rm *)",)),
        "claw-bash-script-never-allowed": Case(sh("bash cleanup.sh"), ASK,
                                               mode="bypassPermissions", deny=("Bash(rm *)",)),
        "claw-many-wrappers-still-denied": Case(sh("nice " * 150 + "rm -rf x"), DENY,
                                                mode="bypassPermissions", deny=("Bash(rm *)",)),
        "claw-a-repeated-wrapper-counts-each-spelling-once": Case(
            sh("nice " * 8 + "npm test"), ALLOW, allow=("Bash(npm test *)",)
        ),
        "claw-redirect-to-variable-asks": Case(sh("echo x > $HOME/.bashrc"), ASK,
                                               mode="acceptEdits"),
        # claw: wrapper options that take a value, and the other spellings of each wrapper
        "claw-timeout-signal-and-unit": Case(sh("timeout -s KILL 5m npm test"), ALLOW,
                                             allow=("Bash(npm test *)",)),
        "claw-timeout-kill-after": Case(sh("timeout -k 5 10 npm test"), ALLOW,
                                        allow=("Bash(npm test *)",)),
        "claw-bare-timeout-asks": Case(sh("timeout"), ASK),
        "claw-bash-rule-after-a-read-rule": Case(sh("make"), ALLOW,
                                                 allow=("Read(src/**)", "Bash(make)")),
        "claw-bare-nice": Case(sh("nice npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "claw-nice-minus-number": Case(sh("nice -5 npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "claw-nice-adjustment": Case(sh("nice --adjustment=-3 npm test"), ALLOW,
                                     allow=("Bash(npm test *)",)),
        "claw-stdbuf-option-value": Case(sh("stdbuf -o L npm test"), ALLOW,
                                         allow=("Bash(npm test *)",)),
        "claw-command-V-not-stripped": Case(sh("command -V npm"), ASK, allow=("Bash(npm *)",)),
        "claw-command-v-reads-no-file": Case(sh("command -v cat .env && command -V cat .env"), ASK,
                                             deny=("Read(./.env)",)),
        "claw-command-v-asks-in-acceptEdits": Case(sh("command -v make"), ASK, mode="acceptEdits"),
        "claw-command-then-option": Case(sh("command npm -v"), ALLOW, allow=("Bash(npm *)",)),
        "claw-xargs-one-word": Case(sh("xargs make"), ALLOW, allow=("Bash(make *)",)),
        "xargs-not-past-an-exact-rule": Case(sh("xargs make"), ASK, allow=("Bash(make)",)),
        "claw-bare-xargs-asks": Case(sh("xargs"), ASK),
        "claw-nohup-double-dash": Case(sh("nohup -- npm test"), ALLOW, allow=("Bash(npm test *)",)),
        "claw-time-with-only-an-option-asks": Case(sh("time -p"), ASK),
        "claw-locale-variable-stripped": Case(sh("LC_ALL=C npm test"), ALLOW,
                                              allow=("Bash(npm test *)",)),
        "claw-safe-value-with-equals": Case(sh("NODE_ENV=a=b npm test"), ALLOW,
                                            allow=("Bash(npm test *)",)),
        # claw: git runs without a prompt only when it lists
        "claw-git-listing-runs": Case(
            sh("git branch -a -r -vv && git tag --list -l && git remote -v"), ALLOW
        ),
        "claw-git-new-branch-asks": Case(sh("git branch feature"), ASK),
        "claw-git-new-tag-asks": Case(sh("git tag v1"), ASK),
        "claw-git-add-remote-asks": Case(sh("git remote add up ../up"), ASK),
        "claw-bare-git-asks": Case(sh("git"), ASK),
        # claw: quotes and backslashes hide a glob from the shell, as bash reads them
        "claw-escaped-glob-runs": Case(sh("find . -name \\*.py"), ALLOW),
        "claw-quoted-globs-run": Case(sh("find . -name 'a*b*' -o -name \"*.c\""), ALLOW),
        "claw-glob-after-a-quoted-word-prompts": Case(sh("find 'src' *"), ASK),
        "claw-glob-after-an-escape-prompts": Case(sh("find \\. -name *"), ASK),
        "claw-no-escape-in-single-quotes": Case(sh("find '\\' *"), ASK),
        "claw-capital-x-is-no-glob": Case(sh("find Xcode -name '*.h'"), ALLOW),
        "claw-capital-x-is-no-quote": Case(sh("find Xcode -name *.h"), ASK),
        "claw-quoted-program-then-glob-prompts": Case(sh("'find' . *"), ASK),
        # claw: a deny holds inside a substitution that starts the command
        "claw-substitution-first-denied": Case(sh("$(rm -rf build)"), DENY, deny=("Bash(rm *)",)),
        # claw: an exact deny rule meets the exact text of each $(...) or `...`, and its parts
        **{
            f"claw-exact-deny-inside-{name}": Case(sh(command), DENY, deny=("Bash(rm -rf build)",))
            for name, command in [
                ("substitution", "echo $(rm -rf build) done"),
                ("substitution-part", "echo $(ls && rm -rf build)"),
                ("nested-substitution", "echo $($(rm -rf build))"),
                ("unclosed-substitution", "echo $(rm -rf build"),
                ("second-backticks", "echo `ls` `rm -rf build`"),
                ("adjacent-backticks", "echo `ls``rm -rf build`"),
                ("backticks-after-empty-ones", "echo `` `rm -rf build`"),
                ("unclosed-backtick", "echo `rm -rf build"),
                ("substitution-before-backticks", "echo $(rm -rf build) `date`"),
                ("subshell-in-substitution", "echo $( (rm -rf build) ) `date`"),
                ("substitution-opening-with-a-subshell", "echo $((ls) && rm -rf build)"),
            ]
        },
        "claw-deny-inside-a-substitution-that-holds-another": Case(
            sh("echo $(git push origin `git branch --show-current` --force)"), DENY,
            deny=("Bash(git push * --force)",),
        ),
    },
}
"""Each documented example, by the section of the pages it comes from: rules, a call, a mode
and the decision the page gives (rows named ``claw-`` hold claw's own decision)."""

CASES = {name: case for rows in SECTIONS.values() for name, case in rows.items()}
"""Every row of every section, by name."""


@pytest.fixture(scope="module")
def untouched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with an empty ``home`` and no ``project`` yet, which no documented case changes
    (deciding reads the file system, never writes it): one for all of them."""
    folder = tmp_path_factory.mktemp("documented")
    (folder / "home").mkdir()
    return folder


@pytest.mark.parametrize("section", list(SECTIONS))
def test_permissions_claude_code_documented_case(section: str, untouched: Path) -> None:
    """Every row of ``section``; a failure names each row that decides otherwise, and why."""
    wrong = []
    for name, case in SECTIONS[section].items():
        try:
            rules = Permissions(
                untouched / "project",
                allow=case.allow,
                ask=case.ask,
                deny=case.deny,
                mode=Mode(case.mode),
                home=untouched / "home",
            )
            tool, arguments = case.call
            verdict = rules.decide(ToolCall(id="c1", name=tool, arguments=arguments))
        except Exception as error:
            error.add_note(f"in the row {name!r}")
            raise
        if verdict.decision is not case.expected:
            wrong.append(f"{name}: {verdict.decision}, not {case.expected} ({verdict.reason})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    ("rule", "fix"),
    [
        ("Write(docs/**)", 'write "Edit(docs/**)" instead'),  # Read and Edit: never consulted
        ("Glob(src/**)", 'write "Read(src/**)" instead'),
        ("NotebookEdit(x/**)", 'write "Edit(x/**)" instead'),
    ],
)
def test_permissions_claude_code_unread_path_rules_are_refused(rule: str, fix: str) -> None:
    with pytest.raises(RuleError, match="never consults") as raised:
        Permissions("/project", deny=[rule])
    assert fix in str(raised.value)


def test_permissions_claude_code_bare_write_rule_still_names_the_tool() -> None:
    # Read and Edit: "a tool-name rule with no path ... matches that rule at the tool level"
    rules = Permissions("/project", deny=["Write"])
    call = ToolCall(id="c1", name="write", arguments={"path": "a", "content": ""})
    assert rules.decide(call).decision is DENY


def test_permissions_claude_code_allow_rule_tool_glob_is_refused() -> None:
    # Tool name wildcards: an unanchored allow glob "doesn't auto-approve anything"
    with pytest.raises(RuleError, match="may only deny or ask"):
        Permissions("/project", allow=["*"])


def test_permissions_claude_code_symlink_cannot_dodge_a_deny(tmp_path: Path) -> None:
    # Read and Edit: "Deny rules apply when either the symlink path or its target matches"
    root = tmp_path / "project"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "token").write_text("s3cret")
    (root / "notes").symlink_to(root / "secrets")
    (root / "link.txt").symlink_to(root / "secrets" / "token")
    rules = Permissions(root, deny=["Read(./secrets/**)"], allow=["Read(./notes/**)"])
    for path in ["notes/token", "link.txt"]:
        call = ToolCall(id="c1", name="read", arguments={"path": path})
        assert rules.decide(call).decision is DENY, path
    call = ToolCall(id="c1", name="bash", arguments={"command": "cat notes/token"})
    assert rules.decide(call).decision is DENY


def test_permissions_claude_code_symlink_out_of_an_allowed_folder_asks(tmp_path: Path) -> None:
    # Read and Edit: "allow rules apply only when both the symlink path and its target match"
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (tmp_path / "outside.md").write_text("x")
    (root / "docs" / "out.md").symlink_to(tmp_path / "outside.md")
    rules = Permissions(root, allow=["Edit(/docs/**)"])
    call = ToolCall(id="c1", name="edit", arguments={"path": "docs/out.md"})
    assert rules.decide(call).decision is ASK


def edit_call(path: str) -> ToolCall:
    return ToolCall(id="c1", name="edit", arguments={"path": path, "old": "a", "new": "b"})


async def test_permissions_claude_code_saved_path_rule_is_escaped(tmp_path: Path) -> None:
    # Read and Edit: an approved path is saved with [, ] and * escaped, matching it only
    from claw.permissions import Approval

    async def always(call: ToolCall, why: str) -> Approval:
        return Approval.PROJECT

    rules = Permissions(tmp_path, approve=always)
    assert await rules.check(edit_call("[2024-06] Reports/a.md")) == edit_call(
        "[2024-06] Reports/a.md"
    )
    saved = Permissions.for_project(tmp_path)  # the settings file, read again: no re.error
    assert saved.decide(edit_call("[2024-06] Reports/a.md")).decision is ALLOW
    assert saved.decide(edit_call("2 Reports/a.md")).decision is ASK  # not a range
    assert saved.decide(edit_call("other.md")).decision is ASK
    # a leading ! or # is a plain character in the saved rule, not gitignore syntax
    for name in ["!important.md", "#notes.md"]:
        assert await rules.check(edit_call(name)) == edit_call(name)
    saved = Permissions.for_project(tmp_path)
    assert saved.decide(edit_call("!important.md")).decision is ALLOW
    assert saved.decide(edit_call("#notes.md")).decision is ALLOW
    assert saved.decide(edit_call("important.md")).decision is ASK


def test_permissions_claude_code_a_compound_command_saves_at_most_five_rules() -> None:
    # Compound commands: "Up to 5 rules may be saved for a single compound command"
    rules = Permissions("/project", allow=["Bash(npm test)"])
    call = ToolCall(id="c1", name="bash", arguments={"command": "npm test && make && make x"})
    assert rules.allow_rules_for(call) == ["Bash(make)", "Bash(make x)"]  # npm test is allowed
    five = " && ".join(f"make t{n}" for n in range(5))
    saved = rules.allow_rules_for(ToolCall(id="c1", name="bash", arguments={"command": five}))
    assert saved == [f"Bash(make t{n})" for n in range(5)]
    six = " && ".join(f"make t{n}" for n in range(6))
    assert rules.allow_rules_for(ToolCall(id="c1", name="bash", arguments={"command": six})) == []
    star = ToolCall(id="c1", name="bash", arguments={"command": "rm *.o"})
    assert rules.allow_rules_for(star) == []  # "*" cannot be escaped in a Bash rule


def test_permissions_claude_code_always_for_a_read_only_command_saves_only_its_target() -> None:
    # claw: git log and find . are read-only; only the files they write needed approval
    rules = Permissions("/project")
    command = "git log > log.txt && find . > files.txt"
    call = ToolCall(id="c1", name="bash", arguments={"command": command})
    assert rules.allow_rules_for(call) == ["Edit(/log.txt)", "Edit(/files.txt)"]


@pytest.mark.parametrize(
    "header",
    ["*** Update File: \x1c", "*** Update File:\x00secrets/token", "*** Delete File: a\x07b"],
)
def test_permissions_claude_code_patch_header_with_control_character_is_refused(
    header: str,
) -> None:
    rules = Permissions("/project", allow=["Edit"])
    patch = f"*** Begin Patch\n{header}\n@@\n-a\n+b\n*** End Patch\n"
    verdict = rules.decide(ToolCall(id="c1", name="apply_patch", arguments={"patch": patch}))
    assert verdict.decision is DENY
    assert "control character" in verdict.reason


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [read("notes\x1b[2J.txt"), edit("a\nb.txt"), ("grep", {"pattern": "x", "path": "src\x00"})],
)
def test_permissions_claude_code_a_path_with_a_control_character_is_refused(
    tool: str, arguments: dict[str, Any]
) -> None:
    rules = Permissions("/project", allow=["Read", "Edit"])
    verdict = rules.decide(ToolCall(id="c1", name=tool, arguments=arguments))
    assert verdict.decision is DENY
    assert "control character" in verdict.reason


def test_permissions_claude_code_bad_path_pattern_is_refused_at_start() -> None:
    with pytest.raises(RuleError, match="does not compile"):
        Permissions("/project", allow=["Edit(/[z-a].md)"])


def test_permissions_claude_code_a_glob_meets_the_rules_for_what_it_expands_to(
    tmp_path: Path,
) -> None:
    # claw: the shell expands s*/token to secrets/token before cat runs
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token").write_text("s3cret")
    rules = Permissions(tmp_path, deny=["Read(./secrets/**)"], mode=Mode.BYPASS)
    call = ToolCall(id="c1", name="bash", arguments={"command": "cat s*/token"})
    assert rules.decide(call).decision is DENY


PREFIXES = st.sampled_from(
    ["timeout 5", "timeout -s KILL 5", "nice", "nice -n 5", "nohup", "env", "env -i A=1",
     "sudo", "sudo -u root", "command", "builtin", "exec", "xargs", "xargs -n1", "A=1",
     "PATH=/x", "stdbuf -oL", "time -p", "setsid", "watch -n 1", "flock /tmp/l", "noglob",
     "/usr/bin/env", "find . -exec", "find src -name x -execdir", "find / -ok", "parallel"]
)  # fmt: skip
SPELLINGS = st.sampled_from(["rm", "/bin/rm", "\\rm", "'rm'", "r''m", '"rm"'])
WRAPS = st.sampled_from(
    ["{}", "make && {}", "({})", "bash -c '{}'", "sh -c \"{}\"", "eval {}", "true | {}",
     "echo $({})"]
)  # fmt: skip


@given(prefixes=st.lists(PREFIXES, max_size=3), spelling=SPELLINGS, wrap=WRAPS)
def test_permissions_claude_code_a_deny_holds_for_every_spelling_in_bypass_mode(
    prefixes: list[str], spelling: str, wrap: str
) -> None:
    # claw: "Deny rules block in every mode, including bypassPermissions", for every spelling
    rules = Permissions("/project", deny=["Bash(rm *)"], mode=Mode.BYPASS)
    command = wrap.format(" ".join([*prefixes, spelling, "-rf build"]))
    call = ToolCall(id="c1", name="bash", arguments={"command": command})
    assert rules.decide(call).decision is not ALLOW, command


def test_permissions_claude_code_a_folder_deny_at_any_depth_holds_through_links(
    tmp_path: Path,
) -> None:
    # Read and Edit: a deny holds when either the path or its target matches, at any depth
    root = tmp_path / "project"
    (root / "a" / "secrets").mkdir(parents=True)
    (root / "a" / "secrets" / "key").write_text("s3cret")
    (root / "other").mkdir()
    (root / "x").mkdir()
    (root / "notes").symlink_to(root / "a" / "secrets")
    (root / "x" / "secrets").symlink_to(root / "other")
    rules = Permissions(root, deny=["Read(secrets/**)"])
    for path in ["notes/key", "x/secrets/key"]:
        call = ToolCall(id="c1", name="read", arguments={"path": path})
        assert rules.decide(call).decision is DENY, path
