#!/bin/sh
# build-agent.sh CC OUT pythons.list SRCDIR BUILDDIR "CFLAGS" "LDFLAGS LIBS"
# Build one agent, OUT = fpagent-cp3XY.so, against the headers of the first
# interpreter of that minor version in pythons.list (3.11.2 and 3.11.7
# share an ABI: one agent per minor).  The agent links no libpython: the
# target's interpreter provides the C API; jansson is found next to the
# agent ($ORIGIN), where the attach step copies it.
set -e
cc=$1 out=$2 list=$3 src=$4 build=$5 cflags=$6 libs=$7
minor=$(basename "$out" .so | sed 's/^fpagent-cp3//')
line=$(grep "^cp3${minor}_" "$list" | head -n 1)
[ -n "$line" ] || { echo "build-agent: no CPython 3.$minor in $list" >&2; exit 1; }
set -- $line
inc=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# embed NAME: inject/agent/NAME.py as the C string NAME_py_source in NAME_py.h.
embed() {
	{
		echo "/* Generated from inject/agent/$1.py by build-aux/build-agent.sh. */"
		echo "static const char $1_py_source[] ="
		sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/\\n"/' "$src/inject/agent/$1.py"
		echo ';'
	} >"$tmp/$1_py.h"
}
embed helper
embed memhelper
embed torchhelper
embed tracehelper
embed observe
embed monitor
embed tthelper
# shellcheck disable=SC2086
$cc -std=gnu11 -shared -fPIC -fvisibility=hidden -flto=auto -Wno-deprecated-declarations \
	$cflags -DFP_AGENT_BUILD="\"cp3$minor $2 $(date -u +%Y-%m-%d)\"" \
	-I"$build" -I"$src" -I"$tmp" -I"$inc" \
	-o "$out.tmp" \
	"$src/inject/agent/server.c" "$src/inject/agent/jobs.c" \
	"$src/inject/agent/clock.c" \
	"$src/inject/agent/pyside.c" "$src/inject/agent/forkhooks.c" \
	"$src/inject/agent/format.c" "$src/core/protocol.c" \
	"$src/inject/agent/mem.c" "$src/inject/agent/memscan.c" \
	"$src/inject/agent/torch.c" \
	"$src/inject/agent/trace.c" "$src/inject/agent/evalhook.c" \
	"$src/inject/agent/monfast.c" \
	"$src/inject/agent/vcall.c" \
	-Wl,--version-script="$src/inject/agent/agent.map" \
	-Wl,-rpath,'$ORIGIN' -pthread $libs
mv "$out.tmp" "$out"
