# Two commands matter: `make test` and `make repro`. Both create .venv when it is missing.
PY := .venv/bin/python
PIP := .venv/bin/pip
STAMP := .venv/.installed

.PHONY: install test bench clean

$(PY):
	python3 -m venv .venv

# torch first: 2.13.0 resolves to the local CPU build here; the project's range (torch>=2.4) then adds nothing.
$(STAMP): $(PY) pyproject.toml
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0 || $(PIP) install -q "torch>=2.4"
	$(PIP) install -q -e ".[pipeline,dev]"
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf .venv .pytest_cache
