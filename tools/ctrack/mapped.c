/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mapped.c - a regular file as a stdio stream over a private mapping
 * (see mapped.h for why).
 *
 * The stream's buffer is the mapping itself (setvbuf with the mapping and
 * the file's length), so the stream's one refill "reads" the whole file
 * into a buffer that already holds it - map_read sees that the
 * destination is the mapping at the right offset and copies nothing -
 * and each fread() of libpcap's is then one copy out of the mapped page
 * cache (glibc's generic xsgetn, which cookie streams use, copies reads
 * of up to 20 bytes - the 16-byte record header - byte by byte, larger
 * ones with memcpy).  A cookie stream with a buffer of its own would copy
 * twice, and an unbuffered one goes byte by byte throughout.  The mapping is private and writable so that the stream may
 * write into its buffer as stdio is allowed to; nothing reaches the file.
 *
 * Pages come in by page faults (the kernel maps 16 at a fault, 64 KiB;
 * MADV_POPULATE_READ ahead of the reader measured slower: it maps page by
 * page).  The reader reports its progress (mapped_progress) and the pages
 * more than a window behind it are dropped from the page tables
 * (MADV_DONTNEED; the page cache keeps them), so a capture of many
 * gigabytes does not show up as resident memory.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mapped.h"

#define MAP_WINDOW ((size_t)4 << 20)

struct mapped {
	uint8_t *base;
	size_t len;             /* bytes mapped (the file's size at open) */
	size_t pos;             /* bytes handed to the stream */
	size_t behind;          /* dropped below here */
};

/* the open stream's mapping, for the SIGBUS handler and mapped_progress
 * (its base and length do not change while it is published) */
static _Atomic(struct mapped *) map_cur;
static volatile sig_atomic_t map_shrank;
static uintptr_t map_page;             /* the page size, read at open (not
					* in the handler: sysconf is not
					* async-signal-safe) */
static struct sigaction old_bus;       /* SIGBUS's disposition before us */

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct mapped *m = atomic_load(&map_cur);
	uint8_t *b = m ? m->base : NULL, *a = si->si_addr;
	size_t len = m ? m->len : 0;
	uintptr_t pg = map_page;

	if (b && a >= b && a < b + len) {
		/* the file shrank: zeros over the rest of the mapping; the
		 * copy that faulted completes, and the reader, which asks
		 * mapped_shrank() after every record, stops.  (mmap is not
		 * on POSIX's async-signal-safe list, but glibc's is the bare
		 * system call, which touches no user-space state.) */
		uint8_t *from = (uint8_t *)((uintptr_t)a & ~(pg - 1));

		if (mmap(from, (size_t)(b + len - from), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
			map_shrank = 1;
			return;
		}
	}
	/* not ours: what would have happened without us */
	if ((old_bus.sa_flags & SA_SIGINFO) && old_bus.sa_sigaction) {
		old_bus.sa_sigaction(sig, si, uc);
		return;
	}
	if (old_bus.sa_handler != SIG_DFL && old_bus.sa_handler != SIG_IGN) {
		old_bus.sa_handler(sig);
		return;
	}
	sigaction(sig, &old_bus, NULL);
	raise(sig);
}

static ssize_t map_read(void *cookie, char *buf, size_t n)
{
	struct mapped *m = cookie;
	size_t left = m->len - m->pos;

	if (n > left)
		n = left;
	/* the stream's buffer is the mapping: the bytes are there already */
	if ((uint8_t *)buf != m->base + m->pos)
		memcpy(buf, m->base + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

static int map_seek(void *cookie, off64_t *off, int whence)
{
	struct mapped *m = cookie;
	int64_t to;

	switch (whence) {
	case SEEK_SET: to = *off; break;
	case SEEK_CUR: to = (int64_t)m->pos + *off; break;
	case SEEK_END: to = (int64_t)m->len + *off; break;
	default: errno = EINVAL; return -1;
	}
	if (to < 0 || (uint64_t)to > m->len) {
		errno = EINVAL;
		return -1;
	}
	m->pos = (size_t)to;
	*off = to;
	return 0;
}

static int map_close(void *cookie)
{
	struct mapped *m = cookie;

	atomic_store(&map_cur, NULL);
	munmap(m->base, m->len);
	sigaction(SIGBUS, &old_bus, NULL);
	free(m);
	return 0;
}

void mapped_progress(uint64_t offset)
{
	struct mapped *m = map_cur;
	uintptr_t pg = map_page;

	if (!m || offset > m->len)
		return;
	if (offset >= m->behind + 2 * MAP_WINDOW) {
		size_t upto = (size_t)(offset - MAP_WINDOW) & ~(size_t)(pg - 1);

		madvise(m->base + m->behind, upto - m->behind, MADV_DONTNEED);
		m->behind = upto;
	}
}

FILE *mapped_open(int fd, uint64_t size)
{
	cookie_io_functions_t io = { .read = map_read, .seek = map_seek,
				     .close = map_close };
	struct mapped *m;
	void *p;
	FILE *f;

	struct sigaction sa;

	if (!size || size > (uint64_t)SSIZE_MAX || map_cur)
		return NULL;
	map_page = (uintptr_t)sysconf(_SC_PAGESIZE);
	p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	m = calloc(1, sizeof(*m));
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (!m || sigaction(SIGBUS, &sa, &old_bus)) {
		free(m);
		munmap(p, (size_t)size);
		return NULL;
	}
	m->base = p;
	m->len = (size_t)size;
	madvise(p, m->len, MADV_SEQUENTIAL);
	map_shrank = 0;
	atomic_store(&map_cur, m);
	f = fopencookie(m, "rb", io);
	if (!f || setvbuf(f, (char *)m->base, _IOFBF, m->len)) {
		if (f)
			fclose(f);
		else
			map_close(m);
		return NULL;
	}
	return f;
}

const uint8_t *mapped_bytes(uint64_t *len)
{
	struct mapped *m = map_cur;

	*len = m ? m->len : 0;
	return m ? m->base : NULL;
}

bool mapped_shrank(void)
{
	return map_shrank != 0;
}
