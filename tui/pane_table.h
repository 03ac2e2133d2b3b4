/*
 * The table of panes: one line per pane, in the order Tab visits them and
 * the help lists their keys.  Adding a pane is a file (tui/pane_NAME.c,
 * defining pane_NAME_ops) and a line here; everything else about it is in
 * its ops.  Included with PANE(name) defined (tui/tui.h, tui/tui.c).
 */
PANE(procs)
PANE(threads)
PANE(stack)
PANE(source)
PANE(locals)
PANE(output)
PANE(console)
PANE(flame)
PANE(trace)
PANE(mem)
PANE(tt)
PANE(watch)
PANE(monitor)
PANE(help)
