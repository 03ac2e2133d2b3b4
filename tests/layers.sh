#!/bin/sh
# The layers of DESIGN.md §1, as TAP: core/ includes nothing of inject/ or
# tui/, inject/ (its agent too) nothing of tui/.  Whatever needs two layers
# sits above them or is handed in through an interface (core/attach.h's
# struct attach_loader, wired by tui/main.c).  make check sets FP_SRCDIR.
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}

echo "1..2"
n=0
# check DIR FORBIDDEN-REGEX DESCRIPTION
check() {
	n=$((n + 1))
	bad=$(cd "$srcdir" && find "$1" -name '*.[ch]' -type f | sort |
	    xargs grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"](\.\./)*($2)/" /dev/null)
	if [ -z "$bad" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		printf '%s\n' "$bad" | sed 's/^/# /'
	fi
}
check core 'inject|tui' "core/ includes nothing of inject/ or tui/"
check inject 'tui' "inject/ includes nothing of tui/"
