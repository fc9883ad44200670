/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_daemon.c - `ctrack daemon`: start, run, reload, stop.
 *
 * Foreground, as systemd expects (tools/ctrack/daemon/ctrack.service is
 * Type=notify: READY=1 once the control socket listens and the sources
 * deliver, RELOADING=1 around a SIGHUP, STOPPING=1 at the end).  Start-up
 * order is chosen so that a failure leaves nothing behind and no packet
 * is tracked by half a daemon: the table and its event handler, the
 * control socket (a second daemon on the same socket stops here), the
 * flow export and metrics listener (a TCP collector that refuses, a port
 * in use: stopped here), the sources (rings joined in one fanout group,
 * or the capture opened), the workers, the collector thread on the
 * daemon's clock, and last the replay's feeder.  Shutdown goes the other
 * way, so that no thread is left using what is freed; the export goes
 * once the packet threads and the collector stopped and their last
 * events were handed over, so that every connection that ended has its
 * record and those still open theirs (docs/export.md).
 *
 * SIGHUP rereads the config file and the original command line
 * (options.c) and applies what can change while running: the conntrack
 * settings (ct_ns_set_settings publishes them with RCU; the table and its
 * entries stay), the capture filter (attached to every socket), the
 * socket's groups and mode, the client limits.  Options that would need
 * new threads or sockets (interfaces, workers, the socket's path) keep
 * their old values, with a line in the log saying so.
 *
 * State across restarts (--state, dm_state.c): the file is loaded once
 * the control socket is ours (so a second daemon refused there never
 * touches it) and before the sources start; the last save comes after
 * the workers and the collector have stopped, so it holds the table as
 * the last packet left it.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef CTRACK_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#else
static int sd_notify(int unset, const char *state)
{
	(void)unset;
	(void)state;
	return 0;
}
#endif

#include "../cli.h"
#include "daemon.h"
#include "dm_sync.h"

void dm_log(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	/* clang-analyzer 14 loses the va_start above (as in format.c) */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ctrack daemon: %s\n", buf);
}

void dm_settings_changed(struct daemon *d)
{
	struct ct_settings s;

	ct_table_get_settings(d->t, &s);
	atomic_store_explicit(&d->min_timeout_ns,
			      (uint64_t)ct_settings_min_timeout(&s) * 1000000000ull,
			      memory_order_relaxed);
}

void dm_reload(struct daemon *d)
{
	struct dm_options n;
	char err[1024];
	const char *fixed;

	sd_notify(0, "RELOADING=1");
	if (dm_options_parse(d->argc, d->argv, &n, err, sizeof(err)) != 0) {
		dm_log("SIGHUP: %s; keeping the current settings", err);
		sd_notify(0, "READY=1");
		return;
	}
	if ((fixed = dm_options_restart_only(&d->opt, &n)))
		dm_log("SIGHUP: '%s' changed, but only a restart can change it; keeping the "
		       "running value (and the other options that need a restart)", fixed);
	n.set.buckets = d->opt.set.buckets;
	if (ct_ns_set_settings(d->t, 0, &n.set) < 0) {
		dm_log("SIGHUP: out of memory; keeping the current settings");
		sd_notify(0, "READY=1");
		return;
	}
	d->opt.set = n.set;
	dm_settings_changed(d);
	if (strcmp(n.filter, d->opt.filter) != 0 && d->opt.n_ifaces) {
		if (dm_live_set_filter(d, n.filter, err, sizeof(err)) < 0)
			dm_log("SIGHUP: %s; keeping the old filter", err);
		else
			memcpy(d->opt.filter, n.filter, sizeof(n.filter));
	}
	memcpy(d->opt.socket_group, n.socket_group, sizeof(n.socket_group));
	memcpy(d->opt.admin_group, n.admin_group, sizeof(n.admin_group));
	d->opt.socket_mode = n.socket_mode;
	d->opt.max_clients = n.max_clients;
	d->opt.events_buffer_kb = n.events_buffer_kb;
	d->opt.state_interval = n.state_interval;
	if (ctl_server_reconfigure(d, err, sizeof(err)) < 0)
		dm_log("SIGHUP: %s", err);
	d->reloads++;
	dm_log("SIGHUP: settings reread (%s); %llu entries kept",
	       d->opt.have_config ? d->opt.config : "command line",
	       (unsigned long long)ct_table_count(d->t));
	sd_notify(0, "READY=1");
}

static void raise_nofile(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int cmd_daemon(int argc, char **argv)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct ct_table_config cfg;
	char err[1024] = "";
	sigset_t mask;
	int r, rc = CT_EXIT_OK;
	bool ran = false;

	if (!d) {
		fprintf(stderr, "ctrack daemon: out of memory\n");
		return CT_EXIT_INTERNAL;
	}
	r = dm_options_parse(argc, argv, &d->opt, err, sizeof(err));
	if (r) {
		free(d);
		if (r > 0)
			return CT_EXIT_OK;
		fprintf(stderr, "ctrack daemon: %s\n", err);
		return CT_EXIT_USAGE;
	}
	if (d->opt.check) {
		printf("ctrack daemon: the options%s%s are valid\n", d->opt.have_config ? " and " : "",
		       d->opt.have_config ? d->opt.config : "");
		free(d);
		return CT_EXIT_OK;
	}
	d->argc = argc;
	d->argv = argv;
	d->n_workers = d->opt.workers;
	signal(SIGPIPE, SIG_IGN);
	/* every thread started from here on inherits the mask; the main
	 * loop takes these signals from a signalfd */
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	raise_nofile(d->opt.max_clients + 256);

	/* aligned_alloc wants a size that is a multiple of the alignment */
	d->w = aligned_alloc(64, (sizeof(*d->w) * d->n_workers + 63) & ~(size_t)63);
	d->bus = evbus_new(d->opt.event_ring);
	if (!d->w || !d->bus) {
		fprintf(stderr, "ctrack daemon: out of memory\n");
		return CT_EXIT_INTERNAL;
	}
	memset(d->w, 0, sizeof(*d->w) * d->n_workers);
	if (dm_nat_start(d, err, sizeof(err)) < 0) {
		fprintf(stderr, "ctrack daemon: %s\n", err);
		free(d->w);
		evbus_free(d->bus);
		free(d);
		return CT_EXIT_USAGE;
	}
	ct_table_config_default(&cfg);
	cfg.settings = d->opt.set;
	cfg.nat = d->nat_on;
	cfg.nat_exact_ports = d->opt.nat_exact_ports;
	ex_table_config(&d->opt.ex, &cfg);    /* TCP flags for IPFIX */
	if ((r = ct_table_create(&cfg, &d->t)) < 0) {
		fprintf(stderr, "ctrack daemon: cannot create the table: %s\n", strerror(-r));
		return CT_EXIT_INTERNAL;
	}
	if (dm_table_created)
		dm_table_created(d->t);
	ct_table_set_event_handler(d->t, evbus_handler, d->bus);
	/* nobody reads events yet: the table builds none but DESTROY */
	ct_table_set_event_mask(d->t, evbus_want(d->bus));
	d->thr = ct_thread_attach(d->t);
	if (!d->thr) {
		fprintf(stderr, "ctrack daemon: out of memory\n");
		return CT_EXIT_INTERNAL;
	}
	atomic_store(&d->wall_ns, dclock_wall_offset());
	d->started = dclock_now();
	dm_settings_changed(d);

	if (ctl_server_open(d, err, sizeof(err)) < 0) {
		rc = CT_EXIT_INPUT;
		goto out;
	}
	if ((rc = dm_state_load(d, err, sizeof(err))) != CT_EXIT_OK)
		goto out;
	if (dm_export_start(d, err, sizeof(err)) < 0) {
		rc = CT_EXIT_USAGE;
		goto out;
	}
	/* before the sources: the sync node sees the table's first event */
	if (dm_sync_open(d, err, sizeof(err)) < 0) {
		rc = CT_EXIT_INPUT;
		goto out;
	}
	if (d->opt.n_ifaces)
		r = dm_live_open(d, err, sizeof(err));
	else
		r = dm_replay_open(d, err, sizeof(err));
	if (r < 0) {
		rc = CT_EXIT_INPUT;
		goto out;
	}
	if (dm_workers_start(d, err, sizeof(err)) < 0) {
		rc = CT_EXIT_INTERNAL;
		goto out;
	}
	if ((r = ct_gc_start(d->t, NULL, NULL)) < 0) {
		snprintf(err, sizeof(err), "cannot start the collector: %s", strerror(-r));
		rc = CT_EXIT_INTERNAL;
		goto out;
	}
	if (d->rp && dm_replay_start(d, err, sizeof(err)) < 0) {
		rc = CT_EXIT_INTERNAL;
		goto out;
	}
	if (d->opt.n_ifaces) {
		char list[DM_MAX_IFACES * (IF_NAMESIZE + 1) + 1] = "";
		size_t len = 0;

		for (unsigned i = 0; i < d->opt.n_ifaces; i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? "," : "",
						d->opt.ifaces[i]);
		dm_log("tracking %s with %u worker%s%s%s; control socket %s", list, d->n_workers,
		       d->n_workers == 1 ? "" : "s", d->opt.filter[0] ? ", filter " : "",
		       d->opt.filter, d->opt.socket_path);
	} else {
		dm_log("replaying %s at %gx with %u worker%s; control socket %s", d->opt.replay,
		       d->opt.speed, d->n_workers, d->n_workers == 1 ? "" : "s",
		       d->opt.socket_path);
	}
	if (d->nat_on)
		dm_log("NAT: %zu rule%s", d->nat.n, d->nat.n == 1 ? "" : "s");
	/* the control plane yields to the packet path when they compete for a
	 * core: a client listing a million entries must not lengthen bursts */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), d->opt.control_nice) < 0)
		dm_log("cannot lower the control thread's priority: %s", strerror(errno));
	sd_notify(0, "READY=1");
	ctl_server_run(d);
	sd_notify(0, "STOPPING=1");
	ran = true;
out:
	if (err[0])
		fprintf(stderr, "ctrack daemon: %s\n", err);
	atomic_store(&d->stop, true);
	dm_workers_stop(d);
	dm_replay_close(d);
	ct_gc_stop(d->t);
	if (d->ex) {
		/* the last DESTROYs, then the export's end: before the rings
		 * go, which a scrape reads */
		if (d->srv)
			ctl_server_drain(d);
		if (dm_export_stop(d) < 0 && rc == CT_EXIT_OK)
			rc = CT_EXIT_INTERNAL;
	}
	if (ran && dm_state_save(d, "stop") != CT_EXIT_OK)
		rc = CT_EXIT_INTERNAL;
	dm_live_close(d);
	dm_sync_close(d);
	ctl_server_close(d);
	ct_table_set_event_handler(d->t, NULL, NULL);
	if (d->thr)
		ct_thread_detach(d->thr);
	ct_table_destroy(d->t);
	evbus_free(d->bus);
	dm_nat_stop(d);
	if (rc == CT_EXIT_OK)
		dm_log("stopped");
	free(d->w);
	free(d);
	return rc;
}
