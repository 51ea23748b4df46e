"""unirecord.serve (this module, unirecord.viewer): the dataset in the browser, read-only (`urec serve`'s
viewer, docs/viewer.md), served from this process's background threads.

    server = unirecord.serve("records")        # or a unirecord.Dataset
    print(server.url)                          # http://127.0.0.1:PORT/
    ...
    server.stop()                              # or: with unirecord.serve(...) as server:
"""
import os
from typing import Dict, Optional, Union

from ._core import Dataset, Server, _serve

_Path = Union[str, "os.PathLike[str]"]


def serve(
    dataset: Union[_Path, Dataset],
    *,
    port: int = 0,
    bind: str = "127.0.0.1",
    token: Optional[str] = None,
    threads: int = 8,
    cache_bytes: int = 128 << 20,
    thumbnail_size: int = 160,
    box_format: str = "xywh",
    version: Optional[int] = None,
    tag: Optional[str] = None,
    cache_dir: Optional[_Path] = None,
    cache_limit: int = 0,
    remote_options: Optional[Dict[str, Union[int, str]]] = None,
    page_cache_bytes: int = 64 << 20,
) -> Server:
    """Serves `dataset` (a path, a remote location or an open Dataset) until
    the returned Server's stop(): its `url` is the page. `port` 0 takes a free
    one. Binding anything but 127.0.0.1 or ::1 needs a token (made when not
    given; `Server.token`). `version`, `tag`, `cache_dir`, `cache_limit` and
    `remote_options` open the dataset as Dataset() does, with
    `page_cache_bytes` of inflated scalar pages (an open Dataset keeps its
    own); `cache_bytes` bounds the viewer's own answers."""
    if not isinstance(dataset, Dataset):
        dataset = Dataset(dataset, version=version, tag=tag, cache_dir=cache_dir, cache_limit=cache_limit,
                          remote_options=remote_options, page_cache_bytes=page_cache_bytes)
    return _serve(dataset, port, bind, token, threads, cache_bytes, thumbnail_size, box_format)
