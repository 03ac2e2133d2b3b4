#!/bin/sh
# The layers of DESIGN.md §1, as TAP: core/ includes nothing of inject/ or
# tui/, inject/ (its agent too) nothing of tui/.  Whatever needs two layers
# sits above them or is handed in through an interface (core/attach.h's
# struct attach_loader, wired by tui/main.c).  tui/ reads the agent's
# answers as core/model.h's structs, never as JSON.  make check sets
# FP_SRCDIR.
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
include='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](\.\./)*'

echo "1..3"
n=0
# check DIR FORBIDDEN-REGEX DESCRIPTION: no line of DIR's C files matches
check() {
	n=$((n + 1))
	bad=$(cd "$srcdir" && find "$1" -name '*.[ch]' -type f | sort |
	    xargs grep -nE "$2" /dev/null)
	if [ -z "$bad" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		printf '%s\n' "$bad" | sed 's/^/# /'
	fi
}
check core "$include(inject|tui)/" "core/ includes nothing of inject/ or tui/"
check inject "${include}tui/" "inject/ includes nothing of tui/"
check tui '<jansson\.h>|\<json_[a-z_]+\>' "tui/ reads no JSON: panes draw core/model.h's models"
