/* Unit tests for what a teardown leaves behind (daemon/leftovers.c and
 * its use in teardown.c, issue 16): a loop device a block script did not
 * detach (the image visible or hidden from the daemon), a backend that
 * kept its xenstore directory with hotplug-status error, a vif's interface
 * that outlived it (and one of the same name made since, which is not
 * it), a device model still running (and one being killed, or a zombie,
 * which are not); the job of such a teardown ends done with an error
 * naming each, and a clean one with no error.  sysfs and procfs are
 * directories made here. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bed.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "holders.h"
#include "leftovers.h"
#include "tap.h"

static char root[] = "/tmp/test-leftovers.XXXXXX";
static char sys_root[64], proc_root[64], image[64];

/* Write TEXT (and a newline) to ROOT/REL, making its directories. */
static void put(const char *base, const char *rel, const char *text)
{
	char path[256], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	for (slash = strchr(path + strlen(base) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s\n", text);
		fclose(f);
	}
}

static void drop(const char *base, const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	unlink(path);
}

/* A vbd backend of DOMID for the image file IMG on /dev/loopN, as Debian's
 * block script leaves it after its add, with loopN attached in sysfs. */
static void plant_file_vbd(struct store *s, unsigned domid, unsigned n, const char *img)
{
	char path[128], value[32], rel[64];

	snprintf(path, sizeof(path), "/local/domain/0/backend/vbd/%u/51712/params", domid);
	fake_store_set(s, path, img);
	snprintf(path, sizeof(path), "/local/domain/0/backend/vbd/%u/51712/node", domid);
	snprintf(value, sizeof(value), "/dev/loop%u", n);
	fake_store_set(s, path, value);
	snprintf(path, sizeof(path), "/local/domain/0/backend/vbd/%u/51712/state", domid);
	fake_store_set(s, path, "4");
	snprintf(rel, sizeof(rel), "block/loop%u/loop/backing_file", n);
	put(sys_root, rel, img);
}

static void test_clean(void)
{
	struct store *s = fake_store_new();
	struct leftovers *snap;
	char *left = (char *)"unset";

	plant_file_vbd(s, 7, 3, image);
	fake_store_set(s, "/local/domain/0/backend/vif/7/0/state", "4");
	put(sys_root, "class/net/vif7.0/ifindex", "12");
	is_int(leftovers_snapshot(s, 7, &snap), 0, "a snapshot of a domain with a file vbd and a vif");
	is_int(leftovers_count(snap), 4, "  records 2 backends, the loop device and the interface");
	/* What libxl and the scripts do on a clean teardown. */
	store_rm(s, STORE_TX_NONE, "/local/domain/0/backend/vbd/7");
	store_rm(s, STORE_TX_NONE, "/local/domain/0/backend/vif/7");
	drop(sys_root, "block/loop3/loop/backing_file");
	drop(sys_root, "class/net/vif7.0/ifindex");
	is_int(leftovers_check(s, snap, &left), 0, "checked after a clean teardown");
	ok(left == NULL, "  nothing is left");
	leftovers_free(snap);

	is_int(leftovers_snapshot(s, 8, &snap), 0, "a domain with no devices");
	is_int(leftovers_count(snap), 0, "  records nothing");
	is_int(leftovers_check(s, snap, &left), 0, "  and its check");
	ok(left == NULL, "  finds nothing");
	leftovers_free(snap);
	store_free(s);
}

static void test_loop_left(void)
{
	struct store *s = fake_store_new();
	struct leftovers *snap;
	char *left = NULL;

	plant_file_vbd(s, 9, 4, image);
	leftovers_snapshot(s, 9, &snap);
	store_rm(s, STORE_TX_NONE, "/local/domain/0/backend/vbd/9");	/* libxl removes it anyway */
	is_int(leftovers_check(s, snap, &left), 0, "a loop device the block script did not detach");
	ok(left && strstr(left, "vbd 51712: /dev/loop4 still attached to") && strstr(left, image),
	   "  is named with the image it backs: %s", left ? left : "(null)");
	ok(left && strstr(left, "xen-hotplug.log") && !strstr(left, "PrivateTmp"),
	   "  and, the image being visible, the script's log is where to look");
	ok(left && !strstr(left, "backend"), "  no backend is named: libxl removed it");
	free(left);
	left = NULL;
	/* The same loop device since given to another file: not ours. */
	put(sys_root, "block/loop4/loop/backing_file", "/srv/other.img");
	is_int(leftovers_check(s, snap, &left), 0, "the loop device reattached to another file since");
	ok(left == NULL, "  is not called ours");
	drop(sys_root, "block/loop4/loop/backing_file");
	leftovers_free(snap);

	/* An image the daemon cannot see (a unit's PrivateTmp=): Debian's
	 * block script then takes the disk for no file and exits 0. */
	plant_file_vbd(s, 10, 5, "/tmp/hidden-from-the-unit.img");
	leftovers_snapshot(s, 10, &snap);
	store_rm(s, STORE_TX_NONE, "/local/domain/0/backend/vbd/10");
	leftovers_check(s, snap, &left);
	ok(left && strstr(left, "/dev/loop5 still attached to /tmp/hidden-from-the-unit.img") &&
	   strstr(left, "PrivateTmp="), "an image hidden from the daemon: named, and why: %s",
	   left ? left : "(null)");
	free(left);
	leftovers_free(snap);
	store_free(s);
}

static void test_backend_vif_dm(void)
{
	struct store *s = fake_store_new();
	struct leftovers *snap;
	char *left = NULL;

	fake_store_set(s, "/local/domain/0/backend/vbd/11/51712/state", "5");
	fake_store_set(s, "/local/domain/0/backend/vbd/11/51712/params", "/dev/vg/lv");
	fake_store_set(s, "/local/domain/0/backend/vif/11/0/state", "4");
	fake_store_set(s, "/local/domain/0/backend/vif/11/1/vifname", "web-eth1");
	fake_store_set(s, "/local/domain/11/image/device-model-pid", "4242");
	put(sys_root, "class/net/vif11.0/ifindex", "20");
	put(sys_root, "class/net/web-eth1/ifindex", "21");
	put(proc_root, "4242/stat", "4242 (qemu-system-i38) S 1 4242 4242 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 1 0 777 1 1");
	put(proc_root, "4242/status", "Name:\tqemu-system-i38\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000");
	put(proc_root, "4242/comm", "qemu-system-i38");
	leftovers_snapshot(s, 11, &snap);
	is_int(leftovers_count(snap), 6, "a phy vbd, two vifs (one named by vifname) and a device model recorded");
	fake_store_set(s, "/local/domain/0/backend/vbd/11/51712/hotplug-status", "error");
	fake_store_set(s, "/local/domain/0/backend/vbd/11/51712/hotplug-error", "losetup -d failed");
	store_rm(s, STORE_TX_NONE, "/local/domain/0/backend/vif/11");
	drop(sys_root, "class/net/web-eth1/ifindex");
	leftovers_check(s, snap, &left);
	ok(left && strstr(left, "vbd backend /local/domain/0/backend/vbd/11/51712 still in xenstore "
			  "(state 5, hotplug-status error: losetup -d failed)"),
	   "a backend left with hotplug-status error, named with the script's error: %s", left ? left : "(null)");
	ok(left && strstr(left, "vif 0: network interface vif11.0 still exists"), "  the vif interface left");
	ok(left && !strstr(left, "web-eth1"), "  not the one that went");
	ok(left && strstr(left, "device model pid 4242 (qemu-system-i38) still running"), "  the device model");
	free(left);
	left = NULL;

	put(sys_root, "class/net/vif11.0/ifindex", "33");	/* another interface since */
	put(proc_root, "4242/status", "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000100");
	store_rm(s, STORE_TX_NONE, "/local/domain/0/backend/vbd/11");
	leftovers_check(s, snap, &left);
	ok(left == NULL, "an interface of the same name made since, a device model being killed: nothing left (%s)",
	   left ? left : "null");
	free(left);
	put(proc_root, "4242/status", "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000");
	put(proc_root, "4242/stat", "4242 (qemu-system-i38) Z 1 4242 4242 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 1 0 777 1 1");
	leftovers_check(s, snap, &left);
	ok(left == NULL, "  nor a zombie device model");
	free(left);
	put(proc_root, "4242/stat", "4242 (qemu-system-i38) R 1 4242 4242 0 -1 4194564 1 0 0 0 1 1 0 0 20 0 1 0 777 1 1");
	leftovers_check(s, snap, &left);
	ok(left == NULL, "  nor one exiting (PF_EXITING), its SIGKILL taken");
	free(left);
	put(proc_root, "4242/stat", "4242 (other) S 1 4242 4242 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 1 0 999 1 1");
	leftovers_check(s, snap, &left);
	ok(left == NULL, "  nor another process given the same pid");
	free(left);
	leftovers_free(snap);
	store_free(s);
}

/* Through the daemon: the fake destroy removes nothing from dom0, as a
 * failed block remove leaves its loop device. */
static void test_job(void)
{
	struct bed b;
	const char *error;

	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_hv_add(b.hv, 12, 12, 1000, 0);
	plant_file_vbd(b.s, 12, 6, image);
	fake_hv_add(b.hv, 13, 13, 1000, 0);
	bed_request(&b, 12, 12);
	bed_request(&b, 13, 13);
	bed_settle(&b);
	is_str(bed_node(&b, 12, "state"), "done", "a teardown that left a loop device ends done");
	error = bed_node(&b, 12, "error");
	ok(error && strstr(error, "left behind: ") && strstr(error, "vbd 51712: /dev/loop6 still attached to"),
	   "  with an error naming it: %s", error ? error : "(null)");
	is_str(bed_node(&b, 13, "state"), "done", "a clean one ends done");
	ok(!bed_node(&b, 13, "error"), "  with no error");
	bed_dispose(&b);
}

int main(void)
{
	char cmd[128];
	int fd;

	if (!mkdtemp(root))
		return 1;
	snprintf(sys_root, sizeof(sys_root), "%s/sys", root);
	snprintf(proc_root, sizeof(proc_root), "%s/proc", root);
	snprintf(image, sizeof(image), "%s/disk.img", root);
	mkdir(sys_root, 0755);
	mkdir(proc_root, 0755);
	fd = creat(image, 0600);
	if (fd >= 0)
		close(fd);
	leftovers_set_roots(sys_root, proc_root);
	holders_set_proc_root(proc_root);
	test_clean();
	test_loop_left();
	test_backend_vif_dm();
	test_job();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) == -1)
		perror("rm");
	return tap_done();
}
