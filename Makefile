# Two commands matter: `make test` and `make repro`. Both create .venv when it is missing.
PY := .venv/bin/python
PIP := .venv/bin/pip
STAMP := .venv/.installed

.PHONY: install test bench repro publish study ui play docs docs-serve clean

$(PY):
	python3 -m venv .venv

# torch first: 2.13.0 resolves to the local CPU build here; the project's range (torch>=2.4) then adds nothing.
$(STAMP): $(PY) pyproject.toml
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0 || $(PIP) install -q "torch>=2.4"
	$(PIP) install -q -e ".[pipeline,dev,docs,ray]"
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/run.py

# The whole pipeline (dvc.yaml): data, training, evaluation, report, with independent stages side by side (one per
# core; BOARDRL_REPRO_JOBS=1 runs a plain `dvc repro`).  PROFILE=default runs in the workspace; another
# profile (profiles/<name>.yaml: tiny, full) runs in its own lasting folder (.dvc/tmp/exps/profiles/
# <name>) and is saved as a DVC experiment, so its results stay apart (`dvc exp show`, `dvc exp apply <name>`) and
# a killed run, rerun with the same command, continues from its checkpoints and finished stages.  params.yaml (+ the overlay) is validated first:
# a mistake is one `error:` line before DVC runs.  The venv's bin/ goes first on PATH so the stages' `python`
# is the project's interpreter; nothing is exported beyond this command.
PROFILE ?= default
repro: $(STAMP)
	PATH="$(CURDIR)/.venv/bin:$$PATH" $(PY) -m boardrl.experiments.profiles run $(PROFILE)

# A finished run of a profile (not the default), published into published/<PROFILE>/ with its hashes; README's table
# then shows it beside the default profile's (docs/concepts.md).  RECHECK=<experiment> reruns that experiment's
# stages from nothing and records whether its metrics file and models come out byte-equal.
RECHECK ?=
publish: $(STAMP)
	PATH="$(CURDIR)/.venv/bin:$$PATH" .venv/bin/boardrl publish $(PROFILE) $(if $(RECHECK),--recheck $(RECHECK))

# A study (studies/<NAME>.yaml): its variations as DVC experiments through DVC's queue, JOBS side by side, tracked
# in MLflow; finished variations are skipped, so rerunning a killed study continues it.  Table: studies/<NAME>/.
# ONLY=<variation>,<variation>: run those alone (a long study over several sittings); the others keep their rows.
JOBS ?= 1
ONLY ?=
study: $(STAMP)
	@test -n "$(NAME)" || { echo "error: make study NAME=<a study of studies/>" >&2; exit 2; }
	PATH="$(CURDIR)/.venv/bin:$$PATH" .venv/bin/boardrl study $(NAME) --jobs $(JOBS) $(if $(ONLY),--only $(ONLY))

# MLflow UI over the project's tracking database: http://127.0.0.1:$(UI_PORT).  MLflow's own server, set up by
# boardrl.tracking.mlflow_ui so that experiments open in their runs table with the headline metrics as columns and
# the Assistant closed (MLflow 3.17 opens its GenAI view otherwise), without its unused job runner, one worker.
UI_PORT ?= 5000
ui: $(STAMP)
	$(PY) -m boardrl.tracking.mlflow_ui --backend-store-uri sqlite:///$(CURDIR)/mlflow.db --host 127.0.0.1 --port $(UI_PORT)

# Play any agent in the browser, with the referee's exact values: http://127.0.0.1:8000 (`boardrl serve`).
# Trained models are found under models/ (`model:<experiment id>`).
PLAY_PORT ?= 8000
play: $(STAMP)
	.venv/bin/boardrl serve --host 127.0.0.1 --port $(PLAY_PORT)

# The documentation site (mkdocs.yml, docs/): built with --strict, so a broken link, a missing page or a page left
# out of the nav is an error (tests/test_docs.py builds it too).  docs-serve rebuilds on every change.
DOCS_PORT ?= 8001
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir site

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs serve --strict --dev-addr 127.0.0.1:$(DOCS_PORT)

clean:
	rm -rf .venv .pytest_cache site

.PHONY: plots report-check dashboard

# Optuna's dashboard over a sweep's study on http://127.0.0.1:8080: STUDY names a `boardrl sweep` study (its journal
# sweeps/<STUDY>.journal), or STORAGE any study storage (a journal file, results/sweeps/<id>/study.journal for the
# pipeline's sweeps, or a database URL).
STUDY ?= tictactoe_tabular_q
STORAGE ?= sweeps/$(STUDY).journal
dashboard: $(STAMP)
	.venv/bin/optuna-dashboard $(STORAGE) --host 127.0.0.1 --port 8080

# `dvc plots show` that draws offline: .dvc/config's plots.html_template (.dvc/plots/offline.html) loads vega,
# vega-lite and vega-embed from .dvc/plots/vendor/ instead of a CDN.  Writes dvc_plots/index.html.
plots:
	.venv/bin/dvc plots show

# The report in headless Chromium at 1,400 px, offline: nothing sticks out on the right or is cut off in a
# table, every figure loads; then `dvc plots show`'s page: every vega plot drawn without a network.
# Screenshots: dvc_plots/report-1400.png, dvc_plots/screenshot-1400.png.  Installs nothing: needs .venv and a
# Chromium binary (apt-get install chromium, or BOARDRL_CHROMIUM=/path/to/chrome).
report-check:
	.venv/bin/dvc plots show >/dev/null
	$(PY) -m boardrl.tools.browser reports/index.html --width 1400 --screenshot dvc_plots/report-1400.png \
		--plots dvc_plots/index.html --plots-screenshot dvc_plots/screenshot-1400.png
