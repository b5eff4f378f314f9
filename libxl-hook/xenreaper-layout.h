/*
 * xenreaper-layout.h: the xenstore nodes xenreaperd serves, the contract for
 * any toolstack that asks it for teardowns or reads their progress (see
 * xenreaper-xenstore(7)).  Plain definitions, no functions: a toolstack
 * written against libxenstore alone needs nothing else.
 *
 *   /tool/xenreaper/daemon/{pid,version,state,active-jobs,started,config,config-error}
 *   /tool/xenreaper/request/<domid> = <uuid>       written by clients
 *   /tool/xenreaper/job/<domid>/{state,uuid,name,pool,reason,policy,
 *        priority,pages-total,pages-left,progress,scrub-pages,rate,eta,
 *        held-by,last-release,requested,started,finished,error}
 *   /tool/xenreaper/scrub/{pages,source,probed,node/<n>}
 *   /tool/xenreaper/memory/{free,releasing,scrub-pending}
 *   /tool/xenreaper/ping/<unique>                  written by waiting clients,
 *        removed by the daemon as its answer (ping/ exists while one answers)
 *
 * Numbers are decimal; pages are 4 KiB; times are "seconds.milliseconds"
 * since the epoch; rate is MiB/s with one decimal; eta is whole seconds or
 * "stalled".
 */
#ifndef XENREAPER_LAYOUT_H
#define XENREAPER_LAYOUT_H

#define XENREAPER_ROOT        "/tool/xenreaper"
#define XENREAPER_DAEMON_DIR  XENREAPER_ROOT "/daemon"
#define XENREAPER_REQUEST_DIR XENREAPER_ROOT "/request"
#define XENREAPER_JOB_DIR     XENREAPER_ROOT "/job"
#define XENREAPER_SCRUB_DIR   XENREAPER_ROOT "/scrub"
#define XENREAPER_MEMORY_DIR  XENREAPER_ROOT "/memory"
#define XENREAPER_PING_DIR    XENREAPER_ROOT "/ping"

/* Largest domid a request may name (DOMID_FIRST_RESERVED - 1). */
#define XENREAPER_DOMID_MAX 0x7fefU

/* daemon/state */
#define XENREAPER_DAEMON_STARTING "starting"
#define XENREAPER_DAEMON_RUNNING  "running"
#define XENREAPER_DAEMON_STOPPING "stopping"
#define XENREAPER_DAEMON_STOPPED  "stopped"

/* job/<domid>/state; done and failed are final. */
#define XENREAPER_JOB_QUEUED     "queued"
#define XENREAPER_JOB_DESTROYING "destroying"
#define XENREAPER_JOB_ZOMBIE     "zombie"
#define XENREAPER_JOB_SCRUBBING  "scrubbing"
#define XENREAPER_JOB_DONE       "done"
#define XENREAPER_JOB_FAILED     "failed"
/* A destroy that has not returned, its pages standing still, for the
 * policy's stuck-after: held-by says what it waits on.  It goes back to
 * destroying when its pages fall, and ends as any teardown does. */
#define XENREAPER_JOB_STUCK      "stuck"

/* job/<domid>/reason */
#define XENREAPER_REASON_REQUEST  "request"
#define XENREAPER_REASON_POWEROFF "poweroff"
#define XENREAPER_REASON_CRASH    "crash"
#define XENREAPER_REASON_ORPHAN   "orphan"

/* job/<domid>/policy */
#define XENREAPER_POLICY_DEFERRED "deferred"
#define XENREAPER_POLICY_SYNC     "sync"

/* job/<domid>/eta when nothing has been released for a while */
#define XENREAPER_ETA_STALLED "stalled"

/* A zombie's or an orphan's pages count as coming back only while they
 * are still falling: for this long (ms) after job/<domid>/last-release.
 * The same span after which eta says "stalled". */
#define XENREAPER_FALLING_MS 5000

#endif /* XENREAPER_LAYOUT_H */
