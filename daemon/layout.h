/*
 * layout: the node layout under /tool/xenreaper, whose contract is the
 * installed xenreaper-layout.h, and the helpers that build its paths and
 * read its value formats, shared by the daemon and the client library.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "xenreaper-layout.h"

#define LAYOUT_ROOT        XENREAPER_ROOT
#define LAYOUT_DAEMON_DIR  XENREAPER_DAEMON_DIR
#define LAYOUT_REQUEST_DIR XENREAPER_REQUEST_DIR
#define LAYOUT_JOB_DIR     XENREAPER_JOB_DIR
#define LAYOUT_SCRUB_DIR   XENREAPER_SCRUB_DIR
#define LAYOUT_MEMORY_DIR  XENREAPER_MEMORY_DIR
#define LAYOUT_PING_DIR    XENREAPER_PING_DIR

/* Watch tokens. */
#define LAYOUT_TOKEN_REQUEST "xenreaper-request"
#define LAYOUT_TOKEN_DOMAIN  "xenreaper-domain"
#define LAYOUT_TOKEN_NAME    "xenreaper-name"	/* a domain's name node */
#define LAYOUT_TOKEN_PING    "xenreaper-ping"

#define LAYOUT_DOMID_MAX XENREAPER_DOMID_MAX

/* PATH_MAX of xenstore is 4096; ours are short. */
#define LAYOUT_PATH_LEN 128

/* "/tool/xenreaper/job/<domid>[/<leaf>]" into BUF (LAYOUT_PATH_LEN). */
void layout_job_path(char *buf, uint32_t domid, const char *leaf);
/* "/tool/xenreaper/request/<domid>" into BUF. */
void layout_request_path(char *buf, uint32_t domid);
/* "/tool/xenreaper/daemon/<leaf>" into BUF. */
void layout_daemon_path(char *buf, const char *leaf);
/* Parse a node name as a domid: plain decimal, no sign, no leading zero,
 * at most LAYOUT_DOMID_MAX; -EINVAL otherwise. */
int layout_parse_domid(const char *name, uint32_t *domid);
/* Latest time a node may carry: 9999-12-31 23:59:59.999 UTC, in ms. */
#define LAYOUT_TIME_MAX_MS 253402300799999LL

/* Format wall-clock milliseconds as "seconds.milliseconds" into BUF (32). */
void layout_format_time(char *buf, int64_t wall_ms);
/* Parse that format back: decimal seconds, a dot, exactly three digits of
 * milliseconds; -EINVAL if malformed, negative or past LAYOUT_TIME_MAX_MS. */
int layout_parse_time(const char *text, int64_t *wall_ms);
