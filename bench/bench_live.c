/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_live.c - the daemon's capacity on a live interface, side by side
 * (issue 25, part 5): `ctrack-bench live`.
 *
 * Two namespaces made here and removed here (prefix ctkv, the pid): a
 * sender and a receiver joined by a veth pair.  The sender's traffic is
 * the kernel's own: UDP sockets (--flows of them, one flow each) sending
 * 18-byte datagrams with sendmmsg(), paced to a rate; the receiver drops
 * them in its input hook (nftables), so it sends nothing back.  In the
 * receiver, `ctrack daemon -i v1` tracks the veth's ingress.
 *
 * 1. Capacity: the rate is doubled from --start pps, 3 s a step, until the
 *    daemon's rings drop packets (PACKET_STATISTICS, through `ctrack
 *    stats`) or the sender cannot reach the rate; reported: the highest
 *    rate reached with zero drops (limited_by says whether the daemon's
 *    drops or the sender ended the climb), and at each step the rate
 *    reached, the drops and the daemon's CPU time per packet (/proc, user
 *    + system).
 * 2. At the highest zero-drop rate, in turn and for 3 s each: the daemon,
 *    softflowd -i v1 and nfpcapd -i v1 (Debian's), each alone on the
 *    interface, CPU time per packet; and the traffic of one step captured
 *    (tcpdump -w) and read by `ctrack read`, CPU time per packet.
 * Packets are counted at the receiver's interface (rx_packets), CPU from
 * /proc of each process.  Needs root, ip, nft; softflowd, nfpcapd and
 * tcpdump where present (a missing one is said and skipped).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_util.h"

static char ns_s[32], ns_r[32];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static long long num_of(const char *cmd)
{
	char line[256] = "";
	FILE *p = popen(cmd, "r");
	long long v = -1;

	if (!p)
		return -1;
	if (fgets(line, sizeof(line), p))
		v = strtoll(line, NULL, 10);
	pclose(p);
	return v;
}

static double cpu_of(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long ut = 0, st = 0;
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long long rx_packets(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip netns exec %s cat /sys/class/net/v1/statistics/rx_packets",
		 ns_r);
	return num_of(cmd);
}

static int enter(const char *ns)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
		return -1;
	close(fd);
	return 0;
}

/* The sender: @flows UDP sockets, @pps datagrams a second for @secs. */
static pid_t sender(unsigned flows, uint64_t pps, double secs)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid)
		return pid;
	if (enter(ns_s) < 0)
		_exit(2);
	{
		int *fd = calloc(flows, sizeof(int));
		struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(9000) };
		struct mmsghdr msgs[64];
		struct iovec iov = { "ctrack-bench-live", 18 };
		uint64_t sent = 0, t0 = bu_mono_ns(), end = t0 + (uint64_t)(secs * 1e9);
		unsigned next = 0;

		inet_pton(AF_INET, "10.88.0.2", &dst.sin_addr);
		for (unsigned i = 0; i < flows; i++) {
			fd[i] = socket(AF_INET, SOCK_DGRAM, 0);
			connect(fd[i], (struct sockaddr *)&dst, sizeof(dst));
		}
		memset(msgs, 0, sizeof(msgs));
		for (int i = 0; i < 64; i++) {
			msgs[i].msg_hdr.msg_iov = &iov;
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		for (;;) {
			uint64_t now = bu_mono_ns(), due;

			if (now >= end)
				break;
			due = (uint64_t)((double)(now - t0) * (double)pps / 1e9);
			if (sent >= due) {
				struct timespec ts = { 0, 20000 };

				nanosleep(&ts, NULL);
				continue;
			}
			/* a batch on one flow, then the next flow */
			{
				unsigned b = (unsigned)(due - sent > 64 ? 64 : due - sent);
				int k = sendmmsg(fd[next], msgs, b, 0);

				if (k > 0)
					sent += (uint64_t)k;
				next = (next + 1) % flows;
			}
		}
		_exit(0);
	}
}

static pid_t start_in(const char *ns, char *const argv[], const char *out)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid)
		return pid;
	if (enter(ns) < 0)
		_exit(2);
	{
		int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
	}
	execvp(argv[0], argv);
	_exit(127);
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* Ring packets and drops from `ctrack stats -o json` (all workers). */
static void rings(const char *ctrack, const char *sock, long long *pk, long long *dr)
{
	char cmd[PATH_MAX * 2 + 128];

	snprintf(cmd, sizeof(cmd), "'%s' stats -o json --socket '%s' | python3 -c \"import json,"
		 "sys; j=json.load(sys.stdin); print(sum(r['packets'] for r in j['rings']), "
		 "j['ring_drops'])\"", ctrack, sock);
	{
		FILE *p = popen(cmd, "r");

		*pk = *dr = -1;
		if (p) {
			if (fscanf(p, "%lld %lld", pk, dr) != 2)
				*pk = *dr = -1;
			pclose(p);
		}
	}
}

struct step {
	uint64_t want;
	double got_pps, ns_per_pkt;
	long long drops;
};

int bench_live(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	uint64_t start = bu_opt_u64(a, "start", 25000);
	unsigned flows = (unsigned)bu_opt_u64(a, "flows", 1000);
	double secs = quick ? 2.0 : 3.0;
	char self[PATH_MAX], ctrack[PATH_MAX + 32], dir[] = "/tmp/ctk-blive-XXXXXX", sock[PATH_MAX];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct step steps[16];
	unsigned ns = 0;
	uint64_t best = 0;
	bool dropped = false;
	pid_t dm;
	struct bu_rec r;

	if (geteuid() != 0 || sh("command -v ip nft >/dev/null 2>&1")) {
		fprintf(stderr, "ctrack-bench live: needs root, ip and nft; skipped\n");
		return 0;
	}
	if (l <= 0 || !mkdtemp(dir))
		return 1;
	self[l] = 0;
	*strrchr(self, '/') = 0;
	snprintf(ctrack, sizeof(ctrack), "%s/../tools/ctrack", self);
	snprintf(sock, sizeof(sock), "%s/ctrack.sock", dir);
	snprintf(ns_s, sizeof(ns_s), "ctkv%d-s", (int)getpid());
	snprintf(ns_r, sizeof(ns_r), "ctkv%d-r", (int)getpid());
	if (sh("ip netns add %s && ip netns add %s && ip link add v0 netns %s type veth peer name v1 "
	       "netns %s && ip -n %s addr add 10.88.0.1/24 dev v0 && ip -n %s addr add "
	       "10.88.0.2/24 dev v1 && ip -n %s link set v0 up && ip -n %s link set v1 up && "
	       "ip -n %s link set lo up && ip -n %s link set lo up && ip -n %s neigh replace "
	       "10.88.0.2 lladdr $(ip -n %s -o link show v1 | grep -o 'link/ether [^ ]*' | cut -d' ' "
	       "-f2) dev v0 nud permanent && printf 'table inet t {\\n chain in {\\n  type filter "
	       "hook input priority 0;\\n  udp dport 9000 drop\\n }\\n}\\n' | ip netns exec %s nft "
	       "-f -", ns_s, ns_r, ns_s, ns_r, ns_s, ns_r, ns_s, ns_r, ns_s, ns_r, ns_s, ns_r, ns_r)) {
		fprintf(stderr, "ctrack-bench live: namespace set-up failed\n");
		goto out;
	}
	{
		char *argv[] = { ctrack, "daemon", "-i", "v1", "--socket", sock, "--set",
				 "nf_conntrack_checksum=0", NULL };

		dm = start_in(ns_r, argv, NULL);
	}
	for (int i = 0; i < 200 && access(sock, F_OK); i++)
		bu_sleep_ns(50000000ull);
	bu_sleep_ns(300000000ull);
	/* 1. capacity */
	for (uint64_t want = start; ns < 16; want *= 2) {
		long long p0, d0, p1, d1, rx0, rx1;
		double c0, c1;
		pid_t s;

		rings(ctrack, sock, &p0, &d0);
		rx0 = rx_packets();
		c0 = cpu_of(dm);
		s = sender(flows, want, secs);
		waitpid(s, NULL, 0);
		bu_sleep_ns(200000000ull);
		c1 = cpu_of(dm);
		rx1 = rx_packets();
		rings(ctrack, sock, &p1, &d1);
		steps[ns].want = want;
		steps[ns].got_pps = (double)(rx1 - rx0) / secs;
		steps[ns].drops = d1 - d0;
		steps[ns].ns_per_pkt = (p1 - p0) > 0 ? (c1 - c0) * 1e9 / (double)(p1 - p0) : 0;
		bu_rec_begin(&r, a, "live", "capacity-step");
		bu_rec_int(&r, "target_pps", want);
		bu_rec_num(&r, "reached_pps", steps[ns].got_pps);
		bu_rec_int(&r, "ring_packets", (uint64_t)(p1 - p0));
		bu_rec_int(&r, "ring_drops", (uint64_t)(steps[ns].drops < 0 ? 0 : steps[ns].drops));
		bu_rec_num(&r, "daemon_cpu_ns_per_packet", steps[ns].ns_per_pkt);
		bu_rec_end(&r);
		if (steps[ns].drops != 0) {
			dropped = true;
			break;
		}
		if (steps[ns].got_pps > (double)best)
			best = (uint64_t)steps[ns].got_pps;
		if (steps[ns].got_pps < 0.9 * (double)want) {
			ns++;
			break;    /* the sender is the limit now */
		}
		ns++;
	}
	/* 2. side by side at the highest rate without drops */
	if (best) {
		char cap[PATH_MAX + 16], outd[PATH_MAX + 16];
		double cpu_pk[4] = { 0, 0, 0, 0 };
		const char *who[4] = { "ctrack-daemon", "softflowd", "nfpcapd", "ctrack-read" };

		snprintf(cap, sizeof(cap), "%s/v1.pcap", dir);
		snprintf(outd, sizeof(outd), "%s/nfpcapd", dir);
		mkdir(outd, 0755);
		for (int k = 0; k < 3; k++) {
			pid_t tool = 0, s, td = 0;
			long long rx0, rx1;
			double c0, c1;

			if (k == 0) {
				char *tv[] = { "tcpdump", "-i", "v1", "-Q", "in", "-w", cap, "-U", NULL };

				if (!sh("command -v tcpdump >/dev/null 2>&1"))
					td = start_in(ns_r, tv, NULL);
				tool = dm;
			} else if (k == 1) {
				char *sv[] = { "softflowd", "-i", "v1", "-d", "-n", "127.0.0.1:9995", NULL };

				if (sh("command -v softflowd >/dev/null 2>&1"))
					continue;
				tool = start_in(ns_r, sv, NULL);
			} else {
				char *nv[] = { "nfpcapd", "-i", "v1", "-w", outd, NULL };

				if (sh("command -v nfpcapd >/dev/null 2>&1"))
					continue;
				tool = start_in(ns_r, nv, NULL);
			}
			bu_sleep_ns(700000000ull);
			rx0 = rx_packets();
			c0 = cpu_of(tool);
			s = sender(flows, best, secs);
			waitpid(s, NULL, 0);
			bu_sleep_ns(300000000ull);
			c1 = cpu_of(tool);
			rx1 = rx_packets();
			cpu_pk[k] = rx1 > rx0 ? (c1 - c0) * 1e9 / (double)(rx1 - rx0) : 0;
			if (k)
				stop(tool);
			if (td)
				stop(td);
		}
		{
			char *cv[] = { ctrack, "read", "--no-table", "--set", "nf_conntrack_checksum=0", cap,
				       NULL };
			long long pk = -1;
			char cnt[PATH_MAX * 2];
			struct rusage ru;
			pid_t c;
			int st;

			snprintf(cnt, sizeof(cnt), "tcpdump -r '%s' 2>/dev/null | wc -l", cap);
			pk = num_of(cnt);
			fflush(NULL);
			c = fork();
			if (c == 0) {
				int nul = open("/dev/null", O_WRONLY);

				dup2(nul, 1);
				dup2(nul, 2);
				execv(ctrack, cv);
				_exit(127);
			}
			if (c > 0 && wait4(c, &st, 0, &ru) == c && pk > 0)
				cpu_pk[3] = ((double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
					     (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6) * 1e9 /
					    (double)pk;
		}
		for (int k = 0; k < 4; k++) {
			bu_rec_begin(&r, a, "live", "cpu-per-packet");
			bu_rec_str(&r, "tool", who[k]);
			bu_rec_int(&r, "pps", best);
			bu_rec_num(&r, "cpu_ns_per_packet", cpu_pk[k]);
			bu_rec_end(&r);
		}
	}
	bu_rec_begin(&r, a, "live", "capacity");
	bu_rec_int(&r, "zero_drop_pps", best);
	bu_rec_str(&r, "limited_by", dropped ? "daemon ring drops" : "the sender (no drop seen)");
	bu_rec_int(&r, "flows", flows);
	bu_rec_str(&r, "traffic", "kernel UDP sockets (sendmmsg), 18-byte datagrams, over a veth");
	bu_rec_end(&r);
	stop(dm);
out:
	sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null", ns_s, ns_r);
	sh("rm -rf '%s'", dir);
	return 0;
}
