# Shortcuts for tasks.py, which does the work and needs only Python 3.
PYTHON ?= python3

.PHONY: book pdf test lock notebooks lab bench assignments grade clean
book:      ## build the HTML book into _build/html
	$(PYTHON) tasks.py book
pdf:       ## the whole book as one PDF, _build/pdf/book.pdf
	$(PYTHON) tasks.py pdf
test:      ## every test: unit, property, doctest and nbval over the chapters
	$(PYTHON) tasks.py test
lock:      ## recompile requirements.lock from requirements.txt
	$(PYTHON) tasks.py lock
notebooks: ## re-execute the chapters in place and save their outputs
	$(PYTHON) tasks.py notebooks
lab:       ## open JupyterLab on the chapters, in the course's environment
	$(PYTHON) tasks.py lab
bench:     ## print the benchmark figures
	$(PYTHON) tasks.py bench
assignments: ## build student notebooks, autograder bundles and reference answers
	$(PYTHON) tasks.py assignments
grade:     ## grade a folder of submissions, each in a sandbox: make grade DIR=submissions
	$(PYTHON) tasks.py grade $(DIR)
clean:     ## remove the built book
	rm -rf _build
