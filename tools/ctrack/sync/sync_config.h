/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_config.h - the `--sync` settings (docs/sync.md, "Configuration"):
 * one line of key=value pairs, comma-separated, for both the sync node
 * (struct ct_sync_config) and its transport (struct cts_config).
 *
 *   mode=ftfw,transport=udp,iface=eth2,local=10.0.0.2,peer=10.0.0.1
 *
 * Keys, with conntrackd.conf's name where there is one:
 *   mode=ftfw|notrack|alarm          Mode FTFW / NOTRACK / ALARM
 *   transport=udp|mcast|tcp          UDP / Multicast / TCP
 *   iface=NAME                       Interface
 *   local=ADDR                       IPv4_address / IPv6_address (UDP,
 *                                    TCP); IPv4_interface (multicast)
 *   peer=ADDR                        IPv4_Destination_Address (UDP, TCP)
 *   group=ADDR                       the multicast group (IPv4_address)
 *   accept=ADDR[+ADDR...]            who may send to us (default: peer)
 *   port=N                           Port / Group (default 3780)
 *   checksum=on|off                  Checksum (default on)
 *   rcvbuf=N, sndbuf=N               RcvSocketBuffer / SndSocketBuffer
 *   window=N                         ACKWindowSize (300)
 *   resend-queue=N                   ResendQueueSize (131072)
 *   refresh=S, cache-timeout=S       RefreshTime (60) / CacheTimeout (180)
 *   commit-timeout=S                 CommitTimeout (0: send timeouts)
 *   window-tracking=on|off           TCPWindowTracking (off)
 *   startup-resync=on|off            StartupResync (on here; off there)
 *   resync-on-hello=on|off           ctrack's (on)
 *   max-internal=N, max-external=N   HashLimit (262144 each)
 *   alive-ms=N                       conntrackd's fixed 1000
 *
 * Addresses decide the family (all must agree).  Errors say what is wrong
 * in words, naming the key.
 */
#ifndef CTRACK_TOOL_SYNC_CONFIG_H
#define CTRACK_TOOL_SYNC_CONFIG_H

#include <stddef.h>

#include "ctrack/sync.h"
#include "sync_transport.h"

struct ctsync_settings {
	struct ct_sync_config node;   /* send/send_arg left to the caller */
	struct cts_config link;
};

/* ctsync_settings_default - conntrackd's defaults (FTFW over UDP), the
 * first sequence number from the wall clock (time(NULL), as conntrackd). */
void ctsync_settings_default(struct ctsync_settings *s);

/* ctsync_settings_parse - apply @spec to @s.  Returns 0, or -1 with a
 * sentence in @err ("sync: peer=10.0.0: not an IPv4 or IPv6 address"). */
int ctsync_settings_parse(struct ctsync_settings *s, const char *spec, char *err,
			  size_t errlen);

#endif /* CTRACK_TOOL_SYNC_CONFIG_H */
