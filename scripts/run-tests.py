#!/usr/bin/env python3
"""Runs every test binary of the workspace, several at a time, as `cargo test --workspace
--no-fail-fast` would one after another.

Most of Cohort's test time is waiting (real clients, timeouts, restarts), and cargo runs test
binaries one by one, so the suite's wall time was the sum of them. This runs `--jobs` binaries at
once (each still runs its own tests on its own threads), each in its package's directory as cargo
does, and prints each binary's whole output when it ends, behind the line cargo prints
("     Running tests/x.rs (target/debug/deps/x-HASH)"), so logs read and parse as before.

    scripts/run-tests.py [--jobs N]      N defaults to $COHORT_TEST_JOBS, else 2

Builds first if needed (`cargo test --workspace --lib --bins --tests --no-run`: the test
binaries, not the examples), runs the doc tests as one more job,
exits non-zero if any binary failed, and names the failed ones last.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Job:
    title: str  # the line cargo prints before a binary's output
    argv: list
    cwd: str
    first: bool = False  # integration tests of the broker: the long ones, started first
    alone: bool = False  # runs with no other binary beside it (see ALONE)
    rc: int = -1
    seconds: float = 0.0
    log: str = field(default="")


# Binaries that run with nothing beside them even with --jobs 2: three-node clusters, elections,
# SIGKILL and session-deadline tests whose deadlines assume the two cores are theirs (decision
# 0139's amendment saw cluster_chaos and the broker's runtime unit tests starve beside another
# binary). Matched against the source path cargo reports, relative to the package.
ALONE = (
    "src/lib.rs",  # the broker's unit tests: runtime_tests drive a real Raft node with deadlines
    "tests/cluster_",
    "tests/groups_cluster.rs",
    "tests/lag_cluster.rs",
    "tests/admin_cluster_nodes.rs",
    "tests/transactions_admin_cluster.rs",
    "tests/transactions_crash",
    "tests/groups_loading.rs",
    "tests/limits.rs",
    "tests/limits_raft.rs",
    "tests/cluster.rs",
    "tests/process_cluster.rs",
    "tests/peer_auth.rs",  # raft-meta: three in-process nodes and strangers on their port
    "tests/crash.rs",
    "tests/simulation.rs",
    "tests/reauth.rs",  # KIP-368 session lifetimes of 2 s, checked with sleeps
)


# Test binaries that hold a package's integration tests as modules (tests/suite.rs declares
# `mod x;` for each tests/x.rs): one binary links the crate once instead of once per file
# (decision 0180). Each module still runs as a job of its own (suite_jobs).
SUITES = ("suite",)


def test_binaries(root: Path) -> list:
    """The test executables cargo builds for `cargo test --workspace`, in cargo's order."""
    build = subprocess.run(
        [
            "cargo", "test", "--workspace", "--lib", "--bins", "--tests", "--no-run",
            "--message-format=json-render-diagnostics",
        ],
        cwd=root,
        stdout=subprocess.PIPE,
        text=True,
    )
    if build.returncode != 0:
        sys.exit(build.returncode)
    jobs = []
    for line in build.stdout.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        package_dir = Path(msg["manifest_path"]).parent
        src = Path(msg["target"]["src_path"])
        kind = msg["target"]["kind"][0]
        rel_src = os.path.relpath(src, package_dir)
        what = f"unittests {rel_src}" if kind in ("lib", "bin") else rel_src
        exe = Path(msg["executable"])
        rel_exe = os.path.relpath(exe, root)
        if kind == "test" and src.stem in SUITES:
            jobs.extend(suite_jobs(exe, rel_exe, package_dir, first=package_dir == root))
            continue
        jobs.append(
            Job(
                title=f"     Running {what} ({rel_exe})",
                argv=[str(exe)],
                cwd=str(package_dir),
                first=package_dir == root and kind == "test",
                alone=rel_src.startswith(ALONE),
            )
        )
    return jobs


def suite_jobs(exe: Path, rel_exe: str, package_dir: Path, first: bool) -> list:
    """One job per module of a suite binary: the tests of tests/x.rs run in a process of their
    own, as when x was a binary of its own, with the title and ALONE rule of tests/x.rs."""
    listed = subprocess.run(
        [str(exe), "--list", "--format", "terse"],
        cwd=package_dir,
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    modules = {}
    for line in listed.stdout.splitlines():
        if not line.endswith(": test"):
            continue
        name = line[: -len(": test")]
        modules.setdefault(name.split("::", 1)[0], []).append(name)
    jobs = []
    for module, names in modules.items():
        rel_src = f"tests/{module}.rs"
        if not (package_dir / rel_src).exists():
            rel_src = f"tests/{module}/mod.rs"
        jobs.append(
            Job(
                title=f"     Running {rel_src} ({rel_exe})",
                argv=[str(exe), "--exact", *names],
                cwd=str(package_dir),
                first=first,
                alone=rel_src.startswith(ALONE),
            )
        )
    return jobs


def run(job: Job, out_dir: str) -> None:
    started = time.monotonic()
    with tempfile.NamedTemporaryFile("w+", dir=out_dir, delete=False) as out:
        job.rc = subprocess.run(
            job.argv, cwd=job.cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        ).returncode
        out.seek(0)
        job.log = out.read()
    job.seconds = time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("COHORT_TEST_JOBS", "2")))
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent

    jobs = test_binaries(root)
    jobs.append(Job(title="   Doc-tests (workspace)", argv=["cargo", "test", "--workspace", "--doc"], cwd=str(root)))
    # Stable sort: the broker's integration tests first, cargo's order within each part.
    queue = sorted(jobs, key=lambda j: not j.first)
    lock = threading.Lock()

    with tempfile.TemporaryDirectory() as out_dir:

        running = []  # jobs started and not yet finished
        free = threading.Condition(lock)

        def take():
            """The next job this worker may start, waiting while the rules forbid one: an
            `alone` job starts only when nothing runs, and nothing starts beside it."""
            with free:
                while queue:
                    if any(j.alone for j in running):
                        free.wait()
                        continue
                    pick = next((j for j in queue if not j.alone), None)
                    if not running and queue[0].alone:
                        pick = queue[0]
                    elif pick is None:
                        free.wait()  # only `alone` jobs left: wait for the machine to empty
                        continue
                    queue.remove(pick)
                    running.append(pick)
                    return pick
                return None

        def worker() -> None:
            while True:
                job = take()
                if job is None:
                    return
                run(job, out_dir)
                with free:
                    running.remove(job)
                    free.notify_all()
                    sys.stdout.write(f"{job.title}\n{job.log}")
                    if job.rc != 0:
                        sys.stdout.write(f"error: {job.title.strip()} failed (exit {job.rc}) after {job.seconds:.1f}s\n")
                    sys.stdout.flush()

        workers = [threading.Thread(target=worker) for _ in range(max(1, args.jobs))]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    failed = [j for j in jobs if j.rc != 0]
    print(f"\nrun-tests: {len(jobs)} binaries, {len(failed)} failed, {args.jobs} at a time")
    for j in failed:
        print(f"  FAILED {j.title.strip()} (exit {j.rc})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
