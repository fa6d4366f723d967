"""The native module (Rust, pyo3): requests as strings and lists, answers as JSON text.
Use the functions of the ``schedlab`` package instead."""

from typing import Optional, Tuple

Source = Tuple[str, str, str]

__version__: str

class InputError(ValueError):
    file: str
    place: str
    expected: str
    found: str

def run(workload: Source, platform: Optional[str], duration: Optional[str], set: list[str],
        set_at: list[str], governor: Optional[str], seed: Optional[int], reproducible: bool,
        strict: bool, trace: Optional[str], trace_events: Optional[str],
        trace_format: Optional[str], trace_counters: bool, rtapp_logs: Optional[str],
        plot: Optional[str]) -> Tuple[str, str]: ...
def compare(sides: list[Source], vs: list[str], platform: Optional[str],
            duration: Optional[str], set: list[str], runs: Optional[int], metrics: list[str],
            strict: bool) -> str: ...
def sweep(workload: Source, platform: Optional[str], duration: Optional[str], set: list[str],
          params: list[str], seed: Optional[int], shard: Optional[str],
          strict: bool) -> Tuple[str, str]: ...
def sweep_points(workload: Source, platform: Optional[str], duration: Optional[str],
                 set: list[str], params: list[str], seed: Optional[int],
                 shard: Optional[str], strict: bool) -> list[Tuple[int, dict, int]]: ...
def run_point(workload: Source, platform: Optional[str], duration: Optional[str],
              set: list[str], strict: bool, seed: int, index: int, params: dict) -> str: ...
def merge_points(points: str) -> Tuple[str, str]: ...
def platforms() -> list[Tuple[str, int, str]]: ...
def platform(name: str) -> Tuple[str, str, str]: ...
def gen(name: str, args: list[str]) -> str: ...
def switches() -> list[Tuple[str, str, str, str, str]]: ...
