/*
 * layout: the xenstore node layout under /tool/xenreaper, shared by the
 * daemon and its clients (see xenreaper-xenstore(7)).
 *
 *   /tool/xenreaper/daemon/{pid,version,state,active-jobs,started,config,config-error}
 *   /tool/xenreaper/request/<domid> = <uuid>       written by clients
 *   /tool/xenreaper/job/<domid>/{state,uuid,name,pool,reason,policy,
 *        priority,pages-total,pages-left,progress,scrub-pages,rate,eta,
 *        held-by,requested,started,finished,error}
 *   /tool/xenreaper/scrub/{pages,source,probed,node/<n>}
 *   /tool/xenreaper/memory/{free,releasing,scrub-pending}
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define LAYOUT_ROOT        "/tool/xenreaper"
#define LAYOUT_DAEMON_DIR  LAYOUT_ROOT "/daemon"
#define LAYOUT_REQUEST_DIR LAYOUT_ROOT "/request"
#define LAYOUT_JOB_DIR     LAYOUT_ROOT "/job"
#define LAYOUT_SCRUB_DIR   LAYOUT_ROOT "/scrub"
#define LAYOUT_MEMORY_DIR  LAYOUT_ROOT "/memory"

/* Watch tokens. */
#define LAYOUT_TOKEN_REQUEST "xenreaper-request"
#define LAYOUT_TOKEN_DOMAIN  "xenreaper-domain"

/* Largest domid a request may name (DOMID_FIRST_RESERVED - 1). */
#define LAYOUT_DOMID_MAX 0x7fefU

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
