# Two commands after cloning: `make run` and `make test`. Both create or reuse .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False

.PHONY: run test test-fast bench lint install

# The package, editable, builds the compiled PDF reader (setup.py: core/native/stext.c)
# against this venv's PyMuPDF, hence no build isolation: the requirements are installed
# first. Without a compiler the install goes on, the last line says so, and PDFs are read
# in Python to the same text and boxes.
$(STAMP): requirements.txt requirements-dev.txt pyproject.toml setup.py core/native/stext.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch is pinned to the CPU build (2.13.0) in requirements.txt
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m core.native.stext
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/streamlit run app.py --browser.gatherUsageStats=false --server.headless=true

# pytest exits 5 when it collects nothing: report it and fail with 1, never 5.
test: $(STAMP)
	$(PY) -m pytest -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: no tests were collected"; exit 1; fi; exit $$rc

# The inner loop: no model, browser, server, Ray, hostile-file, AppTest page, whole-corpus
# or mypy test, spread over every core (pytest-xdist; each worker has its own temporary
# folders, and the tests share no state on disk outside them).
FAST := not slow and not browser and not server and not typing and not ray and not hostile \
	and not app and not corpus
test-fast: $(STAMP)
	$(PY) -m pytest -q -n auto --dist worksteal -m "$(FAST)"

bench: $(STAMP)
	$(VENV)/bin/chunkscope bench

# mypy checks the files named in [tool.mypy] of pyproject.toml: core, workbench, pages, app.py.
lint: $(STAMP)
	$(VENV)/bin/ruff check core workbench pages app.py tests
	$(VENV)/bin/mypy
