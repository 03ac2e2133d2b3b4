/*
 * remote_exec unit test: the parts of PEP 768 that need no 3.14 — the
 * version switch, the disable switches in an environment and a command
 * line, the bounds on the script path, the bootstrap script — and, on
 * every configured interpreter (FP_PYTHONS, all older than 3.14 here),
 * that the PEP 768 path is never taken and that a refusal is seen.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/pyruntime.h"
#include "core/util.h"
#include "inject/remote_exec.h"
#include "tests/unit/tap.h"

#define ENV(lit) remote_exec_env_disables(lit, sizeof(lit) - 1)
#define CMD(lit) remote_exec_cmdline_disables(lit, sizeof(lit) - 1)

static void
test_versions(void)
{
	unsigned minor, micro;
	bool any = false;

	/* Every 3.8–3.13 release, pre-release and unknown micro: never. */
	for (minor = 8; minor <= 13; minor++)
		for (micro = 0; micro <= 0xff; micro++) {
			uint32_t base = (3u << 24) | (minor << 16) | (micro << 8);

			any |= remote_exec_applies(base | 0xf0) || remote_exec_applies(base | 0xa1) ||
			    remote_exec_applies(base | 0xc2);
		}
	ok(!any, "PEP 768 never applies to CPython 3.8 to 3.13, any micro or release level");
	ok(!remote_exec_applies(0x020718f0), "nor to 2.7");
	ok(!remote_exec_applies(0), "nor to an unknown version");
	ok(remote_exec_applies(0x030e00f0), "it applies to 3.14.0");
	ok(remote_exec_applies(0x030e05f0), "and to 3.14.5");
	ok(remote_exec_applies(0x030f00a1), "and to later versions (whose offsets are refused)");
	ok(!remote_exec_applies(0x040000f0), "not to a Python 4");
}

static void
test_environ(void)
{
	ok(ENV("HOME=/root\0PYTHON_DISABLE_REMOTE_DEBUG=1\0PATH=/bin\0"),
	    "environ: PYTHON_DISABLE_REMOTE_DEBUG=1 disables");
	ok(ENV("PYTHON_DISABLE_REMOTE_DEBUG=0\0"), "any non-empty value disables (CPython: set)");
	ok(ENV("A=b\0PYTHON_DISABLE_REMOTE_DEBUG=yes"), "the last entry without its NUL");
	ok(!ENV("PYTHON_DISABLE_REMOTE_DEBUG=\0"), "an empty value does not (CPython ignores it)");
	ok(!ENV("HOME=/root\0PATH=/bin\0"), "absent: not disabled");
	ok(!ENV(""), "an empty environment");
	ok(!ENV("XPYTHON_DISABLE_REMOTE_DEBUG=1\0"), "a longer name is another variable");
	ok(!ENV("PYTHON_DISABLE_REMOTE_DEBUGGER=1\0"), "so is a name it prefixes");
	ok(!ENV("PYTHON_DISABLE_REMOTE_DEBUG\0"), "a name without '=' is no variable");
	ok(!ENV("FOO=PYTHON_DISABLE_REMOTE_DEBUG=1\0"), "inside another's value: no");
	ok(!ENV("python_disable_remote_debug=1\0"), "names are case-sensitive");
	ok(!ENV("PYTHON_DISABLE_REMOTE_DEBUG=\0PYTHON_DISABLE_REMOTE_DEBUG=1\0"),
	    "the first of two entries wins, as getenv()");
}

static void
test_cmdline(void)
{
	ok(CMD("python3\0-X\0disable-remote-debug\0app.py\0"), "cmdline: -X disable-remote-debug");
	ok(CMD("python3\0-Xdisable-remote-debug\0app.py\0"), "-Xdisable-remote-debug (attached)");
	ok(CMD("python3\0-X\0disable-remote-debug=1\0app.py\0"), "with a value");
	ok(CMD("python3\0-u\0-X\0importtime\0-X\0disable-remote-debug\0-m\0app\0"),
	    "after other options");
	ok(CMD("python3\0-uX\0disable-remote-debug\0app.py\0"), "grouped: -uX value");
	ok(CMD("python3\0-uXdisable-remote-debug\0app.py\0"), "grouped and attached");
	ok(CMD("python3\0-W\0ignore\0-X\0disable-remote-debug\0-c\0pass\0"), "after -W value");
	ok(CMD("python3\0--check-hash-based-pycs\0always\0-X\0disable-remote-debug\0x.py\0"),
	    "after --check-hash-based-pycs value");
	ok(CMD("python3\0-X\0disable-remote-debug"), "the last argument without its NUL");
	ok(!CMD("python3\0app.py\0-X\0disable-remote-debug\0"), "after the script: the script's");
	ok(!CMD("python3\0-c\0pass\0-X\0disable-remote-debug\0"), "after -c: the command's");
	ok(!CMD("python3\0-m\0app\0-X\0disable-remote-debug\0"), "after -m: the module's");
	ok(!CMD("python3\0-mapp\0-X\0disable-remote-debug\0"), "after -mmodule");
	ok(!CMD("python3\0-\0-X\0disable-remote-debug\0"), "after - (stdin)");
	ok(!CMD("python3\0--\0-X\0disable-remote-debug\0"), "after --");
	ok(!CMD("python3\0-X\0disable-remote-debugger\0x.py\0"), "another -X option");
	ok(!CMD("python3\0-X\0importtime\0x.py\0"), "an unrelated -X option");
	ok(!CMD("python3\0-W\0disable-remote-debug\0x.py\0"), "as a -W value: a warning filter");
	ok(!CMD("python3\0-X\0"), "-X without its value");
	ok(!CMD("python3\0"), "no arguments");
	ok(!CMD(""), "an empty command line");
	ok(!CMD("-X\0disable-remote-debug\0"), "argv[0] is never an option");
}

static void
test_path(void)
{
	char path[600], *cause = NULL;

	is_int(remote_exec_check_path("/tmp/.flight_profiler-1/fpboot.py", 512, &cause), FP_OK,
	    "a short absolute path fits 512 bytes");
	memset(path, 'a', sizeof path);
	path[0] = '/';
	path[511] = '\0';
	is_int(remote_exec_check_path(path, 512, &cause), FP_OK, "511 bytes + NUL fit 512");
	path[511] = 'a';
	path[512] = '\0';
	ok(remote_exec_check_path(path, 512, &cause) != FP_OK && cause && strstr(cause, "512"),
	    "512 bytes + NUL do not fit 512, and the size is said");
	ok(remote_exec_check_path("/x", 0, &cause) != FP_OK, "no buffer: refused");
	ok(remote_exec_check_path("/x", 2, &cause) != FP_OK, "2 bytes + NUL do not fit 2");
	ok(remote_exec_check_path("tmp/fpboot.py", 512, &cause) != FP_OK,
	    "a relative path is refused (the target's cwd is not ours)");
	free(cause);
}

/* Run a generated bootstrap with a python3 of this machine, if there is one. */
static void
test_bootstrap(void)
{
	char dir[] = "/tmp/fp-remote-exec-XXXXXX", *src, *lib, *script, *cmd, *err, *out;
	const char *python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : NULL;
	size_t len;
	FILE *f;
	int rc;

	src = remote_exec_bootstrap_source("/tmp/.flight_profiler-42",
	    "/tmp/.flight_profiler-42/fpagent-cp314.so");
	ok(strstr(src, "b'/tmp/.flight_profiler-42'") != NULL &&
	    strstr(src, "b'/tmp/.flight_profiler-42/fpagent-cp314.so'") != NULL &&
	    strstr(src, "fp_agent_start") != NULL && strstr(src, "del _flight_profiler_boot") != NULL,
	    "the bootstrap loads the library and starts the agent with its directory");
	free(src);
	src = remote_exec_bootstrap_source("/tmp/it's\\ü", "/x.so");
	ok(strstr(src, "b'/tmp/it\\x27s\\x5c\\xc3\\xbc'") != NULL,
	    "quotes, backslashes and non-ASCII bytes are escaped");
	free(src);

	if (python == NULL || mkdtemp(dir) == NULL) {
		skip("no /usr/bin/python3 or no temporary directory", "the bootstrap runs in Python");
		skip("no /usr/bin/python3 or no temporary directory", "its failure is reported");
		return;
	}
	lib = xasprintf("%s/no-such-agent.so", dir);
	src = remote_exec_bootstrap_source(dir, lib);
	script = xasprintf("%s/fpboot.py", dir);
	f = fopen(script, "w");
	fputs(src, f);
	fclose(f);
	/* As the interpreter runs it: exec'd in a namespace that must stay clean. */
	cmd = xasprintf("%s -c 'import sys; ns = {\"__name__\": \"__main__\"}; "
	    "exec(compile(open(sys.argv[1]).read(), sys.argv[1], \"exec\"), ns); "
	    "sys.exit(sorted(k for k in ns if k != \"__builtins__\") != [\"__name__\"])' %s "
	    ">%s/out 2>&1", python, script, dir);
	rc = system(cmd);
	ok(rc == 0, "the bootstrap runs in Python and leaves no name behind");
	err = xasprintf("%s/bootstrap.err", dir);
	out = read_file_str(err, &len);
	ok(out != NULL && strstr(out, "OSError") != NULL, "a library that cannot load: "
	    "bootstrap.err says why");
	if (out)
		diag("bootstrap.err: %.*s", (int)(len && out[len - 1] == '\n' ? len - 1 : len), out);
	free(out);
	free(err);
	err = xasprintf("%s/out", dir);
	out = read_file_str(err, &len);
	is_int(out ? (long long)len : -1, 0, "and nothing is printed on the target's stdout/stderr");
	free(out);
	unlink(err);
	free(err);
	err = xasprintf("%s/bootstrap.err", dir);
	unlink(err);
	free(err);
	unlink(script);
	rmdir(dir);
	free(cmd);
	free(script);
	free(src);
	free(lib);
}

/* ---- live interpreters ----------------------------------------------------- */

static pid_t
spawn(const char *exe, bool env_disable, bool x_disable)
{
	const char *loop = "import time\nwhile True: time.sleep(0.05)\n";
	pid_t pid = fork();

	if (pid == 0) {
		if (env_disable)
			setenv("PYTHON_DISABLE_REMOTE_DEBUG", "1", 1);
		else
			unsetenv("PYTHON_DISABLE_REMOTE_DEBUG");
		if (x_disable)
			execl(exe, exe, "-X", "disable-remote-debug", "-c", loop, (char *)NULL);
		else
			execl(exe, exe, "-c", loop, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* pyruntime_open, retried while the interpreter starts. */
static struct pyruntime *
open_when_ready(pid_t pid)
{
	struct pyruntime *rt = NULL;
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	uint64_t interp;
	char *cause = NULL;
	int i;

	for (i = 0; i < 250; i++) {
		if (pyruntime_open(pid, &rt, &cause) == FP_OK) {
			if (pyruntime_main_interp(rt, &interp, &cause) == FP_OK) {
				free(cause);
				return rt;
			}
			pyruntime_close(rt);
			rt = NULL;
		}
		nanosleep(&pause, NULL);
	}
	diag("process %d: %s", (int)pid, cause ? cause : "?");
	free(cause);
	return NULL;
}

static void
test_live(void)
{
	const char *list = getenv("FP_PYTHONS");
	char *text, *line, *save = NULL;
	int n = 0;

	if (list == NULL || (text = read_file_str(list, NULL)) == NULL) {
		skip("FP_PYTHONS not set (run by make check)", "configured interpreters");
		return;
	}
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char ident[64], version[32], hex[32], incdir[512], exe[1024];
		struct remote_exec_request req;
		struct pyruntime *rt;
		char *cause = NULL, *why;
		enum remote_exec_result r;
		pid_t pid;

		if (sscanf(line, "%63s %31s %31s %511s %1023[^\n]", ident, version, hex, incdir,
		    exe) != 5)
			continue;
		n++;
		pid = spawn(exe, false, false);
		rt = open_when_ready(pid);
		if (!ok(rt != NULL, "%s: the target is read", version)) {
			reap(pid);
			continue;
		}
		ok(!remote_exec_applies(rt->version_hex) && !rt->off.remote_debug,
		    "%s: PEP 768 does not apply and no debugger_support is known", version);
		ok((why = remote_exec_refusal(pid)) == NULL, "%s: a plain target does not refuse",
		    version);
		free(why);
		r = remote_exec_send(pid, "/tmp/never-run.py", &req, &cause);
		ok(r == REMOTE_EXEC_UNAVAILABLE && cause && strstr(cause, "predates PEP 768"),
		    "%s: a request is never written below 3.14", version);
		if (cause)
			diag("%s", cause);
		free(cause);
		cause = NULL;
		pyruntime_close(rt);
		ok(kill(pid, 0) == 0, "%s: the target is untouched and alive", version);
		reap(pid);

		pid = spawn(exe, true, false);
		rt = open_when_ready(pid);
		why = remote_exec_refusal(pid);
		ok(why && strstr(why, "PYTHON_DISABLE_REMOTE_DEBUG") && strstr(why, "restart"),
		    "%s: PYTHON_DISABLE_REMOTE_DEBUG in its environment is a refusal, with the way out",
		    version);
		r = remote_exec_send(pid, "/tmp/never-run.py", &req, &cause);
		ok(r == REMOTE_EXEC_REFUSED, "%s: and remote_exec_send refuses", version);
		free(why);
		free(cause);
		cause = NULL;
		pyruntime_close(rt);
		reap(pid);

		pid = spawn(exe, false, true);
		rt = open_when_ready(pid);
		why = remote_exec_refusal(pid);
		ok(why && strstr(why, "-X disable-remote-debug"),
		    "%s: -X disable-remote-debug on its command line is a refusal", version);
		free(why);
		pyruntime_close(rt);
		reap(pid);
	}
	free(text);
	if (n == 0)
		skip("no interpreter in FP_PYTHONS", "configured interpreters");
}

int
main(void)
{
	test_versions();
	test_environ();
	test_cmdline();
	test_path();
	test_bootstrap();
	test_live();
	return done_testing();
}
