/*
 * hv: dispatch to a hypervisor implementation, and UUID text handling that
 * both implementations and the request parser share.  No Xen headers here:
 * unit tests link this file without libxenctrl.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hv.h"

int hv_list(struct hv *hv, struct hv_domain **domains, size_t *n)
{
	return hv->ops->list(hv, domains, n);
}

const struct hv_domain *hv_find(const struct hv_domain *domains, size_t n, uint32_t domid)
{
	for (size_t i = 0; i < n; i++)
		if (domains[i].domid == domid)
			return &domains[i];
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
