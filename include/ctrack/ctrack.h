/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/ctrack.h - everything a program embedding libctrack includes.
 *
 * libctrack is a userspace connection tracker with Linux nf_conntrack's
 * semantics.  The pieces, in the order a packet meets them:
 *   packet.h   frame -> struct ct_packet (parse; no state)
 *   defrag.h   fragments -> datagrams (per thread)
 *   table.h    the table, threads, ct_process / ct_process_burst, dumps
 *   events.h   NEW / UPDATE / DESTROY
 *   gc.h       the collector
 *   ns.h       namespaces and batched teardown
 *   stats.h    counters
 *   settings.h the kernel's knobs
 *   sync.h     conntrackd's state synchronization protocol
 *   nat.h      NAT: tuple choice and packet translation (not yet joined
 *              to the table: docs/nat-design.md)
 *   record.h   whole entries out and in (state files, sync commits)
 *   statefile.h a table's entries and counters in a file, and back
 *   control.h  a live table's control plane: sliced listing, delete
 *   dec.h      numbers in decimal, as tuples print theirs (tuple.h)
 */
#ifndef CTRACK_CTRACK_H
#define CTRACK_CTRACK_H

#define CTRACK_VERSION "0.1.0"

#include "ctrack/dec.h"
#include "ctrack/tuple.h"
#include "ctrack/packet.h"
#include "ctrack/defrag.h"
#include "ctrack/settings.h"
#include "ctrack/table.h"
#include "ctrack/events.h"
#include "ctrack/stats.h"
#include "ctrack/gc.h"
#include "ctrack/ns.h"
#include "ctrack/sync.h"
#include "ctrack/nat.h"
#include "ctrack/record.h"
#include "ctrack/statefile.h"
#include "ctrack/control.h"

#endif /* CTRACK_CTRACK_H */
