#!/usr/bin/env python3
"""Reads a metrics exposition on stdin and parses it with prometheus_client's
parser for FORMAT (openmetrics: the strict OpenMetrics parser; prometheus:
the text format 0.0.4 parser node_exporter's format follows). Checks every
family's name and type against the Prometheus conventions, then prints one
line per sample, "name{labels} value", sorted. Exit 1 with the reason on
stderr when anything is wrong."""
import re
import sys

from prometheus_client.openmetrics import parser as om_parser
from prometheus_client import parser as prom_parser

NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def check(families, fmt):
    lines = []
    for f in families:
        if not NAME.match(f.name) or not f.name.startswith("kcache_"):
            raise ValueError("bad family name %r" % f.name)
        if not f.documentation:
            raise ValueError("family %s has no HELP" % f.name)
        if f.type not in ("counter", "gauge", "histogram"):
            raise ValueError("family %s has type %s" % (f.name, f.type))
        if f.type == "histogram" and not f.name.endswith("_seconds"):
            raise ValueError("histogram %s is not in seconds" % f.name)
        if f.type != "counter" and f.name.endswith("_total"):
            raise ValueError("%s %s ends with _total" % (f.type, f.name))
        for s in f.samples:
            if f.type == "counter" and not s.name.endswith("_total"):
                raise ValueError("counter sample %s lacks _total" % s.name)
            if s.value < 0:
                raise ValueError("negative sample %s" % s.name)
            labels = ",".join('%s="%s"' % kv for kv in sorted(s.labels.items()))
            lines.append("%s{%s} %r" % (s.name, labels, float(s.value)))
    return sorted(lines)


def main():
    fmt = sys.argv[1]
    text = sys.stdin.read()
    try:
        if fmt == "openmetrics":
            families = list(om_parser.text_string_to_metric_families(text))
        else:
            if "# EOF" in text:
                raise ValueError("# EOF in the Prometheus text format")
            families = list(prom_parser.text_string_to_metric_families(text))
        for line in check(families, fmt):
            print(line)
    except Exception as e:  # noqa: BLE001 - any parse failure is the answer
        print("exposition rejected: %s" % e, file=sys.stderr)
        sys.exit(1)


main()
