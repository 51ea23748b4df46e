// Staged writes (StagedWrite, PartWriter): one dataset written as P parts by
// any processes on any machines that see OUT (a Dask, Spark or Ray job;
// docs/scale.md), committed by one process:
//
//   // driver (holds the writers' lock from Begin to the end of Commit)
//   UREC_ASSIGN_OR_RETURN(auto staged, StagedWrite::Begin("out", "train", /*num_parts=*/P));
//   ... send staged->token() to the tasks ...
//   // task k, in any process:
//   UREC_ASSIGN_OR_RETURN(auto part, PartWriter::Create("out", "train", token, k, P, schema));
//   ... part->Write(record) ..., part->NextShard() to cut a shard ...
//   UREC_RETURN_IF_ERROR(part->Finish());
//   // driver, once every task has finished:
//   UREC_RETURN_IF_ERROR(staged->Commit());
//
// Part k's shards come after part k-1's: the committed dataset is the
// parts' records in part order, each part's in Write order, cut into shards
// where the parts cut them. The bytes depend only on that: a dataset
// written as one part (in one process) equals the same records written as
// parts split at shard boundaries, in any processes, in any order, with any
// task run several times.
//
// A part writes under hidden names of its own attempt and renames them to
// the part's staged names (format/file_names.h) when it is complete, so a
// retried task replaces the files of an earlier attempt whole, and files of
// an earlier, killed run (another token) are never taken. Commit renames
// every staged shard to its generation name, verifies it (headers, footer,
// index checksums: ShardReader's open-time checks), stamps the dataset's
// values into its headers (UUID, shard number and count, first id, record
// count; the header sizes are fixed, SPEC.md section 10) and commits one
// manifest, exactly as Writer::Finish. Any failure (a part missing, a shard
// that fails verification, a schema that differs between parts) commits
// nothing and names the part and file. A driver killed at any point leaves
// the old dataset; what the run staged is removed by the next writer of
// NAME, under the lock. A part stages only while its StagedWrite is under
// way (the lock file names its token while the run holds the lock): a task
// that outlives its run (Dask does not stop a running task whose driver
// failed or died) stages nothing once the run has released the lock or the
// next writer has taken it.
#ifndef UNIRECORD_STAGED_WRITE_H_
#define UNIRECORD_STAGED_WRITE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/schema.h"
#include "unirecord/status.h"
#include "unirecord/writer.h"

namespace unirecord {

class StagedWrite {
 public:
  // Takes the writers' lock of `name` in `out_dir` (created if missing, one
  // level; FailedPrecondition naming the holder when another writer has it,
  // as Writer::Create), removes what killed writers left, and picks a new
  // token. num_parts: 1 .. 99999.
  static Result<std::unique_ptr<StagedWrite>> Begin(const std::string& out_dir, const std::string& name,
                                                    uint32_t num_parts, const StagedWriteOptions& options = {});
  // Unless Commit succeeded: removes every staged file, releases the lock.
  ~StagedWrite();
  StagedWrite(const StagedWrite&) = delete;
  StagedWrite& operator=(const StagedWrite&) = delete;

  // Names this run's staged files; pass it to every PartWriter.
  const std::string& token() const;
  uint32_t num_parts() const;

  // As Writer::AddReport: a text report committed with the dataset.
  Status AddReport(const std::string& label, std::string text);

  // Appends instead of replacing: the committed dataset's segments stay as
  // they are (format/SPEC.md section 1.2; no byte of them is copied) and the
  // parts become one new segment after them. Commit refuses parts whose
  // schema or metadata differ from the dataset's, but for fields added to
  // the dataset later (AddFields) that the parts' records lack:
  // StagedWriteOptions::defaults gives them, as a field group of the new
  // segment written at Commit (without defaults they are refused, naming
  // the fields). Without a committed dataset, the parts are the dataset.
  Status KeepCommitted();

  // Adds fields instead of records (format/SPEC.md section 1.4;
  // unirecord/fields.h is the one-process form, AddFieldsPart a part's):
  // the parts hold the new fields of the committed dataset's records, one
  // record per record in id order, cut into shards where its shards are cut
  // (PartWriter::NextShard); a part holds a run of whole shards of one
  // segment (one part per segment, or per shard, or anything between).
  // Commit writes them as column files beside the shards, refuses parts
  // that do not match the shards shard for shard and record for record,
  // and commits them as a field group of every segment: a field named as
  // one the dataset has replaces it from this version on.
  Status AddFieldGroup();

  // Verifies every part and commits (see above); then releases the lock.
  // After Commit (successful or not) the StagedWrite is done.
  Status Commit();

  // Valid after a successful Commit(); shard_paths are the committed names.
  const WriterSummary& summary() const;

 private:
  struct Impl;
  explicit StagedWrite(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes part `part` of `num_parts` of a StagedWrite (token from
// StagedWrite::token()), in any process that sees `out_dir`. Options as
// Writer's, except the sharding: a part starts with one shard, NextShard()
// cuts, and target_shard_bytes (when set) cuts as Writer does; num_shards
// and expected_records must stay 0. A part with no records holds one empty
// shard. Takes no lock: parts of one run write in parallel.
class PartWriter {
 public:
  static Result<std::unique_ptr<PartWriter>> Create(const std::string& out_dir, const std::string& name,
                                                    const std::string& token, uint32_t part, uint32_t num_parts,
                                                    const Schema& schema, const WriterOptions& options = {});
  // Unless Finish() succeeded: removes what this attempt wrote.
  ~PartWriter();
  PartWriter(const PartWriter&) = delete;
  PartWriter& operator=(const PartWriter&) = delete;

  const Schema& schema() const;
  // As Writer's; every part must set the same metadata (Commit checks).
  Status SetMetadata(const std::string& key, const std::string& value);
  Status Write(RecordBuilder& record);
  // Writes `rows` records at once from columns when every field of the
  // schema is a numeric scalar or fixed-shape array stored in scalar pages
  // (not indexed, not a blob; InvalidArgument otherwise): `columns[k]` holds
  // field k's values of the rows back to back, little-endian (the bytes of
  // a C-contiguous array of shape (rows, *shape)). The files equal those of
  // Write() record by record with the same values, at a fraction of the
  // cost (AddFields of arrays writes this way).
  Status WriteColumns(const std::vector<std::string_view>& columns, uint64_t rows);
  // Ends the current shard (an empty one when nothing was written to it)
  // and starts the next.
  Status NextShard();
  uint64_t records_written() const;
  // Completes the part's shards and stages them (see StagedWrite);
  // FailedPrecondition, staging nothing, when the StagedWrite of `token` is
  // over (committed, abandoned, or replaced by the next writer).
  Status Finish();
  // Valid after a successful Finish(): records, shards, bytes and the
  // staged paths (uuid and generation stay empty: Commit decides them).
  const WriterSummary& summary() const;

 private:
  explicit PartWriter(std::unique_ptr<Writer> writer);
  std::unique_ptr<Writer> writer_;
};

}  // namespace unirecord

#endif  // UNIRECORD_STAGED_WRITE_H_
