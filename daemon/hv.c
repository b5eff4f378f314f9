/*
 * hv: dispatch to a hypervisor implementation, the domain list in domid
 * order with its lookup, and UUID text handling that both implementations
 * and the request parser share.  No Xen headers here:
 * unit tests link this file without libxenctrl.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hv.h"

static int hv_domain_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct hv_domain *)a)->domid, y = ((const struct hv_domain *)b)->domid;

	return (x > y) - (x < y);
}

/* Xen keeps its domain list in domid order and getdomaininfolist walks it,
 * so a list arrives sorted; a backend that did not would only cost a sort,
 * never a domain that hv_find misses. */
int hv_list(struct hv *hv, struct hv_domain **domains, size_t *n)
{
	int rc = hv->ops->list(hv, domains, n);

	if (rc)
		return rc;
	for (size_t i = 1; i < *n; i++)
		if ((*domains)[i - 1].domid >= (*domains)[i].domid) {
			qsort(*domains, *n, sizeof(**domains), hv_domain_cmp);
			break;
		}
	return 0;
}

/* A binary search: each sample looks up every job's domain, and a host
 * emptied at once has hundreds of both. */
const struct hv_domain *hv_find(const struct hv_domain *domains, size_t n, uint32_t domid)
{
	size_t low = 0, high = n;

	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (domains[mid].domid == domid)
			return &domains[mid];
		if (domains[mid].domid < domid)
			low = mid + 1;
		else
			high = mid;
	}
	return NULL;
}

int hv_destroy(struct hv *hv, uint32_t domid, const uint8_t uuid[HV_UUID_LEN], unsigned flags)
{
	return hv->ops->destroy(hv, domid, uuid, flags);
}

int hv_self_domid(struct hv *hv, uint32_t *domid)
{
	return hv->ops->self_domid(hv, domid);
}

int hv_pool_name(struct hv *hv, uint32_t poolid, char **name)
{
	return hv->ops->pool_name(hv, poolid, name);
}

int hv_scrub_probe(struct hv *hv, unsigned sources, struct hv_scrub *out)
{
	return hv->ops->scrub_probe(hv, sources, out);
}

bool hv_scrub_exact(struct hv *hv)
{
	return hv->ops->scrub_exact && hv->ops->scrub_exact(hv);
}

int hv_free_pages(struct hv *hv, uint64_t *pages, uint64_t *outstanding)
{
	return hv->ops->free_pages(hv, pages, outstanding);
}

int hv_paging_pool(struct hv *hv, uint32_t domid, uint64_t *pages)
{
	return hv->ops->paging_pool(hv, domid, pages);
}

void hv_free(struct hv *hv)
{
	if (hv)
		hv->ops->free(hv);
}

void hv_uuid_format(const uint8_t u[HV_UUID_LEN], char out[HV_UUID_STR_LEN])
{
	snprintf(out, HV_UUID_STR_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
		 u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int hv_uuid_parse(const char *text, uint8_t uuid[HV_UUID_LEN])
{
	unsigned byte = 0;

	if (strlen(text) != HV_UUID_STR_LEN - 1)
		return -EINVAL;
	for (unsigned i = 0; i < HV_UUID_STR_LEN - 1;) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (text[i++] != '-')
				return -EINVAL;
			continue;
		}
		hi = hex_value(text[i]);
		lo = hex_value(text[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		uuid[byte++] = hi << 4 | lo;
		i += 2;
	}
	return 0;
}
