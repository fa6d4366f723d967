"""Type stubs of the schedlab package (see the module's docstrings for what each does)."""

import os
from datetime import timedelta
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

__version__: str

PathLike = Union[str, "os.PathLike[str]"]
#: A path (rt-app JSON, experiment .toml, trace), rt-app JSON text, a dict, or an object with
#: a ``.json`` (``lisa.wlgen.rta.RTAConf``); None: the built-in default workload.
Workload = Union[PathLike, Mapping[str, Any], Any, None]
Duration = Union[str, float, int, timedelta, None]
Value = Union[str, int, float, bool]
Switches = Union[Mapping[str, Value], Iterable[Tuple[str, Value]], Iterable[str], None]
#: A pandas DataFrame when pandas is importable, a list of dicts otherwise.
Table = Any

class InputError(ValueError):
    file: str
    place: str
    expected: str
    found: str

class Results:
    plat_info_yaml: str
    trace_path: Optional[os.PathLike[str]]
    def __init__(self, data: dict, plat_info_yaml: str, trace_path: Optional[PathLike]) -> None: ...
    @property
    def json(self) -> dict: ...
    @property
    def tasks(self) -> Table: ...
    @property
    def cpus(self) -> Table: ...
    @property
    def freq_domains(self) -> Table: ...
    @property
    def freq_residency(self) -> Table: ...
    @property
    def workload(self) -> dict: ...
    @property
    def warnings(self) -> list: ...
    def lisa_trace(self, **kwargs: Any) -> Any: ...

class Platform(dict):
    description: str
    plat_info_yaml: str
    def __init__(self, data: dict, description: str, plat_info_yaml: str) -> None: ...
    def plat_info(self) -> Any: ...

def run(
    workload: Workload = None,
    platform: Optional[PathLike] = None,
    duration: Duration = None,
    seed: Optional[int] = None,
    set: Switches = None,
    set_at: Iterable[Union[Tuple[Duration, str, Value], str]] = (),
    trace: Optional[PathLike] = None,
    trace_events: Union[str, Iterable[str]] = (),
    rtapp_logs: Optional[PathLike] = None,
    *,
    governor: Optional[str] = None,
    trace_format: Optional[str] = None,
    trace_counters: bool = False,
    plot: Optional[PathLike] = None,
    reproducible: bool = False,
    strict: bool = False,
) -> Results: ...
def compare(
    sides: Union[Workload, Sequence[Workload]],
    runs: Optional[int] = None,
    metrics: Union[str, Iterable[str], None] = None,
    *,
    vs: Iterable[Union[Switches, str]] = (),
    platform: Optional[PathLike] = None,
    duration: Duration = None,
    set: Switches = None,
    strict: bool = False,
) -> Table: ...
def sweep(
    experiment: Workload,
    params: Union[Mapping[str, Iterable[Value]], Iterable[str], None] = None,
    *,
    platform: Optional[PathLike] = None,
    duration: Duration = None,
    set: Switches = None,
    seed: Optional[int] = None,
    shard: Optional[str] = None,
    strict: bool = False,
) -> Table: ...
def sweep_points(
    experiment: Workload,
    params: Union[Mapping[str, Iterable[Value]], Iterable[str], None] = None,
    *,
    platform: Optional[PathLike] = None,
    duration: Duration = None,
    set: Switches = None,
    seed: Optional[int] = None,
    shard: Optional[str] = None,
    strict: bool = False,
) -> list[dict]: ...
def run_point(point: Mapping[str, Any]) -> dict: ...
def merge_points(rows: Iterable[Mapping[str, Any]]) -> Table: ...
def platforms() -> Table: ...
def platform(name: PathLike) -> Platform: ...
def gen(name: str, **args: Union[Value, None]) -> dict: ...
def switches(pattern: Optional[str] = None) -> Table: ...
