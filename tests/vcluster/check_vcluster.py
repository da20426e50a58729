#!/usr/bin/env python3
"""Tests on an emulated cluster (tools/vcluster): real network stacks between
hosts, rate-limited links, three subnets.

  check_vcluster.py probe        shim-probe must find exactly the 3 subnets
  check_vcluster.py collectives  bcast, alltoall and mirror test matrices across hosts
  check_vcluster.py cleanup      nothing is left behind by a finished, a
                                 failed or an interrupted run

Needs root; without it the test prints a visible "skipped" line and exits 77,
which meson reports as skipped.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VCLUSTER = os.path.join(ROOT, "tools", "vcluster")
SPEC = os.path.join(HERE, "three_subnets.spec")
PROFILE = os.path.join(HERE, "three_subnets_profile.json")
NAME = "shimtest"


def vcluster(*args, check=True, env=None):
    full_env = dict(os.environ, VCLUSTER_NAME=NAME, **(env or {}))
    result = subprocess.run([VCLUSTER, *args], env=full_env, capture_output=True, text=True, timeout=600)
    if check and result.returncode != 0:
        raise AssertionError(f"vcluster {' '.join(args)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result


def leftovers():
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    found = [n for n in namespaces if n.startswith(NAME + "-")]
    found += [f"/etc/netns/{e}" for e in os.listdir("/etc/netns") if e.startswith(NAME + "-")] \
        if os.path.isdir("/etc/netns") else []
    found += [f"/run/{e}" for e in os.listdir("/run") if e.startswith(NAME + "-vcluster")]
    return found


def forwarded_requests(report):
    """Requests forwarded, summed over the servers' table of a SHIM_STATS report."""
    lines = report.splitlines()
    header = next(i for i, line in enumerate(lines) if "Direct KiB" in line and "Forwarded" in line)
    # Three headings before it are two words each ("Direct KiB", "Forward KiB", "Peak bufs").
    column = lines[header].split().index("Forwarded") - 3
    total = 0
    for line in lines[header + 1:]:
        fields = line.split()
        if len(fields) <= column or not fields[1].isdigit():
            break
        total += int(fields[column])
    return total


def with_cluster(body):
    vcluster("up", SPEC)
    try:
        body()
    finally:
        vcluster("down")
    left = leftovers()
    assert not left, f"left behind after down: {left}"


def probe(build):
    def body():
        out = os.path.join(tempfile.mkdtemp(), "profile.json")
        run = vcluster("run", "--", "mpiexec", "-n", "12", os.path.join(build, "tools", "shim-probe"), "--output", out)
        print(run.stdout)
        with open(out, encoding="utf-8") as f:
            profile = json.load(f)
        found = sorted(sorted(profile["hosts"][h] for h in subnet) for subnet in profile["subnets"])
        expected = [["h0", "h3"], ["h1", "h4"], ["h2", "h5"]]
        assert found == expected, f"subnets found {found}, expected {expected}"
        # Every message between emulated hosts goes through a TCP socket: a
        # system call's microseconds, where shared memory costs 25 ns.
        cost = profile["send_cost_seconds"]
        assert cost > 0.5e-6, f"send cost {cost * 1e6:.3f} us: not a message through TCP"
        print(f"ok: shim-probe found exactly the 3 subnets {found}, send cost {cost * 1e6:.2f} us")
    with_cluster(body)


def collectives(build):
    preload = {"VCLUSTER_PRELOAD": os.path.join(build, "libshim.so")}
    # Hydra gives each host one slot, so ranks go round-robin over the hosts
    # named: 6 ranks on h0-h2 put two on each host, not neighbours in rank
    # order. Three hosts keep every path of six (three subnets, two ranks per
    # host, aggregation and rails over TCP) in under half the time on 2 cores.
    three_hosts = ["-hosts", "h0,h1,h2"]
    def body():
        # mirror_matrix: 2 ranks per host, hosts found by processor name, node
        # copies merged across the emulated network.
        for hosts, ranks, program in (([], "6", "bcast_matrix"), (three_hosts, "6", "alltoall_matrix"),
                                      (three_hosts, "6", "mirror_matrix")):
            run = vcluster("run", "--", "mpiexec", "-genv", "SHIM_PROFILE", PROFILE, "-genv", "SHIM_BCAST_SEGMENT",
                           "4K", *hosts, "-n", ranks, os.path.join(build, "tests", "mpi", program), env=preload)
            print(run.stdout.strip())
            assert "0 failures" in run.stdout, f"{program} on {ranks} ranks:\n{run.stdout}{run.stderr}"
        # The accumulate family across real TCP hosts, in clusters of two
        # servers (the default would not cluster so few): one rank per host on
        # four hosts (every other target remote), then two per host on three
        # (uneven clusters) with application threads beside the servers. The
        # servers' report must show requests forwarded between hosts.
        clustered = ["-genv", "SHIM_SERVER_CLUSTER", "2", "-genv", "SHIM_STATS", "1"]
        run = vcluster("run", "--", "mpiexec", *clustered, "-hosts", "h0,h1,h2,h3", "-n", "4",
                       os.path.join(build, "tests", "mpi", "accumulate_matrix"), env=preload)
        print(run.stdout.strip())
        assert "0 failures" in run.stdout, f"accumulate_matrix on 4 hosts:\n{run.stdout}{run.stderr}"
        assert forwarded_requests(run.stderr) > 0, f"no request forwarded on 4 hosts:\n{run.stderr}"
        run = vcluster("run", "--", "mpiexec", *clustered, *three_hosts, "-n", "6",
                       os.path.join(build, "tests", "mpi", "accumulate_threads"), env=preload)
        print(run.stdout.strip())
        assert "tickets exact" in run.stdout, f"accumulate_threads on 3 hosts:\n{run.stdout}{run.stderr}"
        assert forwarded_requests(run.stderr) > 0, f"no request forwarded on 3 hosts:\n{run.stderr}"
    with_cluster(body)


def cleanup(build):
    del build
    # A finished session.
    vcluster("session", SPEC, "--", "true")
    assert not leftovers(), f"after a session: {leftovers()}"
    # A failing command inside a session.
    result = vcluster("session", SPEC, "--", "false", check=False)
    assert result.returncode == 1 and not leftovers(), f"after a failed command: {leftovers()}"
    # A description that is wrong half-way: nothing may be built.
    broken = os.path.join(tempfile.mkdtemp(), "broken.spec")
    with open(broken, "w", encoding="utf-8") as f:
        f.write("subnet a 1gbit 100mbit\nhost h0 a\nhost h1 nosuchsubnet\n")
    result = vcluster("up", broken, check=False)
    assert result.returncode != 0 and "unknown subnet 'nosuchsubnet'" in result.stderr, result.stderr
    assert not leftovers(), f"after a bad description: {leftovers()}"
    # An interrupted session (a test timeout sends SIGTERM).
    env = dict(os.environ, VCLUSTER_NAME=NAME)
    session = subprocess.Popen([VCLUSTER, "session", SPEC, "--", "sleep", "60"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not any(n.endswith("-h5") for n in leftovers()):
        time.sleep(0.2)
    session.send_signal(signal.SIGTERM)
    session.wait(timeout=60)
    left = leftovers()
    assert not left, f"after SIGTERM: {left}"
    # A killed run cannot clean up; the next `down` (or `up`) does.
    killed = subprocess.Popen([VCLUSTER, "session", SPEC, "--", "sleep", "60"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not any(n.endswith("-h5") for n in leftovers()):
        time.sleep(0.2)
    killed.kill()
    killed.wait()
    vcluster("down")
    assert not leftovers(), f"after SIGKILL and down: {leftovers()}"
    print("ok: nothing left behind after a finished, a failed, a malformed, an interrupted and a killed run")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("check", choices=["probe", "collectives", "cleanup"])
    parser.add_argument("--build", required=True)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print(f"skipped: not root (vcluster needs network namespaces): {args.check}")
        return 77
    try:
        {"probe": probe, "collectives": collectives, "cleanup": cleanup}[args.check](args.build)
    except AssertionError as error:
        print(f"FAIL: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
