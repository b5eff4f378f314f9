#!/bin/sh
# make check-guests: real guests (vifs on a bridge,
# loop, image, LVM and qdisk disks, a device model, booted front-ends),
# each kind torn down by xl, by the daemon started by hand and by the
# teardown floor, compared (tests/xen/guests/).  XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
dir=$(dirname "$0")
exec "$dir/xenbench" --guests --timeout 2400 --boot-timeout 400 \
	--log "${abs_top_builddir:-.}/tests/xen/xenbench-guests.log" \
	--builddir "${abs_top_builddir:-$(pwd)}"
