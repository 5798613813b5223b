# Concord: `make run` starts a demo on the embedded defaults; `make test` runs the whole suite.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# The demo's one worker consumes every queue (concord/settings.py, "Scale-out"); production splits them.
QUEUES ?= jobs,scoring-cpu,scoring-gpu,scoring-llm

.PHONY: run test coverage venv browser sysdeps lint worker serve clean-demo

# PyICU (the Unicode confusables of pseudonym checks) builds from source against the system's ICU; pysaml2 (SAML
# single sign-on, annotation/sso) checks signatures with the xmlsec1 binary.
sysdeps:
	@dpkg -s libicu-dev pkg-config g++ xmlsec1 >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libicu-dev pkg-config g++ xmlsec1 >/dev/null)

$(BIN)/.installed: requirements.txt | sysdeps
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q --upgrade pip
	$(BIN)/pip install --disable-pip-version-check -q -r requirements.txt
	touch $@

venv: $(BIN)/.installed

# Debian's chromium for the browser tests (Playwright cannot download its own browser here).
browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

run: venv
	mkdir -p var
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py load_demo_validation
	$(BIN)/python manage.py load_demo_estimates
	$(BIN)/python manage.py collectstatic --noinput -v0
	@echo "Starting a Celery worker (log: var/worker.log) and the web server on http://$(HOST):$(PORT)/"
	$(BIN)/celery -A concord worker -Q $(QUEUES) --loglevel=INFO --concurrency=1 > var/worker.log 2>&1 & \
	  worker=$$!; trap "kill $$worker 2>/dev/null" EXIT INT TERM; \
	  $(BIN)/python manage.py runserver --noreload $(HOST):$(PORT)

# On every core: one pytest-xdist worker per CPU, each with its own test database, var directory and broker
# (tests/settings.py). TEST_WORKERS=0 runs the suite in one process.
# --maxschedchunk=1: xdist hands each worker one more test as it finishes one, in collection order (pytest-django's:
# database tests, then transactional ones, then the rest), instead of chunks of up to a quarter of what is left; a
# worker is then never left holding minutes of slow tests (browser, worker processes) while the other sits idle.
TEST_WORKERS ?= auto
test: venv browser
	DJANGO_ALLOW_ASYNC_UNSAFE=true $(BIN)/pytest -n $(TEST_WORKERS) --dist load --maxschedchunk=1 $(PYTEST_ARGS)

# The same suite measuring branch coverage of the four packages (pytest-cov), then the lowest 15 modules and the
# total. Not part of .ci/run: Python 3.11's tracer makes the suite about half as slow again (measured on the
# every-parameter walk of tests/test_hostile_numbers.py: 70 s without, 105 s with).
COV_PACKAGES := --cov=concord --cov=annotation --cov=scoring --cov=adjudication
coverage: venv browser
	$(MAKE) test PYTEST_ARGS="$(PYTEST_ARGS) $(COV_PACKAGES) --cov-branch --cov-report="
	$(BIN)/coverage report --sort=cover --skip-covered | head -n 17
	$(BIN)/coverage report --format=total | sed 's/^/total branch coverage: /; s/$$/%/'

# Style, the architecture contracts (pyproject.toml [tool.importlinter]) and strict types on the pure packages.
lint: venv
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy adjudication/stats scoring/metrics
