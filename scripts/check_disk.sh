#!/bin/sh
# Before a big install: stop with a plain message when the disk under DIR has less than NEED_GB free, so a pip
# "No space left on device" halfway through is not the first sign. Usage: check_disk.sh DIR NEED_GB
dir=$1; need_gb=$2
free_kb=$(df -Pk "$dir" | awk 'NR == 2 {print $4}')
if [ -n "$free_kb" ] && [ "$free_kb" -lt $((need_gb * 1024 * 1024)) ]; then
    echo "$dir: $((free_kb / 1024 / 1024)) GB free on its disk, and the install below needs about $need_gb GB: free some space (old clones' .venv folders, pip's cache) and run it again" >&2
    exit 1
fi
exit 0
