"""Match records: one self-contained JSONL record per match (SPEC.md section 8), and their replay.

A record is a file of its own (``arena match --record FILE``), or one gzip member of a records
file that a tournament appends its matches' compact records to, found by its byte offset and
length (the results file keeps them) or by its match id. Plain records hold the full lines;
compressed ones (``.gz``) the compact lines, which every reader expands to the full lines by the
rules. One job per module:

- :mod:`.format`: what a record is: its format numbers, the compact lines, the canonical reply,
  the dealer that remembers its shuffles, and :class:`ReplayError`, which every reader raises;
- :mod:`.writing`: :class:`RecordWriter` (one match's lines, written while it plays),
  :class:`RecordFile` and :class:`RecordShelf` (a tournament's records files);
- :mod:`.files`: where a record is and its bytes (:func:`record_bytes`, :func:`record_members`,
  :func:`find_member`);
- :mod:`.expand`: a compact record written out in full;
- :mod:`.lines`: the one reader of a record's JSON lines (:func:`read_record`,
  :func:`read_entries`);
- :mod:`.check`: the replay check (:func:`replay_record`).

The names below are the package's interface; import them from here.
"""

from arena.referee.record.check import (
    TIME_FIELDS,
    DecisionTime,
    Replay,
    charges,
    forfeit_placings,
    replay_record,
)
from arena.referee.record.files import (
    RecordMember,
    find_member,
    read_span,
    record_bytes,
    record_members,
    record_where,
)
from arena.referee.record.format import (
    CANONICAL_ID_AT,
    CANONICAL_REPLY_BASE,
    CANONICAL_TYPE_AT,
    COMPACT_MARK,
    GZIP_MAGIC,
    HEADER_START,
    READ_FORMATS,
    RECORD_FORMAT,
    RECORDED_LINE_CHARS,
    RECORDS_SUFFIX,
    Decision,
    RecordingDealer,
    ReplayError,
    ShortDecision,
    ShuffleLine,
    canonical_reply,
    compressed,
    decode_line,
    ms3,
    recorded_text,
)
from arena.referee.record.lines import read_record, record_lines
from arena.referee.record.writing import (
    GZIP_FLUSH_S,
    RECORD_BATCH,
    RecordFile,
    RecordShelf,
    RecordWriter,
    deflate_module,
)

__all__ = [
    "CANONICAL_ID_AT",
    "CANONICAL_REPLY_BASE",
    "CANONICAL_TYPE_AT",
    "COMPACT_MARK",
    "GZIP_FLUSH_S",
    "GZIP_MAGIC",
    "HEADER_START",
    "READ_FORMATS",
    "RECORDED_LINE_CHARS",
    "RECORDS_SUFFIX",
    "TIME_FIELDS",
    "RECORD_BATCH",
    "RECORD_FORMAT",
    "Decision",
    "DecisionTime",
    "RecordFile",
    "RecordMember",
    "RecordShelf",
    "RecordWriter",
    "RecordingDealer",
    "Replay",
    "ReplayError",
    "ShortDecision",
    "ShuffleLine",
    "canonical_reply",
    "charges",
    "compressed",
    "decode_line",
    "deflate_module",
    "find_member",
    "forfeit_placings",
    "ms3",
    "read_record",
    "read_span",
    "record_bytes",
    "record_lines",
    "record_members",
    "record_where",
    "recorded_text",
    "replay_record",
]
