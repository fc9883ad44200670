/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_config.c - reads the `--sync` settings (sync_config.h lists them).
 *
 * One flat line rather than conntrackd.conf's nested blocks: the daemon's
 * configuration is key=value, and a sync link is a dozen settings.  The
 * checks a person needs are made here, where the key is still known: a
 * family that does not match the other addresses, a multicast link
 * without a group or the peers to accept, a number out of range.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sync_config.h"

void ctsync_settings_default(struct ctsync_settings *s)
{
	ct_sync_config_default(&s->node);
	/* conntrackd numbers from the wall clock's seconds: a restarted node
	 * is (almost always) ahead of its previous life */
	s->node.initial_seq = (uint32_t)time(NULL);
	cts_config_default(&s->link);
}

static int parse_addr(const char *v, union cts_addr *a, int *family)
{
	if (inet_pton(AF_INET, v, &a->v4) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, v, &a->v6) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -1;
}

static int parse_u32(const char *v, unsigned long lo, unsigned long hi, uint32_t *out)
{
	char *end;
	unsigned long x;

	if (!*v || *v == '-')
		return -1;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return -1;
}

struct fam {
	int family;        /* 0 until an address says */
	const char *first; /* the key that said */
};

static int note_family(struct fam *f, int family, const char *key, char *err, size_t errlen)
{
	if (!f->family) {
		f->family = family;
		f->first = key;
		return 0;
	}
	if (f->family != family) {
		snprintf(err, errlen, "sync: %s is IPv%d but %s is IPv%d", key,
			 family == AF_INET ? 4 : 6, f->first, f->family == AF_INET ? 4 : 6);
		return -1;
	}
	return 0;
}

int ctsync_settings_parse(struct ctsync_settings *s, const char *spec, char *err,
			  size_t errlen)
{
	char *copy = strdup(spec ? spec : ""), *save = NULL, *tok;
	struct fam fam = { 0, NULL };
	bool have_peer = false, have_local = false, have_group = false;
	int rc = -1;

	if (!copy) {
		snprintf(err, errlen, "sync: out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *k = tok, *v;
		uint32_t u;
		int family;

		if (!eq) {
			snprintf(err, errlen, "sync: '%s' is not key=value", tok);
			goto out;
		}
		*eq = 0;
		v = eq + 1;
#define BAD(what) do { snprintf(err, errlen, "sync: %s=%s: %s", k, v, what); goto out; } while (0)
		if (!strcmp(k, "mode")) {
			if (!strcmp(v, "ftfw"))
				s->node.mode = CT_SYNC_FTFW;
			else if (!strcmp(v, "notrack"))
				s->node.mode = CT_SYNC_NOTRACK;
			else if (!strcmp(v, "alarm"))
				s->node.mode = CT_SYNC_ALARM;
			else
				BAD("the mode is ftfw, notrack or alarm");
		} else if (!strcmp(k, "transport")) {
			if (!strcmp(v, "udp"))
				s->link.kind = CTS_UDP;
			else if (!strcmp(v, "mcast") || !strcmp(v, "multicast"))
				s->link.kind = CTS_MCAST;
			else if (!strcmp(v, "tcp"))
				s->link.kind = CTS_TCP;
			else
				BAD("the transport is udp, mcast or tcp");
		} else if (!strcmp(k, "iface")) {
			if (!*v || strlen(v) >= sizeof(s->link.ifname))
				BAD("not an interface name");
			snprintf(s->link.ifname, sizeof(s->link.ifname), "%s", v);
		} else if (!strcmp(k, "local") || !strcmp(k, "peer") || !strcmp(k, "group")) {
			union cts_addr a;

			if (parse_addr(v, &a, &family))
				BAD("not an IPv4 or IPv6 address");
			if (note_family(&fam, family, k, err, errlen))
				goto out;
			if (!strcmp(k, "local")) {
				s->link.local = a;
				have_local = true;
			} else if (!strcmp(k, "peer")) {
				s->link.peer = a;
				have_peer = true;
			} else {
				if (family == AF_INET ? !IN_MULTICAST(ntohl(a.v4.s_addr)) :
							!IN6_IS_ADDR_MULTICAST(&a.v6))
					BAD("not a multicast address");
				s->link.peer = a;
				have_group = true;
			}
		} else if (!strcmp(k, "accept")) {
			char *save2 = NULL, *a;

			s->link.n_accept = 0;
			for (a = strtok_r(v, "+", &save2); a; a = strtok_r(NULL, "+", &save2)) {
				if (s->link.n_accept == CTS_ACCEPT_MAX) {
					snprintf(err, errlen, "sync: accept: at most %d addresses",
						 CTS_ACCEPT_MAX);
					goto out;
				}
				if (parse_addr(a, &s->link.accept[s->link.n_accept], &family)) {
					snprintf(err, errlen, "sync: accept: %s is not an address", a);
					goto out;
				}
				if (note_family(&fam, family, "accept", err, errlen))
					goto out;
				s->link.n_accept++;
			}
		} else if (!strcmp(k, "port")) {
			if (parse_u32(v, 1, 65535, &u))
				BAD("a port is 1..65535");
			s->link.port = (uint16_t)u;
		} else if (!strcmp(k, "checksum")) {
			if (parse_bool(v, &s->link.checksum))
				BAD("on or off");
		} else if (!strcmp(k, "rcvbuf") || !strcmp(k, "sndbuf")) {
			if (parse_u32(v, 1, 1u << 30, &u))
				BAD("bytes, 1..1073741824");
			*(!strcmp(k, "rcvbuf") ? &s->link.rcvbuf : &s->link.sndbuf) = (int)u;
		} else if (!strcmp(k, "window")) {
			if (parse_u32(v, 1, 1u << 20, &s->node.window_size))
				BAD("messages, 1..1048576");
		} else if (!strcmp(k, "resend-queue")) {
			if (parse_u32(v, 1, 1u << 24, &s->node.resend_queue_max))
				BAD("messages, 1..16777216");
		} else if (!strcmp(k, "alive-ms")) {
			if (parse_u32(v, 10, 60000, &s->node.alive_ms))
				BAD("milliseconds, 10..60000");
		} else if (!strcmp(k, "refresh")) {
			if (parse_u32(v, 1, 86400, &s->node.refresh_s))
				BAD("seconds, 1..86400");
		} else if (!strcmp(k, "cache-timeout")) {
			if (parse_u32(v, 1, 864000, &s->node.cache_timeout_s))
				BAD("seconds, 1..864000");
		} else if (!strcmp(k, "commit-timeout")) {
			if (parse_u32(v, 0, 864000, &s->node.commit_timeout_s))
				BAD("seconds, 0..864000");
		} else if (!strcmp(k, "window-tracking")) {
			if (parse_bool(v, &s->node.window_tracking))
				BAD("on or off");
		} else if (!strcmp(k, "startup-resync")) {
			if (parse_bool(v, &s->node.startup_resync))
				BAD("on or off");
		} else if (!strcmp(k, "resync-on-hello")) {
			if (parse_bool(v, &s->node.resync_on_hello))
				BAD("on or off");
		} else if (!strcmp(k, "max-internal")) {
			if (parse_u32(v, 1, 1u << 26, &s->node.internal_max))
				BAD("entries, 1..67108864");
		} else if (!strcmp(k, "max-external")) {
			if (parse_u32(v, 1, 1u << 26, &s->node.external_max))
				BAD("entries, 1..67108864");
		} else {
			snprintf(err, errlen, "sync: unknown setting '%s'", k);
			goto out;
		}
#undef BAD
	}
	if (fam.family)
		s->link.family = fam.family;
	if (s->link.kind == CTS_MCAST) {
		if (!have_group || !s->link.ifname[0] || s->link.n_accept == 0 ||
		    (s->link.family == AF_INET && !have_local)) {
			snprintf(err, errlen, "sync: multicast needs group=, iface=, accept= "
				 "(the peers) and, for IPv4, local= (the interface's address)");
			goto out;
		}
	} else if (!have_peer || !have_local) {
		snprintf(err, errlen, "sync: %s needs local= and peer=",
			 s->link.kind == CTS_TCP ? "tcp" : "udp");
		goto out;
	}
	s->node.stream = s->link.kind == CTS_TCP;
	s->node.datagram_max = cts_mtu_payload(&s->link);
	rc = 0;
out:
	free(copy);
	return rc;
}
