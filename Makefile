# Two commands for a fresh machine with Python 3.11+, pip, git and make:
#   make book     set everything up and serve the book at http://127.0.0.1:8000
#   make verify   set everything up and run the complete instructor verification
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export NO_MKDOCS_2_WARNING := 1

.PHONY: setup book verify test bench mutate oracle

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

book: $(STAMP)
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

verify: $(STAMP)
	$(BIN)/clawbook verify

test: $(STAMP)
	$(BIN)/pytest

# The benchmarks: each number against its target; they report, they do not gate (bench/README.md).
bench: $(STAMP)
	$(BIN)/python -m bench.run

# Mutation testing of solution/ against the suite, per chapter (bench/README.md). Not part of
# verify: it takes minutes. Runs on a scratch copy; `make mutate ARGS=ch13` runs one chapter's
# regions, `make mutate ARGS='solution.mock.*'` some mutants.
mutate: $(STAMP)
	$(BIN)/python -m bench.mutation $(ARGS)

# Re-record what the real Claude Code decides (oracle/__init__.py): opt-in, never part of verify or
# CI. Needs root (a network namespace with only loopback) and the pinned Claude Code installed
# outside the repository (npm install @anthropic-ai/claude-code@2.1.332 in /work/cc, or
# ARGS="--claude PATH"); prints how many recorded outcomes changed.
oracle: $(STAMP)
	$(BIN)/python -m oracle.record $(ARGS)
