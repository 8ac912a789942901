#!/usr/bin/env python3
"""Checks the monitoring kit in deploy/monitoring/.

  check.py static
      the dashboard's structure for its schemaVersion (panels, ids, grid,
      datasource, targets), every alert covered by tests/monitoring/
      alerts_test.yaml and linked to an existing docs/runbook.md section,
      prometheusrule.yaml generated from alerts.yaml.
  check.py live PROMETHEUS_URL
      every dashboard query and the series behind every alert return data
      from a real Prometheus scraping the real binaries.
Prints one "ok:" line per check; exits 1 on the first failure.
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MON = os.path.join(ROOT, "deploy", "monitoring")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def ok(msg):
    print(f"ok: {msg}")


def load_dashboard():
    with open(os.path.join(MON, "dashboard.json")) as f:
        return json.load(f)


def load_alerts():
    with open(os.path.join(MON, "alerts.yaml")) as f:
        return [r for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r]


def targets(dash):
    for p in dash["panels"]:
        for t in p.get("targets", []):
            yield p, t


def check_dashboard(dash):
    # What Grafana 10/11 (schemaVersion 39) needs to import a dashboard as is.
    for key, kind in (("title", str), ("uid", str), ("schemaVersion", int), ("panels", list),
                      ("templating", dict), ("time", dict)):
        if not isinstance(dash.get(key), kind):
            fail(f"dashboard: '{key}' missing or not a {kind.__name__}")
    if dash["schemaVersion"] != 39:
        fail(f"dashboard: schemaVersion {dash['schemaVersion']}, checked against 39")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", dash["uid"]):
        fail(f"dashboard: uid '{dash['uid']}' is not a Grafana uid")
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    if variables.get("datasource", {}).get("type") != "datasource":
        fail("dashboard: no 'datasource' variable of type datasource")
    ids, refs, cells = set(), 0, []
    for p in dash["panels"]:
        if p.get("id") in ids or not isinstance(p.get("id"), int):
            fail(f"dashboard: panel id {p.get('id')} missing or repeated")
        ids.add(p["id"])
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "xywh") or g["x"] + g["w"] > 24 or g["w"] < 1:
            fail(f"dashboard: panel {p['id']} '{p.get('title')}' has a bad gridPos {g}")
        cells.append((p["id"], g))
        if p["type"] == "row":
            continue
        if p["type"] not in ("timeseries", "table", "stat", "gauge"):
            fail(f"dashboard: panel {p['id']} has unknown type {p['type']}")
        if p.get("datasource", {}).get("uid") != "${datasource}":
            fail(f"dashboard: panel {p['id']} does not use the datasource variable")
        if not p.get("title") or not p.get("description"):
            fail(f"dashboard: panel {p['id']} needs a title and a description")
        if not p.get("targets"):
            fail(f"dashboard: panel {p['id']} '{p['title']}' has no queries")
        seen = set()
        for t in p["targets"]:
            if not t.get("expr") or t.get("refId") in seen:
                fail(f"dashboard: panel {p['id']}: a query without expr or a repeated refId")
            seen.add(t["refId"])
            refs += 1
    # No two panels overlap on the grid.
    for i, (a, ga) in enumerate(cells):
        for b, gb in cells[i + 1:]:
            if (ga["x"] < gb["x"] + gb["w"] and gb["x"] < ga["x"] + ga["w"] and
                    ga["y"] < gb["y"] + gb["h"] and gb["y"] < ga["y"] + ga["h"]):
                fail(f"dashboard: panels {a} and {b} overlap")
    ok(f"dashboard: {len(ids)} panels, {refs} queries, structure fits schemaVersion 39")


def anchors(path):
    with open(path) as f:
        return {re.sub(r"[^a-z0-9 -]", "", l[3:].strip().lower()).replace(" ", "-")
                for l in f if l.startswith("## ")}


def check_alerts(alerts):
    with open(os.path.join(ROOT, "tests", "monitoring", "alerts_test.yaml")) as f:
        tested = {a["alertname"] for t in yaml.safe_load(f)["tests"]
                  for a in t.get("alert_rule_test", []) if a.get("exp_alerts")}
    sections = anchors(os.path.join(ROOT, "docs", "runbook.md"))
    for a in alerts:
        name = a["alert"]
        if name not in tested:
            fail(f"alert {name}: no promtool test expects it to fire")
        url = a.get("annotations", {}).get("runbook_url", "")
        if not url.startswith("docs/runbook.md#") or url.split("#", 1)[1] not in sections:
            fail(f"alert {name}: runbook_url '{url}' names no section of docs/runbook.md")
    ok(f"alerts: all {len(alerts)} have a firing unit test and a runbook section")
    gen = subprocess.run([os.path.join(ROOT, "tests", "monitoring", "gen-prometheusrule")],
                         check=True, capture_output=True, text=True).stdout
    with open(os.path.join(MON, "prometheusrule.yaml")) as f:
        if f.read() != gen:
            fail("prometheusrule.yaml is not generated from alerts.yaml: run tests/monitoring/gen-prometheusrule")
    ok("prometheusrule.yaml holds exactly the rules of alerts.yaml")


def query(prom, expr):
    url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        fail(f"Prometheus refused '{expr}': {body}")
    return body["data"]["result"]


def query_data(prom, expr, tries=10):
    """The result of expr, asked again once a second while it is empty: one
    scrape that fails on a loaded machine (the scrape timeout is the 1 s
    interval) marks every series of that target stale until the next one
    succeeds, so a single empty answer says nothing of the kit."""
    for i in range(tries):
        result = query(prom, expr)
        if result:
            return result
        if i + 1 < tries:
            time.sleep(1)
    return []


def inner(expr):
    """The series an alert looks at: each side of a top-level and/or, minus
    its final comparison, and without absent() (empty while all is well)."""
    text, depth, start, parts = " ".join(expr.split()), 0, 0, []
    for m in re.finditer(r"[()]|\s(?:or|and)\s", text):
        tok = m.group(0)
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0:
            parts.append(text[start:m.start()])
            start = m.end()
    parts.append(text[start:])
    cmp = re.compile(r"\s*(==|!=|>=|<=|>|<)\s*[0-9.]+\s*$")
    return [cmp.sub("", p.strip()) for p in parts if not p.strip().startswith("absent(")]


KUBE_SCHEDULER_SERIES = re.compile(r"\bscheduler_[a-z_]+\{")
NETSCHED_SELECTOR = re.compile(r"\bnetsched_[a-z_]+\{[^}]*\}")


def live(prom):
    dash = load_dashboard()
    n = 0
    for p, t in targets(dash):
        expr = t["expr"].replace("$__rate_interval", "15s")
        if not query_data(prom, expr):
            fail(f"dashboard panel '{p['title']}': no data for {expr}")
        n += 1
    ok(f"dashboard: all {n} queries return data from the real binaries")
    alerts = load_alerts()
    m = external = 0
    for a in alerts:
        for expr in inner(a["expr"]):
            # The kube-scheduler's own series (NetschedNotAnswering): no
            # scheduler runs here; tests/k8s/test_k8s_deploy.sh checks their
            # names and labels against a real one. The netsched series in the
            # same expression are checked here.
            if KUBE_SCHEDULER_SERIES.search(expr):
                external += 1
                for sel in NETSCHED_SELECTOR.findall(expr):
                    if not query_data(prom, sel):
                        fail(f"alert {a['alert']}: no data for {sel}")
                    m += 1
                continue
            if not query_data(prom, expr):
                fail(f"alert {a['alert']}: no data for {expr}")
            m += 1
    ok(f"alerts: the {m} expressions behind all {len(alerts)} alerts return data "
       f"({external} on the kube-scheduler's series: tests/k8s/test_k8s_deploy.sh)")


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "static":
        check_dashboard(load_dashboard())
        check_alerts(load_alerts())
    elif len(sys.argv) == 3 and sys.argv[1] == "live":
        live(sys.argv[2].rstrip("/"))
    else:
        fail("usage: check.py static | live PROMETHEUS_URL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
