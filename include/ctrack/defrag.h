/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/defrag.h - IPv4 and IPv6 reassembly in front of the tracker.
 *
 * nf_conntrack never sees fragments: nf_defrag_ipv4/ipv6 reassemble the
 * datagram first, and conntrack tracks (and counts, once) the whole
 * datagram.  ct_defrag does the same for ctrack's callers: feed it every
 * packet that ct_parse_frame() classified as CT_PKT_FRAGMENT (or that has
 * is_fragment set); when the last missing piece arrives it returns the
 * reassembled datagram, parsed, ready for ct_process().
 *
 * Memory is bounded (high_thresh bytes, as ipfrag_high_thresh); incomplete
 * datagrams time out after timeout_ns (ipfrag_time, 30 s by default) in
 * the caller's time.  Overlapping fragments are handled as the kernel does
 * for IPv6 (the whole datagram is dropped) and IPv4 (RFC 5722 style drop
 * of overlaps is applied to both, see docs/semantics.md).
 *
 * Thread safety: a ct_defrag is owned by one thread; use one per packet
 * thread (fragments of one datagram must reach the same one, which RSS on
 * the 3-tuple gives).  The library never prints; errors are returned.
 */
#ifndef CTRACK_DEFRAG_H
#define CTRACK_DEFRAG_H

#include <stdint.h>

#include "ctrack/packet.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ct_defrag;

struct ct_defrag_stats {
	uint64_t fragments;       /* fragments fed */
	uint64_t reassembled;     /* datagrams completed */
	uint64_t timeouts;        /* datagrams dropped incomplete, timed out */
	uint64_t overlaps;        /* datagrams dropped for overlapping pieces */
	uint64_t oversize;        /* datagrams dropped: larger than 65535 */
	uint64_t evicted;         /* datagrams dropped: memory limit */
	uint64_t bad;             /* malformed fragments */
};

/* A reassembler is used by one thread at a time (ctrack read keeps one per
 * replay); it takes no lock.
 *
 * Create a reassembler. high_thresh_bytes 0 means 4 MiB; timeout_ns 0
 * means the kernel's defaults, 30 s for IPv4 (ipfrag_time) and 60 s for
 * IPv6 (nf_conntrack_frag6_timeout); any other value applies to both.
 * Returns NULL when out of memory. */
struct ct_defrag *ct_defrag_create(uint64_t high_thresh_bytes,
				   uint64_t timeout_ns);
void ct_defrag_destroy(struct ct_defrag *d);

/*
 * ct_defrag_feed - add fragment @frag (parsed by ct_parse_*).
 * Returns 1 and fills @out when the datagram is now complete: @out points
 * into storage owned by @d that stays valid until the next call on @d.
 * Also returns 1 for an IPv6 fragment that nf_defrag_ipv6 lets through
 * unreassembled (jumbo payload, first fragment without its whole
 * upper-layer header, bad fragment length): @out is then that fragment as
 * conntrack sees it (pointing into the caller's frame), and may be
 * CT_PKT_INVALID; process it like any other packet.
 * Returns 0 when more pieces are needed (or the fragment was dropped and
 * counted), and a negative errno on allocation failure.
 * Expired datagrams are purged as a side effect, using @now.  Cost: the
 * fragment's bytes copied once, plus the purge; never much more than
 * high_thresh_bytes held: past it every new fragment is refused (counted
 * in evicted) until timeouts free room, as the kernel does.  Returns
 * -ENOMEM only when a buffer cannot be allocated (the fragment is then
 * dropped).
 */
int ct_defrag_feed(struct ct_defrag *d, const struct ct_packet *frag,
		   ct_time_ns now, struct ct_packet *out);

/* The counters so far; the owning thread, O(1). */
void ct_defrag_get_stats(const struct ct_defrag *d, struct ct_defrag_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_DEFRAG_H */
