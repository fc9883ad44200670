/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_path.h - one packet through NAT rules and the library's two-step
 * first packet, as `ctrack read --nat` and `ctrack daemon --nat` both
 * take it.
 *
 * A packet goes through ct_classify; a new connection's first packet gets
 * the first matching dnat rule (PREROUTING, on the packet as it came),
 * then the first matching snat or masquerade rule on the tuple as dnat
 * left it (POSTROUTING), the null binding for a hook no rule bound, and
 * is confirmed: the kernel's nat chains in the order a packet meets them
 * (nat_rule.c matches, the library chooses the tuple).  What the caller
 * does with the packet afterwards - write it translated (read_nat.c),
 * nothing (the daemon watches a router's traffic) - is its own.
 *
 * Thread rules: @rs is read only (any number of threads at once); each
 * thread its own struct nat_path_counts; the library's rules for @thr.
 */
#ifndef CTRACK_TOOL_NAT_PATH_H
#define CTRACK_TOOL_NAT_PATH_H

#include <stdint.h>

#include "ctrack/ctrack.h"
#include "nat_rule.h"

/* What the first packets met (ctrack read --stats' "nat:" line). */
struct nat_path_counts {
	uint64_t pending, dnat, snat, masq, confirmed, merged, reply_only, refused, setup_err;
};

/*
 * Called before each setup with what it is about (the connection's
 * original tuple, the hook, the rule's range): `ctrack read
 * --nat-random-replay` answers the random numbers the setup draws from
 * it.  May be NULL.
 */
typedef void (*nat_path_before_fn)(void *arg, const struct ct_tuple *orig,
				   enum ct_nat_manip manip, const struct ct_nat_range *range);

/* What became of the packet. */
enum nat_path_result {
	NAT_PATH_FIRST = 0,      /* a new connection's first packet, confirmed:
				  * *@b its binding, direction ORIGINAL */
	NAT_PATH_REFUSED,        /* its confirm failed: the kernel drops it */
	NAT_PATH_TRACKED,        /* a packet of an entry (or an ICMP error
				  * about one): *@b its binding (zeroed when
				  * it has none), *@dir its direction */
	NAT_PATH_OTHER,          /* nothing to translate: *@v says why */
	NAT_PATH_ERROR,          /* ct_classify failed (no memory) */
};

/*
 * nat_path_track - @pkt at @now, from interface @iif (-1: unknown),
 * through @rs and the table of @thr.  *@v is the library's verdict, *@b
 * and *@dir as the result says.  Cost: ct_process's, plus the setups of
 * a new connection (rules scanned in order, at most one dnat and one
 * snat setup).
 */
enum nat_path_result nat_path_track(const struct nat_rules *rs, struct ct_thread *thr,
				    const struct ct_packet *pkt, ct_time_ns now, int32_t iif,
				    struct nat_path_counts *cn, nat_path_before_fn before,
				    void *before_arg, struct ct_verdict *v,
				    struct ct_nat_binding *b, enum ct_dir *dir);

#endif
