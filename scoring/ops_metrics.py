"""The progress of running score runs, read by /metrics at each scrape (concord.ops.metrics)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from scoring.models import RunStatus, ScoreRun

logger = logging.getLogger(__name__)

# A running run's id is a label: bounded by the runs that run at once, and gone once the run ends.
LABELS = ["run", "study", "metric", "backend"]


class RunProgressCollector(Collector):
    def collect(self) -> Iterable[Metric]:
        done = GaugeMetricFamily(
            "concord_score_run_items_done", "Items scored so far by a running score run.", labels=LABELS
        )
        failed = GaugeMetricFamily(
            "concord_score_run_items_failed", "Items failed so far by a running score run.", labels=LABELS
        )
        total = GaugeMetricFamily(
            "concord_score_run_items_total", "Items a running score run scores in all.", labels=LABELS
        )
        running = GaugeMetricFamily(
            "concord_score_runs", "Score runs by status (queued or running).", labels=["status"]
        )
        try:
            runs = list(
                ScoreRun.objects.filter(status=RunStatus.RUNNING)
                .values_list("id", "study__slug", "metric", "backend", "n_done", "n_failed", "n_total")
                .order_by("id")
            )
            queued = ScoreRun.objects.filter(status=RunStatus.QUEUED).count()
        except Exception:
            logger.warning("metrics: cannot read the score runs", exc_info=True)
            return
        for run_id, study, metric, backend, n_done, n_failed, n_total in runs:
            labels = [str(run_id), study, metric, backend]
            done.add_metric(labels, n_done)
            failed.add_metric(labels, n_failed)
            total.add_metric(labels, n_total)
        running.add_metric([RunStatus.RUNNING.value], len(runs))
        running.add_metric([RunStatus.QUEUED.value], queued)
        yield from (done, failed, total, running)
