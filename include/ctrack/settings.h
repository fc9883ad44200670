/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/settings.h - the knobs, named as the kernel names them.
 *
 * Every behaviour a Linux host tunes with net.netfilter.nf_conntrack_*
 * sysctls is a field here, with the kernel's default, so that a user can
 * make ctrack behave like a given host by handing it that host's values
 * (ct_settings_set() takes the kernel's names, with or without the
 * "net.netfilter." prefix).  Timeouts are in whole seconds, like the
 * sysctls; the tracker converts them to nanoseconds of caller time.
 *
 * The defaults are a fresh kernel namespace's, nf_conntrack_acct = 0
 * included: an application that wants per-direction packet and byte
 * counters turns them on (they cost 32 bytes an entry and a line more to
 * write per packet).  The `ctrack` tool does, because counters are what
 * people reading a capture want.
 *
 * Thread safety: a struct ct_settings is a plain value.  A table or
 * namespace copies it at creation; ct_ns_set_settings() publishes a new
 * copy with RCU, so changing settings never blocks packet threads.
 */
#ifndef CTRACK_SETTINGS_H
#define CTRACK_SETTINGS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TCP timeout slots, indexed like the kernel's tcp_timeouts[]. */
enum ct_tcp_timeout {
	CT_TCP_TO_SYN_SENT = 0,
	CT_TCP_TO_SYN_RECV,
	CT_TCP_TO_ESTABLISHED,
	CT_TCP_TO_FIN_WAIT,
	CT_TCP_TO_CLOSE_WAIT,
	CT_TCP_TO_LAST_ACK,
	CT_TCP_TO_TIME_WAIT,
	CT_TCP_TO_CLOSE,
	CT_TCP_TO_SYN_SENT2,      /* uses syn_sent's value in the kernel */
	CT_TCP_TO_RETRANS,        /* nf_conntrack_tcp_timeout_max_retrans */
	CT_TCP_TO_UNACK,          /* nf_conntrack_tcp_timeout_unacknowledged */
	CT_TCP_TO_MAX
};

enum ct_sctp_timeout {
	CT_SCTP_TO_CLOSED = 0,
	CT_SCTP_TO_COOKIE_WAIT,
	CT_SCTP_TO_COOKIE_ECHOED,
	CT_SCTP_TO_ESTABLISHED,
	CT_SCTP_TO_SHUTDOWN_SENT,
	CT_SCTP_TO_SHUTDOWN_RECD,
	CT_SCTP_TO_SHUTDOWN_ACK_SENT,
	CT_SCTP_TO_HEARTBEAT_SENT,
	CT_SCTP_TO_MAX
};

struct ct_settings {
	/* table */
	uint32_t max;                  /* nf_conntrack_max; 0 = unlimited */
	uint32_t buckets;              /* nf_conntrack_buckets (initial rows) */
	uint8_t acct;                  /* nf_conntrack_acct */
	uint8_t checksum;              /* nf_conntrack_checksum */
	uint8_t timestamp;             /* nf_conntrack_timestamp */
	uint8_t events;                /* nf_conntrack_events */
	/* tcp */
	uint8_t tcp_loose;             /* nf_conntrack_tcp_loose */
	uint8_t tcp_be_liberal;        /* nf_conntrack_tcp_be_liberal */
	uint8_t tcp_ignore_invalid_rst;/* nf_conntrack_tcp_ignore_invalid_rst */
	uint8_t tcp_max_retrans;       /* nf_conntrack_tcp_max_retrans */
	uint32_t tcp_timeouts[CT_TCP_TO_MAX];
	/* udp, udplite */
	uint32_t udp_timeout;          /* nf_conntrack_udp_timeout */
	uint32_t udp_timeout_stream;   /* nf_conntrack_udp_timeout_stream */
	/* icmp */
	uint32_t icmp_timeout;         /* nf_conntrack_icmp_timeout */
	uint32_t icmpv6_timeout;       /* nf_conntrack_icmpv6_timeout */
	/* sctp */
	uint32_t sctp_timeouts[CT_SCTP_TO_MAX];
	/* gre */
	uint32_t gre_timeout;          /* nf_conntrack_gre_timeout */
	uint32_t gre_timeout_stream;   /* nf_conntrack_gre_timeout_stream */
	/* everything else */
	uint32_t generic_timeout;      /* nf_conntrack_generic_timeout */
	/* ctrack's own: the tracker sits on a forwarding router (as the
	 * kernel oracle's router namespace does).  Packets the router neither
	 * forwards nor delivers to itself - TTL / hop limit <= 1, IPv6
	 * link-local sources bound elsewhere, loopback, martian sources,
	 * multicast groups it has not joined - are
	 * never confirmed, so they update an existing entry but never create
	 * one (track.c: router_confirms).  Knob name "ctrack_router". */
	uint8_t router;
	/* reassembly (net.ipv4.ipfrag_*, nf_conntrack_frag6_*) */
	uint32_t frag_timeout;         /* seconds */
	uint32_t frag_high_thresh;     /* bytes */
};

/* Largest timeout accepted, in seconds (about 68 years would overflow the
 * nanosecond arithmetic long before; 10 years is plenty). */
#define CT_SETTINGS_MAX_TIMEOUT_S (10u * 365u * 86400u)

/* Fill @s with the kernel's defaults (see KERNEL-ORACLE-FACTS: the values of
 * a fresh network namespace).  The functions here work on the caller's
 * struct only: any thread, a name looked up in the library's table of
 * knobs, no allocation, no lock.  ct_settings_default cannot fail. */
void ct_settings_default(struct ct_settings *s);

enum ct_settings_err {
	CT_SETTINGS_OK = 0,
	CT_SETTINGS_UNKNOWN = -1,   /* no such knob */
	CT_SETTINGS_BAD_VALUE = -2, /* not a number, or out of range */
	CT_SETTINGS_READ_ONLY = -3, /* a kernel knob that cannot be set
				     * (nf_conntrack_count, ...) */
	CT_SETTINGS_IGNORED = 1,    /* a real kernel knob ctrack does not model
				     * (helpers, DCCP, log_invalid, ...):
				     * accepted, has no effect */
};

/*
 * ct_settings_set - set knob @name (kernel name, "net.netfilter." prefix
 * optional, '/' accepted for '.') to decimal @value.  Returns
 * CT_SETTINGS_OK, CT_SETTINGS_IGNORED, or a negative ct_settings_err; on
 * error @s is unchanged.  When @err_msg is not NULL it is pointed at a
 * static English sentence describing the problem ("must be 0 or 1", ...).
 */
int ct_settings_set(struct ct_settings *s, const char *name,
		    const char *value, const char **err_msg);

/*
 * ct_settings_get - the current value of knob @name, formatted as the
 * kernel prints it, into @buf.  Returns 0 or CT_SETTINGS_UNKNOWN.
 */
int ct_settings_get(const struct ct_settings *s, const char *name, char *buf,
		    unsigned size);

/*
 * ct_settings_min_timeout - the shortest timeout, in seconds, the trackers
 * can give an entry under @s: the least of every TCP and SCTP state's, UDP
 * and UDP stream, ICMP, ICMPv6, GRE and GRE stream, and the generic
 * timeout (not the reassembly's frag_timeout).  No entry created or
 * refreshed at time T expires before T plus this, which is what a
 * caller that hands the tracker bursts of packets at their own times
 * needs to end a burst before an entry could expire inside it.  O(1);
 * cannot fail.
 */
uint32_t ct_settings_min_timeout(const struct ct_settings *s);

/*
 * ct_settings_name - the @i-th modelled knob name (without the
 * "net.netfilter." prefix), or NULL past the last; for help texts and
 * completion.
 */
const char *ct_settings_name(unsigned i);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_SETTINGS_H */
