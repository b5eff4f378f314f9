# Baseline: plain `xl destroy` of 512, 1024 and 2048 MiB guests.  Prints how
# long each destroy blocked its caller (the figure xenreaper is measured
# against) and checks that all memory comes back.
. $XB_LIB
base=$(xb_free_pages)
xb_note "free memory at start: $((base / 256)) MiB"
for mib in 512 1024 2048; do
	t0=$(xb_ms)
	domid=$(xb_guest base$mib $mib) || { xb_not_ok "create a $mib MiB guest"; continue; }
	t1=$(xb_ms)
	xb_is "$($XB_TOOL pages $domid)" $((mib * 256)) "$mib MiB guest populated ($((t1 - t0)) ms to create)"
	xb_time blocked xl destroy $domid
	xb_note "xl destroy of $mib MiB blocked the caller $blocked ms"
	xb_check "$mib MiB guest gone after xl destroy" sh -c "! $XB_TOOL pages $domid >/dev/null"
	xb_wait_memory $base "$mib MiB returned to the free pool"
done
xb_done
