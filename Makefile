# Two commands on a fresh machine with Python 3.11+ and make:
#   make run    install the project (editable) into .venv and start the dashboard on the demo data (http://127.0.0.1:8501)
#   make test   install the test tools too and run the whole suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
# 127.0.0.1: only this machine reaches the dashboard. To open it to a network: make run ADDRESS=0.0.0.0 (and
# configure sign-in first: README, "Hosting for a team").
ADDRESS ?= 127.0.0.1

.PHONY: run test test-fast bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.runtime-installed: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.test-installed: requirements.txt requirements-test.txt $(VENV)/.runtime-installed
	$(BIN)/python -m pip install --quiet -r requirements-test.txt
	touch $@

# The project itself, editable, so the README's `evalcore` command exists in .venv and follows the checkout.
$(VENV)/.project-installed: pyproject.toml $(VENV)/.runtime-installed
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

# The dashboard's workspace is the evalcore command's: EVALCORE_WORKSPACE, else ~/.local/share/evalcore/workspace
# ($$XDG_DATA_HOME/evalcore/workspace), whatever folder make runs from. The tests use temporary folders instead.
run: $(VENV)/.project-installed
	$(BIN)/streamlit run app.py --server.address $(ADDRESS) --server.port $(PORT)

test: $(VENV)/.test-installed
	bash tests/ensure_chromium.sh
	$(BIN)/python -m pytest -n 2 --dist loadfile

test-fast: $(VENV)/.test-installed
	$(BIN)/python -m pytest -n 2 --dist loadfile -m "not e2e"

bench: $(VENV)/.test-installed
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-bench.txt
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
