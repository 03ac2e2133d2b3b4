#!/bin/sh
# find-pythons.sh [PATH...] — list the CPython interpreters flight_profiler
# can be built for, one per line:  IDENT VERSION HEXVERSION INCLUDEDIR EXE
# With no argument: every python3.X on PATH, in /usr/bin and in
# $PYENV_ROOT/versions/*/bin (default ~/.pyenv).  Interpreters older than
# 3.8 or without internal headers are reported on stderr and skipped.
# Two interpreters of the same exact version count once.

probe='import sys, sysconfig
v = sys.version_info
print("%d.%d.%d" % v[:3], "0x%08x" % sys.hexversion, sysconfig.get_paths()["include"])'

candidates() {
	if [ $# -gt 0 ]; then
		for p in "$@"; do echo "$p"; done
		return
	fi
	pyenv=${PYENV_ROOT:-${HOME:-/root}/.pyenv}
	old_ifs=$IFS; IFS=:
	for d in $PATH /usr/bin /usr/local/bin; do
		IFS=$old_ifs
		case "$d" in */shims) continue ;; esac
		for p in "$d"/python3.[0-9] "$d"/python3.[0-9][0-9]; do
			[ -x "$p" ] && echo "$p"
		done
	done
	IFS=$old_ifs
	for p in "$pyenv"/versions/*/bin/python3; do
		[ -x "$p" ] && echo "$p"
	done
}

candidates "$@" | while read -r exe; do
	real=$(readlink -f "$exe" 2>/dev/null || echo "$exe")
	out=$("$real" -c "$probe" 2>/dev/null) || {
		echo "find-pythons: $exe: does not run, skipped" >&2
		continue
	}
	set -- $out
	version=$1 hex=$2 inc=$3
	minor=$(echo "$version" | cut -d. -f2)
	micro=$(echo "$version" | cut -d. -f3)
	if [ "$(echo "$version" | cut -d. -f1)" != 3 ] || [ "$minor" -lt 8 ]; then
		echo "find-pythons: $exe: Python $version is older than 3.8, skipped" >&2
		continue
	fi
	if [ ! -f "$inc/internal/pycore_pystate.h" ]; then
		echo "find-pythons: $exe: no internal headers in $inc/internal (install python3.$minor-dev), skipped" >&2
		continue
	fi
	echo "cp3${minor}_${micro} $version $hex $inc $real"
done | sort -t' ' -u -k1,1 | sort -t' ' -k3,3
