# Planner / estimation / model fragment (issue #4, planner half).
# The runtime finds shipped tables and the default model in the source tree.
CPPFLAGS += -DPD_SOURCE_DIR='"$(CURDIR)"'
