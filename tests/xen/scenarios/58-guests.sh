# xenbench: hap
# Real guests torn down by plain `xl destroy` and by the daemon started by
# hand, compared (issue 16): the by-hand half of tests/xen/guests/ in make
# check, with the kinds that cover the most in the fewest teardowns
# (admin: a booted guest with a vif, phy:, two images through Debian's
# block and a logical volume; file-fail: a remove that fails; dm: a PV
# guest's device model serving a framebuffer and a qdisk image; hvm: an
# HVM guest's, which is why this boot needs `hap`), without the teardown
# floor (a figure: make check-guests has it and every kind).
XB_GUEST_KINDS=${XB_GUEST_KINDS:-admin file-fail dm hvm} XB_GUEST_WAYS=${XB_GUEST_WAYS:-xl daemon}
. $XB_SRC/tests/xen/guests/10-by-hand.sh
