#!/bin/sh
# The injector against real interpreters; TAP from test_inject.py.
exec /usr/bin/python3 "${FP_SRCDIR:-.}/tests/inject/test_inject.py" "$@"
