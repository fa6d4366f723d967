#!/usr/bin/env bash
# Copy the files `schedlab host platform` reads from this machine into DIR (as DIR/sys/…,
# DIR/proc/…), so that `schedlab host platform --sysfs-root DIR` reads the same machine
# anywhere: tests/data/host/ holds such snapshots. Nothing else is copied: of
# /sys/kernel/debug/sched/debug only its `sysctl_sched` head (the rest lists the tasks).
# As root, a debugfs not mounted is mounted in a private directory for the copy.
# Usage: scripts/host-snapshot.sh DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
out=$1
mkdir -p "$out"

copy() { # copy FILE... (those that exist and can be read)
  for f in "$@"; do
    [ -f "$f" ] || continue
    if cat "$f" >/dev/null 2>&1; then
      mkdir -p "$out$(dirname "$f")"
      cat "$f" >"$out$f"
    fi
  done
}

cpu=/sys/devices/system/cpu
copy $cpu/online /proc/cpuinfo /proc/sys/kernel/osrelease /proc/config.gz
[ -f /proc/config.gz ] || copy "/boot/config-$(uname -r)"
copy /proc/sys/kernel/sched_*
for c in $cpu/cpu[0-9]*; do
  copy "$c"/topology/{thread_siblings_list,core_id,physical_package_id} "$c"/cpu_capacity
  copy "$c"/cache/index*/{level,type,size,shared_cpu_list}
  copy "$c"/cpuidle/state*/{name,latency,residency,disable}
done
copy $cpu/cpuidle/{current_driver,current_governor,current_governor_ro}
for p in $cpu/cpufreq/policy*; do
  copy "$p"/{related_cpus,affected_cpus,scaling_available_frequencies} \
    "$p"/{scaling_boost_frequencies,cpuinfo_min_freq,cpuinfo_max_freq} \
    "$p"/{cpuinfo_transition_latency,scaling_driver,scaling_governor}
done
copy /sys/devices/system/node/online /sys/devices/system/node/node*/{cpulist,distance}

debug=/sys/kernel/debug
mounted=""
if [ ! -d $debug/sched ] && [ "$(id -u)" = 0 ]; then
  debug=$(mktemp -d)
  if mount -t debugfs none "$debug"; then mounted=$debug; else rmdir "$debug"; fi
fi
if [ -d "$debug/sched" ]; then
  dst=$out/sys/kernel/debug/sched
  mkdir -p "$dst"
  for f in base_slice_ns min_granularity_ns latency_ns wakeup_granularity_ns \
    idle_min_granularity_ns migration_cost_ns tunable_scaling features preempt; do
    if [ -f "$debug/sched/$f" ] && cat "$debug/sched/$f" >/dev/null 2>&1; then
      cat "$debug/sched/$f" >"$dst/$f"
    fi
  done
  # The sysctl_sched section: up to the first CPU's block.
  awk '/^cpu#/ { exit } { print }' "$debug/sched/debug" >"$dst/debug"
  for pd in "$debug"/energy_model/*; do
    [ -d "$pd" ] || continue
    mkdir -p "$out/sys/kernel/debug/energy_model/$(basename "$pd")"
    [ -f "$pd/cpus" ] && cat "$pd/cpus" >"$out/sys/kernel/debug/energy_model/$(basename "$pd")/cpus"
  done
fi
if [ -n "$mounted" ]; then umount "$mounted" && rmdir "$mounted"; fi
echo "$out: $(find "$out" -type f | wc -l) files"
