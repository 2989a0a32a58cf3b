#!/bin/sh
# The README demo. Grows as issues land.
set -eu
echo "paddiser demo: build ok ($(ls build))"
