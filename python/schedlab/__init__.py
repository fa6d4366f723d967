"""schedlab: a deterministic simulator of the Linux v6.1 CPU scheduler, from Python.

The functions mirror the command line (``schedlab run``, ``compare``, ``sweep``, ``gen``,
``platforms``) and call the same Rust library; the same inputs and seed give the same
numbers as the command line, on any machine.

>>> import schedlab
>>> r = schedlab.run({"tasks": {"p": {"loop": -1, "run": 1000,
...                   "timer": {"ref": "unique", "period": 10000}}}}, duration="1s")
>>> r.tasks                              # a pandas DataFrame when pandas is installed
>>> schedlab.compare([w], vs=[{"cpufreq.iowait_boost": False}], runs=5)

A workload is a path (rt-app JSON, an experiment ``.toml``, a trace), rt-app JSON text, a
dict, or a ``lisa.wlgen.rta.RTAConf`` (anything with a ``.json``). Switches (``set``) take
the keys ``schedlab switches`` lists. Bad input raises :class:`InputError`, a
``ValueError`` with ``.file``, ``.place``, ``.expected`` and ``.found``; files that cannot
be written raise ``OSError``. The GIL is released while simulating, and ``compare`` and
``sweep`` run their simulations in parallel (their numbers do not depend on the number of
threads).

Tables are pandas DataFrames when pandas can be imported, lists of dicts otherwise.
"""

from __future__ import annotations

import io
import json as _json
import os
import pathlib
import warnings as _warnings
from datetime import timedelta

from . import _schedlab as _native
from ._schedlab import InputError

__version__ = _native.__version__

__all__ = [
    "InputError",
    "Platform",
    "Results",
    "compare",
    "gen",
    "merge_points",
    "platform",
    "platforms",
    "run",
    "run_point",
    "switches",
    "sweep",
    "sweep_points",
]


# How to install LISA: lisa-linux 3.1.0 alone fails (nest_asyncio is missing from its
# requirements, and NumPy 2 has no np.NaN); the pins are scripts/install-lisa.sh's and the
# README's, the versions tested.
_LISA_PIP = 'pip install lisa-linux==3.1.0 "numpy<2" "pyarrow<16" "pandas<2.2" nest_asyncio'

# The first bytes of a trace.dat (trace-cmd.dat(5)).
_DAT_MAGIC = b"\x17\x08\x44"


def _pandas():
    try:
        import pandas
    except ImportError:
        return None
    return pandas


def _table(rows, flatten=True):
    """A DataFrame of ``rows`` (nested dicts as ``a.b`` columns), or the rows themselves."""
    pd = _pandas()
    if pd is None:
        return rows
    if flatten:
        return pd.json_normalize(rows)
    return pd.DataFrame(rows)


def _value(v) -> str:
    """A switch value as ``--set`` takes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _pairs(switches, what="set") -> list[str]:
    """``{"KEY": value}`` (or ``[("KEY", value)]``, or ``["KEY=VALUE"]``) as KEY=VALUE."""
    if switches is None:
        return []
    if isinstance(switches, dict):
        switches = switches.items()
    out = []
    for item in switches:
        if isinstance(item, str):
            out.append(item)
        else:
            try:
                k, v = item
            except (TypeError, ValueError):
                raise TypeError(
                    f"{what}: expected a dict of switches or (KEY, VALUE) pairs, found {item!r}"
                ) from None
            out.append(f"{k}={_value(v)}")
    return out


def _uint(func: str, name: str, value, lo: int = 0, hi: int = 2**64 - 1):
    """An integer argument in ``lo..=hi`` (a seed takes any u64), or None; anything else
    raises :class:`InputError` naming the function and the argument, as the command line
    names the option."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        err = InputError(f"schedlab.{func}: {name}: expected an integer {lo}..={hi}, found {value!r}")
        err.file, err.place = f"schedlab.{func}", name
        err.expected, err.found = f"an integer {lo}..={hi}", repr(value)
        raise err
    return value


def _duration(d):
    """``"10s"``, ``"500ms"``, a number of seconds or a ``timedelta`` as the CLI's text."""
    if d is None:
        return None
    if isinstance(d, timedelta):
        return f"{d.total_seconds()!r}s"
    if isinstance(d, bool):
        raise TypeError(f"duration: expected a time such as '10s' or seconds, found {d!r}")
    if isinstance(d, (int, float)):
        return f"{d!r}s"
    return str(d)


def _source(workload, name="<json>"):
    """A workload as the native module takes it: (kind, text, name)."""
    if workload is None:
        return ("default", "", "")
    if isinstance(workload, os.PathLike):
        return ("arg", os.fspath(workload), "")
    if isinstance(workload, str):
        if workload.lstrip().startswith("{"):
            return ("json", workload, name)
        return ("arg", workload, "")
    if isinstance(workload, dict):
        return ("json", _json.dumps(workload), name)
    text = getattr(workload, "json", None)
    if text is not None:
        # lisa.wlgen.rta.RTAConf: its rt-app JSON.
        if callable(text):
            text = text()
        if isinstance(text, dict):
            text = _json.dumps(text)
        return ("json", str(text), f"<{type(workload).__name__}>")
    raise TypeError(
        "workload: expected a path, rt-app JSON text, a dict or an object with .json "
        f"(lisa.wlgen.rta.RTAConf), found {type(workload).__name__}"
    )


def _portable(src):
    """A source whose path does not depend on the current directory (for other processes)."""
    kind, text, name = src
    if kind == "arg" and text != "-":
        return (kind, os.path.abspath(text), name)
    return src


def _path(p):
    return None if p is None else os.fspath(p)


class Results:
    """One run's results.

    ``json`` is the dict ``schedlab run --json`` writes; ``tasks``, ``cpus`` and
    ``freq_domains`` are its tables (pandas DataFrames when pandas is installed, nested
    fields as ``a.b`` columns; lists of dicts otherwise); ``workload`` is the generator's
    metrics (``iops``, latency percentiles…); ``trace_path`` is the trace written with
    ``trace=``, which :meth:`lisa_trace` opens in LISA.
    """

    def __init__(self, data: dict, plat_info_yaml: str, trace_path):
        self._data = data
        self.plat_info_yaml = plat_info_yaml
        self.trace_path = None if trace_path is None else pathlib.Path(trace_path)

    @property
    def json(self) -> dict:
        """The results as ``schedlab run --json`` writes them."""
        return self._data

    @property
    def tasks(self):
        """One row per task: runtime, wake-ups, latency percentiles, utilization, clamps."""
        return _table(self._data["tasks"])

    @property
    def cpus(self):
        """One row per CPU: busy and idle time, energy, residency per frequency (kHz) and idle state."""
        return _table(self._data["cpus"])

    @property
    def freq_domains(self):
        """One row per frequency domain (cpufreq policy): its CPUs, energy, residencies."""
        return _table(self._data["domains"])

    @property
    def freq_residency(self):
        """Time at each frequency per domain, long form: domain, cpus, freq_khz, time_ns, share."""
        rows = []
        for i, d in enumerate(self._data["domains"]):
            total = sum(d["freq_residency_ns"].values()) or 1
            for f, ns in d["freq_residency_ns"].items():
                rows.append(
                    {
                        "domain": i,
                        "cpus": ",".join(map(str, d["cpus"])),
                        "freq_khz": int(f),
                        "time_ns": ns,
                        "share": ns / total,
                    }
                )
        return _table(rows, flatten=False)

    @property
    def workload(self) -> dict:
        """The workload generator's own metrics (``iops``, ``ops_per_sec``, latencies…)."""
        return self._data.get("workload") or {}

    @property
    def warnings(self) -> list:
        """What the workload holds that rt-app would ignore."""
        return self._data.get("warnings", [])

    def lisa_trace(self, **kwargs):
        """The run's trace as a ``lisa.trace.Trace``, with the run's ``PlatformInfo``.

        Needs ``trace=PATH`` in :func:`run` and LISA (``lisa-linux``) importable; keyword
        arguments go to ``Trace`` (``normalize_time`` defaults to False, so times are the
        trace's: the simulated time plus 1 ns). A text trace (whatever its name) is read
        with LISA's human-readable parser told how ftrace's ``print`` lines read, so that
        rt-app's own lines become LISA's ``userspace@rtapp_*`` events (``ana.rta``); a
        trace.dat is read through trace-cmd. ``parser=`` overrides the choice.
        """
        if self.trace_path is None:
            raise ValueError("this run wrote no trace: run it with trace='run.txt'")
        try:
            from lisa.platforms.platinfo import PlatformInfo
            from lisa.trace import HRTxtTraceParser, PrintTxtEventParser, Trace, TxtTraceParser
        except ImportError as e:
            raise ImportError(f"Results.lisa_trace() needs LISA ({_LISA_PIP}): {e}") from e
        stem = self.trace_path.stem
        yml = self.trace_path.with_name(f"{stem}.plat_info.yml")
        kwargs.setdefault("normalize_time", False)
        if "parser" not in kwargs:
            with open(self.trace_path, "rb") as f:
                dat = f.read(3) == _DAT_MAGIC
            # (LISA would choose by the name: .txt is text, anything else a trace.dat.)
            if dat:
                kwargs["parser"] = TxtTraceParser.from_dat
            else:
                prints = PrintTxtEventParser(event="print", func_field="ip", content_field="buf")
                kwargs["parser"] = HRTxtTraceParser.from_txt_file(event_parsers=[prints])
        return Trace(
            str(self.trace_path), plat_info=PlatformInfo.from_yaml_map(str(yml)), **kwargs
        )

    def __repr__(self):
        d = self._data
        return (
            f"<schedlab.Results {d['platform']} {len(d['tasks'])} tasks "
            f"{d['duration_ns'] / 1e9:g} s seed {d['seed']} energy {d['energy_mj']:.1f} mJ>"
        )


def run(
    workload=None,
    platform=None,
    duration=None,
    seed=None,
    set=None,
    set_at=(),
    trace=None,
    trace_events=(),
    rtapp_logs=None,
    *,
    governor=None,
    trace_format=None,
    trace_counters=False,
    plot=None,
    reproducible=False,
    strict=False,
) -> Results:
    """Simulate a workload: ``schedlab run``.

    workload: a path (rt-app JSON, experiment ``.toml``, trace), rt-app JSON text, a dict, a
        ``lisa.wlgen.rta.RTAConf``; None: the built-in default workload.
    platform: a preset (``schedlab.platforms()``) or a platform file; default ``juno-r0``
        or the experiment's.
    duration: ``"10s"``, ``"500ms"``, seconds, or a ``timedelta``; default the
        experiment's, the workload's ``global.duration``, else 10 s.
    seed: default the experiment's first seed, else 0.
    set: switches ``{"KEY": value}`` (``--set``; see :func:`switches`).
    set_at: timed writes ``[(time, "KEY", value)]`` (``--set-at``), time as for duration.
    trace: write an ftrace trace (text, or trace.dat for ``.dat``) and its plat_info.yml.
    trace_events: extra load-tracking events (``"all"`` or names such as ``sched_pelt_se``).
    rtapp_logs: a directory for rt-app style per-thread logs.
    governor, trace_format, trace_counters, plot, strict: as the command line's switches.
    reproducible: leave host timing (``wall_ns``) out, so runs compare byte for byte.
    """
    if isinstance(trace_events, str):
        events = trace_events
    else:
        events = ",".join(trace_events) or None
    timed = []
    for item in set_at:
        if isinstance(item, str):
            timed.append(item)
            continue
        try:
            at, key, value = item
        except (TypeError, ValueError):
            raise TypeError(f"set_at: expected (time, KEY, value) tuples, found {item!r}") from None
        timed.append(f"{_duration(at)}:{key}={_value(value)}")
    data, plat_info = _native.run(
        _source(workload),
        platform,
        _duration(duration),
        _pairs(set),
        timed,
        governor,
        _uint("run", "seed", seed),
        reproducible,
        strict,
        _path(trace),
        events,
        trace_format,
        trace_counters,
        _path(rtapp_logs),
        _path(plot),
    )
    results = Results(_json.loads(data), plat_info, trace)
    for w in results.warnings:
        _warnings.warn(f"schedlab: {w}", stacklevel=2)
    return results


def _comparison_table(cmp: dict):
    rows = []
    for m in cmp["metrics"]:
        for i, side in enumerate(cmp["sides"]):
            rows.append(
                {
                    "metric": m["metric"],
                    "side": side,
                    "mean_kind": m["mean"],
                    "better": m["better"],
                    "mean": m["means"][i],
                    "stddev": m["stddevs"][i],
                    "min": m["mins"][i],
                    "max": m["maxs"][i],
                    "coeff_var_pct": m["coeff_var_pct"][i],
                    "diff_pct": m["diff_pct"][i],
                    "significant": m["significant"][i],
                    "values": m["values"][i],
                }
            )
    table = _table(rows, flatten=False)
    if not isinstance(table, list):
        table.attrs["seeds"] = cmp["seeds"]
        table.attrs["rule"] = cmp["rule"]
        table.attrs["json"] = cmp
    return table


def compare(
    sides,
    runs=None,
    metrics=None,
    *,
    vs=(),
    platform=None,
    duration=None,
    set=None,
    strict=False,
):
    """Run sides over seeds 0..runs and compare them: ``schedlab compare``.

    sides: workloads (as :func:`run` takes them); the first is the base. ``vs``: more sides,
        each the first with these switches (``{"KEY": value}``, as ``--vs``).
    runs: seeds per side (default: the first side's seeds, else 5).
    metrics: only these metrics, by name (``"iops"``) or with their workload (``"io.iops"``).
    platform, duration, set: for every side, as in :func:`run`.

    Returns one row per metric and side: mean (``mean_kind`` Hmean for rates, Amean
    otherwise), stddev, min, max, coeff_var_pct, diff_pct (+ is better, as mmtests) and
    ``significant`` (Welch's t-test against the first side at 95%), and the run values.
    The runs go in parallel; the numbers do not depend on the number of threads.
    """
    if isinstance(sides, (str, dict, os.PathLike)) or hasattr(sides, "json"):
        sides = [sides]
    srcs = [_source(s, f"sides[{i}]") for i, s in enumerate(sides)]
    vs_items = [" ".join(_pairs(v, "vs")) if not isinstance(v, str) else v for v in vs]
    if isinstance(metrics, str):
        metrics = [metrics]
    text = _native.compare(
        srcs,
        vs_items,
        platform,
        _duration(duration),
        _pairs(set),
        _uint("compare", "runs", runs, 1, 1000),
        list(metrics or []),
        strict,
    )
    return _comparison_table(_json.loads(text))


def _params(params) -> list[str]:
    """``{"KEY": [v1, v2]}`` as ``--param KEY=V1,V2``."""
    if params is None:
        return []
    if isinstance(params, dict):
        params = params.items()
    out = []
    for item in params:
        if isinstance(item, str):
            out.append(item)
            continue
        key, values = item
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            values = [values]
        out.append(f"{key}=" + ",".join(_value(v) for v in values))
    return out


def _points_table(points_json: str, csv: str):
    pd = _pandas()
    points = _json.loads(points_json)
    if pd is None:
        return [
            {"index": p["index"], **p["params"], "status": p["status"], **p["metrics"]}
            for p in points
        ]
    table = pd.read_csv(io.StringIO(csv))
    table.attrs["points"] = points
    return table


def sweep(
    experiment,
    params=None,
    *,
    platform=None,
    duration=None,
    set=None,
    seed=None,
    shard=None,
    strict=False,
):
    """Run a workload over a grid of switch values: ``schedlab sweep``.

    experiment: a workload or an experiment file (as :func:`run` takes it).
    params: ``{"KEY": [values]}``; the grid is every combination, in order (default: the
        experiment's ``[sweep]`` table).
    shard: ``"I/N"`` runs only the points whose index is I modulo N.

    Returns the table ``schedlab sweep`` writes to points.csv: index, the parameters,
    status, then the metrics. The points run in parallel.
    """
    points, csv = _native.sweep(
        _source(experiment),
        platform,
        _duration(duration),
        _pairs(set),
        _params(params),
        _uint("sweep", "seed", seed),
        shard,
        strict,
    )
    return _points_table(points, csv)


def sweep_points(
    experiment,
    params=None,
    *,
    platform=None,
    duration=None,
    set=None,
    seed=None,
    shard=None,
    strict=False,
) -> list:
    """The points of :func:`sweep`, as plain picklable dicts for any executor.

    Each runs alone with :func:`run_point` (``concurrent.futures``, Dask, Ray, a batch job
    on a shared filesystem); :func:`merge_points` joins the rows into the table
    :func:`sweep` returns. The grid and every switch are checked here, before any runs.
    """
    src = _portable(_source(experiment))
    common = {
        "workload": list(src),
        "platform": platform,
        "duration": _duration(duration),
        "set": _pairs(set),
        "strict": strict,
    }
    points = _native.sweep_points(
        src,
        platform,
        _duration(duration),
        _pairs(set),
        _params(params),
        _uint("sweep_points", "seed", seed),
        shard,
        strict,
    )
    return [
        {**common, "seed": seed, "index": index, "params": dict(p)}
        for index, p, seed in points
    ]


def run_point(point: dict) -> dict:
    """Run one point of :func:`sweep_points`: its row (index, params, metrics, status)."""
    text = _native.run_point(
        tuple(point["workload"]),
        point["platform"],
        point["duration"],
        list(point["set"]),
        point["strict"],
        _uint("run_point", "seed", point["seed"]),
        _uint("run_point", "index", point["index"]),
        {str(k): str(v) for k, v in point["params"].items()},
    )
    return _json.loads(text)


def merge_points(rows):
    """Join rows of :func:`run_point` (any order, from anywhere) into the :func:`sweep` table."""
    points, csv = _native.merge_points(_json.dumps(list(rows)))
    return _points_table(points, csv)


def platforms():
    """The built-in platforms: name, cpus, description."""
    return _table(
        [{"name": n, "cpus": c, "description": d} for n, c, d in _native.platforms()],
        flatten=False,
    )


class Platform(dict):
    """A platform as a dict (the fields of ``platforms/*.toml``), with its description and
    its LISA ``PlatformInfo`` (:meth:`plat_info`)."""

    def __init__(self, data: dict, description: str, plat_info_yaml: str):
        super().__init__(data)
        self.description = description
        self.plat_info_yaml = plat_info_yaml

    def plat_info(self):
        """The platform as a ``lisa.platforms.platinfo.PlatformInfo`` (LISA needed)."""
        try:
            from lisa.platforms.platinfo import PlatformInfo
        except ImportError as e:
            raise ImportError(
                f"Platform.plat_info() needs LISA ({_LISA_PIP}): {e}"
            ) from e
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            f.write(self.plat_info_yaml)
        try:
            return PlatformInfo.from_yaml_map(f.name)
        finally:
            os.unlink(f.name)

    def __repr__(self):
        return f"<schedlab.Platform {self['name']}: {len(self['cpus'])} CPUs>"


def platform(name) -> Platform:
    """A platform preset or platform file (``schedlab platforms NAME``)."""
    data, description, yml = _native.platform(os.fspath(name))
    return Platform(_json.loads(data), description, yml)


def gen(name: str, **args) -> dict:
    """A generated rt-app workload (``schedlab gen NAME --ARG VALUE…``) as a dict.

    Arguments are the generator's options with ``_`` for ``-``: ``gen("fio",
    service_time=80)`` is ``schedlab gen fio --service-time 80``; True gives a bare flag.
    """
    words = []
    for k, v in args.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            words.append(flag)
        elif v is False or v is None:
            continue
        else:
            words += [flag, _value(v)]
    return _json.loads(_native.gen(name, words))


def switches(pattern=None):
    """The switches ``set`` takes (those whose key contains ``pattern``): key, default, kind,
    range, meaning."""
    rows = [
        {"key": k, "default": d, "kind": t, "range": r, "meaning": m}
        for k, d, t, r, m in _native.switches()
        if pattern is None or pattern in k
    ]
    return _table(rows, flatten=False)
