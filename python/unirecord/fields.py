"""Fields added, replaced and dropped without rewriting a dataset (format/SPEC.md
section 1.4; docs/python.md "Adding fields").

``add_fields(path, {"score": values})`` writes the new fields into column
files beside the shards and commits them as a new version; the shards are not
touched. ``values`` is a sequence or numpy array with one entry per record (a
2-D array is a fixed-shape array field), or a function of the record
(``fn(record_dict) -> value``) computed in this process. A field named as one
the dataset has replaces it from the new version on. ``drop_fields`` hides
fields from the next version (their bytes go with ``unirecord.gc``).
"""
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

from . import _core

try:
    import numpy as np
except ImportError:  # numpy is a dependency; kept optional for type checkers only
    np = None  # type: ignore[assignment]

_Values = Union[Sequence[Any], Callable[[Dict[str, Any]], Any]]


def _field_for(name: str, value: Any) -> "_core.Field":
    """The field a value of record 0 asks for: numpy dtype and shape, or the Python type."""
    if np is not None and isinstance(value, np.ndarray):
        return _core.Field(name, str(value.dtype), list(value.shape) if value.ndim else None)
    if np is not None and isinstance(value, np.generic):
        return _core.Field(name, str(value.dtype))
    if isinstance(value, bool):
        return _core.Field(name, "bool")
    if isinstance(value, int):
        return _core.Field(name, "int64")
    if isinstance(value, float):
        return _core.Field(name, "float64")
    if isinstance(value, str):
        return _core.Field(name, "string")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _core.Field(name, "bytes")
    raise TypeError(f"add_fields: field '{name}': cannot infer a field type from {type(value).__name__} "
                    f"(give schema=)")


def add_fields(path: Any, fields: Mapping[str, _Values], *, schema: Optional[Any] = None,
               sync: bool = True) -> Dict[str, Any]:
    """Adds (or replaces) ``fields`` in the dataset at ``path`` as a new version.

    Args:
        path: a folder holding one dataset with a manifest, DIR/NAME or DIR/NAME.uset.
        fields: name -> values: a sequence or numpy array with one entry per
            record (len(dataset)), or a function of the record dict.
        schema: the new fields' schema (what :class:`Schema` takes); by
            default inferred from record 0's values (numpy dtypes and shapes,
            int -> int64, float -> float64, str -> string, bytes -> bytes).
        sync: fsync the new files before the commit (as :class:`Writer`'s sync).

    Returns:
        The commit's summary (records, shards, bytes_written, generation, ...).

    Raises:
        ValueError: a sequence of another length than the dataset, or a value
            the field refuses (naming the record); an exception of a function
            stops the add, which then commits nothing.
    """
    if not fields:
        raise ValueError("add_fields: no fields given")
    dataset = _core.Dataset(path)
    n = len(dataset)
    sources = {}
    for name, values in fields.items():
        if not callable(values) and len(values) != n:
            raise ValueError(f"add_fields: field '{name}' has {len(values)} values, the dataset {n} records")
        sources[name] = values
    need_record = any(callable(v) for v in sources.values())

    def values_of(record_id: int) -> Dict[str, Any]:
        record = dataset[record_id] if need_record else None
        return {name: (v(record) if callable(v) else v[record_id]) for name, v in sources.items()}

    if schema is None:
        if n == 0:
            raise ValueError("add_fields: the dataset has no records to infer the fields' types from; give schema=")
        first = values_of(0)
        schema = _core.Schema([_field_for(name, value) for name, value in first.items()])
    schema = _core.Schema(schema)
    arrays = _as_arrays(schema, sources, n)
    if arrays is not None:  # read natively, without a call per record
        return _core.add_field_arrays(path, schema, arrays, dataset.uuid, sync)
    return _core.add_fields(path, schema, values_of, dataset.uuid, sync)


def _as_arrays(schema: "_core.Schema", sources: Dict[str, _Values], n: int) -> Optional[list]:
    """The values as one C-contiguous array per field (the field's dtype, shape (n, *shape)) when every
    field is a fixed-shape numeric one given as a numpy array of that dtype; else None."""
    if np is None or list(sources) != schema.names:
        return None
    arrays = []
    for field in schema.fields:
        values = sources[field.name]
        if (not isinstance(values, np.ndarray) or field.type in ("string", "bytes") or -1 in field.shape
                or values.dtype != np.dtype(field.type) or values.shape != (n, *field.shape)):
            return None
        arrays.append(np.ascontiguousarray(values))
    return arrays


def drop_fields(path: Any, names: Sequence[str]) -> Dict[str, Any]:
    """Hides ``names`` from the next version of the dataset at ``path``.

    Raises:
        KeyError: a name the dataset does not have. ValueError: no field would be left.
    """
    return _core.drop_fields(path, list(names))
