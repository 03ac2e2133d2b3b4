#include "config.h"

#include "core/memread.h"

#include <errno.h>
#include <sys/uio.h>

int
mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (len == 0)
		return 0;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EFAULT;	/* a partial read: the rest is unmapped */
	return -1;
}

int
mem_read_u64(pid_t pid, uint64_t addr, uint64_t *value)
{
	return mem_read(pid, addr, value, sizeof *value);
}
