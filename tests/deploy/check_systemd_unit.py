#!/usr/bin/env python3
"""deploy/systemd/gridledger.service passes systemd's own checks and keeps its hardening.

`systemd-analyze verify` checks that ExecStart names an executable file, which the install path
/usr/local/bin/gridledger is not on a build machine. So the check renders a copy of the unit in
which that one line names the binary just built, and verifies the copy: every other line is the
unit's own. verify only warns about an unknown or misspelt key (exit code 0), so any output fails
the check. `systemd-analyze security --offline` then rates the unit's sandbox: every one of its
checks must pass but those listed in OPEN, each open for a reason. Last, the unit itself: the
home it starts the node with is the one it may write, and the settings operators rely on hold.

Usage: check_systemd_unit.py --bin GRIDLEDGER UNIT
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

INSTALLED_BIN = "/usr/local/bin/gridledger"

# The security checks the unit leaves open, and why.
OPEN = {
    "RootDirectory=/RootImage=": "the node runs from the host's file system, not an image",
    "RestrictAddressFamilies=~AF_UNIX": "name resolution may use a local socket",
    "RestrictAddressFamilies=~AF_(INET|INET6)": "P2P, JSON-RPC and metrics listen on TCP",
    "PrivateNetwork=": "the node talks to its peers",
    "IPAddressDeny=": "the peers' addresses are the operator's to list",
    "DeviceAllow=": "ProtectClock= leaves the real-time clock readable",
}

# Settings of the unit (section, key) -> value, checked as written.
REQUIRED = {
    ("Service", "User"): "gridledger",
    ("Service", "NoNewPrivileges"): "yes",
    ("Service", "ProtectSystem"): "strict",
    ("Service", "ProtectHome"): "yes",
    ("Service", "PrivateTmp"): "yes",
    ("Service", "Restart"): "on-failure",
    ("Service", "LimitNOFILE"): "65536",
    ("Service", "KillSignal"): "SIGTERM",
    ("Install", "WantedBy"): "multi-user.target",
}


def parse_unit(text):
    """(section, key) -> the values the unit gives it, in order."""
    settings = {}
    section = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        settings.setdefault((section, key.strip()), []).append(value.strip())
    return settings


def run(args):
    """Exit code, standard output and standard error of a command."""
    done = subprocess.run(args, capture_output=True, text=True)
    return done.returncode, done.stdout.strip(), done.stderr.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, type=Path, help="the gridledger binary")
    parser.add_argument("unit", type=Path)
    args = parser.parse_args()
    text = args.unit.read_text()
    failures = []

    exec_start = f"ExecStart={INSTALLED_BIN} "
    if sum(line.startswith(exec_start) for line in text.splitlines()) != 1:
        sys.exit(f"{args.unit}: expected one line starting with {exec_start!r}")
    with tempfile.TemporaryDirectory(prefix="gridledger-systemd-") as work:
        rendered = Path(work) / "gridledger.service"
        rendered.write_text(text.replace(exec_start, f"ExecStart={args.bin.resolve()} "))
        code, output, errors = run(["systemd-analyze", "verify", str(rendered)])
        output = "\n".join(filter(None, [output, errors]))
        print(f"systemd-analyze verify: exit {code}{', ' + output if output else ''}")
        if code != 0 or output:
            failures.append(f"systemd-analyze verify: {output or 'exit ' + str(code)}")
        code, report, errors = run(["systemd-analyze", "security", "--offline=true",
                                    "--json=short", str(rendered)])
        if code != 0:
            sys.exit(f"systemd-analyze security failed: {errors}")
    checks = json.loads(report)
    for check in checks:
        name = check["name"]
        if name in OPEN:
            print(f"open   {name}: {OPEN[name]}")
        elif not check["set"]:
            failures.append(f"systemd-analyze security: {name} not set: {check['description']}")
    passed = sum(1 for c in checks if c["set"])
    print(f"systemd-analyze security: {passed} of {len(checks)} checks pass")
    failures += [f"{name}: listed in OPEN but not among the checks"
                 for name in OPEN.keys() - {c["name"] for c in checks}]

    settings = parse_unit(text)
    for (section, key), value in REQUIRED.items():
        found = settings.get((section, key))
        if found != [value]:
            failures.append(f"[{section}] {key}={value} expected, found {found}")
    home = re.search(r" --home (\S+)", settings[("Service", "ExecStart")][0])
    if not home:
        failures.append("ExecStart passes no --home")
    else:
        home = home.group(1)
        if settings.get(("Service", "ReadWritePaths")) != [home]:
            failures.append(f"ReadWritePaths must be the home {home}")
        state = settings.get(("Service", "StateDirectory"), [""])[0]
        if f"/var/lib/{state}" != home:
            failures.append(f"StateDirectory={state} does not create the home {home}")
    if failures:
        sys.exit("\n".join(failures))
    print("the unit verifies, its sandbox holds, and it writes only its home")


if __name__ == "__main__":
    main()
