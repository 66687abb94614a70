# Shortcuts for tasks.py, which does the work and needs only Python 3.
PYTHON ?= python3

.PHONY: book test lock notebooks bench clean
book:      ## build the HTML book into _build/html
	$(PYTHON) tasks.py book
test:      ## every test: unit, property, doctest and nbval over the chapters
	$(PYTHON) tasks.py test
lock:      ## recompile requirements.lock from requirements.txt
	$(PYTHON) tasks.py lock
notebooks: ## re-execute the chapters in place and save their outputs
	$(PYTHON) tasks.py notebooks
bench:     ## print the benchmark figures
	$(PYTHON) tasks.py bench
clean:     ## remove the built book
	rm -rf _build
