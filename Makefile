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
$(STAMP): requirements.txt requirements-dev.txt pyproject.toml setup.py core/native/stext.c core/native/words.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch is pinned to the CPU build (2.13.0) in requirements.txt
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m core.native.stext
	$(PY) -m core.native.words
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/streamlit run app.py --browser.gatherUsageStats=false --server.headless=true

# Every test, in two runs. First all that may share the machine, spread over every core
# (pytest-xdist; each worker has its own temporary folders and loads the model at most once,
# on first use; worksteal keeps a module's tests together until a worker runs out and takes
# over the other's last ones). Then, one at a time, what must have the machine to itself:
# browsers and Chroma servers (processes of their own), Ray clusters (workers on every
# core), mypy (one cache folder) and the hostile files (limits on time and memory run to
# their end).
# Both runs always run; make fails if either does. pytest exits 5 when it collects nothing:
# that is reported and fails with 1, never 5.
SERIAL := browser or server or ray or typing or hostile
PYTEST := $(PY) -m pytest -q
test: $(STAMP)
	@$(PYTEST) -n auto --dist worksteal -m "not ($(SERIAL))"; shared=$$?; \
	$(PYTEST) -m "$(SERIAL)"; alone=$$?; \
	if [ $$shared -eq 5 ] || [ $$alone -eq 5 ]; then echo "error: no tests were collected"; exit 1; fi; \
	if [ $$shared -ne 0 ]; then exit $$shared; fi; exit $$alone

# The inner loop: no model, browser, server, Ray, hostile-file, AppTest page, whole-corpus
# or mypy test, spread over every core. Without the shared corpus it fails (a test that
# reads it never passes or skips for want of it: tests/conftest.py, need_corpus).
FAST := not slow and not browser and not server and not typing and not ray and not hostile \
	and not app and not corpus
test-fast: $(STAMP)
	@$(PYTEST) -n auto --dist worksteal -m "$(FAST)"; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: no tests were collected"; exit 1; fi; exit $$rc

bench: $(STAMP)
	$(VENV)/bin/chunkscope bench

# mypy checks the files named in [tool.mypy] of pyproject.toml: core, workbench, pages, app.py.
lint: $(STAMP)
	$(VENV)/bin/ruff check core workbench pages app.py tests chunkscope eval setup.py
	$(VENV)/bin/mypy
