"""The store across processes, binary(), stats() and `python3 -m kcache`."""

import json
import subprocess
import sys

import kcache
from conftest import child_env

CHILD = r"""
import json, sys
import pyopencl as cl
import kcache
from conftest import ClEnv
env = ClEnv()
cache = kcache.Cache()
prg = cache.program(env.context, env.device, "dot", dtype="f32")
o = prg.kcache_outcome
print(json.dumps({"rung": o.rung, "key": o.key, "misses": o.misses,
                  "stats": cache.stats(), "dir": cache.config["dir"]}))
"""


def run_child(store: str) -> dict:
    here = __file__.rsplit("/", 1)[0]
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        env=child_env(store),
        cwd=here,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_hits_the_user_store(cache, store, ocl):
    first = cache.program(ocl.context, ocl.device, "dot", dtype="f32")
    assert first.kcache_outcome.rung == "jit"
    assert cache.stats()["jit_compiles"] == 1
    # Every counter of the one list, the remote tier's too (once missing here).
    assert {"remote_hits", "remote_misses", "remote_uploads", "warmed_later"} <= set(cache.stats())
    child = run_child(store)
    assert child["dir"] == store
    assert child["rung"] == "user_store", child
    assert child["key"] == first.kcache_outcome.key
    assert child["stats"]["jit_compiles"] == 0
    assert child["stats"]["store_hits"] == 1
    assert [rung for rung, *_ in child["misses"]] == ["in_process"], child["misses"]


def test_binary_is_the_stored_program_as_bytes(cache, ocl):
    data = cache.binary(ocl.context, ocl.device, "dot", dtype="bf16")
    assert isinstance(data, bytes) and len(data) > 1000
    assert data.kcache_outcome.rung == "jit"
    again = cache.binary(ocl.context, ocl.device, "dot", dtype="bf16")
    assert again.kcache_outcome.rung in ("in_process", "user_store")
    assert bytes(again) == bytes(data)
    s = cache.stats()
    assert s["entries"] == 1 and s["raw_bytes"] >= len(data) and s["jit_compiles"] == 1


def test_config_names_each_value_and_where_it_came_from(store):
    with kcache.Cache(dir=store, jit_timeout=7.5, read_only=False) as c:
        cfg = c.config
    assert cfg["dir"] == store
    assert cfg["jit_timeout"] == 7.5
    assert cfg["origins"]["dir"] == (store, "argument")
    assert cfg["origins"]["jit_timeout_ms"] == ("7500", "argument")
    assert cfg["origins"]["max_size"][1] == "default"


def test_python_m_kcache_runs_the_cli(cache, store, ocl):
    cache.program(ocl.context, ocl.device, "dot", dtype="f16")
    done = subprocess.run(
        [sys.executable, "-m", "kcache", "stats", "--json"],
        env=child_env(store),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["entries"] == 1, stats
    bad = subprocess.run(
        [sys.executable, "-m", "kcache", "no-such-command"],
        env=child_env(store),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2  # the CLI's usage-error code, passed through
