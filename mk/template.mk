# The template engine's differential test against Jinja2 (issue #15,
# tests/template_diff/README.md): random templates rendered by Debian's
# python3-jinja2, configured as IOPS configures it, and by paddiser's engine
# through a small driver; any different output fails. About 10 s.
#   make check-template-diff [TEMPLATE_DIFF_CASES=N] [TEMPLATE_DIFF_SEED=S]
# The fixed corpus it can write (TEMPLATE_DIFF_CORPUS) is replayed without
# Python by tests/test_template_corpus.c in check-unit.

TEMPLATE_DIFF_CASES ?= 4000
TEMPLATE_DIFF_SEED  ?= 20261204
# Debian's interpreter, which python3-jinja2 installs for (not a pyenv or venv one)
PYTHON3 ?= /usr/bin/python3

$(BUILD)/template_render: $(call OBJ,tests/template_diff/render.c) $(BUILD)/libpaddiser_internal.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

CHECK_EXTRA += check-template-diff

.PHONY: check-template-diff template-diff-corpus
check-template-diff: $(BUILD)/template_render
	@scripts/install-deps.sh python3 python3-jinja2
	$(PYTHON3) tests/template_diff/diff.py --driver $(BUILD)/template_render \
	    --cases $(TEMPLATE_DIFF_CASES) --seed $(TEMPLATE_DIFF_SEED)

# Rewrites the committed corpus (its README names the Jinja2 version).
template-diff-corpus: $(BUILD)/template_render
	@scripts/install-deps.sh python3 python3-jinja2
	$(PYTHON3) tests/template_diff/diff.py --driver $(BUILD)/template_render --cases 400 --seed 1 \
	    --write-corpus tests/template_diff/corpus.json

-include $(BUILD)/obj/tests/template_diff/render.d
