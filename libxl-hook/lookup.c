/*
 * lookup: what libxenreaper decides while it resolves a domain, kept apart
 * from the reading so that unit tests can feed it what xenstore and the
 * hypervisor might have said without either of them.
 *
 * The race it guards against: a domain is found in xenstore (by name or
 * by domid), then its UUID is asked of the hypervisor.  If the domain died
 * and its domid went to a new one in between, that UUID is the new
 * guest's, and a teardown request carrying it would destroy the wrong
 * domain.  So xenstore is read again after the hypervisor: libxl writes a
 * domain's name and its "vm" node ("/vm/<uuid>", libxl_create.c,
 * libxl__domain_make) in one transaction, so both readings must show the
 * same name, and any "vm" they show must name the hypervisor's UUID.
 * A "vm" node not in libxl's form (domain 0 has none) proves nothing and
 * is not held against the domain.
 *
 * One domain's "vm" names another UUID by design: a guest xl preserved
 * (on_crash = "rename-restart" and the like).  libxl_domain_preserve()
 * renames it, points its "vm" at a new /vm/<uuid> that holds no name, and
 * leaves its hypervisor handle, the UUID the daemon's guard checks and
 * `xl list -v` shows, as it was.  So a shut-down domain whose "vm"
 * directory has no name is taken by its handle.  A reused domid cannot
 * pass for one: the new domain has not run, so it has not shut down,
 * until libxl has written its own directory.
 *
 * Where one transaction shows the domain's name, a "vm" in libxl's form
 * and that name in the "vm" directory (libxl__domain_make writes both and
 * libxl__domain_rename keeps them equal; a preserved guest's has none),
 * that reading alone names its UUID (lookup_from_xenstore), and
 * the hypervisor is not asked: only dom0 writes under /local/domain/N
 * (libxl gives the guest read access only), libxl wrote both nodes in
 * one transaction, and xenreaperd checks the UUID against the hypervisor
 * before it destroys anything (intake_guard), so a domid reused after
 * the reading makes the request fail there, with nothing destroyed.
 * That saves a request (xl destroy --async) the hypervisor call, the
 * second reading and the loading of libxenctrl (issue 18).  This file
 * reads nothing and prints nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "lookup.h"

#define LOOKUP_VM_PREFIX "/vm/"

bool lookup_is_domid(const char *text)
{
	if (!text[0])
		return false;
	for (; *text; text++)
		if (!isdigit((unsigned char)*text))
			return false;
	return true;
}

int lookup_parse_domid(const char *text, uint32_t *domid)
{
	uint32_t value = 0;

	if (!lookup_is_domid(text))
		return -EINVAL;
	for (; *text; text++) {
		value = value * 10 + (*text - '0');
		if (value > LAYOUT_DOMID_MAX)
			return -ERANGE;
	}
	*domid = value;
	return 0;
}

int lookup_uuid_normalise(const char *text, char out[XENREAPER_UUID_LEN])
{
	if (!text || strlen(text) != XENREAPER_UUID_LEN - 1)
		return -EINVAL;
	for (unsigned i = 0; i < XENREAPER_UUID_LEN - 1; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i] != '-')
				return -EINVAL;
		} else if (!isxdigit((unsigned char)text[i])) {
			return -EINVAL;
		}
		out[i] = tolower((unsigned char)text[i]);
	}
	out[XENREAPER_UUID_LEN - 1] = '\0';
	return 0;
}

int lookup_vm_uuid(const char *vm, char out[XENREAPER_UUID_LEN])
{
	size_t prefix = strlen(LOOKUP_VM_PREFIX);

	if (!vm || strncmp(vm, LOOKUP_VM_PREFIX, prefix))
		return -EINVAL;
	return lookup_uuid_normalise(vm + prefix, out);
}

static bool lookup_same_text(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* "'NAME'" or "no name", for messages. */
static const char *lookup_quote(char *buf, size_t len, const char *name)
{
	if (name)
		snprintf(buf, len, "'%s'", name);
	else
		snprintf(buf, len, "no name");
	return buf;
}

/* 0 if SEEN's "vm" names UUID, is not libxl's, or is a preserved guest's
 * (HV shut down, the "vm" directory nameless); -EAGAIN (WHY) if it names
 * another domain. */
static int lookup_check_vm(uint32_t domid, const struct lookup_seen *seen, const char *uuid,
			   const struct lookup_hv *hv, const char *when, char *why, size_t len)
{
	char vm_uuid[XENREAPER_UUID_LEN];

	if (!seen->vm || lookup_vm_uuid(seen->vm, vm_uuid) || !strcmp(vm_uuid, uuid) ||
	    (hv->shut_down && !seen->vm_name))
		return 0;
	snprintf(why, len,
		 "domain %u changed while it was being looked up: the hypervisor gives UUID %s, but "
		 "%s /local/domain/%u/vm named UUID %s (its domid was reused); ask again",
		 domid, uuid, when, domid, vm_uuid);
	return -EAGAIN;
}

int lookup_from_xenstore(uint32_t domid, const char *want_name, const struct lookup_seen *seen,
			 char uuid[XENREAPER_UUID_LEN], char *why, size_t len)
{
	char a[160], b[160];

	why[0] = '\0';
	if (!seen->home) {
		if (want_name)
			snprintf(why, len, "domain %u (%s) went away while it was being looked up",
				 domid, lookup_quote(a, sizeof(a), want_name));
		else
			snprintf(why, len, "no domain %u is running", domid);
		return -ESRCH;
	}
	if (want_name && !lookup_same_text(want_name, seen->name)) {
		snprintf(why, len,
			 "domain %u changed while it was being looked up: xenstore named it %s, then %s "
			 "(its domid was reused, or it was renamed); ask again",
			 domid, lookup_quote(a, sizeof(a), want_name),
			 lookup_quote(b, sizeof(b), seen->name));
		return -EAGAIN;
	}
	if (!seen->name || lookup_vm_uuid(seen->vm, uuid) ||
	    !lookup_same_text(seen->name, seen->vm_name))
		return -ENODATA;
	return 0;
}

int lookup_check(uint32_t domid, const char *want_name, const struct lookup_seen *before,
		 const struct lookup_hv *hv, const struct lookup_seen *after, char *why,
		 size_t len)
{
	const char *expect = want_name ? want_name : before->name;
	char uuid[XENREAPER_UUID_LEN], a[160], b[160];
	int rc;

	why[0] = '\0';
	if (lookup_uuid_normalise(hv->uuid, uuid)) {
		snprintf(why, len, "domain %u: the hypervisor's UUID '%s' is not a UUID", domid,
			 hv->uuid ? hv->uuid : "(null)");
		return -EINVAL;
	}
	if ((want_name && !before->home) || (before->home && !after->home)) {
		snprintf(why, len, "domain %u (%s) went away while it was being looked up", domid,
			 lookup_quote(a, sizeof(a), expect));
		return -ESRCH;
	}
	rc = lookup_check_vm(domid, before, uuid, hv, "before that", why, len);
	if (!rc)
		rc = lookup_check_vm(domid, after, uuid, hv, "after that", why, len);
	if (rc)
		return rc;
	if (!lookup_same_text(expect, before->name) || !lookup_same_text(expect, after->name)) {
		snprintf(why, len,
			 "domain %u changed while it was being looked up: xenstore named it %s, then %s "
			 "(its domid was reused, or it was renamed); ask again",
			 domid, lookup_quote(a, sizeof(a), expect),
			 lookup_quote(b, sizeof(b), lookup_same_text(expect, before->name) ?
				      after->name : before->name));
		return -EAGAIN;
	}
	return 0;
}
