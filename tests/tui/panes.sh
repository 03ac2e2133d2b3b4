#!/bin/sh
# The pane framework's rules (issue 8), as TAP: a pane is tui/pane_NAME.c
# and a line PANE(NAME) in tui/pane_table.h, its slot, help section and
# keys in its ops; a pane names no other pane (selection and "open this"
# are events the framework routes); no file of tui/ over 1,000 lines, no
# function over 100.  make check sets FP_SRCDIR.
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$srcdir/tui" || exit 1
panes=$(sed -n 's/^PANE(\([a-z_]*\))$/\1/p' pane_table.h 2>/dev/null)
files=$(ls pane_*.c | sed 's/^pane_\(.*\)\.c$/\1/')

echo "1..4"
bad=
[ -n "$panes" ] || bad="
pane_table.h: no PANE(name) line"
for p in $panes; do
	f=pane_$p.c
	if [ ! -f "$f" ]; then
		bad="$bad
$f: missing"
		continue
	fi
	for field in "const struct pane_ops pane_${p}_ops = {" ".slot = " ".help_title = "; do
		grep -qF "$field" "$f" || bad="$bad
$f: no '$field'"
	done
done
[ -z "$bad" ] && echo "ok 1 - every pane of pane_table.h is its file with its slot and help title" ||
	{ echo "not ok 1 - every pane of pane_table.h is its file with its slot and help title"
	  printf '%s\n' "$bad" | sed '/^$/d; s/^/# /'; }

bad=
for p in $files; do
	others=$(printf '%s\n' $files | grep -vx "$p" | paste -sd'|' -)
	hits=$(grep -nE "\<pane_($others)_|\<PANE_[A-Z]" "pane_$p.c")
	[ -n "$hits" ] && bad="$bad
$(printf '%s\n' "$hits" | sed "s|^|pane_$p.c:|")"
done
[ -z "$bad" ] && echo "ok 2 - no pane names another pane" ||
	{ echo "not ok 2 - no pane names another pane"; printf '%s\n' "$bad" | sed '/^$/d; s/^/# /'; }

bad=$(wc -l *.c | awk '$2 != "total" && $1 > 1000 { print $2 ": " $1 " lines" }')
[ -z "$bad" ] && echo "ok 3 - no file of tui/ over 1,000 lines" ||
	{ echo "not ok 3 - no file of tui/ over 1,000 lines"; printf '%s\n' "$bad" | sed 's/^/# /'; }

# A function starts at a line `name(` in column 0 and ends at `}` there.
# cmdline_complete is the command table's (its rewrite is under way).
bad=$(awk '/^[a-z_][a-z_0-9]*\(/ && !start { start = FNR; name = $0; file = FILENAME }
	/^}/ && start { if (FNR - start + 1 > 100 && name !~ /^cmdline_complete\(/)
		print file ": " name " " (FNR - start + 1) " lines"; start = 0 }' *.c)
[ -z "$bad" ] && echo "ok 4 - no function of tui/ over 100 lines" ||
	{ echo "not ok 4 - no function of tui/ over 100 lines"; printf '%s\n' "$bad" | sed 's/^/# /'; }
