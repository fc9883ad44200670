/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics_http.c - GET /metrics over HTTP with libmicrohttpd (metrics.h).
 *
 * libmicrohttpd (Debian libmicrohttpd-dev) runs its own polling thread;
 * each request renders the page there (metrics_render attaches that
 * thread to the table for the dump), so a scrape never runs on a packet
 * thread and a slow scraper holds nobody but itself.  The listener binds
 * the address it is given only: metrics are for localhost or a
 * management network, never 0.0.0.0 by default.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "metrics.h"

struct metrics_http {
	struct MHD_Daemon *d;
	struct ex_sink *m;
	unsigned port;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version,
			      const char *upload, size_t *upload_size, void **state)
{
	struct metrics_http *h = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned code = MHD_HTTP_OK;
	char *page = NULL;
	size_t len = 0;
	static const char not_found[] = "not found: the metrics are at /metrics\n";
	static const char no_mem[] = "out of memory\n";

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return MHD_NO;
	if (!strcmp(url, "/metrics") || !strcmp(url, "/")) {
		page = metrics_render(h->m, &len);
		if (!page)
			code = MHD_HTTP_INTERNAL_SERVER_ERROR;
	} else {
		code = MHD_HTTP_NOT_FOUND;
	}
	if (page)
		r = MHD_create_response_from_buffer(len, page, MHD_RESPMEM_MUST_FREE);
	else if (code == MHD_HTTP_NOT_FOUND)
		r = MHD_create_response_from_buffer(sizeof(not_found) - 1, (void *)not_found,
						    MHD_RESPMEM_PERSISTENT);
	else
		r = MHD_create_response_from_buffer(sizeof(no_mem) - 1, (void *)no_mem,
						    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(page);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				page ? "text/plain; version=0.0.4; charset=utf-8"
				     : "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

int metrics_http_start(struct ex_sink *m, const char *listen,
		       struct metrics_http **out, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	const char *colon = strrchr(listen, ':');
	char host[128];
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
	struct metrics_http *h;
	const union MHD_DaemonInfo *info;
	char *end;
	unsigned long port;

	if (!colon || colon == listen) {
		snprintf(err, errlen, "takes ADDR:PORT, e.g. 127.0.0.1:9469 or [::1]:9469");
		return -EINVAL;
	}
	port = strtoul(colon + 1, &end, 10);
	if (end == colon + 1 || *end || port > 65535) {
		snprintf(err, errlen, "'%s' is not a port number", colon + 1);
		return -EINVAL;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
	memset(&ss, 0, sizeof(ss));
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		host[strlen(host) - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1) {
			snprintf(err, errlen, "'%s' is not an IPv6 address", host + 1);
			return -EINVAL;
		}
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		flags |= MHD_USE_IPv6;
	} else {
		if (!strcmp(host, "localhost"))
			snprintf(host, sizeof(host), "127.0.0.1");
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1) {
			snprintf(err, errlen, "'%s' is not an IPv4 address (an IPv6 one goes "
				 "in brackets)", host);
			return -EINVAL;
		}
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	h->m = m;
	h->d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, answer, h,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_LIMIT, 16u,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "cannot listen on %s (in use, or not an address "
			 "of this machine?)", listen);
		free(h);
		return -EADDRINUSE;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : (unsigned)port;
	*out = h;
	return 0;
}

unsigned metrics_http_port(const struct metrics_http *h)
{
	return h->port;
}

void metrics_http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
