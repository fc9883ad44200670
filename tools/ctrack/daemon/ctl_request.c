/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_request.c - the control protocol's request parser (ctl_request.h).
 *
 * jansson reads the JSON (a trusted library rather than a parser of our
 * own: the daemon reads requests from other users' processes); this file
 * checks its shape.  Every member is looked up by name from a table of
 * what each command takes, so an unknown or misplaced member is an error
 * with its name in it, and the filter's terms are applied in
 * ctl_filter_keys order (the protocol before the state that depends on
 * it), whatever order the client wrote them in.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ctl_request.h"

static const char *const cmd_names[CMD_N] = {
	[CMD_HELLO] = "hello", [CMD_LIST] = "list", [CMD_GET] = "get",
	[CMD_COUNT] = "count", [CMD_EVENTS] = "events", [CMD_STATS] = "stats",
	[CMD_FLUSH] = "flush", [CMD_DELETE] = "delete", [CMD_SET] = "set",
	[CMD_SYSCTL] = "sysctl",
};

/* Members each command takes besides "v" and "cmd". */
enum { M_FORMAT = 1, M_OUTPUT = 2, M_ZERO = 4, M_FILTER = 8, M_EVENTS = 16, M_NAME = 32,
       M_VALUE = 64 };

static const unsigned cmd_members[CMD_N] = {
	[CMD_HELLO] = 0,
	[CMD_LIST] = M_FORMAT | M_OUTPUT | M_ZERO | M_FILTER,
	[CMD_GET] = M_FORMAT | M_OUTPUT | M_FILTER,
	[CMD_COUNT] = M_FILTER,
	[CMD_EVENTS] = M_FORMAT | M_OUTPUT | M_FILTER | M_EVENTS,
	[CMD_STATS] = 0,
	[CMD_FLUSH] = 0,
	[CMD_DELETE] = M_FILTER,
	[CMD_SET] = M_NAME | M_VALUE,
	[CMD_SYSCTL] = M_NAME,
};

static const struct {
	const char *name;
	unsigned bit;
} members[] = {
	{ "format", M_FORMAT }, { "output", M_OUTPUT }, { "zero", M_ZERO },
	{ "filter", M_FILTER }, { "events", M_EVENTS }, { "name", M_NAME },
	{ "value", M_VALUE },
};

bool ctl_cmd_is_admin(enum ctl_cmd c)
{
	return c == CMD_FLUSH || c == CMD_DELETE || c == CMD_SET;
}

const char *ctl_cmd_name(enum ctl_cmd c)
{
	return (unsigned)c < CMD_N ? cmd_names[c] : "?";
}

#define FAIL(c, ...) do { snprintf(err, errlen, __VA_ARGS__); *code = (c); goto out; } while (0)

/* A filter term's value: a string, or an integer written out. */
static const char *term_text(json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	return NULL;
}

static int parse_filter(json_t *o, struct ctl_filter *f, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(o)) {
		snprintf(err, errlen, "\"filter\" must be an object of terms, e.g. "
			 "{\"proto\":\"tcp\",\"dport\":\"80\"}");
		return -1;
	}
	json_object_foreach(o, key, v) {
		unsigned i;

		for (i = 0; ctl_filter_keys[i]; i++)
			if (!strcmp(key, ctl_filter_keys[i]))
				break;
		if (!ctl_filter_keys[i]) {
			char e2[200];

			ctl_filter_set(f, key, "", e2, sizeof(e2));
			snprintf(err, errlen, "filter: %s", e2);
			return -1;
		}
	}
	for (unsigned i = 0; ctl_filter_keys[i]; i++) {
		char nb[32];
		const char *text;

		v = json_object_get(o, ctl_filter_keys[i]);
		if (!v)
			continue;
		text = term_text(v, nb, sizeof(nb));
		if (!text) {
			snprintf(err, errlen, "filter: \"%s\" must be a string or an integer",
				 ctl_filter_keys[i]);
			return -1;
		}
		if (ctl_filter_set(f, ctl_filter_keys[i], text, err, errlen) < 0)
			return -1;
	}
	return ctl_filter_check(f, err, errlen);
}

static int parse_format(const char *s, enum out_format *f)
{
	if (!strcmp(s, "conntrack") || !strcmp(s, "default"))
		*f = FMT_CONNTRACK;
	else if (!strcmp(s, "extended"))
		*f = FMT_EXTENDED;
	else if (!strcmp(s, "json"))
		*f = FMT_JSON;
	else
		return -1;
	return 0;
}

int ctl_request_parse(const char *line, size_t len, struct ctl_request *r,
		      char *err, size_t errlen, const char **code)
{
	json_error_t je;
	json_t *root, *v;
	const char *key, *cmd;
	int ret = -1;
	unsigned allowed;

	memset(r, 0, sizeof(*r));
	r->format = FMT_CONNTRACK;
	r->event_mask = CTL_EV_ALL;
	*code = "EPROTO";
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(err, errlen, "not JSON: %s (at byte %d)", je.text, je.position);
		return -1;
	}
	if (!json_is_object(root))
		FAIL("EPROTO", "a request is one JSON object, e.g. {\"v\":1,\"cmd\":\"list\"}");
	v = json_object_get(root, "v");
	if (!v)
		FAIL("EVERSION", "the request has no protocol version (\"v\":%d)", CTL_PROTO_VERSION);
	if (!json_is_integer(v) || json_integer_value(v) != CTL_PROTO_VERSION)
		FAIL("EVERSION", "this daemon speaks protocol version %d; the request asks for "
		     "another (\"v\" must be the integer %d)", CTL_PROTO_VERSION, CTL_PROTO_VERSION);
	v = json_object_get(root, "cmd");
	if (!v || !json_is_string(v))
		FAIL("EINVAL", "the request has no \"cmd\" string");
	cmd = json_string_value(v);
	for (r->cmd = 0; r->cmd < CMD_N; r->cmd++)
		if (!strcmp(cmd, cmd_names[r->cmd]))
			break;
	if (r->cmd == CMD_N)
		FAIL("ENOSYS", "unknown command \"%.64s\" (hello, list, get, count, events, stats, "
		     "flush, delete, set, sysctl)", cmd);
	allowed = cmd_members[r->cmd];
	json_object_foreach(root, key, v) {
		size_t i;

		if (!strcmp(key, "v") || !strcmp(key, "cmd"))
			continue;
		for (i = 0; i < sizeof(members) / sizeof(members[0]); i++)
			if (!strcmp(key, members[i].name))
				break;
		if (i == sizeof(members) / sizeof(members[0]) || !(allowed & members[i].bit))
			FAIL("EINVAL", "\"%s\" takes no member \"%.64s\"", cmd_names[r->cmd], key);
	}
	if ((v = json_object_get(root, "format"))) {
		if (!json_is_string(v) || parse_format(json_string_value(v), &r->format) < 0)
			FAIL("EINVAL", "\"format\" must be \"conntrack\", \"extended\" or \"json\"");
	}
	if ((v = json_object_get(root, "output"))) {
		size_t i;
		json_t *e;

		if (!json_is_array(v))
			FAIL("EINVAL", "\"output\" must be an array of \"id\", \"ktimestamp\", "
			     "\"timestamp\"");
		json_array_foreach(v, i, e) {
			const char *s = json_is_string(e) ? json_string_value(e) : "";

			if (!strcmp(s, "id"))
				r->id = true;
			else if (!strcmp(s, "ktimestamp"))
				r->ktimestamp = true;
			else if (!strcmp(s, "timestamp"))
				r->stamp = true;
			else
				FAIL("EINVAL", "\"output\" takes \"id\", \"ktimestamp\" and "
				     "\"timestamp\"");
		}
	}
	if ((v = json_object_get(root, "zero"))) {
		if (!json_is_boolean(v))
			FAIL("EINVAL", "\"zero\" must be true or false");
		r->zero = json_is_true(v);
	}
	if ((v = json_object_get(root, "events"))) {
		size_t i;
		json_t *e;

		if (!json_is_array(v) || !json_array_size(v))
			FAIL("EINVAL", "\"events\" must be a non-empty array of \"new\", "
			     "\"update\", \"destroy\"");
		r->event_mask = 0;
		json_array_foreach(v, i, e) {
			const char *s = json_is_string(e) ? json_string_value(e) : "";

			if (!strcasecmp(s, "new"))
				r->event_mask |= CTL_EV_NEW;
			else if (!strcasecmp(s, "update"))
				r->event_mask |= CTL_EV_UPDATE;
			else if (!strcasecmp(s, "destroy"))
				r->event_mask |= CTL_EV_DESTROY;
			else
				FAIL("EINVAL", "\"events\" takes \"new\", \"update\" and \"destroy\"");
		}
	}
	if ((v = json_object_get(root, "filter"))) {
		if (parse_filter(v, &r->filter, err, errlen) < 0) {
			*code = "EINVAL";
			goto out;
		}
		r->has_filter = r->filter.have != 0;
	}
	if ((v = json_object_get(root, "name"))) {
		if (!json_is_string(v) || !json_string_length(v) ||
		    json_string_length(v) >= sizeof(r->name))
			FAIL("EINVAL", "\"name\" must be a setting's name (a string of at most %zu "
			     "bytes)", sizeof(r->name) - 1);
		memcpy(r->name, json_string_value(v), json_string_length(v) + 1);
	}
	if ((v = json_object_get(root, "value"))) {
		char nb[32];
		const char *t = term_text(v, nb, sizeof(nb));

		if (!t || !*t || strlen(t) >= sizeof(r->value))
			FAIL("EINVAL", "\"value\" must be a number (a string or an integer)");
		memcpy(r->value, t, strlen(t) + 1);
	}
	if (r->cmd == CMD_SET && (!r->name[0] || !r->value[0]))
		FAIL("EINVAL", "\"set\" needs \"name\" and \"value\"");
	if (r->cmd == CMD_DELETE && !r->has_filter)
		FAIL("EINVAL", "\"delete\" needs a filter naming what to delete (use \"flush\" to "
		     "remove everything)");
	if (r->cmd == CMD_GET) {
		struct ct_tuple t;

		if (ctl_filter_tuple(&r->filter, &t, err, errlen) < 0) {
			*code = "EINVAL";
			goto out;
		}
	}
	ret = 0;
out:
	json_decref(root);
	return ret;
}
