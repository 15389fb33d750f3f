"""The graph API: one class composed of the graph package's modules."""

from __future__ import annotations

from zmlir.runtime.cuda.graph.capture import CaptureAPI
from zmlir.runtime.cuda.graph.executable import ExecAPI
from zmlir.runtime.cuda.graph.user_objects import UserObjectAPI


class GraphAPI(CaptureAPI, ExecAPI, UserObjectAPI):
    """Stream capture, graphs built node by node, executable graphs, user objects."""
