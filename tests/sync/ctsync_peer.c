/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctsync_peer.c - a ctrack sync node for the interop tests: node B.
 *
 * It tracks live traffic in a ctrack table (one AF_PACKET socket, the
 * frames arriving on the interfaces named by --capture, each interface's
 * packets in the zone given with it), feeds the table's events to a
 * sync node (src/sync/), and speaks conntrackd's protocol over a
 * transport (tools/ctrack/sync/) configured by --sync, as the daemon
 * will.  One thread does everything, in one poll loop; the clock is
 * CLOCK_MONOTONIC for the table and the node alike.
 *
 * The test drives it through stdin, one command a line, and reads JSON
 * lines on stdout:
 *   dump internal|external   one {"entry": {...}} per entry, then {"end": N}
 *   table                    the ctrack table: {"conn": {...}} ..., {"end": N}
 *   stats                    {"stats": {...}}: node, caches, transport
 *   resync | bulk            conntrackd -n / -B
 *   flush internal|external  conntrackd -f
 *   mark PROTO SRC DST SPORT DPORT MARK [ZONE]   CONNMARK on one of ours
 *   add PROTO SRC DST SPORT DPORT STATE TIMEOUT MARK ZONE
 *                            a record straight into the internal cache (the
 *                            ctrack-to-ctrack tests of many entries)
 *   commit                   the external cache into the table, as
 *                            `ctrack sync commit` (conntrackd -c) does:
 *                            {"committed": N, "expired": N, "failed": N}
 *   ping                     {"pong": true} (the loop is alive)
 *   quit
 * On start it prints {"ready": true}, or a sentence on stderr and exit
 * status 1 for a bad flag or a socket that cannot be opened.  --set
 * NAME=VALUE sets the table's settings (kernel sysctl names), as ctrack
 * read's; "stats" counts the TCP packets' verdicts (tcp_new,
 * tcp_established, tcp_invalid), and "table" shows each TCP entry's window
 * scales and flags as ctnetlink would.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ctrack/ctrack.h"
#include "ctrack/sync.h"
#include "sync/sync_config.h"
#include "sync/sync_transport.h"

#define MAX_CAPTURE 4

struct capture {
	int fd;
	uint16_t zone;
	char ifname[IF_NAMESIZE];
};

struct peer {
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_sync_node *node;
	struct cts *link;
	struct capture cap[MAX_CAPTURE];   /* fd: the interface's index */
	unsigned ncap;
	int capfd;
	uint64_t frames, events, event_errors;
	uint64_t tcp_verdicts[CT_V_DROP + 1];    /* by enum ct_verdict_class */
	bool window_tracking;
	char line[4096];
	size_t line_len;
	bool quit;
};

static ct_time_ns mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ct_time_ns)ts.tv_sec * 1000000000ull + (ct_time_ns)ts.tv_nsec;
}

static void on_event(const struct ct_event *ev, void *arg)
{
	struct peer *p = arg;

	p->events++;
	if (ct_sync_node_event(p->node, ev, ev->ts) < 0)
		p->event_errors++;
}

static void on_datagram(void *arg, const uint8_t *buf, size_t len)
{
	struct peer *p = arg;

	ct_sync_node_recv(p->node, buf, len, mono_ns());
}

/* One AF_PACKET socket for all the captured interfaces: frames of two
 * interfaces read through two sockets lose their order (the kernel
 * harness's finding, KERNEL-ORACLE-FACTS.md), and the tracker needs the
 * order conntrack would see.  The test pins the ports' receive processing
 * to one CPU, so the socket's order is the arrival order. */
static int open_capture_socket(void)
{
	int one = 1;
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
	int rcvbuf = 8 << 20;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int add_capture(struct capture *c, const char *spec)
{
	const char *colon = strchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);

	if (n == 0 || n >= sizeof(c->ifname))
		return -EINVAL;
	memcpy(c->ifname, spec, n);
	c->ifname[n] = 0;
	c->zone = colon ? (uint16_t)atoi(colon + 1) : 0;
	c->fd = (int)if_nametoindex(c->ifname);      /* the ifindex */
	return c->fd ? 0 : -ENODEV;
}

static void read_capture(struct peer *p, int fd)
{
	uint8_t frame[65536];

	for (unsigned i = 0; i < 256; i++) {
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		ssize_t n = recvfrom(fd, frame, sizeof(frame), 0, (struct sockaddr *)&sll, &sl);
		const struct capture *c = NULL;
		struct ct_packet pkt;
		struct ct_verdict v;
		ct_time_ns now;

		if (n <= 0)
			return;
		for (unsigned k = 0; k < p->ncap; k++)
			if (p->cap[k].fd == sll.sll_ifindex)
				c = &p->cap[k];
		if (!c)
			continue;
		p->frames++;
		now = mono_ns();
		if (ct_parse_frame(&pkt, CT_LINK_ETHERNET, frame, (uint32_t)n, (uint32_t)n,
				   now) != CT_PKT_TRACKABLE)
			continue;
		pkt.tuple.zone = c->zone;
		ct_process(p->thr, &pkt, now, &v);
		if (pkt.tuple.l4 == 6 && v.cls <= CT_V_DROP)
			p->tcp_verdicts[v.cls]++;
	}
}

/* ------------------------------------------------------------------ */
/* JSON out                                                            */

static void put_addr(FILE *f, const char *key, uint8_t l3, const union ct_addr *a)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(l3 == CT_L3_IPV4 ? AF_INET : AF_INET6, a, buf, sizeof(buf));
	fprintf(f, "\"%s\": \"%s\"", key, buf);
}

static void put_tuple(FILE *f, const struct ct_tuple *t)
{
	put_addr(f, "src", t->l3, &t->src);
	fprintf(f, ", ");
	put_addr(f, "dst", t->l3, &t->dst);
	if (t->l4 == 1 || t->l4 == 58)
		fprintf(f, ", \"type\": %u, \"code\": %u, \"id\": %u", ct_tuple_icmp_type(t),
			ct_tuple_icmp_code(t), t->sport);
	else
		fprintf(f, ", \"sport\": %u, \"dport\": %u", t->sport, t->dport);
}

static void put_labels(FILE *f, const uint8_t *l)
{
	fprintf(f, "\"labels\": \"");
	for (unsigned i = 0; i < 16; i++)
		fprintf(f, "%02x", l[i]);
	fprintf(f, "\"");
}

static int dump_entry(const struct ct_sync_entry *e, void *arg)
{
	const struct ct_sync_conn *c = &e->conn;
	struct ct_tuple r;
	unsigned *n = arg;

	fprintf(stdout, "{\"entry\": {\"l3\": %u, \"proto\": %u, ", c->orig.l3 == CT_L3_IPV4 ? 4 : 6,
		c->orig.l4);
	put_tuple(stdout, &c->orig);
	fprintf(stdout, ", \"zone\": %u, \"status\": %u, \"mark\": %u, \"has\": %u",
		c->orig.zone, c->status, c->mark, c->has);
	if (c->has & CT_SYNC_HAS_STATE)
		fprintf(stdout, ", \"state\": %u", c->l4state);
	if (c->has & CT_SYNC_HAS_TIMEOUT)
		fprintf(stdout, ", \"timeout\": %u", e->timeout_left_s);
	if (c->has & CT_SYNC_HAS_WSCALE)
		fprintf(stdout, ", \"wscale\": [%u, %u]", c->wscale[0], c->wscale[1]);
	fprintf(stdout, ", ");
	put_labels(stdout, c->labels);
	if (ct_sync_conn_reply(c, &r)) {
		fprintf(stdout, ", \"reply\": {");
		put_tuple(stdout, &r);
		fprintf(stdout, "}");
	}
	fprintf(stdout, "}}\n");
	(*n)++;
	return 0;
}

static int dump_conn(const struct ct_conn_info *ci, void *arg)
{
	unsigned *n = arg;
	ct_time_ns now = mono_ns();

	fprintf(stdout, "{\"conn\": {\"l3\": %u, \"proto\": %u, ", ci->orig.l3 == CT_L3_IPV4 ? 4 : 6,
		ci->orig.l4);
	put_tuple(stdout, &ci->orig);
	fprintf(stdout, ", \"zone\": %u, \"status\": %u, \"mark\": %u, \"state\": %u, "
		"\"timeout\": %llu, ", ci->orig.zone, ci->status, ci->mark, ci->l4state,
		(unsigned long long)(ci->expires > now ? (ci->expires - now) / 1000000000ull : 0));
	put_labels(stdout, ci->labels);
	if (ci->orig.l4 == 6)
		fprintf(stdout, ", \"wscale\": [%u, %u], \"tflags\": [%u, %u]", ci->tcp.wscale[0],
			ci->tcp.wscale[1], ci->tcp.flags[0], ci->tcp.flags[1]);
	fprintf(stdout, ", \"reply\": {");
	put_tuple(stdout, &ci->reply);
	fprintf(stdout, "}}}\n");
	(*n)++;
	return 0;
}

static void put_stats(struct peer *p)
{
	struct ct_sync_stats s;
	struct cts_stats l;

	ct_sync_node_get_stats(p->node, &s);
	cts_get_stats(p->link, &l);
#define F(x) fprintf(stdout, "\"" #x "\": %llu, ", (unsigned long long)s.x)
	fprintf(stdout, "{\"stats\": {");
	F(msg_rcv_malformed); F(msg_rcv_bad_version); F(msg_rcv_bad_header);
	F(msg_rcv_bad_payload); F(msg_rcv_bad_type); F(msg_rcv_truncated); F(msg_rcv_bad_size);
	F(msg_snd_malformed); F(msg_rcv_lost); F(msg_rcv_before); F(msg_rcv_unknown_attr);
	F(msg_rcv_dup_attr); F(msg_rcv_impossible); F(msg_rcv_out_of_window);
	F(msg_rcv_seq_resets); F(msg_rcv_exp); F(msg_rcv_labels_cut); F(msg_rcv_ack_stale);
	F(msg_rcv_stream_resyncs); F(msgs_sent); F(msgs_recv); F(datagrams_sent);
	F(datagrams_recv); F(send_errors); F(acks_sent); F(nacks_sent); F(alive_sent);
	F(resync_sent); F(acks_recv); F(nacks_recv); F(alive_recv); F(resync_recv);
	F(hello_recv); F(hello_resyncs); F(resent); F(bulk_sends); F(rs_queue_len); F(tx_queue_len);
	F(rs_queue_dropped); F(last_seq_recv);
	F(internal.active); F(internal.created); F(internal.create_failed);
	F(internal.updated); F(internal.destroyed);
	F(external.active); F(external.created); F(external.create_failed);
	F(external.updated); F(external.destroyed); F(external.expired);
#undef F
	fprintf(stdout, "\"link_rejected_peer\": %llu, \"link_datagrams_in\": %llu, "
		"\"link_datagrams_out\": %llu, \"link_send_errors\": %llu, "
		"\"link_connects\": %llu, \"frames\": %llu, \"events\": %llu, "
		"\"event_errors\": %llu, \"table_count\": %llu, \"tcp_new\": %llu, "
		"\"tcp_established\": %llu, \"tcp_invalid\": %llu}}\n",
		(unsigned long long)l.rejected_peer, (unsigned long long)l.datagrams_in,
		(unsigned long long)l.datagrams_out, (unsigned long long)l.send_errors,
		(unsigned long long)l.connects, (unsigned long long)p->frames,
		(unsigned long long)p->events, (unsigned long long)p->event_errors,
		(unsigned long long)ct_table_count(p->t),
		(unsigned long long)p->tcp_verdicts[CT_V_NEW],
		(unsigned long long)p->tcp_verdicts[CT_V_ESTABLISHED],
		(unsigned long long)p->tcp_verdicts[CT_V_INVALID]);
}

/* ------------------------------------------------------------------ */
/* commands                                                            */

static int tuple_of(struct ct_tuple *t, const char *proto, const char *src, const char *dst,
		    const char *sport, const char *dport)
{
	memset(t, 0, sizeof(*t));
	t->l4 = (uint8_t)atoi(proto);
	if (inet_pton(AF_INET, src, &t->src.ip4) == 1 && inet_pton(AF_INET, dst, &t->dst.ip4) == 1)
		t->l3 = CT_L3_IPV4;
	else if (inet_pton(AF_INET6, src, t->src.ip6) == 1 &&
		 inet_pton(AF_INET6, dst, t->dst.ip6) == 1)
		t->l3 = CT_L3_IPV6;
	else
		return -1;
	t->sport = (uint16_t)atoi(sport);
	t->dport = (uint16_t)atoi(dport);
	return 0;
}

/* `ctrack sync commit`: each external entry as conntrackd -c makes it,
 * into the table (src/record/, CT_RECORD_F_COMMIT). */
struct commit_run {
	struct peer *p;
	ct_time_ns now;
	unsigned committed, expired, failed;
};

static int commit_entry(const struct ct_sync_entry *e, void *arg)
{
	struct commit_run *c = arg;
	struct ct_record rec;
	enum ct_record_reason why;
	/* cache_ct_commit_step: the timeout sent less the time since it
	 * arrived, 60 s once that is used up */
	uint32_t timeout = e->timeout_left_s ? e->timeout_left_s : 60;
	int r;

	if (!ct_record_from_sync(&e->conn, timeout, c->p->window_tracking, &rec)) {
		c->failed++;
		return 0;
	}
	if (rec.orig.zone && !ct_ns_exists(c->p->t, rec.orig.zone))
		ct_ns_create(c->p->t, rec.orig.zone, NULL);
	r = ct_record_import(c->p->thr, &rec, c->now, 0, CT_RECORD_F_COMMIT, &why);
	if (r == 1)
		c->committed++;
	else if (r == 0)
		c->expired++;
	else
		c->failed++;
	return 0;
}

static void command(struct peer *p, char *line)
{
	char *w[12];
	unsigned n = 0;
	unsigned count = 0;
	ct_time_ns now = mono_ns();

	for (char *s = strtok(line, " \t"); s && n < 12; s = strtok(NULL, " \t"))
		w[n++] = s;
	if (n == 0)
		return;
	if (!strcmp(w[0], "dump") && n == 2) {
		ct_sync_node_dump(p->node, !strcmp(w[1], "internal") ? CT_SYNC_INTERNAL :
					   CT_SYNC_EXTERNAL, now, dump_entry, &count);
		fprintf(stdout, "{\"end\": %u}\n", count);
	} else if (!strcmp(w[0], "table")) {
		ct_table_dump(p->thr, -1, dump_conn, &count);
		fprintf(stdout, "{\"end\": %u}\n", count);
	} else if (!strcmp(w[0], "stats")) {
		put_stats(p);
	} else if (!strcmp(w[0], "resync")) {
		ct_sync_node_request_resync(p->node);
		fprintf(stdout, "{\"ok\": true}\n");
	} else if (!strcmp(w[0], "bulk")) {
		ct_sync_node_send_bulk(p->node);
		fprintf(stdout, "{\"ok\": true}\n");
	} else if (!strcmp(w[0], "flush") && n == 2) {
		uint64_t r = ct_sync_node_flush(p->node, !strcmp(w[1], "internal") ?
						CT_SYNC_INTERNAL : CT_SYNC_EXTERNAL);

		fprintf(stdout, "{\"flushed\": %llu}\n", (unsigned long long)r);
	} else if (!strcmp(w[0], "mark") && (n == 7 || n == 8)) {
		struct ct_tuple t;
		int rc = -1;

		if (tuple_of(&t, w[1], w[2], w[3], w[4], w[5]) == 0) {
			t.zone = n == 8 ? (uint16_t)atoi(w[7]) : 0;
			rc = ct_table_set_mark(p->thr, &t, (uint32_t)strtoul(w[6], NULL, 0),
					       0xffffffffu, now);
		}
		fprintf(stdout, "{\"ok\": %s}\n", rc == 1 ? "true" : "false");
	} else if (!strcmp(w[0], "add") && n == 10) {
		struct ct_sync_conn c;
		int rc = -1;

		memset(&c, 0, sizeof(c));
		if (tuple_of(&c.orig, w[1], w[2], w[3], w[4], w[5]) == 0) {
			c.orig.zone = (uint16_t)atoi(w[9]);
			c.has = CT_SYNC_HAS_STATUS | CT_SYNC_HAS_TIMEOUT | CT_SYNC_HAS_MARK |
				CT_SYNC_HAS_PORTS | (c.orig.zone ? CT_SYNC_HAS_ZONE : 0);
			c.status = CT_ST_CONFIRMED | CT_ST_SEEN_REPLY | CT_ST_ASSURED;
			if (c.orig.l4 == 6) {
				c.has |= CT_SYNC_HAS_STATE;
				c.l4state = (uint8_t)atoi(w[6]);
			}
			c.timeout_s = (uint32_t)atoi(w[7]);
			c.mark = (uint32_t)strtoul(w[8], NULL, 0);
			rc = ct_sync_node_local(p->node, CT_SYNC_T_CT_NEW, &c, now);
		}
		fprintf(stdout, "{\"ok\": %s}\n", rc == 0 ? "true" : "false");
	} else if (!strcmp(w[0], "commit")) {
		struct commit_run c = { p, now, 0, 0, 0 };

		ct_sync_node_dump(p->node, CT_SYNC_EXTERNAL, now, commit_entry, &c);
		fprintf(stdout, "{\"committed\": %u, \"expired\": %u, \"failed\": %u}\n",
			c.committed, c.expired, c.failed);
	} else if (!strcmp(w[0], "ping")) {
		fprintf(stdout, "{\"pong\": true}\n");
	} else if (!strcmp(w[0], "quit")) {
		p->quit = true;
		fprintf(stdout, "{\"bye\": true}\n");
	} else {
		fprintf(stdout, "{\"error\": \"unknown command\"}\n");
	}
	fflush(stdout);
}

static void read_stdin(struct peer *p)
{
	char buf[4096];
	ssize_t n = read(0, buf, sizeof(buf));

	if (n <= 0) {
		p->quit = true;
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			p->line[p->line_len] = 0;
			command(p, p->line);
			p->line_len = 0;
		} else if (p->line_len + 1 < sizeof(p->line)) {
			p->line[p->line_len++] = buf[i];
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: ctsync_peer --sync SPEC [--capture IF[:ZONE]]... [--seq N] "
			"[--set NAME=VALUE]...\n"
			"  SPEC: tools/ctrack/sync/sync_config.h\n");
}

int main(int argc, char **argv)
{
	struct peer p;
	struct ctsync_settings set;
	struct ct_table_config tcfg;
	char err[256];
	const char *spec = NULL;
	long long seq = -1;
	ct_time_ns gc_due = 0;
	int rc;

	memset(&p, 0, sizeof(p));
	ctsync_settings_default(&set);
	ct_table_config_default(&tcfg);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sync") && i + 1 < argc) {
			spec = argv[++i];
		} else if (!strcmp(argv[i], "--capture") && i + 1 < argc && p.ncap < MAX_CAPTURE) {
			rc = add_capture(&p.cap[p.ncap], argv[++i]);
			if (rc) {
				fprintf(stderr, "ctsync_peer: capture %s: %s\n", argv[i], strerror(-rc));
				return 1;
			}
			p.ncap++;
		} else if (!strcmp(argv[i], "--seq") && i + 1 < argc) {
			seq = atoll(argv[++i]);
		} else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
			char name[128];
			const char *msg, *eq = strchr(argv[++i], '=');

			if (!eq || (size_t)(eq - argv[i]) >= sizeof(name)) {
				usage();
				return 2;
			}
			snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i]), argv[i]);
			if (ct_settings_set(&tcfg.settings, name, eq + 1, &msg) < 0) {
				fprintf(stderr, "ctsync_peer: --set %s: %s\n", argv[i], msg);
				return 2;
			}
		} else {
			usage();
			return 2;
		}
	}
	if (!spec) {
		usage();
		return 2;
	}
	p.capfd = -1;
	if (p.ncap) {
		p.capfd = open_capture_socket();
		if (p.capfd < 0) {
			fprintf(stderr, "ctsync_peer: capture socket: %s\n", strerror(-p.capfd));
			return 1;
		}
	}
	if (ctsync_settings_parse(&set, spec, err, sizeof(err))) {
		fprintf(stderr, "ctsync_peer: %s\n", err);
		return 2;
	}
	if (seq >= 0)
		set.node.initial_seq = (uint32_t)seq;
	rc = cts_open(&set.link, &p.link, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "ctsync_peer: %s\n", err);
		return 1;
	}
	set.node.send = cts_send;
	set.node.send_arg = p.link;
	rc = ct_sync_node_create(&set.node, mono_ns(), &p.node);
	if (rc) {
		fprintf(stderr, "ctsync_peer: sync node: %s\n", strerror(-rc));
		return 1;
	}
	tcfg.labels = true;
	p.window_tracking = set.node.window_tracking;
	rc = ct_table_create(&tcfg, &p.t);
	if (rc) {
		fprintf(stderr, "ctsync_peer: table: %s\n", strerror(-rc));
		return 1;
	}
	for (unsigned i = 0; i < p.ncap; i++) {
		if (p.cap[i].zone) {
			struct ct_settings zs;

			ct_table_get_settings(p.t, &zs);
			rc = ct_ns_create(p.t, p.cap[i].zone, &zs);
			if (rc && rc != -EEXIST) {
				fprintf(stderr, "ctsync_peer: zone %u: %s\n", p.cap[i].zone,
					strerror(-rc));
				return 1;
			}
		}
	}
	p.thr = ct_thread_attach(p.t);
	ct_table_set_event_handler(p.t, on_event, &p);
	fprintf(stdout, "{\"ready\": true}\n");
	fflush(stdout);

	while (!p.quit) {
		struct pollfd pfd[MAX_CAPTURE + 4];
		int lfds[3];
		unsigned nl = cts_fds(p.link, lfds, 3), np = 0;
		ct_time_ns now = mono_ns(), next;
		int wait_ms;

		next = ct_sync_node_run(p.node, now, 0);
		if (now >= gc_due) {
			struct ct_gc_result r;

			ct_gc_step(p.thr, now, 2000000, &r);
			gc_due = now + 100000000ull;
		}
		if (gc_due < next)
			next = gc_due;
		wait_ms = next > now ? (int)((next - now) / 1000000ull) + 1 : 0;
		if (wait_ms > 200)
			wait_ms = 200;
		pfd[np].fd = 0;
		pfd[np++].events = POLLIN;
		for (unsigned i = 0; i < nl; i++) {
			pfd[np].fd = lfds[i];
			pfd[np++].events = POLLIN;
		}
		if (p.capfd >= 0) {
			pfd[np].fd = p.capfd;
			pfd[np++].events = POLLIN;
		}
		if (poll(pfd, np, wait_ms) < 0 && errno != EINTR)
			break;
		for (unsigned i = 0; i < np; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLERR | POLLHUP)))
				continue;
			if (i == 0)
				read_stdin(&p);
			else if (i <= nl)
				cts_input(p.link, pfd[i].fd, on_datagram, &p, 64);
			else
				read_capture(&p, p.capfd);
		}
	}
	ct_sync_node_run(p.node, mono_ns(), 0);
	ct_table_set_event_handler(p.t, NULL, NULL);
	ct_thread_detach(p.thr);
	ct_table_destroy(p.t);
	ct_sync_node_destroy(p.node);
	cts_close(p.link);
	if (p.capfd >= 0)
		close(p.capfd);
	return 0;
}
