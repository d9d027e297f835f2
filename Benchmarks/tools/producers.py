#!/usr/bin/env python3
"""The producers' measurements (docs/PRODUCERS.md, "Measured"), standard library only, Linux, needs pamtester and
libpam-wrapper (scripts/test installs them):

- pam: login latency through a Debian-shaped PAM stack run by pam_wrapper + pam_matrix + pamtester, without the
  `auditctl pam` lines, with them and the agent up, with them and the agent down; N logins each (success and wrong
  password alternating), p50 / p99 / max in ms.
- fprintd: events per second the fprintd watcher (`auditd fprintd`) keeps up with: a stand-in busctl prints a
  verify storm (one claim, N verify-match signals) and the watcher's status file is read until it observed them all
  and the agent holds them; then its idle CPU over a few seconds.

Usage: python3 Benchmarks/tools/producers.py [pam|fprintd|all] [--bin .build/debug] [-n N]
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

WRAPPER = "/usr/lib/x86_64-linux-gnu/pam_wrapper"
SECURITY = "/usr/lib/x86_64-linux-gnu/security"


def start_agent(bin_dir, state):
    agent = subprocess.Popen([os.path.join(bin_dir, "auditd"), "run", "--state-dir", state],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        if os.path.exists(os.path.join(state, "ingest.sock")):
            return agent
        time.sleep(0.05)
    raise SystemExit("the agent did not start")


def stop(process):
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)


def percentiles(samples):
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return "p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (statistics.median(ordered), p99, ordered[-1])


def pam(bin_dir, count):
    work = tempfile.mkdtemp(prefix="pamb-", dir="/tmp")
    try:
        os.makedirs(os.path.join(work, "services"))
        with open(os.path.join(work, "passdb"), "w") as handle:
            handle.write("alice:secret:bare\nalice:secret:recorded\n")
        matrix = "%s/pam_matrix.so passdb=%s/passdb" % (WRAPPER, work)
        state = os.path.join(work, "agent")
        command = "%s/auditctl pam --socket %s/ingest.sock --buffer-file %s/buffer --attempts-file %s/attempts" % (
            bin_dir, state, work, work)
        stacks = {
            "bare": ["auth [success=1 default=ignore] " + matrix],
            "recorded": ["auth [success=2 default=ignore] " + matrix,
                         "auth optional %s/pam_exec.so quiet %s --outcome failure" % (SECURITY, command)],
        }
        for name, head in stacks.items():
            lines = head + ["auth requisite %s/pam_deny.so" % SECURITY]
            if name == "recorded":
                lines.append("auth optional %s/pam_exec.so quiet %s --outcome success" % (SECURITY, command))
            lines += ["auth required %s/pam_permit.so" % SECURITY, "account required " + matrix, ""]
            with open(os.path.join(work, "services", name), "w") as handle:
                handle.write("\n".join(lines))
        environment = dict(os.environ, LD_PRELOAD="libpam_wrapper.so", PAM_WRAPPER="1",
                           PAM_WRAPPER_SERVICE_DIR=os.path.join(work, "services"))

        def logins(service):
            samples = []
            for index in range(count):
                password = "secret" if index % 2 == 0 else "wrong"
                start = time.perf_counter()
                subprocess.run(["pamtester", "-I", "rhost=192.0.2.7", service, "alice", "authenticate"],
                               input=password + "\n", text=True, env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                samples.append((time.perf_counter() - start) * 1000)
            return samples

        print("pam: %d logins each (pamtester through pam_wrapper; half succeed)" % count)
        print("  without auditctl pam:      " + percentiles(logins("bare")))
        agent = start_agent(bin_dir, state)
        try:
            print("  with it, agent up:         " + percentiles(logins("recorded")))
        finally:
            stop(agent)
        print("  with it, agent down:       " + percentiles(logins("recorded")))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fprintd(bin_dir, count):
    work = tempfile.mkdtemp(prefix="fpb-", dir="/tmp")
    try:
        device = "/net/reactivated/Fprint/Device/0"
        lines = [
            {"type": "method_call", "cookie": 1, "sender": ":1.8", "destination": ":1.3", "path": device,
             "interface": "net.reactivated.Fprint.Device", "member": "Claim", "payload": {"type": "s", "data": ["alice"]}},
            {"type": "method_return", "cookie": 2, "reply_cookie": 1, "sender": ":1.3", "destination": ":1.8",
             "payload": {"type": "", "data": []}},
        ]
        base = int(time.time() * 1e6)
        for index in range(count):
            lines.append({"type": "method_call", "cookie": 10 + index, "timestamp-realtime": base + index * 1000,
                          "sender": ":1.8", "destination": ":1.3", "path": device,
                          "interface": "net.reactivated.Fprint.Device", "member": "VerifyStart",
                          "payload": {"type": "s", "data": ["any"]}})
            lines.append({"type": "signal", "cookie": 10 + index, "timestamp-realtime": base + index * 1000 + 400,
                          "sender": ":1.3", "path": device, "interface": "net.reactivated.Fprint.Device",
                          "member": "VerifyStatus", "payload": {"type": "sb", "data": ["verify-match", True]}})
        with open(os.path.join(work, "storm.jsonl"), "w") as handle:
            handle.write("".join(json.dumps(line) + "\n" for line in lines))
        # A stand-in busctl: `call ... GetNameOwner` answers :1.3, `monitor` prints the storm and waits.
        fake = os.path.join(work, "busctl")
        with open(fake, "w") as handle:
            handle.write("#!/bin/sh\ncase \"$*\" in\n  *GetNameOwner*) echo '{\"type\":\"s\",\"data\":[\":1.3\"]}';;\n"
                         "  *monitor*) cat %s/storm.jsonl; exec sleep 600;;\nesac\n" % work)
        os.chmod(fake, 0o755)
        state = os.path.join(work, "agent")
        agent = start_agent(bin_dir, state)
        status = os.path.join(work, "status.json")
        try:
            start = time.perf_counter()
            watcher = subprocess.Popen(
                [os.path.join(bin_dir, "auditd"), "fprintd", "--socket", state + "/ingest.sock", "--bus", "unix:path=/x",
                 "--busctl", fake, "--status-file", status], stdout=subprocess.DEVNULL,
                stderr=open(os.path.join(work, "watcher.log"), "w"))
            observed_at = None
            health = {}
            while time.perf_counter() - start < 600:
                try:
                    with open(status) as handle:
                        health = json.load(handle)
                except (OSError, ValueError):
                    health = {}
                if observed_at is None and health.get("observed") == count:
                    observed_at = time.perf_counter()
                if observed_at is not None and health.get("buffered") == 0:
                    break
                time.sleep(0.01)
            delivered_at = time.perf_counter()
            print("fprintd: a verify storm of %d matches through the watcher into the agent" % count)
            print("  observed (parsed, tracked, handed to the client): %.0f events/s" % (count / (observed_at - start)))
            print("  delivered (the status file's buffered at 0, refreshed every second): %.0f events/s"
                  % (count / (delivered_at - start)))
            ticks = os.sysconf("SC_CLK_TCK")

            def cpu():
                fields = open("/proc/%d/stat" % watcher.pid).read().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / ticks

            before = cpu()
            time.sleep(5)
            print("  idle CPU afterwards: %.2f %% of one core over 5 s" % ((cpu() - before) / 5 * 100))
            stop(watcher)
            print("  status: %s" % json.dumps(health, sort_keys=True))
        finally:
            stop(agent)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", nargs="?", default="all", choices=["pam", "fprintd", "all"])
    parser.add_argument("--bin", default=".build/debug")
    parser.add_argument("-n", type=int, default=200)
    arguments = parser.parse_args()
    bin_dir = os.path.abspath(arguments.bin)
    if arguments.what in ("pam", "all"):
        pam(bin_dir, arguments.n)
    if arguments.what in ("fprintd", "all"):
        fprintd(bin_dir, arguments.n * 50)


if __name__ == "__main__":
    main()
