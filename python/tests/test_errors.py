"""Bad input raises `schedlab.InputError` with the command line's exit-2 message and
fields; files that cannot be written raise OSError."""

import json

import pytest

import schedlab
from conftest import ROOT, cli, cli_error

WORKLOAD = ROOT / "workloads/default.json"


def check_same(err: schedlab.InputError, cli_message: str):
    assert isinstance(err, ValueError)
    assert str(err) == cli_message
    assert f"{err.file}: {err.place}: expected {err.expected}, found {err.found}" == cli_message


def test_a_bad_workload_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tasks": {"t": {"loop": 1, "run": "soon"}}}))
    message = cli_error("run", bad)
    with pytest.raises(schedlab.InputError) as e:
        schedlab.run(bad)
    check_same(e.value, message)
    assert e.value.file == str(bad)


def test_bad_json_text_names_its_place():
    with pytest.raises(schedlab.InputError) as e:
        schedlab.run('{"tasks": {"t": {"run": "soon", "loop": 1}}}')
    assert e.value.file == "<json>" and "tasks.t" in e.value.place


def test_a_bad_experiment_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "4s"\nplatform = "juno-r0"\n[[workload]]\ngen = "fio"\nargs = { nope = 1 }\n')
    message = cli_error("run", bad)
    with pytest.raises(schedlab.InputError) as e:
        schedlab.run(bad)
    check_same(e.value, message)


def test_bad_set_keys_and_values():
    for key, value in [("nonsense.key", 1), ("cpufreq.rate_limit_us", "fast")]:
        message = cli_error("run", WORKLOAD, "--set", f"{key}={value}")
        with pytest.raises(schedlab.InputError) as e:
            schedlab.run(WORKLOAD, set={key: value})
        check_same(e.value, message)


def test_bad_platform_duration_and_timed_write():
    cases = [
        (["--platform", "nosuch"], {"platform": "nosuch"}),
        (["--duration", "soon"], {"duration": "soon"}),
        (["--set-at", "20s:kernel.sched_util_clamp_min=128", "--duration", "1s"],
         {"set_at": [("20s", "kernel.sched_util_clamp_min", 128)], "duration": "1s"}),
    ]
    for args, kwargs in cases:
        message = cli_error("run", WORKLOAD, *args)
        with pytest.raises(schedlab.InputError) as e:
            schedlab.run(WORKLOAD, **kwargs)
        check_same(e.value, message)


def test_bad_compare_and_sweep_input():
    message = cli_error("compare", WORKLOAD, "--vs", "nonsense.key=1")
    with pytest.raises(schedlab.InputError) as e:
        schedlab.compare([WORKLOAD], vs=[{"nonsense.key": 1}])
    check_same(e.value, message)
    message = cli_error("sweep", WORKLOAD, "--param", "cpufreq.rate_limit_us=1,x", "--out", "/tmp")
    with pytest.raises(schedlab.InputError) as e:
        schedlab.sweep(WORKLOAD, {"cpufreq.rate_limit_us": [1, "x"]})
    check_same(e.value, message)
    with pytest.raises(schedlab.InputError):
        schedlab.sweep_points(WORKLOAD, {"nonsense.key": [1, 2]})


def test_bad_generator_arguments():
    with pytest.raises(schedlab.InputError) as e:
        schedlab.gen("fio", no_such_option=3)
    assert e.value.file == "schedlab.gen"
    with pytest.raises(schedlab.InputError):
        schedlab.gen("nosuch")


def test_an_unwritable_trace_is_an_oserror(tmp_path):
    target = tmp_path / "missing-dir" / "run.txt"
    p = cli("run", WORKLOAD, "--duration", "1s", "--trace", target, check=False)
    assert p.returncode == 3
    with pytest.raises(OSError):
        schedlab.run(WORKLOAD, duration="1s", trace=target)


def test_wrong_python_types_are_type_errors():
    with pytest.raises(TypeError):
        schedlab.run(42)
    with pytest.raises(TypeError):
        schedlab.run(WORKLOAD, set_at=[("1s", "only-a-key")])


def test_warnings_are_python_warnings_and_strict_makes_them_errors(tmp_path):
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"tasks": {"t": {"loop": 1, "run": 1000, "colour": "blue"}}}))
    p = cli("run", w, "--duration", "1s")
    cli_warnings = [line for line in p.stderr.splitlines() if line.startswith("schedlab: ")]
    assert cli_warnings, p.stderr
    with pytest.warns(UserWarning) as caught:
        r = schedlab.run(w, duration="1s")
    assert [str(c.message) for c in caught] == cli_warnings
    assert ["schedlab: " + x for x in r.warnings] == cli_warnings
    message = cli_error("run", w, "--strict")
    with pytest.raises(schedlab.InputError) as e:
        schedlab.run(w, strict=True)
    check_same(e.value, message)


def test_integer_arguments_out_of_range_are_input_errors_naming_them():
    cases = [
        (lambda: schedlab.run(WORKLOAD, seed=-1), "schedlab.run", "seed", "-1"),
        (lambda: schedlab.run(WORKLOAD, seed=2**64), "schedlab.run", "seed", str(2**64)),
        (lambda: schedlab.run(WORKLOAD, seed="1"), "schedlab.run", "seed", "'1'"),
        (lambda: schedlab.compare([WORKLOAD], vs=[{}], runs=0), "schedlab.compare", "runs", "0"),
        (lambda: schedlab.sweep(WORKLOAD, {"cpufreq.rate_limit_us": [1]}, seed=-5),
         "schedlab.sweep", "seed", "-5"),
    ]
    for call, file, place, found in cases:
        with pytest.raises(schedlab.InputError) as e:
            call()
        assert (e.value.file, e.value.place, e.value.found) == (file, place, found)
        assert f"{e.value.file}: {e.value.place}: expected {e.value.expected}, found {e.value.found}" == str(e.value)
    # The largest seed runs, as --seed takes it.
    assert schedlab.run(WORKLOAD, duration="10ms", seed=2**64 - 1).json["seed"] == 2**64 - 1
