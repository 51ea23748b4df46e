// Files: read-only memory maps, buffered append-only writers with positional
// patching, and the small filesystem helpers the writer's atomic commit needs.
// Every error names the file and the failing call.
#ifndef UNIRECORD_IO_FILE_H_
#define UNIRECORD_IO_FILE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/status.h"

namespace unirecord::io {

// A whole file mapped read-only. An empty file maps to (nullptr, 0).
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // NotFound when `path` does not exist.
  static Result<MappedFile> Open(const std::string& path);

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Corruption when the mapped file was truncated in place since Open:
  // touching its lost pages would raise SIGBUS. A file replaced by rename
  // (the path names another inode, as `urec convert` does) leaves this
  // mapping intact: OK. One stat() of the path; no descriptor is kept open
  // (a dataset of thousands of shards must not use thousands of them). Best
  // effort: a truncation after the check is not seen. Costs a system call
  // (1.7-5 us on a loaded VM): callers check before work that dwarfs it, or
  // hold a TruncationCheckScope over many reads.
  Status CheckNotTruncated() const;

 private:
  void Reset();
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t device_ = 0;  // identify the mapped inode
  uint64_t inode_ = 0;
  uint64_t serial_ = 0;  // unique per Open in this process (TruncationCheckScope)
  std::string path_;
};

// While one is alive on a thread, MappedFile::CheckNotTruncated on that
// thread stats each mapped file once and answers later checks of it from
// that result: a caller that reads many records at once (the Loader, per
// claim of samples) pays one stat() per file instead of one per read. A
// truncation is then seen at the first check of the file in the next scope
// instead of at the next read; a failed check is not remembered (every read
// of a truncated file fails). Scopes nest (the outermost one counts); the
// list of files checked keeps its capacity for the thread's next scope.
class TruncationCheckScope {
 public:
  TruncationCheckScope();
  ~TruncationCheckScope();
  TruncationCheckScope(const TruncationCheckScope&) = delete;
  TruncationCheckScope& operator=(const TruncationCheckScope&) = delete;
};

// An append-only file with a write buffer, plus in-place patching of bytes
// already written (for headers written last).
class WritableFile {
 public:
  WritableFile() = default;
  ~WritableFile();  // closes without syncing; errors are ignored
  WritableFile(WritableFile&& other) noexcept;
  WritableFile& operator=(WritableFile&& other) noexcept;
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  // Creates or truncates `path`.
  static Result<WritableFile> Create(const std::string& path);
  // Opens an existing file to patch bytes with WriteAt (Append continues at
  // its end).
  static Result<WritableFile> OpenExisting(const std::string& path);

  Status Append(const void* data, size_t size);
  Status Append(std::string_view data) { return Append(data.data(), data.size()); }
  // Appends zero bytes until offset() is a multiple of `alignment`.
  Status PadTo(uint64_t alignment);
  // Overwrites bytes at `offset` (which must already have been appended).
  Status WriteAt(uint64_t offset, const void* data, size_t size);
  // Makes the file `size` bytes long (a hole, reading as zeros, where nothing
  // was written) and continues Append there; WriteAt may then patch any of it.
  Status ExtendTo(uint64_t size);
  Status Flush();
  Status Sync();  // flush + fsync
  Status Close();

  uint64_t offset() const { return offset_; }  // bytes appended so far
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  uint64_t offset_ = 0;
  std::string path_;
  std::vector<uint8_t> buffer_;
};

// An exclusive lock (flock) on a lock file, held until released, destroyed
// or the process ends (also when it is killed). Two holders in one process
// exclude each other too. Release removes the file; a killed holder leaves
// it, unlocked, for the next one to take.
class FileLock {
 public:
  FileLock() = default;
  ~FileLock();
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Creates `path` if missing and locks it without waiting, then writes
  // "pid PID host HOST" (and " NOTE" when `note` is not empty) into it.
  // FailedPrecondition when another holder has it, with that holder's line
  // from the file in the message.
  static Result<FileLock> Acquire(const std::string& path, const std::string& note = "");
  bool held() const { return fd_ >= 0; }
  void Release();

 private:
  int fd_ = -1;
  std::string path_;
};

// A flock (shared or exclusive) on an existing file, held until destroyed
// or the process ends (also when it is killed). Locking an open description
// twice converts the lock. Used as the pin of a cache file (shared: in use)
// and by the cache's evictor (exclusive: nobody uses it).
class FlockedFile {
 public:
  enum class Mode { kShared, kExclusive };
  FlockedFile() = default;
  ~FlockedFile();
  FlockedFile(FlockedFile&& other) noexcept;
  FlockedFile& operator=(FlockedFile&& other) noexcept;
  FlockedFile(const FlockedFile&) = delete;
  FlockedFile& operator=(const FlockedFile&) = delete;

  // Opens `path` (creating it, empty, with O_EXCL when `create`) and locks
  // it, waiting when `wait`. NotFound when the file is missing, or when it
  // was removed or replaced while we waited for the lock (the path no longer
  // names the locked file); FailedPrecondition when !wait and another holder
  // has a conflicting lock.
  static Result<FlockedFile> Lock(const std::string& path, Mode mode, bool wait, bool create = false);
  // Changes the lock's mode (waiting); IOError when the OS refuses.
  Status Relock(Mode mode);
  // Sets the file's modification time to now (the cache's recency).
  void Touch() const;
  bool held() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  void Release();

 private:
  int fd_ = -1;
  std::string path_;
};

struct FileFacts {
  uint64_t size = 0;
  int64_t modified_ns = 0;  // st_mtim
  bool regular = false;
  uint64_t links = 1;  // hard links (st_nlink)
};
// stat() of `path`; NotFound when missing.
Result<FileFacts> StatFile(const std::string& path);

// Test seam, in the spirit of LevelDB's fault-injection Env: every call in
// this file that changes the file system (create, write, fsync, rename,
// unlink, mkdir, lock) first asks the hook; a non-OK answer fails the call
// before it happens. A hook that fails every call from the Nth on leaves the
// disk exactly as a process killed before step N would. Set it only while no
// other thread is in this layer; an empty function removes it.
enum class FileOp { kCreate, kWrite, kSync, kRename, kRemove, kMakeDirectory, kLock, kLink };
const char* FileOpName(FileOp op);
using FaultHook = std::function<Status(FileOp op, const std::string& path)>;
void SetFaultHook(FaultHook hook);

// Reads the whole regular file `path` into *bytes (reusing its capacity).
// Refuses, before reading, anything that is not a regular file
// (InvalidArgument: a directory, a FIFO — never opened for a blocking read —,
// a device such as /dev/zero, a socket) and a file over `max_bytes`
// (NotSupported); NotFound when missing; IOError when the OS refuses or the
// file shrinks while read. Messages start with the path.
Status ReadFile(const std::string& path, uint64_t max_bytes, std::string* bytes);

bool PathExists(const std::string& path);
// OK when `path` exists; else why not, naming it: NotFound ("PATH: No such
// file or directory") or IOError ("PATH: Not a directory", "Permission
// denied", ...), from stat's errno.
Status CheckExists(const std::string& path);
bool IsDirectory(const std::string& path);
// Creates `path` if missing, and its missing parents; an error names `path`
// (then the parent that failed, if it is one: "OUT/x: OUT: mkdir: Not a
// directory").
Status CreateDirectory(const std::string& path);
Status RenameFile(const std::string& from, const std::string& to);
// A hard link `to` of the file `from` (`to` must not exist). Its errno in
// the message; callers fall back to a copy where links cannot be made
// (another file system: EXDEV; one without links: EPERM).
Status LinkFile(const std::string& from, const std::string& to);
// Removes a file; a missing file is not an error, nor is any other failure.
void RemoveFileIfExists(const std::string& path);
Status SyncDirectory(const std::string& path);
// Names (not paths) of the entries of a directory, sorted.
Result<std::vector<std::string>> ListDirectory(const std::string& path);
// Paths matching a glob pattern, sorted; empty when none match.
Result<std::vector<std::string>> Glob(const std::string& pattern);

// "dir/name" (no separator doubled).
std::string JoinPath(const std::string& dir, const std::string& name);
// The last path component ("a/b.urec" -> "b.urec").
std::string BaseName(const std::string& path);
// Everything before the last component ("a/b.urec" -> "a", "b" -> ".").
std::string DirName(const std::string& path);

}  // namespace unirecord::io

#endif  // UNIRECORD_IO_FILE_H_
