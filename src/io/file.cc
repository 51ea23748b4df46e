#include "io/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

namespace unirecord::io {
namespace {

constexpr size_t kWriteBufferBytes = 1 << 20;

FaultHook& Hook() {
  static FaultHook hook;
  return hook;
}

Status AskHook(FileOp op, const std::string& path) {
  const FaultHook& hook = Hook();
  return hook ? hook(op, path) : Status::OK();
}

Status ErrnoStatus(const std::string& path, const char* what, int err) {
  std::string message = path + ": " + what + ": " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(message);
  return Status::IOError(message);
}

Status WriteFully(int fd, const std::string& path, const uint8_t* data, size_t size) {
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kWrite, path));
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(path, "write", errno);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::OK();
}

// Opens `path` with `flags` and stats it; the caller owns the descriptor.
Result<int> OpenAndStat(const std::string& path, int flags, struct stat* st) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, "open", errno);
  if (::fstat(fd, st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus(path, "stat", err);
  }
  return fd;
}

const char* FileKindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "neither file nor directory";
}

std::atomic<uint64_t> g_next_mapping_serial{1};

// The open TruncationCheckScopes of this thread and the files (by serial)
// found not truncated in the outermost one.
struct CheckedFiles {
  int depth = 0;
  std::vector<uint64_t> serials;
};
thread_local CheckedFiles t_checked_files;

}  // namespace

TruncationCheckScope::TruncationCheckScope() { ++t_checked_files.depth; }

TruncationCheckScope::~TruncationCheckScope() {
  if (--t_checked_files.depth == 0) t_checked_files.serials.clear();
}

MappedFile::~MappedFile() { Reset(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), device_(other.device_), inode_(other.inode_),
      serial_(other.serial_), path_(std::move(other.path_)) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = other.data_;
    size_ = other.size_;
    device_ = other.device_;
    inode_ = other.inode_;
    serial_ = other.serial_;
    path_ = std::move(other.path_);
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void MappedFile::Reset() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

Result<MappedFile> MappedFile::Open(const std::string& path) {
  struct stat st;
  // O_NONBLOCK: a FIFO named like a shard must not wait for a writer.
  UREC_ASSIGN_OR_RETURN(int fd, OpenAndStat(path, O_RDONLY | O_NONBLOCK, &st));
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": not a regular file (" + FileKindName(st.st_mode) + ")");
  }
  MappedFile file;
  file.path_ = path;
  file.size_ = static_cast<uint64_t>(st.st_size);
  file.device_ = static_cast<uint64_t>(st.st_dev);
  file.inode_ = static_cast<uint64_t>(st.st_ino);
  file.serial_ = g_next_mapping_serial.fetch_add(1, std::memory_order_relaxed);
  if (file.size_ > 0) {
    void* p = ::mmap(nullptr, file.size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      file.size_ = 0;
      return ErrnoStatus(path, "mmap", err);
    }
    file.data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return file;
}

Status MappedFile::CheckNotTruncated() const {
  CheckedFiles& checked = t_checked_files;
  const bool scoped = checked.depth > 0;
  if (scoped && std::find(checked.serials.begin(), checked.serials.end(), serial_) != checked.serials.end()) {
    return Status::OK();
  }
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_dev) != device_ ||
      static_cast<uint64_t>(st.st_ino) != inode_ || static_cast<uint64_t>(st.st_size) >= size_) {
    if (scoped) checked.serials.push_back(serial_);
    return Status::OK();  // gone or replaced: the mapped inode itself is unchanged
  }
  return Status::Corruption(path_ + ": truncated in place from " + std::to_string(size_) + " to " +
                            std::to_string(st.st_size) +
                            " bytes while open (files must be replaced by rename); reopen the dataset");
}

WritableFile::~WritableFile() {
  if (fd_ >= 0) ::close(fd_);
}

WritableFile::WritableFile(WritableFile&& other) noexcept
    : fd_(other.fd_), offset_(other.offset_), path_(std::move(other.path_)),
      buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
}

WritableFile& WritableFile::operator=(WritableFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    offset_ = other.offset_;
    path_ = std::move(other.path_);
    buffer_ = std::move(other.buffer_);
    other.fd_ = -1;
  }
  return *this;
}

Result<WritableFile> WritableFile::Create(const std::string& path) {
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kCreate, path));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(path, "create", errno);
  WritableFile file;
  file.fd_ = fd;
  file.path_ = path;
  file.buffer_.reserve(kWriteBufferBytes);
  return file;
}

Result<WritableFile> WritableFile::OpenExisting(const std::string& path) {
  struct stat st;
  UREC_ASSIGN_OR_RETURN(int fd, OpenAndStat(path, O_WRONLY, &st));
  WritableFile file;
  file.fd_ = fd;
  file.path_ = path;
  file.offset_ = static_cast<uint64_t>(st.st_size);
  ::lseek(fd, 0, SEEK_END);
  return file;
}

Status WritableFile::Append(const void* data, size_t size) {
  if (fd_ < 0) return Status::FailedPrecondition(path_ + ": append to a closed file");
  const auto* bytes = static_cast<const uint8_t*>(data);
  offset_ += size;
  if (buffer_.size() + size <= kWriteBufferBytes) {
    buffer_.insert(buffer_.end(), bytes, bytes + size);
    return Status::OK();
  }
  UREC_RETURN_IF_ERROR(Flush());
  if (size >= kWriteBufferBytes) return WriteFully(fd_, path_, bytes, size);
  buffer_.insert(buffer_.end(), bytes, bytes + size);
  return Status::OK();
}

Status WritableFile::PadTo(uint64_t alignment) {
  static const uint8_t kZeros[4096] = {};
  uint64_t remainder = offset_ % alignment;
  uint64_t padding = remainder == 0 ? 0 : alignment - remainder;
  while (padding > 0) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(padding, sizeof(kZeros)));
    UREC_RETURN_IF_ERROR(Append(kZeros, n));
    padding -= n;
  }
  return Status::OK();
}

Status WritableFile::WriteAt(uint64_t offset, const void* data, size_t size) {
  if (fd_ < 0) return Status::FailedPrecondition(path_ + ": write to a closed file");
  if (offset + size > offset_) return Status::Internal(path_ + ": WriteAt past the end");
  UREC_RETURN_IF_ERROR(Flush());
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kWrite, path_));
  const auto* bytes = static_cast<const uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::pwrite(fd_, bytes, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(path_, "pwrite", errno);
    }
    bytes += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::OK();
}

Status WritableFile::ExtendTo(uint64_t size) {
  if (fd_ < 0) return Status::FailedPrecondition(path_ + ": write to a closed file");
  if (size < offset_) return Status::Internal(path_ + ": ExtendTo would shrink the file");
  UREC_RETURN_IF_ERROR(Flush());
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kWrite, path_));
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return ErrnoStatus(path_, "ftruncate", errno);
  if (::lseek(fd_, static_cast<off_t>(size), SEEK_SET) < 0) return ErrnoStatus(path_, "lseek", errno);
  offset_ = size;
  return Status::OK();
}

Status WritableFile::Flush() {
  if (buffer_.empty()) return Status::OK();
  Status status = WriteFully(fd_, path_, buffer_.data(), buffer_.size());
  buffer_.clear();
  return status;
}

Status WritableFile::Sync() {
  UREC_RETURN_IF_ERROR(Flush());
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kSync, path_));
  if (::fsync(fd_) != 0) return ErrnoStatus(path_, "fsync", errno);
  return Status::OK();
}

Status WritableFile::Close() {
  if (fd_ < 0) return Status::OK();
  Status status = Flush();
  if (::close(fd_) != 0 && status.ok()) status = ErrnoStatus(path_, "close", errno);
  fd_ = -1;
  return status;
}

FileLock::~FileLock() { Release(); }

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

void FileLock::Release() {
  if (fd_ < 0) return;
  // Removed while still locked: a writer that opened it just before waits
  // for nothing, as Acquire checks that it locked the file still at `path_`.
  RemoveFileIfExists(path_);
  ::close(fd_);  // drops the flock
  fd_ = -1;
}

Result<FileLock> FileLock::Acquire(const std::string& path, const std::string& note) {
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kLock, path));
  FileLock lock;
  lock.path_ = path;
  for (;;) {
    lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock.fd_ < 0) return ErrnoStatus(path, "create lock file", errno);
    if (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err != EWOULDBLOCK) return ErrnoStatus(path, "lock", err);
      char holder[256] = {};
      const ssize_t n = ::pread(lock.fd_, holder, sizeof(holder) - 1, 0);
      std::string who = n > 0 ? std::string(holder, static_cast<size_t>(n)) : std::string("(it has not written its name yet)");
      while (!who.empty() && who.back() == '\n') who.pop_back();
      ::close(std::exchange(lock.fd_, -1));
      return Status::FailedPrecondition(path + ": locked by another writer: " + who);
    }
    struct stat locked, now;
    if (::fstat(lock.fd_, &locked) == 0 && ::stat(path.c_str(), &now) == 0 && locked.st_ino == now.st_ino &&
        locked.st_dev == now.st_dev) {
      break;
    }
    ::close(std::exchange(lock.fd_, -1));  // its holder removed it as we locked it: take the new one
  }
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) std::strcpy(host, "?");
  const std::string line = "pid " + std::to_string(::getpid()) + " host " + host + (note.empty() ? "" : " " + note) + "\n";
  if (::ftruncate(lock.fd_, 0) != 0) return ErrnoStatus(path, "truncate lock file", errno);
  UREC_RETURN_IF_ERROR(WriteFully(lock.fd_, path, reinterpret_cast<const uint8_t*>(line.data()), line.size()));
  return lock;
}

FlockedFile::~FlockedFile() { Release(); }
FlockedFile::FlockedFile(FlockedFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}
FlockedFile& FlockedFile::operator=(FlockedFile&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

void FlockedFile::Release() {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

Result<FlockedFile> FlockedFile::Lock(const std::string& path, Mode mode, bool wait, bool create) {
  UREC_RETURN_IF_ERROR(AskHook(create ? FileOp::kCreate : FileOp::kLock, path));
  FlockedFile file;
  file.path_ = path;
  file.fd_ = ::open(path.c_str(), create ? O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC : O_RDONLY | O_CLOEXEC, 0644);
  if (file.fd_ < 0) return ErrnoStatus(path, create ? "create" : "open", errno);
  const int operation = (mode == Mode::kShared ? LOCK_SH : LOCK_EX) | (wait ? 0 : LOCK_NB);
  while (::flock(file.fd_, operation) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return Status::FailedPrecondition(path + ": locked by another user of the file");
    return ErrnoStatus(path, "flock", errno);
  }
  struct stat locked, now;
  if (::fstat(file.fd_, &locked) != 0 || ::stat(path.c_str(), &now) != 0 || locked.st_ino != now.st_ino ||
      locked.st_dev != now.st_dev) {
    return Status::NotFound(path + ": removed or replaced while waiting for its lock");
  }
  return file;
}

Status FlockedFile::Relock(Mode mode) {
  while (::flock(fd_, mode == Mode::kShared ? LOCK_SH : LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoStatus(path_, "flock", errno);
  }
  return Status::OK();
}

void FlockedFile::Touch() const {
  if (fd_ >= 0) (void)::futimens(fd_, nullptr);  // recency only: a refusal costs nothing but LRU order
}

Result<FileFacts> StatFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(path, "stat", errno);
  FileFacts facts;
  facts.size = static_cast<uint64_t>(st.st_size);
  facts.modified_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  facts.regular = S_ISREG(st.st_mode);
  facts.links = static_cast<uint64_t>(st.st_nlink);
  return facts;
}

const char* FileOpName(FileOp op) {
  switch (op) {
    case FileOp::kCreate: return "create";
    case FileOp::kWrite: return "write";
    case FileOp::kSync: return "fsync";
    case FileOp::kRename: return "rename";
    case FileOp::kRemove: return "unlink";
    case FileOp::kMakeDirectory: return "mkdir";
    case FileOp::kLock: return "lock";
    case FileOp::kLink: return "link";
  }
  return "?";
}

void SetFaultHook(FaultHook hook) { Hook() = std::move(hook); }


Status ReadFile(const std::string& path, uint64_t max_bytes, std::string* bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; regular files ignore it.
  struct stat st;
  UREC_ASSIGN_OR_RETURN(int fd, OpenAndStat(path, O_RDONLY | O_NONBLOCK, &st));
  auto fail = [fd](Status status) {
    ::close(fd);
    return status;
  };
  if (!S_ISREG(st.st_mode)) {
    return fail(Status::InvalidArgument(path + ": not a regular file (" + FileKindName(st.st_mode) + ")"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return fail(Status::NotSupported(path + ": a " + std::to_string(st.st_size) + "-byte file is over the " +
                                     std::to_string(max_bytes) + "-byte limit"));
  }
  bytes->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes->size()) {
    const ssize_t n = ::read(fd, &(*bytes)[done], bytes->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(ErrnoStatus(path, "read", errno));
    if (n == 0) return fail(Status::IOError(path + ": the file shrank while being read"));
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return Status::OK();
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Status CheckExists(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return Status::OK();
  const int err = errno;
  const std::string message = path + ": " + std::strerror(err);
  return err == ENOENT ? Status::NotFound(message) : Status::IOError(message);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

namespace {

// mkdir -p: missing parents first, as os.makedirs does (an output path a few
// levels below an existing folder is what users pass).
Status MakeDirectories(const std::string& path) {
  if (IsDirectory(path)) return Status::OK();
  const size_t slash = path.find_last_not_of('/') == std::string::npos
                           ? std::string::npos
                           : path.find_last_of('/', path.find_last_not_of('/'));
  if (slash != std::string::npos && slash > 0) UREC_RETURN_IF_ERROR(MakeDirectories(path.substr(0, slash)));
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kMakeDirectory, path));
  if (::mkdir(path.c_str(), 0755) == 0) return Status::OK();
  if (errno == EEXIST) {  // raced with another creator, or a file is in the way
    return IsDirectory(path) ? Status::OK() : ErrnoStatus(path, "mkdir", ENOTDIR);
  }
  return ErrnoStatus(path, "mkdir", errno);
}

}  // namespace

Status CreateDirectory(const std::string& path) {
  const Status status = MakeDirectories(path);
  // A parent that failed: the error names the folder asked for, then it.
  if (!status.ok() && status.message().rfind(path + ":", 0) != 0) return status.WithContext(path);
  return status;
}

Status RenameFile(const std::string& from, const std::string& to) {
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kRename, to));
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoStatus(from, ("rename to " + to).c_str(), errno);
  }
  return Status::OK();
}

Status LinkFile(const std::string& from, const std::string& to) {
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kLink, to));
  if (::link(from.c_str(), to.c_str()) != 0) return ErrnoStatus(from, ("link to " + to).c_str(), errno);
  return Status::OK();
}

void RemoveFileIfExists(const std::string& path) {
  if (AskHook(FileOp::kRemove, path).ok()) ::unlink(path.c_str());
}

Status SyncDirectory(const std::string& path) {
  UREC_RETURN_IF_ERROR(AskHook(FileOp::kSync, path));
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, "open directory", errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus(path, "fsync directory", err);
  return Status::OK();
}

Result<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus(path, "open directory", errno);
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::vector<std::string>> Glob(const std::string& pattern) {
  glob_t matches;
  int rc = ::glob(pattern.c_str(), 0, nullptr, &matches);
  std::vector<std::string> paths;
  if (rc == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
  }
  ::globfree(&matches);
  if (rc != 0 && rc != GLOB_NOMATCH) return Status::IOError(pattern + ": glob failed");
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace unirecord::io
