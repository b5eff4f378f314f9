# Real guests torn down by plain `xl destroy` and by the daemon started by
# hand, compared (issue 16): the by-hand half of tests/xen/guests/ in make
# check, with the two kinds that cover the most in the fewest teardowns
# (admin: a booted guest with a vif, phy:, two images through Debian's
# block and a logical volume; file-fail: a remove that fails), without the
# teardown floor (a figure: make check-guests has it and every kind).  The
# device models (dm, hvm: a minute and a half each) are compared with xl
# under the unit, in systemd/45-guests-unit; make check-guests has them
# by hand.
XB_GUEST_KINDS=${XB_GUEST_KINDS:-admin file-fail} XB_GUEST_WAYS=${XB_GUEST_WAYS:-xl daemon}
. $XB_SRC/tests/xen/guests/10-by-hand.sh
