#!/usr/bin/env python3
"""Runs every GridLedger benchmark of a release build and prints one table (make bench).

Usage: scripts/bench.py BUILD_DIR

Each program's output is kept in BUILD_DIR/results/ (the Google Benchmark ones as JSON). The table
gives each figure, its ratio to the signature-verification rate measured in the same run, and the
target of docs/benchmarks.md, so that runs on shared, noisy machines compare by ratios.
"""

import json
import os
import re
import subprocess
import sys

MICRO = ["crypto", "mempool", "executor", "state_tree"]
PLAIN = ["task_admission", "accounts"]
# The micro benchmarks whose rows are ratios to V: each takes the mean of a V measured just before
# and one just after it.
LOCAL_V = ["executor", "state_tree"]
NODE_RUNS = [
    ("node1", []),
    ("node1_json", ["--json"]),
    ("node1_nojournal", ["--no-journal"]),
    ("node4", ["--validators", "4"]),
    ("node4_crash", ["--validators", "4", "--crash-one"]),
    ("reads", ["--reads"]),
]


def run(command, out_path):
    """Runs `command`, echoing and keeping its output; exits on failure."""
    print("$ " + " ".join(command), flush=True)
    with open(out_path, "w", encoding="utf-8") as out:
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, check=False)
        out.write(proc.stdout)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        sys.exit(f"bench: {command[0]} failed with status {proc.returncode}")


def verify_rate(programs, results, label):
    """V measured now: the crypto bench's one-core signature check alone."""
    out = os.path.join(results, f"v_{label}.json")
    run([os.path.join(programs, "gridledger_crypto_bench"),
         "--benchmark_filter=^txSignatureVerifyOneCore$", f"--benchmark_out={out}",
         "--benchmark_out_format=json"], os.path.join(results, f"v_{label}.txt"))
    return benchmarks(out)["txSignatureVerifyOneCore"]["items_per_second"]


def benchmarks(path):
    """Google Benchmark JSON: name -> the benchmark's record."""
    with open(path, encoding="utf-8") as f:
        return {b["name"]: b for b in json.load(f)["benchmarks"]}


def values(path):
    """Every key=value token of a text output, first occurrence of each key."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for key, value in re.findall(r"([a-z0-9_]+)=([0-9.eE+-]+)", f.read()):
            out.setdefault(key, float(value))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    results = os.path.join(build, "results")
    os.makedirs(results, exist_ok=True)
    programs = os.path.join(build, "bench")
    # V around each benchmark whose figure is a ratio to it: the host's speed drifts by more than
    # a tenth within a minute, so the V measured once at the start can be far from the rest.
    local_v = {}
    for name in MICRO:
        around = name in LOCAL_V
        before = verify_rate(programs, results, f"before_{name}") if around else None
        out = os.path.join(results, name + ".json")
        run([os.path.join(programs, f"gridledger_{name}_bench"), f"--benchmark_out={out}",
             "--benchmark_out_format=json"], os.path.join(results, name + ".txt"))
        if around:
            local_v[name] = (before + verify_rate(programs, results, f"after_{name}")) / 2
    for name in PLAIN:
        run([os.path.join(programs, f"gridledger_{name}_bench")],
            os.path.join(results, name + ".txt"))
    for name, args in NODE_RUNS:
        run([os.path.join(programs, "gridledger_node_load")] + args,
            os.path.join(results, name + ".txt"))
    run([os.path.join(programs, "gridledger_wan_sim")], os.path.join(results, "wan.txt"))
    run([os.path.join(programs, "gridledger_join_load")], os.path.join(results, "join.txt"))

    crypto = benchmarks(os.path.join(results, "crypto.json"))
    mempool = benchmarks(os.path.join(results, "mempool.json"))
    executor = benchmarks(os.path.join(results, "executor.json"))
    tree = benchmarks(os.path.join(results, "state_tree.json"))
    accounts = values(os.path.join(results, "accounts.txt"))
    node = {name: values(os.path.join(results, name + ".txt")) for name, _ in NODE_RUNS}

    verify = crypto["txSignatureVerifyOneCore"]["items_per_second"]
    cores = node["node1"]["cores"]
    admission = next(b for n, b in mempool.items() if n.startswith("mempoolAdmission/"))
    rows = []

    def row(measure, figure, ratio, target, met):
        rows.append((measure, figure, ratio, target, "yes" if met else "no" if met is False else ""))

    row("Schnorr tx signature verify, one core (V)", f"{verify / 1e3:.1f}k/s", "1", "", None)
    recurring = crypto["txSignatureVerifyRecurringSigner"]["items_per_second"]
    row("the node's check of a recurring signer (key point kept), one core", f"{recurring / 1e3:.1f}k/s",
        f"{recurring / verify:.2f} × V", "", None)
    row("mempool admission, verify pool", f"{admission['admitted_per_s'] / 1e3:.1f}k tx/s",
        f"{admission['ratio_to_all_cores']:.2f} × all cores", "", None)
    batched = mempool["mempoolBatchAdmissionBookkeepingOnly/256/iterations:20/real_time"]
    row("mempool admission bookkeeping, batches of 256 (signatures taken as valid), 2 threads",
        f"{batched['us_per_tx']:.2f} µs per tx", f"{batched['us_per_tx'] * verify / 1e6:.3f} × a verify",
        "", None)
    committed = mempool["mempoolCommitBookkeeping/iterations:20/real_time"]
    row("mempool's side of a commit, blocks of 1,000 (committed transactions removed)",
        f"{committed['us_per_tx']:.2f} µs per tx", f"{committed['us_per_tx'] * verify / 1e6:.3f} × a verify",
        "", None)
    v_exec = local_v["executor"]
    cached = executor["executeBlock/1000/1/iterations:64/real_time"]["items_per_second"]
    row("block execution + commit, txs decoded and verified by the mempool",
        f"{cached / 1e3:.1f}k tx/s (V around it {v_exec / 1e3:.1f}k/s)",
        f"{cached / v_exec:.2f} × V", "≥ 4 × V", cached / v_exec >= 4)
    verified = executor["executeBlock/1000/0/iterations:64/real_time"]["items_per_second"]
    row("block execution + commit, signatures verified", f"{verified / 1e3:.1f}k tx/s",
        f"{verified / v_exec:.2f} × V", "", None)
    v_tree = local_v["state_tree"]
    for keys, target in (("100000", None), ("1000000", 10)):
        rate = tree[f"stateTreeUpdate/{keys}/1000/real_time"]["keys_per_s"]
        row(f"state tree, 1,000-key versions on {int(keys):,} keys",
            f"{rate / 1e3:.1f}k keys/s (V around it {v_tree / 1e3:.1f}k/s)",
            f"{rate / v_tree:.2f} × V", f"≥ {target} × V" if target else "",
            rate / v_tree >= target if target else None)
    row("block commit at 1M accounts / at 10k (same block)",
        f"{accounts['block_commit_ms_p50']:.1f} ms at 10k; process CPU "
        f"{accounts['block_cpu_ms_p50']:.1f} ms, ratio {accounts['cpu_ratio_1m_to_10k']:.2f}",
        f"{accounts['ratio_1m_to_10k']:.2f}", "≤ 1.5", accounts["ratio_1m_to_10k"] <= 1.5)
    rss = re.findall(r"resident_mib=([0-9.]+)",
                     open(os.path.join(results, "accounts.txt"), encoding="utf-8").read())[-1]
    row("resident memory at 1M accounts", f"{float(rss):.0f} MiB", "", "< 1024 MiB",
        float(rss) < 1024)
    for name, label, target in (("node1", "1 validator, POST /txs", 0.6),
                                ("node1_json", "1 validator, JSON-RPC batches", None),
                                ("node1_nojournal", "1 validator, journal off", None),
                                ("node4", "4 validators, POST /txs", 1.0)):
        v = node[name]
        row(f"{label}: committed transfers", f"{v['committed_tx_per_s'] / 1e3:.1f}k tx/s",
            f"{v['ratio_to_ceiling']:.2f} × ceiling", f"≥ {target}" if target else "",
            v["ratio_to_ceiling"] >= target if target else None)
    checks = node["node4"]["per_committed_tx"]
    row("4 validators: transaction signature checks per committed transfer (certified batches: "
        "f + 1 = 2; every validator checking each: 4)", f"{checks:.2f}", "", "", None)
    for name, label, p50, p99 in (("node1", "1 validator", 25, 100), ("node4", "4 validators", 100, 400)):
        v = node[name]
        row(f"{label}: latency at half of peak ({v['latency_load_tx_per_s'] / 1e3:.1f}k tx/s)",
            f"p50 {v['commit_latency_ms_p50']:.0f} ms, p99 {v['p99']:.0f} ms", "",
            f"p50 ≤ {p50}, p99 ≤ {p99}",
            v["commit_latency_ms_p50"] <= p50 and v["p99"] <= p99)
    crash = node["node4_crash"]["one_crashed_to_no_fault"]
    row("4 validators, one crashed / none", "", f"{crash:.2f}", "≥ 0.8", crash >= 0.8)
    sync = node["node4"]
    row("block sync of the whole chain", f"{sync['sync_tx_per_s'] / 1e3:.1f}k tx/s",
        f"{sync['sync_ratio_to_verify_rate_all_cores']:.2f} × all cores", "", None)
    # Replay is the last part of the 1-validator run: its V is the one that run measured around
    # its peak.
    replay = node["node1"]["replay_tx_per_s"]
    v_replay = node["node1"]["verify_rate_per_core"]
    row("replay from genesis (every signature, QC, root)",
        f"{replay / 1e3:.1f}k tx/s (V of its run {v_replay / 1e3:.1f}k/s)",
        f"{replay / (v_replay * cores):.2f} × all cores", "≥ 0.8",
        replay / (v_replay * cores) >= 0.8)
    reads = node["reads"]
    load = f"{reads['read_load_tx_per_s'] / 1e3:.1f}k tx/s offered"
    row(f"JSON-RPC reads (wrk) at {load}, {reads['reads_commit_tx_per_s'] / 1e3:.1f}k committed",
        f"{reads['reads_per_s'] / 1e3:.1f}k req/s, p50 {reads['reads_ms_p50']:.1f} ms, "
        f"p99 {reads['reads_ms_p99']:.1f} ms", "", "≥ 40k req/s, p99 ≤ 5 ms",
        reads["reads_per_s"] >= 40000 and reads["reads_ms_p99"] <= 5)
    # gridledger_node_load --reads fails unless every subscriber saw every head.
    row(f"{reads['subscribers']:,.0f} WebSocket newHeads subscribers, every head, at {load}, "
        f"{reads['subscribers_commit_tx_per_s'] / 1e3:.1f}k committed",
        f"delay p50 {reads['head_delay_ms_p50']:.0f} ms, p99 {reads['head_delay_ms_p99']:.0f} ms",
        "", "p99 ≤ 100 ms", reads["head_delay_ms_p99"] <= 100)
    wan = values(os.path.join(results, "wan.txt"))
    row("100 validators, 31 members, WAN (simulated): commit latency",
        f"p50 {wan['wan_tcp_p50_ms']:.0f} ms, p99 {wan['wan_tcp_p99_ms']:.0f} ms", "", "", None)
    for name, label in (("tcp_crashed", "T0 1 s"), ("tcp_crashed_t0_1500", "T0 1.5 s")):
        p50 = wan[f"wan_{name}_p50_ms"] / wan["wan_tcp_p50_ms"]
        p99 = wan[f"wan_{name}_p99_ms"] / wan["wan_tcp_p99_ms"]
        row(f"WAN, 10 of 31 members down / none ({label})", "", f"p50 {p50:.2f}, p99 {p99:.2f}",
            "≤ 2", p50 <= 2 and p99 <= 2)
    row("WAN with certified batches: commit latency; batch made to executed; signature checks "
        "per executed tx",
        f"p50 {wan['wan_batches_p50_ms']:.0f} ms, p99 {wan['wan_batches_p99_ms']:.0f} ms; "
        f"p50 {wan['wan_batches_batch_p50_ms']:.0f} ms, p99 {wan['wan_batches_batch_p99_ms']:.0f} ms; "
        f"{wan['wan_batches_checks_per_tx']:.1f}", "", "", None)
    p50 = wan["wan_batches_crashed_p50_ms"] / wan["wan_batches_p50_ms"]
    p99 = wan["wan_batches_crashed_p99_ms"] / wan["wan_batches_p99_ms"]
    row("WAN with certified batches, 10 of 31 members down / none (T0 1 s)", "",
        f"p50 {p50:.2f}, p99 {p99:.2f}", "", None)
    join = values(os.path.join(results, "join.txt"))
    ratio = join["join_ratio_to_replay"]
    row(f"state sync join, 4 validators, {join['chain_blocks']:,.0f} blocks, "
        f"{join['keys']:,.0f} keys / replay from genesis",
        f"{join['join_seconds']:.2f} s / {join['replay_wall_seconds']:.2f} s", f"{ratio:.2f}",
        "< 0.2", ratio < 0.2)

    print()
    print(f"| measure (V = one-core verify rate, {cores:.0f} cores) | figure | ratio | target | met |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
