# fluidbox: `make run` serves the portal on an embedded SQLite; `make test` runs the suite.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
MCP_PORT ?= 8765
export FLUIDBOX_DEVELOPMENT ?= 1

.PHONY: run test install migrate demo lint format bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

install: $(VENV)/.installed

migrate: install
	$(BIN)/python manage.py migrate --noinput

run: migrate
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	bash scripts/serve.sh $(PORT) $(MCP_PORT)

# Three pytest-xdist workers, a test file each at a time, the longest files first (see
# tests/conftest.py): many tests wait on servers they started, so on two cores a third keeps
# them busy (measured: 15.4 min; four workers took as long).
test: install
	$(BIN)/python -m pytest -n 3 --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# Unattended by default (the demo approver decides after a pause); WAIT_FOR_HUMAN=1 waits
# for you to decide in the inbox.
demo: install
	$(BIN)/python -m runner.demo --url http://127.0.0.1:$(PORT)$(if $(filter 1 yes true,$(WAIT_FOR_HUMAN)), --wait-for-human)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install
	$(BIN)/python bench/ledger_append.py
	$(BIN)/python bench/policy_eval.py

clean:
	rm -rf $(VENV) var
