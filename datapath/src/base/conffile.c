/* SPDX-License-Identifier: Apache-2.0
 *
 * conffile.c - see conffile.h. The file's words become argv words, so
 * there is one parser of options (EAL's and getopt_long) and a value means
 * the same in the file and on the command line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/conffile.h"

struct words {
	char **v;
	int n, cap;
};

static int push(struct words *w, const char *s)
{
	if (w->n == w->cap) {
		int cap = w->cap ? 2 * w->cap : 16;
		char **v = realloc(w->v, sizeof(*v) * (size_t)cap);

		if (v == NULL)
			return -1;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n] = strdup(s);
	return w->v[w->n++] == NULL ? -1 : 0;
}

static void drop(struct words *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static const struct option *find(const struct option *longopts, const char *name)
{
	for (; longopts->name != NULL; longopts++)
		if (strcmp(longopts->name, name) == 0)
			return longopts;
	return NULL;
}

/* Reads path into eal (EAL's words) and opts (--name value words). */
static int read_conf(const char *path, const struct option *longopts, struct words *eal,
		     struct words *opts, char *err)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0, rc = 0;

	if (f == NULL) {
		snprintf(err, E3_CONF_ERRLEN, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *s, *eq, *name, *value;
		const struct option *o;
		char flag[80];

		n++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, E3_CONF_ERRLEN, "%s:%d: line too long", path, n);
			rc = -1;
			break;
		}
		s = trim(line);
		if (*s == 0 || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (eq == NULL) {
			snprintf(err, E3_CONF_ERRLEN, "%s:%d: want name = value", path, n);
			rc = -1;
			break;
		}
		*eq = 0;
		name = trim(s);
		value = trim(eq + 1);
		if (strcmp(name, "eal") == 0) {
			for (char *tok = strtok(value, " \t"); tok != NULL && rc == 0; tok = strtok(NULL, " \t"))
				rc = push(eal, tok);
			continue;
		}
		o = find(longopts, name);
		if (o == NULL || strcmp(name, "conf") == 0) {
			snprintf(err, E3_CONF_ERRLEN, "%s:%d: unknown option \"%s\"", path, n, name);
			rc = -1;
			break;
		}
		snprintf(flag, sizeof(flag), "--%s", name);
		if (o->has_arg == no_argument) {
			if (strcmp(value, "yes") == 0)
				rc = push(opts, flag);
			else if (strcmp(value, "no") != 0) {
				snprintf(err, E3_CONF_ERRLEN, "%s:%d: %s takes yes or no", path, n, name);
				rc = -1;
			}
			continue;
		}
		rc = push(opts, flag);
		if (rc == 0)
			rc = push(opts, value);
	}
	if (rc != 0 && err[0] == 0)
		snprintf(err, E3_CONF_ERRLEN, "%s: out of memory", path);
	fclose(f);
	return rc;
}

int e3_conf_argv(int argc, char **argv, const struct option *longopts, char ***out,
		 char err[E3_CONF_ERRLEN])
{
	struct words eal = { 0 }, opts = { 0 }, all = { 0 };
	const char *path = NULL;
	int dashdash = argc, i, rc = 0;

	err[0] = 0;
	*out = argv;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--conf") == 0) {
			if (i + 1 >= argc) {
				snprintf(err, E3_CONF_ERRLEN, "--conf needs a file");
				return -1;
			}
			path = argv[i + 1];
			break;
		}
	}
	if (path == NULL)
		return argc;
	if (read_conf(path, longopts, &eal, &opts, err) != 0) {
		drop(&eal);
		drop(&opts);
		return -1;
	}

	rc |= push(&all, argv[0]);
	for (i = 0; i < eal.n; i++)
		rc |= push(&all, eal.v[i]);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			dashdash = i;
			break;
		}
		if (strcmp(argv[i], "--conf") == 0)
			i++;
		else
			rc |= push(&all, argv[i]);
	}
	rc |= push(&all, "--");
	for (i = 0; i < opts.n; i++)
		rc |= push(&all, opts.v[i]);
	for (i = dashdash + 1; i < argc; i++) {
		if (strcmp(argv[i], "--conf") == 0)
			i++;
		else
			rc |= push(&all, argv[i]);
	}
	rc |= push(&all, "");   /* room for argv[argc] = NULL */
	drop(&eal);
	drop(&opts);
	if (rc != 0) {
		snprintf(err, E3_CONF_ERRLEN, "out of memory");
		return -1;
	}
	/* The words live as long as the process: EAL keeps pointers into argv. */
	all.v[all.n - 1] = NULL;
	*out = all.v;
	return all.n - 1;
}
