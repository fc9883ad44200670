/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay_main.c - run a libFuzzer target without libFuzzer.
 *
 * Linked with a target's LLVMFuzzerTestOneInput, this replays inputs:
 * every file named on the command line, and every file in every directory
 * named, in name order, printing one TAP line per input.  The normal test
 * suite (gcc, no clang needed) uses it to run the checked-in regression
 * inputs and a slice of the seed corpus through the harness and its
 * invariant checks; a crash or a broken invariant aborts the run, which
 * meson reports as a failure.  `-n N` runs each input N times (profiling).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned n_run;

static int replay_file(const char *path, long times)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (!fp) {
		printf("not ok %u - %s: cannot open\n", ++n_run, path);
		return 1;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			uint8_t *n;
			cap = cap ? cap * 2 : 4096;
			n = realloc(buf, cap);
			if (!n) {
				fclose(fp);
				free(buf);
				return 1;
			}
			buf = n;
		}
		got = fread(buf + len, 1, cap - len, fp);
		if (!got)
			break;
		len += got;
	}
	fclose(fp);
	for (long i = 0; i < times; i++)
		LLVMFuzzerTestOneInput(buf, len);
	printf("ok %u - %s (%zu bytes)\n", ++n_run, path, len);
	fflush(stdout);
	free(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir, long times)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int bad = 0;

	if (!d) {
		printf("not ok %u - %s: cannot open\n", ++n_run, dir);
		return 1;
	}
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			char **nn;
			cap = cap ? cap * 2 : 64;
			nn = realloc(names, cap * sizeof(*nn));
			if (!nn)
				break;
			names = nn;
		}
		names[n++] = strdup(path);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		bad |= replay_file(names[i], times);
		free(names[i]);
	}
	free(names);
	return bad;
}

int main(int argc, char **argv)
{
	long times = 1;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			times = strtol(argv[++i], NULL, 10);
			continue;
		}
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			bad |= replay_dir(argv[i], times);
		else
			bad |= replay_file(argv[i], times);
	}
	printf("1..%u\n", n_run);
	return bad;
}
