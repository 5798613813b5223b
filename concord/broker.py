"""Celery's filesystem broker (the embedded default), with messages written atomically.

kombu's filesystem transport creates the message file and then writes it; a worker polling the folder
can move and read the file in between, get an empty message and stop with "Unrecoverable error:
JSONDecodeError". Here a message is written under a name the consumers ignore and renamed into place
once complete (``os.replace`` is atomic within one folder).

Messages are delivered in the order they were sent, as on Redis: kombu takes the first name in sorted
order, and kombu's own names (a millisecond, then a random uuid) put the messages of one millisecond in
random order and sort 9,999,999 ms after 10,000,000 ms. Here a name is the zero-padded millisecond of the
system-wide monotonic clock, the sender's process id and its own sequence number, then the uuid.
"""

from __future__ import annotations

import itertools
import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

_sequence = itertools.count()


def message_name(queue: str) -> str:
    """The file name of a message: sorts after every message this process sent before it."""
    return f"{round(monotonic() * 1000):015d}_{os.getpid():010d}_{next(_sequence):015d}_{uuid.uuid4().hex}.{queue}.msg"


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        filename = message_name(queue)
        final = os.path.join(self.data_folder_out, filename)
        # A leading dot keeps the partial file out of every queue: consumers match "<prefix>.<queue>.msg".
        partial = os.path.join(self.data_folder_out, f".{filename}.partial")
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
