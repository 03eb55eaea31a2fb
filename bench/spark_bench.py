"""Spark benchmarks on ``local[2]``: one entry point, rows chosen with ``--only``.

    .venv/bin/python bench/spark_bench.py --only read,latency,sink --rows 100000 --size 100

Topic rows (``read``, ``latency``, ``sink``: through the brokers) are in
``spark_topic_bench.py``; results and commands in BENCHMARKS.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import spark_topic_bench

if __name__ == "__main__":
    spark_topic_bench.main()
