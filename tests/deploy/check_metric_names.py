#!/usr/bin/env python3
"""Every metric the dashboard, the alerting rules and the rule tests name is one that is exported.

First, every PromQL expression of the dashboard's panels must parse: promtool checks them as the
recording rules of a scratch rules file, Grafana's interval variables replaced by a duration.
Then the check starts a real dev node (`gridledger init` + `start` in a temporary home, on free ports) and a
Prometheus node exporter, scrapes both, and checks each metric name in the PromQL expressions of
deploy/observability against what they served: the node's gridledger_* families, the node
exporter's node_* families (the disk alerts), and `up`, which Prometheus records for every scrape.
A histogram family serves <name>_bucket, _sum and _count. The rule tests' input series must be
exported names too, or they would test rules on series that never exist. And the dashboard shows
every gridledger_ family the node exports.

Usage: check_metric_names.py --bin GRIDLEDGER --node-exporter EXPORTER --promtool PROMTOOL DIR
"""

import argparse
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

# Series Prometheus itself records for each target it scrapes.
PROMETHEUS_SERIES = {"up"}

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
            "unless", "offset", "atan2", "inf", "nan"}


def metric_names(expr):
    """The metric names a PromQL expression (or a Grafana label_values query) selects."""
    # label_values(selector, label): the label is no metric.
    expr = re.sub(r"label_values\((.*),\s*\w+\s*\)", r"\1", expr)
    text = re.sub(r'"(?:[^"\\]|\\.)*"' + r"|'(?:[^'\\]|\\.)*'|`[^`]*`", '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", " ", text)  # ranges and subqueries
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        before = text[match.start() - 1] if match.start() else " "
        if before.isalnum() or before in "._$":  # 1e3, 5m, $variable
            continue
        if text[match.end():].lstrip().startswith("("):  # a function or an aggregation
            continue
        if match.group(0) not in KEYWORDS:
            names.add(match.group(0))
    return names


def check_extraction():
    expr = ('histogram_quantile(0.99, sum by (instance, le) (rate(a_bucket{job="x", le!="1"}'
            '[$__rate_interval]))) / on(instance) group_left b > 1e3 or c offset 5m unless '
            'label_values(d{job="y"}, instance)')
    names = metric_names(expr)
    if names != {"a_bucket", "b", "c", "d"}:
        sys.exit(f"metric_names() is broken: {sorted(names)}")


def dashboard_exprs(dashboard):
    """Every PromQL expression of a Grafana dashboard: its panels' and its variables' queries."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("expr", "definition") and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(dashboard)
    return found


def check_dashboard_promql(promtool, dashboard, work):
    """promtool parses every panel expression (variable queries are Grafana's, not PromQL)."""
    exprs = [e for panel in dashboard["panels"] for target in panel.get("targets", [])
             for e in [target.get("expr")] if e]
    if not exprs:
        sys.exit("dashboard.json: no panel expression")
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:expr_{i}", "expr": re.sub(r"\$__\w*interval", "1m", e)}
        for i, e in enumerate(exprs)]}]}
    path = work / "dashboard_rules.yml"
    path.write_text(json.dumps(rules))  # JSON is YAML
    done = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"dashboard.json: an expression does not parse:\n{done.stdout}{done.stderr}")
    print(f"dashboard.json: {len(exprs)} panel expressions parse")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def set_ports(conf, ports):
    """Rewrites `key = value` lines of node.conf's sections: ports = {(section, key): port}."""
    section = None
    lines = []
    for line in conf.read_text().splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        key = line.split("=")[0].strip()
        if (section, key) in ports:
            line = f"{key} = {ports[(section, key)]}"
        lines.append(line)
    conf.write_text("\n".join(lines) + "\n")


def scrape(port, ready, deadline, process):
    """The text at /metrics on port once ready(text) holds; exits when deadline passes."""
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
                text = reply.read().decode()
                if ready(text):
                    return text
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"no ready /metrics on port {port}")
        time.sleep(0.2)


def exported(text):
    """The families a Prometheus text exposition serves, from its TYPE lines: family -> the
    sample names it serves."""
    suffixes = {"histogram": ["_bucket", "_sum", "_count"], "summary": ["_sum", "_count"]}
    return {name: {name} | {name + s for s in suffixes.get(kind, [])}
            for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M)}


def stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def scrape_both(gridledger, node_exporter, work):
    home = work / "home"
    subprocess.run([gridledger, "init", "--home", str(home)], check=True,
                   stdout=subprocess.DEVNULL)
    metrics_port = free_port()
    set_ports(home / "config" / "node.conf",
              {("rpc", "port"): free_port(), ("rpc", "admin_port"): free_port(),
               ("p2p", "port"): free_port(), ("metrics", "port"): metrics_port})
    exporter_port = free_port()
    deadline = time.monotonic() + 60
    with open(work / "node.log", "w") as node_log, open(work / "exporter.log", "w") as exp_log:
        node = subprocess.Popen([gridledger, "start", "--home", str(home)],
                                stdout=node_log, stderr=subprocess.STDOUT)
        exporter = subprocess.Popen(
            [node_exporter, f"--web.listen-address=127.0.0.1:{exporter_port}",
             "--collector.disable-defaults", "--collector.filesystem"],
            stdout=exp_log, stderr=subprocess.STDOUT)
        try:
            # A committed block: every family has been set at least once.
            node_text = scrape(metrics_port, lambda text: re.search(
                r"^gridledger_executed_height [1-9]", text, re.M), deadline, node)
            exporter_text = scrape(exporter_port, lambda text: "node_filesystem_" in text,
                                   deadline, exporter)
        except RuntimeError as error:
            sys.exit(f"{error}\n--- node log ---\n{(work / 'node.log').read_text()}"
                     f"\n--- node exporter log ---\n{(work / 'exporter.log').read_text()}")
        finally:
            stop(node)
            stop(exporter)
    return exported(node_text), exported(exporter_text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="the gridledger binary")
    parser.add_argument("--node-exporter", required=True,
                        help="the prometheus-node-exporter binary")
    parser.add_argument("--promtool", required=True, help="the promtool binary")
    parser.add_argument("dir", type=Path, help="deploy/observability")
    args = parser.parse_args()
    check_extraction()

    used = {}  # metric name -> where it is used

    def use(exprs, where):
        names = set().union(*(metric_names(e) for e in exprs)) if exprs else set()
        if not names:
            sys.exit(f"{where}: no metric name found")
        for name in names:
            used.setdefault(name, set()).add(where)

    dashboard = json.loads((args.dir / "dashboard.json").read_text())
    use(dashboard_exprs(dashboard), "dashboard.json")
    rules = yaml.safe_load((args.dir / "alerts.yml").read_text())
    use([r["expr"] for g in rules["groups"] for r in g["rules"]], "alerts.yml")
    tests = yaml.safe_load((args.dir / "alerts_test.yml").read_text())
    use([s["series"] for t in tests["tests"] for s in t["input_series"]], "alerts_test.yml")

    with tempfile.TemporaryDirectory(prefix="gridledger-metric-names-") as work:
        check_dashboard_promql(args.promtool, dashboard, Path(work))
        node_families, exporter_families = scrape_both(args.bin, args.node_exporter, Path(work))
    node_names = set().union(*node_families.values())
    exporter_names = set().union(*exporter_families.values())
    for name in sorted(used):
        source = ("node" if name in node_names else "node exporter" if name in exporter_names
                  else "prometheus" if name in PROMETHEUS_SERIES else "NOT EXPORTED")
        print(f"{name:50} {source:14} {', '.join(sorted(used[name]))}")
    failures = [f"{name} is not exported" for name in sorted(used)
                if name not in node_names | exporter_names | PROMETHEUS_SERIES]
    # A metric the node exports and the dashboard does not show is one an operator never sees.
    failures += [f"the dashboard shows no series of {family}"
                 for family, names in sorted(node_families.items())
                 if family.startswith("gridledger_")
                 and not any("dashboard.json" in used.get(n, ()) for n in names)]
    if failures:
        sys.exit("\n".join(failures))
    print(f"{len(used)} names used, all exported; the dashboard shows every gridledger_ family")

if __name__ == "__main__":
    main()
