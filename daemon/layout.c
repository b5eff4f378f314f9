/*
 * layout: path construction and the few value formats (domids, times) that
 * appear in node names and values.  It does not touch xenstore.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

void layout_job_path(char *buf, uint32_t domid, const char *leaf)
{
	if (leaf)
		snprintf(buf, LAYOUT_PATH_LEN, LAYOUT_JOB_DIR "/%u/%s", domid, leaf);
	else
		snprintf(buf, LAYOUT_PATH_LEN, LAYOUT_JOB_DIR "/%u", domid);
}

void layout_request_path(char *buf, uint32_t domid)
{
	snprintf(buf, LAYOUT_PATH_LEN, LAYOUT_REQUEST_DIR "/%u", domid);
}

void layout_daemon_path(char *buf, const char *leaf)
{
	snprintf(buf, LAYOUT_PATH_LEN, LAYOUT_DAEMON_DIR "/%s", leaf);
}

int layout_parse_domid(const char *name, uint32_t *domid)
{
	unsigned long value = 0;
	size_t len = strlen(name);

	if (len == 0 || len > 5 || (name[0] == '0' && len > 1))
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -EINVAL;
		value = value * 10 + (name[i] - '0');
	}
	if (value > LAYOUT_DOMID_MAX)
		return -EINVAL;
	*domid = value;
	return 0;
}

void layout_format_time(char *buf, int64_t wall_ms)
{
	snprintf(buf, 32, "%" PRId64 ".%03" PRId64, wall_ms / 1000, wall_ms % 1000);
}

int layout_parse_time(const char *text, int64_t *wall_ms)
{
	int64_t sec = 0, ms = 0;
	const char *p = text;

	/* By hand: sscanf would take signs, spaces and "5.7" for 5.007 s. */
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		sec = sec * 10 + (*p - '0');
		if (sec > LAYOUT_TIME_MAX_MS / 1000)
			return -EINVAL;
	}
	if (*p++ != '.')
		return -EINVAL;
	for (int i = 0; i < 3; i++, p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		ms = ms * 10 + (*p - '0');
	}
	if (*p)
		return -EINVAL;
	*wall_ms = sec * 1000 + ms;
	return 0;
}
