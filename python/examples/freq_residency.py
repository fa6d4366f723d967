"""A LISA rt-app workload under two kernel variants, and where each spends its time in
frequency: schedutil with util_est (v6.1's default) against schedutil without it.

    python examples/freq_residency.py [OUT.png]

Without OUT.png the figure goes to a new temporary folder (its path is printed), not the
current directory. Needs LISA (lisa-linux), pandas and matplotlib; set MPLBACKEND=Agg to
draw without a display.
"""

import os
import sys
import tempfile

import matplotlib.pyplot as plt
import pandas as pd
from lisa.wlgen.rta import PeriodicWload, RTAConf, RTAPhase

import schedlab

PLATFORM = "juno-r0"

# A 16 ms frame task that grows from 10% to 50% of the biggest CPU, and a steady 20% one.
profile = {
    "frames": RTAPhase(prop_wload=PeriodicWload(duty_cycle_pct=10, period=16e-3, duration=1))
    + RTAPhase(prop_wload=PeriodicWload(duty_cycle_pct=50, period=16e-3, duration=2)),
    "steady": RTAPhase(prop_wload=PeriodicWload(duty_cycle_pct=20, period=16e-3, duration=3)),
}
conf = RTAConf.from_profile(profile, plat_info=schedlab.platform(PLATFORM).plat_info())

variants = {
    "UTIL_EST": {},
    "NO_UTIL_EST": {"feature.UTIL_EST": False},
}
residency = {}
for label, switches in variants.items():
    r = schedlab.run(conf, platform=PLATFORM, set=switches)
    res = r.freq_residency
    res["cluster"] = "CPUs " + res["cpus"]
    residency[label] = res.pivot(index="freq_khz", columns="cluster", values="share")

fig, axes = plt.subplots(1, len(residency[next(iter(residency))].columns), figsize=(10, 4))
for ax, cluster in zip(axes, residency["UTIL_EST"].columns):
    table = {label: res[cluster] * 100 for label, res in residency.items()}
    frame = pd.DataFrame(table).dropna(how="all")  # the cluster's own OPPs
    frame.index = (frame.index // 1000).rename("MHz")
    frame.plot.bar(ax=ax)
    ax.set_title(f"{PLATFORM} {cluster}")
    ax.set_ylabel("time (%)")
fig.tight_layout()
if len(sys.argv) > 1:
    out = sys.argv[1]
else:
    out = os.path.join(tempfile.mkdtemp(prefix="schedlab-example-"), "freq_residency.png")
fig.savefig(out)
print(f"wrote {out}")
