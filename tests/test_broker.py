"""The embedded filesystem broker (concord.broker) hands messages out in the order they were sent.

kombu's filesystem transport takes the first file name in sorted order; its own names put the messages of
one millisecond in random (uuid) order, which once let a worker run a run's later batches before its
earlier ones."""

from __future__ import annotations

from kombu import Connection

from concord import broker


def test_messages_come_out_in_the_order_they_were_sent(tmp_path):
    folder, processed = tmp_path / "queue", tmp_path / "processed"
    folder.mkdir()
    processed.mkdir()
    options = {"data_folder_in": str(folder), "data_folder_out": str(folder), "processed_folder": str(processed)}
    with Connection(transport="concord.broker:Transport", transport_options=options) as connection:
        queue = connection.SimpleQueue("jobs")
        n = 300  # sent within a few milliseconds: many share one
        for i in range(n):
            queue.put({"n": i})
        received = []
        for _ in range(n):
            message = queue.get_nowait()  # every message is on disk already: nothing to wait for
            received.append(message.payload["n"])
            message.ack()
        queue.close()
    assert received == list(range(n))


def test_names_sort_by_time_whatever_the_number_of_digits(monkeypatch):
    # 9,999,999 ms of uptime and then 10,000,000 ms: unpadded, "10000000_…" sorted before "9999999_…".
    clock = iter([9_999.999, 10_000.0])
    monkeypatch.setattr(broker, "monotonic", lambda: next(clock))
    early, late = broker.message_name("jobs"), broker.message_name("jobs")
    assert early < late
    assert early.partition(".")[2] == "jobs.msg"  # what kombu matches a queue's files by
