/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lifecycle.h - namespace objects, which the table makes (private).
 */
#ifndef CT_LIFECYCLE_H
#define CT_LIFECYCLE_H

#include <stdint.h>

#include "base/state.h"

/* A namespace object for zone @id with a copy of settings @s: its slabs
 * set up, one reference (the published one), not yet published (the
 * caller stores it in t->ns[id] under ns_lock).  Also marks the
 * extensions @s asks for as seen (t->ext_seen) before any packet can
 * create an entry under them.  NULL when out of memory.  Any thread;
 * allocates, takes no lock. */
struct ct_ns *ct_table_ns_new(struct ct_table *t, uint16_t id, const struct ct_settings *s);

#endif /* CT_LIFECYCLE_H */
