/*
 * forkstress: how often a child forked from a threaded libxencall user
 * waits for ever on a lock it inherited (xen-patches/fork-4.17).  Threads
 * loop on the library's process-wide locks: xencall_alloc_buffer and
 * xencall_free_buffer on one shared handle (cache_mutex, libxencall's
 * hypercall buffer cache) and xencall_open and xencall_close (handles_lock,
 * libxentoolcore's handle list).  The main thread forks FORKS times, one
 * child at a time; each child does what libxl_domain_destroy's child does
 * first, without exec: opens a handle of its own, allocates a hypercall
 * buffer and makes one hypercall (XENVER_version), then _exit(0)s.
 *
 * A child that has not exited is looked at every millisecond: one asleep
 * in futex(2) is stuck for good (it has one thread, so nothing can wake
 * it), and is counted, killed and reaped; so is one still there after
 * WAIT_MS.  A stuck child is put down to the lock it waits on two ways:
 * by the library whose mapping holds the futex word (/proc/PID/syscall's
 * first argument against /proc/self/maps: libxencall's cache_mutex or
 * libxentoolcore's handles_lock), and by how far it got (a page shared
 * with the children: in xencall_open or in xencall_alloc_buffer).
 *
 * Prints one line of figures, with the files the two libraries were
 * loaded from (LD_LIBRARY_PATH picks the patched ones), and exits 0 if
 * every child exited 0, 1 if any was stuck or failed, 2 on a usage or
 * set-up error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xencall.h>
#include <xentoolcore.h>

#define FS_HYPERVISOR_xen_version 17	/* __HYPERVISOR_xen_version */
#define FS_XENVER_version 0		/* XENVER_version */

/* How far a child got, in the shared page. */
enum { FS_FORKED, FS_OPENING, FS_ALLOCATING, FS_CALLING, FS_DONE };

static atomic_bool fs_stop;
static atomic_ulong fs_alloc_loops, fs_open_loops;
static xencall_handle *fs_xcall;

static void *fs_alloc_thread(void *unused)
{
	(void)unused;
	while (!atomic_load_explicit(&fs_stop, memory_order_relaxed)) {
		void *p = xencall_alloc_buffer(fs_xcall, 64);

		xencall_free_buffer(fs_xcall, p);
		atomic_fetch_add_explicit(&fs_alloc_loops, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *fs_open_thread(void *unused)
{
	(void)unused;
	while (!atomic_load_explicit(&fs_stop, memory_order_relaxed)) {
		xencall_handle *h = xencall_open(NULL, 0);

		if (h)
			xencall_close(h);
		atomic_fetch_add_explicit(&fs_open_loops, 1, memory_order_relaxed);
	}
	return NULL;
}

static double fs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* /proc/PID/LEAF into BUF (LEN bytes, NUL-terminated); 0 if unreadable. */
static int fs_read_proc(pid_t pid, const char *leaf, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, leaf);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return 1;
}

/* Whether PID sleeps in futex(2): state S and syscall 202 in /proc; the
 * futex's address in *UADDR. */
static int fs_in_futex(pid_t pid, unsigned long *uaddr)
{
	char buf[512], *p, state;
	long nr;

	if (!fs_read_proc(pid, "stat", buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c", &state) != 1 || state != 'S')
		return 0;
	if (!fs_read_proc(pid, "syscall", buf, sizeof(buf)))
		return 0;
	return sscanf(buf, "%ld %lx", &nr, uaddr) == 2 && nr == 202;	/* __NR_futex, x86-64 */
}

/* The file whose mapping (or the anonymous mapping right after it, where
 * a library's .bss may end) holds ADDR in this process, which a child
 * shares; "?" if none.  Into BUF, LEN bytes. */
static const char *fs_owner(unsigned long addr, char *buf, size_t len)
{
	unsigned long start, end, prev_end = 0;
	char line[4096], path[4096], last[4096] = "";
	FILE *f = fopen("/proc/self/maps", "re");

	snprintf(buf, len, "?");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %4095s", &start, &end, path) < 2)
			continue;
		if (path[0] == '/')
			snprintf(last, sizeof(last), "%s", path);
		else if (path[0] || start != prev_end)
			last[0] = '\0';
		prev_end = end;
		if (addr >= start && addr < end) {
			if (last[0])
				snprintf(buf, len, "%s", last);
			break;
		}
	}
	fclose(f);
	return buf;
}

/* The file the library holding SYM was loaded from. */
static const char *fs_lib(void *sym)
{
	Dl_info info;

	return dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?";
}

static void fs_child(volatile unsigned char *stage)
{
	xencall_handle *h;
	void *buf;

	*stage = FS_OPENING;
	h = xencall_open(NULL, 0);
	if (!h)
		_exit(3);
	*stage = FS_ALLOCATING;
	buf = xencall_alloc_buffer(h, 64);
	if (!buf)
		_exit(4);
	*stage = FS_CALLING;
	if (xencall2(h, FS_HYPERVISOR_xen_version, FS_XENVER_version, 0) <= 0)
		_exit(5);
	*stage = FS_DONE;
	_exit(0);
}

static void fs_usage(void)
{
	fprintf(stderr, "usage: forkstress [-a ALLOC_THREADS] [-o OPEN_THREADS] [-n FORKS] [-w WAIT_MS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long forks = 1000, wait_ms = 2000, nalloc = 2, nopen = 1, i;
	unsigned long ok = 0, stuck_open = 0, stuck_alloc = 0, stuck_other = 0;
	unsigned long timeout = 0, failed = 0, in_call = 0, in_toolcore = 0, in_other = 0;
	char owner[4096], call_lib[4096], toolcore_lib[4096];
	volatile unsigned char *stages;
	pthread_t threads[64];
	unsigned long nthreads = 0;
	double t0, secs;
	int c;

	while ((c = getopt(argc, argv, "a:o:n:w:")) != -1) {
		switch (c) {
		case 'a': nalloc = strtoul(optarg, NULL, 0); break;
		case 'o': nopen = strtoul(optarg, NULL, 0); break;
		case 'n': forks = strtoul(optarg, NULL, 0); break;
		case 'w': wait_ms = strtoul(optarg, NULL, 0); break;
		default: fs_usage();
		}
	}
	if (optind != argc || !forks || nalloc + nopen > sizeof(threads) / sizeof(threads[0]))
		fs_usage();
	stages = mmap(NULL, forks, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stages == MAP_FAILED) {
		perror("forkstress: mmap");
		return 2;
	}
	fs_xcall = xencall_open(NULL, 0);
	if (!fs_xcall) {
		perror("forkstress: xencall_open");
		return 2;
	}
	for (i = 0; i < nalloc + nopen; i++) {
		if (pthread_create(&threads[i], NULL, i < nalloc ? fs_alloc_thread : fs_open_thread, NULL)) {
			fprintf(stderr, "forkstress: pthread_create failed\n");
			return 2;
		}
		nthreads++;
	}

	snprintf(call_lib, sizeof(call_lib), "%s", fs_lib((void *)xencall_open));
	snprintf(toolcore_lib, sizeof(toolcore_lib), "%s", fs_lib((void *)xentoolcore_restrict_all));
	/* dladdr names a library by the path it was loaded by; maps, by
	 * the file's real one. */
	{
		char real[4096];

		if (realpath(call_lib, real))
			snprintf(call_lib, sizeof(call_lib), "%s", real);
		if (realpath(toolcore_lib, real))
			snprintf(toolcore_lib, sizeof(toolcore_lib), "%s", real);
	}
	t0 = fs_now();
	for (i = 0; i < forks; i++) {
		double deadline;
		unsigned long uaddr = 0;
		int status, seen = 0;
		pid_t pid, w;

		stages[i] = FS_FORKED;
		pid = fork();
		if (pid < 0) {
			perror("forkstress: fork");
			return 2;
		}
		if (pid == 0)
			fs_child(stages + i);
		deadline = fs_now() + wait_ms / 1000.0;
		for (;;) {
			w = waitpid(pid, &status, WNOHANG);
			if (w == pid)
				break;
			/* Twice in a row, 1 ms apart, so as not to catch a
			 * child on its way through a futex call. */
			if (fs_in_futex(pid, &uaddr)) {
				if (++seen >= 2)
					break;
			} else {
				seen = 0;
			}
			if (fs_now() > deadline)
				break;
			usleep(1000);
		}
		if (w == pid) {
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				ok++;
			else
				failed++;
			continue;
		}
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (seen < 2) {
			timeout++;
			continue;
		}
		/* Whose lock: the library the futex word lies in. */
		fs_owner(uaddr, owner, sizeof(owner));
		if (!strcmp(owner, call_lib))
			in_call++;
		else if (!strcmp(owner, toolcore_lib))
			in_toolcore++;
		else {
			in_other++;
			fprintf(stderr, "forkstress: child %lu stuck on a futex at %#lx in %s\n", i, uaddr, owner);
		}
		if (stages[i] == FS_OPENING)
			stuck_open++;
		else if (stages[i] == FS_ALLOCATING)
			stuck_alloc++;
		else
			stuck_other++;
	}
	secs = fs_now() - t0;

	atomic_store(&fs_stop, true);
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	xencall_close(fs_xcall);

	printf("forkstress: libxencall=%s libxentoolcore=%s alloc_threads=%lu open_threads=%lu "
	       "forks=%lu ok=%lu stuck=%lu stuck_open=%lu stuck_alloc=%lu stuck_other=%lu "
	       "lock_xencall=%lu lock_xentoolcore=%lu lock_other=%lu "
	       "timeout=%lu failed=%lu seconds=%.1f alloc_loops=%lu open_loops=%lu\n",
	       fs_lib((void *)xencall_open), fs_lib((void *)xentoolcore_restrict_all),
	       nalloc, nopen, forks, ok, stuck_open + stuck_alloc + stuck_other,
	       stuck_open, stuck_alloc, stuck_other, in_call, in_toolcore, in_other,
	       timeout, failed, secs,
	       atomic_load(&fs_alloc_loops), atomic_load(&fs_open_loops));
	return ok == forks ? 0 : 1;
}
