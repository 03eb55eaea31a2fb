"""Spark benchmarks on ``local[2]``: one entry point.

    .venv/bin/python bench/spark_bench.py --only read,latency,sink --rows 100000 --size 100
    .venv/bin/python bench/spark_bench.py store --mib 256 --runs 3

Topic rows (``read``, ``latency``, ``sink``: through the brokers) are in
``spark_topic_bench.py``; the store-file scan to Parquet against Spark's JSON source
(``store``) in ``spark_store_bench.py``. Results and commands in BENCHMARKS.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import spark_store_bench
import spark_topic_bench

if __name__ == "__main__":
    if sys.argv[1:2] == ["store"]:
        spark_store_bench.main(sys.argv[2:])
    else:
        spark_topic_bench.main()
