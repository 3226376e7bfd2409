# Quick start: `make demo` (train + test AN on the demo dataset), `make test` (the fast
# tests; `make test-all` both tiers, `make test-gpu` the GPU tier) and `make bench-quick`
# (one tiny run per method, as CI does). All create .venv and install what is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-gpu bench-quick docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c constraints.txt torch torchvision
	$(PY) -c "import mmcv" 2>/dev/null || $(PY) -m pip install -q -c constraints.txt mmcv-lite
	$(PY) -m pip install -q -c constraints.txt -e ".[tests,pretrained,export]"
	touch $(STAMP)

data/demo/formatted_val_labels.npy: | $(STAMP)
	$(PY) tools/make_demo_data.py --out-dir data/demo

demo: $(STAMP) data/demo/formatted_val_labels.npy
	$(PY) tools/train.py configs/an/an_vgg11bn_demo.py --work-dir work_dirs/an_demo
	$(PY) tools/test.py configs/an/an_vgg11bn_demo.py \
		$$($(PY) tools/best_checkpoint.py work_dirs/an_demo) --work-dir work_dirs/an_demo

# the docs requirements (docs/requirements.txt, the `docs` extra): make docs
# builds the site with them, and tests/test_docs.py builds it in the test process
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): docs/requirements.txt constraints.txt | $(STAMP)
	$(PY) -m pip install -q -c constraints.txt -r docs/requirements.txt
	touch $(DOCS_STAMP)

# the fast tier: every test but those marked slow (trainings through the
# tools, other processes); the GPU tier's tests (marker gpu) skip without CUDA;
# tests/test_docs.py builds the documentation site (about 20 s)
# Both run on PYTEST_WORKERS xdist workers (0: in one process), a module's
# tests on one worker (tests/conftest.py's groups); CI's 2 cores take 2.
PYTEST_WORKERS ?= 2
XDIST = -n $(PYTEST_WORKERS) --dist loadgroup
test: $(STAMP) $(DOCS_STAMP)
	$(PY) -m pytest tests -q -m "not slow" $(XDIST)

# both tiers, as CI runs them; the slowest tests listed at the end
.PHONY: test-all
test-all: $(STAMP) $(DOCS_STAMP)
	$(PY) -m pytest tests -q $(XDIST) --durations=30

# the GPU tier alone (tests marked gpu): every method's step under
# torch.cuda.set_sync_debug_mode('error'), train/dist_train/--resume on CUDA
test-gpu: $(STAMP)
	$(PY) -m pytest tests -q -m gpu -rs

# one tiny training per method through the real configs (CI), two side by side
bench-quick: $(STAMP) data/demo/formatted_val_labels.npy
	PYTHONPATH=.dev_scripts $(PY) -m benchmark.accuracy --quick --rerun --jobs 2 --work-root work_dirs/benchmark_quick

# the numbers the README and the docs quote against their json (.dev_scripts/docs_tables.py)
.PHONY: docs-tables
docs-tables: $(STAMP)
	PYTHONPATH=.dev_scripts $(PY) -m docs_tables --check

# the documentation site (Sphinx + MyST, docs/_build/html): warnings are errors,
# and MyST checks every internal link and anchor
docs: $(STAMP) $(DOCS_STAMP)
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

clean:
	rm -rf work_dirs docs/_build
