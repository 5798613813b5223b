"""Celery's filesystem broker (the embedded default), with messages written atomically.

kombu's filesystem transport creates the message file and then writes it; a worker polling the folder
can move and read the file in between, get an empty message and stop with "Unrecoverable error:
JSONDecodeError". Here a message is written under a name the consumers ignore and renamed into place
once complete (``os.replace`` is atomic within one folder).
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        filename = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
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
