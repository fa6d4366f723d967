"""Sweeps: `schedlab.sweep`, and its points run by any executor then merged, give the table
`schedlab sweep` writes."""

import concurrent.futures
import pickle

import pytest

import schedlab
from conftest import ROOT, cannot_check, cli, need

EXPERIMENT = ROOT / "experiments/seed004-fio-iowait.toml"
PARAMS = {"cpufreq.iowait_boost": [True, False], "cpufreq.rate_limit_us": [2000, 200]}
OPTIONS = {"duration": "1s"}
CLI_PARAMS = ["--param", "cpufreq.iowait_boost=true,false",
              "--param", "cpufreq.rate_limit_us=2000,200", "--duration", "1s"]


@pytest.fixture(scope="module")
def cli_table(tmp_path_factory):
    pd = need("pandas")
    out = tmp_path_factory.mktemp("sweep")
    cli("sweep", EXPERIMENT, *CLI_PARAMS, "--out", out)
    return pd.read_csv(out / "points.csv")


def assert_same(table, expected):
    import pandas as pd

    pd.testing.assert_frame_equal(table.reset_index(drop=True), expected)


def test_sweep_is_the_cli_table(cli_table):
    table = schedlab.sweep(EXPERIMENT, PARAMS, **OPTIONS)
    assert_same(table, cli_table)
    assert list(table["status"]) == ["ok"] * 4
    # Seed 004: iowait boost on gives more IOPS than off, at either rate limit.
    on = table[table["cpufreq.iowait_boost"]].sort_values("cpufreq.rate_limit_us")
    off = table[~table["cpufreq.iowait_boost"]].sort_values("cpufreq.rate_limit_us")
    iops = next(c for c in table.columns if c.endswith("iops"))
    assert (on[iops].values > off[iops].values).all()


def test_points_are_plain_and_picklable_and_merge_in_any_order(cli_table):
    points = schedlab.sweep_points(EXPERIMENT, PARAMS, **OPTIONS)
    assert len(points) == 4 and [p["index"] for p in points] == [0, 1, 2, 3]
    assert pickle.loads(pickle.dumps(points)) == points
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        rows = list(pool.map(schedlab.run_point, reversed(points)))
    assert_same(schedlab.merge_points(rows), cli_table)


def test_shards_join_into_the_whole(cli_table):
    rows = []
    for i in range(2):
        shard = schedlab.sweep_points(EXPERIMENT, PARAMS, shard=f"{i}/2", **OPTIONS)
        assert all(p["index"] % 2 == i for p in shard)
        rows += [schedlab.run_point(p) for p in shard]
    assert_same(schedlab.merge_points(rows), cli_table)


def test_a_dask_cluster_gives_the_cli_table(cli_table):
    distributed = need("dask.distributed")
    points = schedlab.sweep_points(EXPERIMENT, PARAMS, **OPTIONS)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            rows = client.gather(client.map(schedlab.run_point, points))
    assert_same(schedlab.merge_points(rows), cli_table)


def test_point_rows_are_what_the_cli_merges(tmp_path, cli_table):
    # The Slurm recipe: each array task dumps its shard's rows; `schedlab sweep --merge`
    # joins them into the table of one whole sweep.
    import json

    import pandas as pd

    shards = tmp_path / "shards"
    shards.mkdir()
    for i in range(3):
        rows = [schedlab.run_point(p)
                for p in schedlab.sweep_points(EXPERIMENT, PARAMS, shard=f"{i}/3", **OPTIONS)]
        (shards / f"points-{i}.json").write_text(json.dumps(rows))
    out = tmp_path / "merged"
    cli("sweep", "--merge", shards, "--out", out)
    pd.testing.assert_frame_equal(pd.read_csv(out / "points.csv"), cli_table)
