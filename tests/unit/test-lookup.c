/* Unit tests for lookup, the decisions libxenreaper makes while it
 * resolves a domain: domid text, UUID text, the "vm" node, and whether
 * what xenstore and the hypervisor said in turn is one domain (the guard
 * against a domid reused during the lookup).  No Xen needed: each case
 * is what the readings could have returned. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "lookup.h"
#include "tap.h"

#define U1 "6f1b8a8e-2c1d-4b7e-9a3f-0d2c4e6f8a01"
#define U2 "0a9c7e5d-3b1f-4d2e-8c6a-4f2e0d8b6a92"
#define U1_UPPER "6F1B8A8E-2C1D-4B7E-9A3F-0D2C4E6F8A01"
#define DOM0 "00000000-0000-0000-0000-000000000000"

static char web[] = "web", db[] = "db", web2[] = "web2", dom0[] = "Domain-0";
static char vm1[] = "/vm/" U1, vm2[] = "/vm/" U2, vm1_upper[] = "/vm/" U1_UPPER;
static char vm_odd[] = "/vm/not-a-uuid", vm_other[] = "/elsewhere/" U2;

/* As libxl leaves them: the name in /local/domain/N and in its vm's
 * directory alike. */
static const struct lookup_seen nothing = { false, NULL, NULL, NULL };
static const struct lookup_seen web_u1 = { true, web, vm1, web };
static const struct lookup_seen web_u2 = { true, web, vm2, web };
static const struct lookup_seen db_u2 = { true, db, vm2, db };
static const struct lookup_seen web2_u1 = { true, web2, vm1, web2 };
/* A guest xl preserved: renamed, its vm a new directory with no name. */
static char web_kept[] = "web-20261205T2146Z";
static const struct lookup_seen kept_u2 = { true, web_kept, vm2, NULL };

static void test_domid_text(void)
{
	uint32_t domid = 12345;

	ok(lookup_is_domid("0") && lookup_is_domid("42") && lookup_is_domid("007"),
	   "all digits is a domid");
	ok(!lookup_is_domid("2fast") && !lookup_is_domid("") && !lookup_is_domid("-1") &&
	   !lookup_is_domid("+1") && !lookup_is_domid(" 1") && !lookup_is_domid("1 ") &&
	   !lookup_is_domid("0x10"), "anything else is a name");
	is_int(lookup_parse_domid("007", &domid), 0, "'007' parses");
	is_int(domid, 7, "as domain 7, as xl reads it");
	is_int(lookup_parse_domid("32751", &domid), 0, "the last domid parses");
	is_int(domid, LAYOUT_DOMID_MAX, "as LAYOUT_DOMID_MAX");
	domid = 1;
	is_int(lookup_parse_domid("32752", &domid), -ERANGE, "one past the last domid is out of range");
	is_int(lookup_parse_domid("99999999999999999999", &domid), -ERANGE,
	       "20 digits are out of range, not wrapped");
	is_int(domid, 1, "and leave the domid alone");
	is_int(lookup_parse_domid("2fast", &domid), -EINVAL, "a name is not parsed as a domid");
}

static void test_uuid_text(void)
{
	char out[XENREAPER_UUID_LEN];

	is_int(lookup_uuid_normalise(U1_UPPER, out), 0, "an upper-case UUID is a UUID");
	is_str(out, U1, "and comes out in lower case");
	is_int(lookup_uuid_normalise(U1 "0", out), -EINVAL, "one character too many");
	is_int(lookup_uuid_normalise("6f1b8a8e_2c1d-4b7e-9a3f-0d2c4e6f8a01", out), -EINVAL,
	       "a hyphen missing");
	is_int(lookup_uuid_normalise("6f1b8a8e-2c1d-4b7e-9a3f-0d2c4e6f8a0g", out), -EINVAL,
	       "a non-hex digit");
	is_int(lookup_uuid_normalise(NULL, out), -EINVAL, "NULL");
	is_int(lookup_vm_uuid(vm1_upper, out), 0, "libxl's vm node holds a UUID");
	is_str(out, U1, "which is read in lower case");
	is_int(lookup_vm_uuid(vm_odd, out), -EINVAL, "/vm/ followed by no UUID is not libxl's form");
	is_int(lookup_vm_uuid(vm_other, out), -EINVAL, "another prefix is not libxl's form");
	is_int(lookup_vm_uuid(U1, out), -EINVAL, "a bare UUID is not libxl's form");
	is_int(lookup_vm_uuid(NULL, out), -EINVAL, "no vm node");
}

struct guard_case {
	const char *what;
	const char *want_name;
	const struct lookup_seen *before;
	const char *hv_uuid;
	bool shut_down;
	const struct lookup_seen *after;
	int rc;
	const char *says[3];
};

static void test_guard(void)
{
	const struct lookup_seen dom0_seen = { true, dom0, NULL, NULL };
	const struct lookup_seen web_odd_vm = { true, web, vm_odd, NULL };
	const struct lookup_seen web_upper = { true, web, vm1_upper, web };
	const struct lookup_seen web_no_vm = { true, web, NULL, NULL };
	const struct lookup_seen home_only = { true, NULL, NULL, NULL };
	const struct lookup_seen web_u2_other_vm_name = { true, web, vm2, db };
	const struct guard_case cases[] = {
		{ "by name, nothing changed", "web", &web_u1, U1, false, &web_u1, 0, { NULL } },
		{ "by domid, nothing changed", NULL, &web_u1, U1, false, &web_u1, 0, { NULL } },
		{ "the hypervisor's UUID may be upper case", NULL, &web_u1, U1_UPPER, false, &web_u1,
		  0, { NULL } },
		{ "the vm node may be upper case", "web", &web_upper, U1, false, &web_upper, 0, { NULL } },
		{ "domain 0 has no vm node", NULL, &dom0_seen, DOM0, false, &dom0_seen, 0, { NULL } },
		{ "a domain without a vm node is judged by its name", "web", &web_no_vm, U1, false,
		  &web_no_vm, 0, { NULL } },
		{ "a vm node not in libxl's form proves nothing", "web", &web_odd_vm, U1, false,
		  &web_odd_vm, 0, { NULL } },
		{ "a domid xenstore never knew: the hypervisor's word", NULL, &nothing, U1, false, &nothing,
		  0, { NULL } },
		{ "a home without a name, twice", NULL, &home_only, U1, false, &home_only, 0, { NULL } },

		{ "by name, the domid was reused before the hypervisor was asked", "web", &web_u1, U2, false,
		  &db_u2, -EAGAIN,
		  { "domain 5 changed while it was being looked up", U2, U1 } },
		{ "by name, reused after the hypervisor was asked", "web", &web_u1, U1, false, &db_u2, -EAGAIN,
		  { "domain 5 changed while it was being looked up", U1, U2 } },
		{ "by domid, reused before the hypervisor was asked", NULL, &web_u1, U2, false, &db_u2,
		  -EAGAIN, { "domain 5 changed", "reused" } },
		{ "by domid, reused by a guest of the same name", NULL, &web_u1, U2, false, &web_u2, -EAGAIN,
		  { "domain 5 changed", U2, U1 } },
		{ "by name, reused by a guest of the same name after the hypervisor", "web", &web_u1,
		  U1, false, &web_u2, -EAGAIN, { "domain 5 changed", U1, U2 } },
		{ "by name, the first reading already shows another guest", "web", &db_u2, U2, false, &db_u2,
		  -EAGAIN, { "named it 'web', then 'db'" } },
		{ "renamed during the lookup", "web", &web_u1, U1, false, &web2_u1, -EAGAIN,
		  { "'web', then 'web2'", "renamed" } },
		{ "by domid, the domain appeared during the lookup", NULL, &nothing, U1, false, &web_u1,
		  -EAGAIN, { "named it no name, then 'web'" } },
		{ "by name, gone during the lookup", "web", &web_u1, U1, false, &nothing, -ESRCH,
		  { "domain 5 ('web') went away while it was being looked up" } },
		{ "by name, gone before its home was read", "web", &nothing, U1, false, &nothing, -ESRCH,
		  { "went away" } },
		{ "by name, gone and its domid reused", "web", &nothing, U2, false, &db_u2, -ESRCH,
		  { "went away" } },
		{ "by domid, gone during the lookup", NULL, &web_u1, U1, false, &nothing, -ESRCH,
		  { "domain 5 ('web') went away" } },
		{ "a guest xl preserved: its vm names a new UUID, the hypervisor the old",
		  "web-20261205T2146Z", &kept_u2, U1, true, &kept_u2, 0, { NULL } },
		{ "the same by domid", NULL, &kept_u2, U1, true, &kept_u2, 0, { NULL } },
		{ "a preserved guest's xenstore over a running domain: the domid was reused",
		  NULL, &kept_u2, U1, false, &kept_u2, -EAGAIN, { "domain 5 changed", "reused" } },
		{ "a shut-down domain whose vm directory names a guest: the domid was reused",
		  NULL, &web_u2_other_vm_name, U1, true, &web_u2_other_vm_name, -EAGAIN,
		  { "domain 5 changed", U1, U2 } },
		{ "a shut-down domain, reused by a guest of the same name", NULL, &web_u1, U2, true,
		  &web_u2, -EAGAIN, { "domain 5 changed", U2, U1 } },
		{ "the hypervisor's UUID is checked", NULL, &web_u1, "garbage", false, &web_u1, -EINVAL,
		  { "'garbage' is not a UUID" } },
	};
	char why[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct guard_case *c = &cases[i];
		const struct lookup_hv hv = { c->hv_uuid, c->shut_down };
		int rc = lookup_check(5, c->want_name, c->before, &hv, c->after, why, sizeof(why));
		int says = 1;

		for (int j = 0; j < 3 && c->says[j]; j++)
			says = says && strstr(why, c->says[j]);
		ok(rc == c->rc && says && (rc != 0) == (why[0] != '\0'),
		   "guard: %s: %d (got %d: %s)", c->what, c->rc, rc, why);
	}
}

/* One reading is enough only where it names the domain and its UUID the
 * way libxl writes them; anything less sends the lookup to the hypervisor. */
static void test_from_xenstore(void)
{
	static char noname_vm[] = "/vm/" U2;
	const struct lookup_seen no_name = { true, NULL, noname_vm, NULL };
	const struct lookup_seen odd_vm = { true, web, vm_odd, NULL };
	const struct lookup_seen other_vm = { true, web, vm_other, NULL };
	const struct lookup_seen no_vm = { true, web, NULL, NULL };
	const struct lookup_seen upper = { true, web, vm1_upper, web };
	const struct lookup_seen vm_named_db = { true, web, vm1, db };
	char uuid[XENREAPER_UUID_LEN], why[512];

	memset(uuid, 'x', sizeof(uuid));
	is_int(lookup_from_xenstore(5, NULL, &web_u1, uuid, why, sizeof(why)), 0,
	       "one reading: by domid, a name and libxl's vm name the UUID");
	is_str(uuid, U1, "  the vm node's UUID");
	is_str(why, "", "  and no sentence");
	is_int(lookup_from_xenstore(5, "web", &web_u1, uuid, why, sizeof(why)), 0,
	       "one reading: by name, the name it was found by");
	is_int(lookup_from_xenstore(5, NULL, &upper, uuid, why, sizeof(why)), 0,
	       "one reading: an upper-case vm node");
	is_str(uuid, U1, "  comes out in lower case");
	is_int(lookup_from_xenstore(5, NULL, &no_vm, uuid, why, sizeof(why)), -ENODATA,
	       "no vm node: the hypervisor must be asked");
	is_int(lookup_from_xenstore(5, NULL, &odd_vm, uuid, why, sizeof(why)), -ENODATA,
	       "a vm node with no UUID in it: the hypervisor must be asked");
	is_int(lookup_from_xenstore(5, NULL, &other_vm, uuid, why, sizeof(why)), -ENODATA,
	       "a vm node not in libxl's form: the hypervisor must be asked");
	is_int(lookup_from_xenstore(5, NULL, &no_name, uuid, why, sizeof(why)), -ENODATA,
	       "no name (not libxl's making): the hypervisor must be asked");
	is_int(lookup_from_xenstore(5, NULL, &kept_u2, uuid, why, sizeof(why)), -ENODATA,
	       "a vm directory without a name (a guest xl preserved): the hypervisor must be asked");
	is_int(lookup_from_xenstore(5, "web-20261205T2146Z", &kept_u2, uuid, why, sizeof(why)),
	       -ENODATA, "  by name too");
	is_int(lookup_from_xenstore(5, NULL, &vm_named_db, uuid, why, sizeof(why)), -ENODATA,
	       "a vm directory of another name: the hypervisor must be asked");
	is_int(lookup_from_xenstore(5, NULL, &nothing, uuid, why, sizeof(why)), -ESRCH,
	       "by domid, nothing in xenstore: no such domain");
	ok(strstr(why, "no domain 5 is running") != NULL, "  says so (%s)", why);
	is_int(lookup_from_xenstore(5, "web", &nothing, uuid, why, sizeof(why)), -ESRCH,
	       "by name, gone before the reading");
	ok(strstr(why, "domain 5 ('web') went away") != NULL, "  says so (%s)", why);
	is_int(lookup_from_xenstore(5, "web", &db_u2, uuid, why, sizeof(why)), -EAGAIN,
	       "by name, the domid now bears another name: ask again");
	ok(strstr(why, "named it 'web', then 'db'") != NULL, "  says so (%s)", why);
	is_int(lookup_from_xenstore(5, "web", &no_name, uuid, why, sizeof(why)), -EAGAIN,
	       "by name, the domid now has no name: ask again");
}

int main(void)
{
	test_domid_text();
	test_uuid_text();
	test_guard();
	test_from_xenstore();
	return tap_done();
}
