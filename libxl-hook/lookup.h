/*
 * lookup: the pure decisions behind naming a domain — how DOMAIN text is
 * read, what a UUID looks like, and whether what xenstore and the
 * hypervisor said in turn describes one and the same domain.  Shared by
 * libxenreaper and the xenreaper CLI; not exported by the library.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xenreaper.h"

/* What one xenstore transaction showed of /local/domain/DOMID. */
struct lookup_seen {
	bool home;		/* /local/domain/DOMID exists */
	char *name;		/* its "name", NULL if it has none */
	char *vm;		/* its "vm" ("/vm/<uuid>" from libxl), NULL if none */
	char *vm_name;		/* that /vm/<uuid>/name, NULL if none or "vm" is not libxl's */
};

/* Whether TEXT is a domid, the rule of xl and libxl: all decimal digits
 * (leading zeros allowed).  Anything else is a name. */
bool lookup_is_domid(const char *text);
/* TEXT (all digits) as a domid; -ERANGE beyond LAYOUT_DOMID_MAX, -EINVAL
 * if it is not all digits. */
int lookup_parse_domid(const char *text, uint32_t *domid);
/* Canonical lower-case UUID text from TEXT (either case); -EINVAL if it
 * is not a UUID. */
int lookup_uuid_normalise(const char *text, char out[XENREAPER_UUID_LEN]);
/* The UUID in a libxl "vm" node ("/vm/<uuid>"), lower case; -EINVAL if VM
 * is not of that form. */
int lookup_vm_uuid(const char *vm, char out[XENREAPER_UUID_LEN]);
/* The UUID of DOMID (found by WANT_NAME, NULL: by domid) from SEEN alone:
 * 0 if SEEN shows it named (as WANT_NAME, if given) with a "vm" in libxl's
 * form whose directory bears the same name; -ENODATA if the hypervisor
 * must be asked (no name, no such "vm", or a "vm" directory of another
 * name or none, as a guest xl preserved has); -ESRCH if it is not there,
 * -EAGAIN if it bears another name (the sentence saying so goes into WHY,
 * LEN bytes). */
int lookup_from_xenstore(uint32_t domid, const char *want_name, const struct lookup_seen *seen,
			 char uuid[XENREAPER_UUID_LEN], char *why, size_t len);
/* What the hypervisor said of a domain. */
struct lookup_hv {
	const char *uuid;	/* its handle, as text */
	bool shut_down;		/* it has shut down (crashed, powered off, ...) */
};

/* Whether BEFORE (xenstore, read first), HV (the hypervisor's, read next)
 * and AFTER (xenstore, read last) describe the same domain DOMID, found by
 * WANT_NAME (NULL: by domid).  0 if so; -EAGAIN if it changed (its domid
 * was reused, or it was renamed), -ESRCH if it went away; the sentence
 * saying so goes into WHY (LEN bytes). */
int lookup_check(uint32_t domid, const char *want_name, const struct lookup_seen *before,
		 const struct lookup_hv *hv, const struct lookup_seen *after, char *why,
		 size_t len);
