# Shortcuts for tasks.py, which does the work and needs only Python 3.
PYTHON ?= python3

.PHONY: book test notebooks lab bench clean
book:      ## build the HTML book into _build/html
	$(PYTHON) tasks.py book
test:      ## every test: unit, property, doctest and nbval over the chapters
	$(PYTHON) tasks.py test
notebooks: ## re-execute the chapters in place and save their outputs
	$(PYTHON) tasks.py notebooks
lab:       ## open JupyterLab on the chapters, in the course's environment
	$(PYTHON) tasks.py lab
bench:     ## print the benchmark figures
	$(PYTHON) tasks.py bench
clean:     ## remove the built book
	rm -rf _build
