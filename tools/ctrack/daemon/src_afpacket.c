/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src_afpacket.c - live interfaces through AF_PACKET TPACKET_V3 rings, one
 * socket and ring per worker, joined in one PACKET_FANOUT group.
 *
 * What the fanout guarantees (net/packet/af_packet.c, kernel 6.x; read
 * for this file, see docs/daemon.md): with PACKET_FANOUT_HASH a packet
 * goes to member reciprocal_scale(__skb_get_hash_symmetric(skb), n) of
 * the group, in the order members joined.  The symmetric hash is the
 * flow dissector's hash over addresses, protocol and ports with each pair
 * sorted before hashing (__flow_hash_consistentify), keyed by one
 * boot-time secret (hashrnd), so both directions of a TCP, UDP, SCTP or
 * DCCP connection - and an ICMP echo and its reply, which have no ports -
 * go to the same member, whichever interface they arrive on, as long as
 * every socket is in the one group.  That is why the sockets are bound
 * to all interfaces (ifindex 0: a fanout group belongs to one device
 * binding) and a socket filter keeps the watched interfaces.  Two limits:
 * the dissector stops at a fragment (no FLOW_DISSECTOR_F_PARSE_1ST_FRAG),
 * so a fragment hashes without ports - hence PACKET_FANOUT_FLAG_DEFRAG,
 * which reassembles IPv4 datagrams (ip_check_defrag) before the hash;
 * IPv6 fragments are not reassembled by it, reach the worker their
 * addresses choose, are reassembled there, and may be tracked on another
 * worker than the flow's unfragmented packets (correct - the table is
 * shared - but not ordered with them).  And an ICMP error hashes on its
 * own outer header (sent by a router in the path, say), so it may be
 * handled by another worker than its connection: RELATED is decided by a
 * lookup, which any worker can do.
 *
 * Order within a worker is ring order, the order tpacket_rcv ran: both
 * directions of a connection land in one ring, so its packets are
 * tracked in the order the kernel saw them as long as the receive
 * processing of the interfaces runs on one CPU (the oracle test pins it;
 * on a machine with RSS two near-simultaneous packets of one connection
 * arriving on two CPUs can swap, as they can for the kernel's conntrack).
 *
 * Set-up order matters: each socket first gets a filter that takes
 * nothing, then its ring, is bound and joins the group; only when all
 * have joined do they get the real filter, so no packet is ever delivered
 * to a group of the wrong size (which would send a connection's first
 * packets to one worker and the rest to another).  Outgoing packets are
 * ignored (PACKET_IGNORE_OUTGOING, and the filter checks the packet type
 * too for older kernels): the kernel's conntrack sees each forwarded
 * packet once, where it comes in.
 *
 * Ring drops come from PACKET_STATISTICS (tp_drops, and tp_freeze_q_cnt:
 * times the ring was full), which resets on every read, so they are read
 * under a lock and added up here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"

#define BLOCK_SIZE (1u << 20)

struct af_ring {
	int fd;
	uint8_t *map;
	size_t map_len;
	unsigned block_nr;
	unsigned cur;
	pthread_mutex_t stat_lock;
	struct dm_ring_stats total;
};

static int ifindex_of[DM_MAX_IFACES];
static unsigned n_ifindex;

static int drop_all(int fd)
{
	struct sock_filter ret0 = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog p = { 1, &ret0 };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &p, sizeof(p));
}

/*
 * The socket filter: not outgoing, one of the watched interfaces, then
 * the user's libpcap program (or accept).  cBPF jumps are forward and
 * relative, so the pcap program needs no change behind the prefix.
 */
static int build_filter(const char *expr, struct sock_fprog *out, char *err, size_t errlen)
{
	struct bpf_program bp = { 0, NULL };
	struct sock_filter *f;
	unsigned n = n_ifindex, pre = 3 + n + 1, i = 0;
	unsigned body;

	if (expr && *expr) {
		pcap_t *p = pcap_open_dead(DLT_EN10MB, 262144);

		if (!p) {
			snprintf(err, errlen, "libpcap: cannot compile filters");
			return -1;
		}
		if (pcap_compile(p, &bp, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			snprintf(err, errlen, "--filter '%s': %s", expr, pcap_geterr(p));
			pcap_close(p);
			return -1;
		}
		pcap_close(p);
	}
	body = bp.bf_len ? bp.bf_len : 1;
	if (pre + body > BPF_MAXINSNS) {
		pcap_freecode(&bp);
		snprintf(err, errlen, "--filter '%s' compiles to more than %d instructions",
			 expr, BPF_MAXINSNS);
		return -1;
	}
	f = calloc(pre + body, sizeof(*f));
	if (!f) {
		pcap_freecode(&bp);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      (uint32_t)(SKF_AD_OFF + SKF_AD_PKTTYPE));
	f[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING,
					    (uint8_t)(n + 1), 0);
	i++;
	f[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      (uint32_t)(SKF_AD_OFF + SKF_AD_IFINDEX));
	for (unsigned k = 0; k < n; k++, i++)
		f[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						    (uint32_t)ifindex_of[k], (uint8_t)(n - k), 0);
	f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	if (bp.bf_len) {
		for (unsigned k = 0; k < bp.bf_len; k++, i++) {
			f[i].code = bp.bf_insns[k].code;
			f[i].jt = bp.bf_insns[k].jt;
			f[i].jf = bp.bf_insns[k].jf;
			f[i].k = bp.bf_insns[k].k;
		}
	} else {
		f[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0x40000);
	}
	pcap_freecode(&bp);
	out->len = (unsigned short)i;
	out->filter = f;
	return 0;
}

static int open_one(struct daemon *d, struct af_ring *r, int *fanout_id, char *err,
		    size_t errlen)
{
	int v = TPACKET_V3, one = 1;
	struct tpacket_req3 req;
	struct sockaddr_ll sll;
	uint32_t arg;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->stat_lock, NULL);
	r->fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (r->fd < 0) {
		snprintf(err, errlen, "cannot open a packet socket: %s%s", strerror(errno),
			 errno == EPERM ? " (live capture needs root or CAP_NET_RAW)" : "");
		return -1;
	}
	if (drop_all(r->fd) < 0 ||
	    setsockopt(r->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0) {
		snprintf(err, errlen, "TPACKET_V3 is not available: %s", strerror(errno));
		return -1;
	}
	memset(&req, 0, sizeof(req));
	req.tp_block_size = BLOCK_SIZE;
	req.tp_block_nr = d->opt.ring_mb ? d->opt.ring_mb : 1;
	req.tp_frame_size = 2048;
	req.tp_frame_nr = req.tp_block_size / req.tp_frame_size * req.tp_block_nr;
	req.tp_retire_blk_tov = d->opt.ring_timeout_ms;
	if (setsockopt(r->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0) {
		snprintf(err, errlen, "cannot set up a %u MiB ring: %s", d->opt.ring_mb,
			 strerror(errno));
		return -1;
	}
	r->block_nr = req.tp_block_nr;
	r->map_len = (size_t)req.tp_block_size * req.tp_block_nr;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED,
		      r->fd, 0);
	if (r->map == MAP_FAILED)
		r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		snprintf(err, errlen, "cannot map the ring: %s", strerror(errno));
		return -1;
	}
	/* best effort: the filter drops outgoing packets anyway */
	(void)setsockopt(r->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = 0;
	if (bind(r->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		snprintf(err, errlen, "cannot bind the packet socket: %s", strerror(errno));
		return -1;
	}
	if (*fanout_id < 0) {
		socklen_t l = sizeof(arg);

		arg = (uint32_t)(PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_DEFRAG |
				 PACKET_FANOUT_FLAG_UNIQUEID) << 16;
		if (setsockopt(r->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) < 0 ||
		    getsockopt(r->fd, SOL_PACKET, PACKET_FANOUT, &arg, &l) < 0) {
			snprintf(err, errlen, "cannot create a PACKET_FANOUT group: %s",
				 strerror(errno));
			return -1;
		}
		*fanout_id = (int)(arg & 0xffff);
	} else {
		arg = (uint32_t)*fanout_id |
		      (uint32_t)(PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_DEFRAG) << 16;
		if (setsockopt(r->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) < 0) {
			snprintf(err, errlen, "cannot join PACKET_FANOUT group %d: %s", *fanout_id,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void close_one(struct af_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	if (r->fd > 0)
		close(r->fd);
	r->map = NULL;
	r->fd = -1;
	pthread_mutex_destroy(&r->stat_lock);
}

int dm_live_set_filter(struct daemon *d, const char *expr, char *err, size_t errlen)
{
	struct sock_fprog prog;

	if (build_filter(expr, &prog, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < d->n_workers; i++)
		if (setsockopt(d->w[i].ring->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
			       sizeof(prog)) < 0) {
			snprintf(err, errlen, "cannot attach the socket filter: %s", strerror(errno));
			free(prog.filter);
			return -1;
		}
	free(prog.filter);
	return 0;
}

int dm_live_open(struct daemon *d, char *err, size_t errlen)
{
	int fanout_id = -1;

	n_ifindex = 0;
	for (unsigned i = 0; i < d->opt.n_ifaces; i++) {
		unsigned idx = if_nametoindex(d->opt.ifaces[i]);

		if (!idx) {
			snprintf(err, errlen, "--interface %s: no such interface here", d->opt.ifaces[i]);
			return -1;
		}
		ifindex_of[n_ifindex++] = (int)idx;
	}
	for (unsigned i = 0; i < d->n_workers; i++) {
		struct af_ring *r = calloc(1, sizeof(*r));

		if (!r) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		r->fd = -1;
		d->w[i].ring = r;
		if (open_one(d, r, &fanout_id, err, errlen) < 0)
			return -1;
	}
	/* the whole group is there: now the real filter */
	return dm_live_set_filter(d, d->opt.filter, err, errlen);
}

void dm_live_close(struct daemon *d)
{
	for (unsigned i = 0; i < d->n_workers; i++)
		if (d->w[i].ring) {
			close_one(d->w[i].ring);
			free(d->w[i].ring);
			d->w[i].ring = NULL;
		}
}

static void read_stats(struct af_ring *r)
{
	struct tpacket_stats_v3 st;
	socklen_t l = sizeof(st);

	if (getsockopt(r->fd, SOL_PACKET, PACKET_STATISTICS, &st, &l) == 0) {
		r->total.packets += st.tp_packets;
		r->total.drops += st.tp_drops;
		r->total.freezes += st.tp_freeze_q_cnt;
	}
}

void dm_live_stats(struct daemon *d, unsigned worker, struct dm_ring_stats *s)
{
	struct af_ring *r = worker < d->n_workers ? d->w[worker].ring : NULL;

	memset(s, 0, sizeof(*s));
	if (!r)
		return;
	pthread_mutex_lock(&r->stat_lock);
	read_stats(r);
	*s = r->total;
	pthread_mutex_unlock(&r->stat_lock);
}

static int linktype_of(unsigned hatype)
{
	switch (hatype) {
	case ARPHRD_ETHER:
	case ARPHRD_LOOPBACK:
		return CT_LINK_ETHERNET;
	case ARPHRD_NONE:
	case ARPHRD_TUNNEL:
	case ARPHRD_TUNNEL6:
	case ARPHRD_IPGRE:
	case ARPHRD_SIT:
		return CT_LINK_RAW;
	default:
		return -1;
	}
}

static void walk_block(struct dm_worker *w, struct tpacket_block_desc *b, int64_t wall_ns)
{
	uint32_t n = b->hdr.bh1.num_pkts;
	uint8_t *p = (uint8_t *)b + b->hdr.bh1.offset_to_first_pkt;

	for (uint32_t i = 0; i < n; i++) {
		struct tpacket3_hdr *h = (struct tpacket3_hdr *)p;
		const struct sockaddr_ll *sll =
			(const struct sockaddr_ll *)(p + TPACKET_ALIGN(sizeof(*h)));
		int64_t t = (int64_t)h->tp_sec * 1000000000LL + h->tp_nsec - wall_ns;
		int lt = linktype_of(sll->sll_hatype);

		dm_worker_frame(w, lt < 0 ? 0xffff : lt, p + h->tp_mac, h->tp_snaplen, h->tp_len,
				t > 0 ? (ct_time_ns)t : 0, (uint32_t)sll->sll_ifindex);
		p += h->tp_next_offset;
	}
	/* the frames live in the block: track them before giving it back */
	dm_worker_flush(w);
}

void dm_live_loop(struct dm_worker *w)
{
	struct af_ring *r = w->ring;
	struct pollfd pfd = { r->fd, POLLIN | POLLERR, 0 };

	while (!atomic_load_explicit(&w->d->stop, memory_order_relaxed)) {
		struct tpacket_block_desc *b =
			(struct tpacket_block_desc *)(r->map + (size_t)r->cur * BLOCK_SIZE);

		if (!(__atomic_load_n(&b->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) {
			(void)poll(&pfd, 1, 100);
			continue;
		}
		walk_block(w, b, atomic_load_explicit(&w->d->wall_ns, memory_order_relaxed));
		__atomic_store_n(&b->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		r->cur = (r->cur + 1) % r->block_nr;
	}
}
