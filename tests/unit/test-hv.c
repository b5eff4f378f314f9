/* Unit tests for daemon/hv.c's domain list: hv_list hands it over sorted
 * by domid whatever order the backend gave (the fake adds in call order),
 * and hv_find finds every domain in it, and nothing that is not, by
 * binary search. */
#include <stdint.h>
#include <stdlib.h>

#include "fake_hv.h"
#include "hv.h"
#include "tap.h"

static void test_sorted_and_found(void)
{
	static const uint32_t added[] = { 7, 3, 200, 0, 42, 5, 100, 1 };
	const size_t count = sizeof(added) / sizeof(added[0]);
	struct hv *hv = fake_hv_new(0);
	struct hv_domain *domains = NULL;
	unsigned found = 0, sorted = 1;
	size_t n = 0;

	for (size_t i = 0; i < count; i++)
		fake_hv_add(hv, added[i], (uint8_t)added[i], 10, 0);
	is_int(hv_list(hv, &domains, &n), 0, "hv_list of a fake whose domains were added out of order");
	is_int(n, count, "  every domain");
	for (size_t i = 1; i < n; i++)
		sorted &= domains[i - 1].domid < domains[i].domid;
	ok(sorted, "  in domid order");
	for (size_t i = 0; i < count; i++) {
		const struct hv_domain *d = hv_find(domains, n, added[i]);

		found += d && d->domid == added[i] && d->tot_pages == 10;
	}
	is_int(found, count, "hv_find finds each of them");
	ok(hv_find(domains, n, 0) == &domains[0] && hv_find(domains, n, 200) == &domains[n - 1],
	   "  the first and the last");
	ok(!hv_find(domains, n, 2) && !hv_find(domains, n, 6) && !hv_find(domains, n, 201) &&
	   !hv_find(domains, n, 99), "  and none that is not there (2, 6, 99, 201)");
	ok(!hv_find(domains, 0, 7), "  nor anything in an empty list");
	free(domains);
	hv_free(hv);
}

int main(void)
{
	test_sorted_and_found();
	return tap_done();
}
