/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctcap - capture what a router's conntrack saw, in the order it saw it.
 *
 * The kernel oracle harness (tests/kernel/kdiff.py) runs this inside the
 * router's network namespace.  The router's conntrack sees every forwarded
 * packet once, on the port it arrives on, so the capture is the ingress of
 * all the router's ports merged in true order.  Two captures merged by
 * timestamp cannot give that order; one AF_PACKET socket that listens on
 * every port can, as long as the ports' receive processing runs on one CPU
 * (the harness pins it with RPS): the tap and conntrack then run one after
 * the other for each packet, on one CPU, in the socket's queue order.
 *
 * The socket uses a TPACKET_V3 ring, because the kernel copies each frame
 * into the ring as it is delivered: a late reader of a plain socket queue can
 * see a frame that the router rewrote afterwards (a forwarded fragment).
 * Outgoing frames are ignored (PACKET_IGNORE_OUTGOING) and frames from ports
 * not named with -i are skipped, so loopback and any other device in the
 * namespace stay out of the capture.  A VLAN tag that the port took off into
 * the packet's metadata is put back, so the capture holds the frame as sent.
 *
 * Timestamps are written in capture order and never go backwards (a stamp
 * older than its predecessor is raised to it): a tracker reading the file
 * must see time advance the way the kernel's conntrack did.
 *
 * Usage: ctcap -w FILE -i PORT [-i PORT]... [-u] [-m MiB]
 *   -w FILE  pcap file to write (nanosecond timestamps unless -u)
 *   -i PORT  a port to capture ingress on (repeat for each port)
 *   -u       microsecond timestamps instead of nanoseconds
 *   -m MiB   ring size (default 64)
 * Prints "ready" on stdout once the ring is live; stops on SIGINT/SIGTERM,
 * drains the ring, and prints one line of figures on stderr:
 *   ctcap: captured=N written=N drops=N clamped=N
 * Exit status 0 on success, 1 on any error, 3 if the kernel dropped frames.
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define CTCAP_MAX_PORTS 8
#define CTCAP_BLOCK_BYTES (1u << 22) /* 4 MiB: big enough for any frame */
#define CTCAP_FRAME_BYTES 2048u      /* only a sanity unit for TPACKET_V3 */
#define CTCAP_RETIRE_MS 20u          /* a quiet ring still hands blocks over */
#define CTCAP_SNAPLEN 262144u

struct ctcap_ring {
	int fd;
	uint8_t *map;
	size_t map_bytes;
	unsigned int block_nr;
	unsigned int next_block;
};

struct ctcap_out {
	FILE *f;
	int nanos;
	uint64_t last_ns; /* last timestamp written, for clamping */
	uint64_t captured;
	uint64_t written;
	uint64_t clamped;
	uint64_t skipped;
};

static volatile sig_atomic_t ctcap_stop;

static void ctcap_on_signal(int sig)
{
	(void)sig;
	ctcap_stop = 1;
}

static int ctcap_write_header(struct ctcap_out *out)
{
	struct {
		uint32_t magic;
		uint16_t major, minor;
		int32_t thiszone;
		uint32_t sigfigs, snaplen, linktype;
	} h = {
		.magic = out->nanos ? 0xa1b23c4d : 0xa1b2c3d4,
		.major = 2,
		.minor = 4,
		.snaplen = CTCAP_SNAPLEN,
		.linktype = 1, /* DLT_EN10MB */
	};
	return fwrite(&h, sizeof(h), 1, out->f) == 1 ? 0 : -1;
}

/* Writes one record; a VLAN tag held in metadata is put back after the
 * two MAC addresses, as it was on the wire. */
static int ctcap_write_frame(struct ctcap_out *out, uint64_t ts_ns, const uint8_t *frame,
			     uint32_t caplen, uint32_t len, int has_vlan, uint16_t tpid,
			     uint16_t tci)
{
	uint8_t tag[4];
	uint32_t extra = 0;
	struct {
		uint32_t sec, frac, caplen, len;
	} rec;

	if (ts_ns < out->last_ns) {
		ts_ns = out->last_ns;
		out->clamped++;
	}
	out->last_ns = ts_ns;
	if (has_vlan && caplen >= 12) {
		uint16_t be_tpid = htons(tpid ? tpid : ETH_P_8021Q);
		uint16_t be_tci = htons(tci);

		memcpy(tag, &be_tpid, 2);
		memcpy(tag + 2, &be_tci, 2);
		extra = 4;
	}
	rec.sec = (uint32_t)(ts_ns / 1000000000u);
	rec.frac = (uint32_t)(ts_ns % 1000000000u);
	if (!out->nanos)
		rec.frac /= 1000u;
	rec.caplen = caplen + extra;
	rec.len = len + extra;
	if (fwrite(&rec, sizeof(rec), 1, out->f) != 1)
		return -1;
	if (extra) {
		if (fwrite(frame, 12, 1, out->f) != 1 || fwrite(tag, 4, 1, out->f) != 1 ||
		    (caplen > 12 && fwrite(frame + 12, caplen - 12, 1, out->f) != 1))
			return -1;
	} else if (caplen && fwrite(frame, caplen, 1, out->f) != 1) {
		return -1;
	}
	out->written++;
	return 0;
}

static int ctcap_port_wanted(const int *ifindex, int n, int idx)
{
	for (int i = 0; i < n; i++)
		if (ifindex[i] == idx)
			return 1;
	return 0;
}

/* Walks one retired block and hands it back to the kernel. */
static int ctcap_drain_block(struct tpacket_block_desc *bd, struct ctcap_out *out,
			     const int *ifindex, int nports)
{
	uint32_t n = bd->hdr.bh1.num_pkts;
	struct tpacket3_hdr *ph =
		(struct tpacket3_hdr *)((uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt);

	for (uint32_t i = 0; i < n; i++) {
		const struct sockaddr_ll *sll =
			(const struct sockaddr_ll *)((uint8_t *)ph +
						     TPACKET_ALIGN(sizeof(struct tpacket3_hdr)));
		out->captured++;
		if (sll->sll_pkttype != PACKET_OUTGOING &&
		    ctcap_port_wanted(ifindex, nports, sll->sll_ifindex)) {
			uint64_t ts = (uint64_t)ph->tp_sec * 1000000000u + ph->tp_nsec;
			int vlan = (ph->tp_status & TP_STATUS_VLAN_VALID) != 0;
			uint16_t tpid = (ph->tp_status & TP_STATUS_VLAN_TPID_VALID)
						? ph->hv1.tp_vlan_tpid
						: 0;

			if (ctcap_write_frame(out, ts, (uint8_t *)ph + ph->tp_mac, ph->tp_snaplen,
					      ph->tp_len, vlan, tpid, (uint16_t)ph->hv1.tp_vlan_tci))
				return -1;
		} else {
			out->skipped++;
		}
		ph = (struct tpacket3_hdr *)((uint8_t *)ph + ph->tp_next_offset);
	}
	__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	return 0;
}

/* Drains every block the kernel has handed over; returns how many. */
static int ctcap_drain(struct ctcap_ring *ring, struct ctcap_out *out, const int *ifindex,
		       int nports)
{
	int done = 0;

	for (;;) {
		struct tpacket_block_desc *bd =
			(struct tpacket_block_desc *)(ring->map +
						      (size_t)ring->next_block * CTCAP_BLOCK_BYTES);

		if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) &
		      TP_STATUS_USER))
			return done;
		if (ctcap_drain_block(bd, out, ifindex, nports))
			return -1;
		ring->next_block = (ring->next_block + 1) % ring->block_nr;
		done++;
	}
}

static int ctcap_open_ring(struct ctcap_ring *ring, unsigned int ring_mib)
{
	int v = TPACKET_V3, one = 1;
	struct tpacket_req3 req;

	ring->fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (ring->fd < 0) {
		perror("ctcap: socket(AF_PACKET)");
		return -1;
	}
	if (setsockopt(ring->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(ring->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one))) {
		perror("ctcap: setsockopt");
		return -1;
	}
	ring->block_nr = ring_mib * (1u << 20) / CTCAP_BLOCK_BYTES;
	if (ring->block_nr < 2)
		ring->block_nr = 2;
	memset(&req, 0, sizeof(req));
	req.tp_block_size = CTCAP_BLOCK_BYTES;
	req.tp_block_nr = ring->block_nr;
	req.tp_frame_size = CTCAP_FRAME_BYTES;
	req.tp_frame_nr = CTCAP_BLOCK_BYTES / CTCAP_FRAME_BYTES * ring->block_nr;
	req.tp_retire_blk_tov = CTCAP_RETIRE_MS;
	if (setsockopt(ring->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		perror("ctcap: PACKET_RX_RING");
		return -1;
	}
	ring->map_bytes = (size_t)CTCAP_BLOCK_BYTES * ring->block_nr;
	ring->map = mmap(NULL, ring->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED,
			 ring->fd, 0);
	if (ring->map == MAP_FAILED) {
		ring->map = mmap(NULL, ring->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
				 ring->fd, 0);
		if (ring->map == MAP_FAILED) {
			perror("ctcap: mmap");
			return -1;
		}
	}
	return 0;
}

static void ctcap_usage(void)
{
	fprintf(stderr, "usage: ctcap -w FILE -i PORT [-i PORT]... [-u] [-m MiB]\n");
}

int main(int argc, char **argv)
{
	int ifindex[CTCAP_MAX_PORTS], nports = 0, opt, rc = 0;
	unsigned int ring_mib = 64;
	const char *path = NULL;
	struct ctcap_ring ring = { .fd = -1 };
	struct ctcap_out out = { .nanos = 1 };
	struct tpacket_stats_v3 st;
	socklen_t stlen = sizeof(st);
	struct sigaction sa;

	while ((opt = getopt(argc, argv, "w:i:um:")) != -1) {
		switch (opt) {
		case 'w':
			path = optarg;
			break;
		case 'i':
			if (nports == CTCAP_MAX_PORTS) {
				fprintf(stderr, "ctcap: at most %d ports\n", CTCAP_MAX_PORTS);
				return 1;
			}
			ifindex[nports] = (int)if_nametoindex(optarg);
			if (!ifindex[nports]) {
				fprintf(stderr, "ctcap: no port %s: %s\n", optarg, strerror(errno));
				return 1;
			}
			nports++;
			break;
		case 'u':
			out.nanos = 0;
			break;
		case 'm':
			ring_mib = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		default:
			ctcap_usage();
			return 1;
		}
	}
	if (!path || !nports) {
		ctcap_usage();
		return 1;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ctcap_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	out.f = fopen(path, "wb");
	if (!out.f) {
		fprintf(stderr, "ctcap: %s: %s\n", path, strerror(errno));
		return 1;
	}
	setvbuf(out.f, NULL, _IOFBF, 1 << 20);
	if (ctcap_write_header(&out) || ctcap_open_ring(&ring, ring_mib))
		return 1;
	printf("ready\n");
	fflush(stdout);

	while (!ctcap_stop) {
		struct pollfd pfd = { .fd = ring.fd, .events = POLLIN | POLLERR };

		if (ctcap_drain(&ring, &out, ifindex, nports) < 0) {
			perror("ctcap: write");
			return 1;
		}
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			perror("ctcap: poll");
			return 1;
		}
	}
	/* The block being filled is handed over when its retire timer fires;
	 * wait for that, then take whatever is left. */
	for (int quiet = 0; quiet < 3;) {
		struct timespec ts = { 0, (long)CTCAP_RETIRE_MS * 2 * 1000000L };

		nanosleep(&ts, NULL);
		int got = ctcap_drain(&ring, &out, ifindex, nports);

		if (got < 0) {
			perror("ctcap: write");
			return 1;
		}
		quiet = got ? 0 : quiet + 1;
	}
	if (fflush(out.f) || fclose(out.f)) {
		perror("ctcap: close");
		return 1;
	}
	memset(&st, 0, sizeof(st));
	if (getsockopt(ring.fd, SOL_PACKET, PACKET_STATISTICS, &st, &stlen)) {
		perror("ctcap: PACKET_STATISTICS");
		rc = 1;
	}
	fprintf(stderr, "ctcap: captured=%llu written=%llu drops=%u clamped=%llu\n",
		(unsigned long long)out.captured, (unsigned long long)out.written, st.tp_drops,
		(unsigned long long)out.clamped);
	munmap(ring.map, ring.map_bytes);
	close(ring.fd);
	if (!rc && st.tp_drops)
		rc = 3;
	return rc;
}
