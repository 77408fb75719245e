#!/usr/bin/env bash
# Several disks per VM end to end: the example scenario runs, the device lines count each disk
# on the device it names, JSON lists each disk; the MVA commands refuse such a VM (exit 2); a
# disk index or backend that does not exist is an error with the key (exit 2).
set -uo pipefail
vqsim=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/check_lib.sh
source "$(dirname "$0")/check_lib.sh"

s=$src/scenarios/consolidation/db-data-log.toml
short=(--ios 3000 --replications 2)
printf '[log]\nfilename=/dev/vdb\nrw=write\nbs=16k\n' >"$tmp/log.fio"

check "a VM of two disks runs" status_is 0 "$vqsim" run "$s" "${short[@]}"
check "... each device counts the disks on it: the SSD holds the log disk alone" grep -q '^  device ssd: db vdb 100.0% of its I/Os' "$tmp/out"
check "... the NVMe the data disk and the web VMs" grep -Eq '^  device nvme: db vda [0-9.]+% of its I/Os, [0-9.]+% of its bytes; web ' "$tmp/out"
check "... the second disk's own stages in the stage table" grep -q '^disk:vdb.guest.tags' "$tmp/out"
check "both disks on the NVMe: one device line" status_is 0 "$vqsim" run "$s" "${short[@]}" --set vm.db.disk.1.backend=nvme
check "... with both disks on it" grep -Eq '^  device nvme: db vda [0-9.]+% .*; db vdb [0-9.]+% .*; web ' "$tmp/out"
check "... and no SSD" bash -c "! grep -q 'device ssd' '$tmp/out'"
"$vqsim" run "$s" "${short[@]}" --format json >"$tmp/j.json" 2>/dev/null
check "json: each disk with its backend, figures and device share" python3 -c "
import json; vms = json.load(open('$tmp/j.json'))['vms']
d = vms[0]['disks']
assert [x['name'] for x in d] == ['vda', 'vdb'] and [x['backend'] for x in d] == ['nvme', 'ssd'], d
assert d[1]['device_share']['ios'] == 1.0 and d[1]['directions']['write']['iops']['mean'] > 0
assert d[1]['directions']['read']['iops']['mean'] == 0
assert vms[0]['device_share'] == d[0]['device_share'] and 'disks' not in vms[1]"
check "one job on the log disk: the idle data disk is said" status_is 0 "$vqsim" run "$s" "${short[@]}" --set vm.db.workload.fio_job="$tmp/log.fio"
check "... on stderr" grep -q 'vm.db.disk.0: no fio job of vm.db names /dev/vda (filename=): the disk is idle' "$tmp/err"
check "... and in the VM's block" grep -q '^disk vda (/dev/vda, on nvme): idle' "$tmp/out"
check "solve refuses a VM of two disks (2)" status_is 2 "$vqsim" solve "$s" --set vm.db.workload.fio_job="$tmp/log.fio"
check "... saying why" grep -q 'vm.db has 2 disks (\[\[vm.disk\]\] tables), and the MVA models one disk per VM' "$tmp/err"
check "run --compare-mva refuses it too (2)" status_is 2 "$vqsim" run "$s" "${short[@]}" --compare-mva --set vm.db.workload.fio_job="$tmp/log.fio"
check "a disk index that does not exist (2)" status_is 2 "$vqsim" run "$s" "${short[@]}" --set vm.db.disk.2.backend=nvme
check "... names the key and the disks" grep -q '^vqsim: (from --set): vm.db.disk.2.backend: vm.db has 2 disks (disk.0 to disk.1)' "$tmp/err"
check "a backend that does not exist (2)" status_is 2 "$vqsim" run "$s" "${short[@]}" --set vm.db.disk.1.backend=ceph
check "... names the key and the backends" grep -q '^vqsim: (from --set): vm.db.disk.1.backend: no \[\[backend\]\] named "ceph"; the backends are nvme, ssd' "$tmp/err"
sed 's#filename=/dev/vdb#filename=/dev/vda:/dev/vdb#' "$src/scenarios/consolidation/db-data-log.fio" >"$tmp/spread.fio"
check "a job spread over two disks is refused (2)" status_is 2 "$vqsim" run "$s" "${short[@]}" --set vm.db.workload.fio_job="$tmp/spread.fio"
check "... with the job file's line and what to write" grep -q "spread.fio:[0-9]*: job 'log': filename=/dev/vda:/dev/vdb names several files" "$tmp/err"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
