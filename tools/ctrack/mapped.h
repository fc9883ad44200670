/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mapped.h - a regular file read through a read-only mapping, offered as
 * a stdio stream.
 *
 * libpcap reads a savefile with two fread() calls a record; over a plain
 * FILE that is a copy from the page cache into stdio's buffer (a read()
 * system call per 256 KiB) and a second copy into libpcap's buffer.  Over
 * a mapping the first copy and the system calls go away: the stream's
 * read function copies straight from the mapped page cache into the
 * caller's buffer.  On the shared captures' concatenation (20 MB) the
 * kernel's copy was a sixth of `ctrack read`'s CPU time.  (capture.c now
 * reads the plain records of a mapped file itself, and libpcap reads from
 * the stream only from the first record that is not plain: a stream, and
 * not the mapping alone, because libpcap must be able to take over.)
 *
 * A mapped file that shrinks under the reader would raise SIGBUS; the
 * stream catches it for its own pages, maps zeros over what is gone and
 * lets the reader, which asks after each record, stop with "the file
 * shrank while it was being read" instead of dying.  Frames handed out in
 * place (capture.c) that lie in the part that went read as zeros too: the
 * packets of the burst gathered just before the reader noticed (64 at
 * most) may be tracked with zeros where their bytes were.  One mapped
 * stream at a time per process (the tool
 * reads its captures one after another); a second open returns NULL and
 * the caller reads the file the ordinary way.
 *
 * Thread safety: one thread uses a stream.  The SIGBUS handler is
 * process-wide: installed at open, the previous disposition restored at
 * close, and a SIGBUS that is not about the mapping goes to it.
 */
#ifndef CTRACK_TOOL_MAPPED_H
#define CTRACK_TOOL_MAPPED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* mapped_open - a stream over regular file @fd (@size bytes, from its
 * start), or NULL (not mappable, or another mapped stream is open: read
 * the file otherwise).  fclose() on the stream unmaps the file; @fd stays
 * the caller's. */
FILE *mapped_open(int fd, uint64_t size);

/* mapped_progress - the reader of the open mapped stream has consumed
 * @offset bytes: drops the pages well behind it from the page tables.
 * Cheap when nothing is to be done; call it as often as convenient. */
void mapped_progress(uint64_t offset);

/* mapped_bytes - the open mapped stream's bytes (the whole file as it
 * was at mapped_open; *@len set to its length), NULL when none is open.
 * Valid until the stream is closed. */
const uint8_t *mapped_bytes(uint64_t *len);

/* mapped_shrank - whether the file of the open mapped stream got shorter
 * than it was at mapped_open (a read error then says so). */
bool mapped_shrank(void);

#endif
