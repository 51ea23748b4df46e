"""Sequence packing for language models: :class:`Pack`, given to
:class:`unirecord.Loader` as ``pack=``, packs documents (records of 1-D token
fields) into rows of ``seq_len`` in the native loader (docs/loader.md,
"Packing sequences")."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Dict, Literal, Optional, Sequence

from . import _core
from .options import _Options, field_names

__all__ = ["Pack"]

Strategy = Literal["concat", "first_fit", "best_fit"]
Overlong = Literal["split", "truncate", "drop"]
WeightUnit = Literal["documents", "tokens"]


@dataclass(frozen=True)
class Pack(_Options):
    """How a :class:`unirecord.Loader` packs documents into rows.

    Each batch is a dict of ``batch_size`` rows: the packed fields
    ``[B, seq_len]``, ``segment_ids`` ``[B, seq_len]`` (int32: 1, 2, ... per
    segment of a row, 0 for padding), ``positions`` ``[B, seq_len]`` (int32,
    from 0 in each segment), ``cu_seqlens`` (int32, the segments' cumulative
    lengths over the batch, padding left out: flash-attention's varlen
    layout), ``max_seqlen`` (int) and ``id`` (int64, each segment's record, in
    ``cu_seqlens`` order).

    Args:
        seq_len: tokens per row.
        strategy: ``"concat"`` (documents one after another, cut every
            ``seq_len`` tokens; a document may continue into the next row as a
            new segment; no padding but the epoch's last row), ``"first_fit"``
            (within each window, in order: a document goes into the first row
            with room) or ``"best_fit"`` (default; within each window, longest
            first: into the row it fills most). No document is cut by the fit
            strategies unless it is longer than ``seq_len``.
        window: documents packed together (and read at once); the rows are a
            pure function of the window's documents, so resuming re-reads one
            window.
        overlong: a document longer than ``seq_len`` (fit strategies):
            ``"split"`` into pieces of ``seq_len`` (default), ``"truncate"`` to
            its first ``seq_len`` tokens, or ``"drop"``; counted in
            :meth:`Loader.stats` either way (``overlong``, ``cut_tokens``,
            ``dropped``).
        fields: the packed fields, 1-D numeric arrays of any length with one
            value per token, equally long in each record (tokens first, then
            e.g. a loss mask); None: the Loader's ``fields``.
        pad_value: every packed field's value in padding.
        eos: a token appended to each document's first packed field (the
            others get ``pad_value`` there); None: nothing appended.
        weight_unit: what the Loader's ``weights`` weigh when it mixes
            several datasets: ``"documents"`` (default) or ``"tokens"`` (each
            dataset's share of the epoch's tokens, EOS included: a 70/30
            token mixture is ``weights=[0.7, 0.3], pack=Pack(...,
            weight_unit="tokens")``). The tokens are counted from the record
            table, without reading a document; ``epoch_size`` stays in
            documents (docs/loader.md, "Mixing by tokens").

    A frozen dataclass, checked when made as the other option groups
    (:class:`unirecord.Sampler`, ...): a wrong value is an error naming
    ``Pack.NAME``.
    """

    _NATIVE: ClassVar[Dict[str, str]] = dict(pack="pack")

    seq_len: int
    strategy: Strategy = "best_fit"
    window: int = 1024
    overlong: Overlong = "split"
    fields: Optional[Sequence[str]] = None
    pad_value: float = 0
    eos: Optional[int] = None
    weight_unit: WeightUnit = "documents"

    def _normalize(self) -> None:
        self._set("fields", field_names("Pack.fields", self.fields))

    def _check(self, key: str, value: Any, shown_as: str) -> None:
        _core._check_loader_option(key, value, "Pack")  # names each option Pack.NAME

    def _native(self) -> Dict[str, Any]:
        """The options as the native loader takes them (its table checks each)."""
        return dict(pack=dict(seq_len=self.seq_len, strategy=self.strategy, window=self.window,
                              overlong=self.overlong, fields=None if self.fields is None else list(self.fields),
                              pad_value=self.pad_value, eos=self.eos, weight_unit=self.weight_unit))
