#include "convert/source_image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "format/checksum.h"

namespace unirecord {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Some writers append bytes after the EOI marker (camera trailers, padding).
// Entropy-coded data never holds FF D9, so an EOI in the second half of the
// file means the image itself is complete.
bool HasEoiBeforeTrailer(std::string_view bytes) {
  const size_t eoi = bytes.rfind(std::string_view("\xFF\xD9", 2));
  return eoi != std::string_view::npos && eoi >= bytes.size() / 2;
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

Status ReadSourceFile(const std::string& path, std::string* bytes) {
  // O_NONBLOCK: opening a FIFO must not hang; it has no effect on regular files.
  FileDescriptor fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return Status::IOError(std::strerror(errno));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return Status::IOError(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return Status::IOError("not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxSourceFileBytes) {
    return Status::NotSupported("a " + std::to_string(st.st_size) + "-byte file is over the " +
                                std::to_string(kMaxSourceFileBytes >> 20) + " MiB limit for one image");
  }
  bytes->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes->size()) {
    const ssize_t n = read(fd.get(), &(*bytes)[done], bytes->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError(std::strerror(errno));
    if (n == 0) return Status::IOError("file shrank while being read");
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

Result<JpegInfo> CheckSourceImage(std::string_view bytes) {
  if (bytes.empty()) return Status::InvalidArgument("empty file");
  UREC_ASSIGN_OR_RETURN(JpegInfo info, ProbeJpeg(bytes));
  const Status decodable = CheckDecodable(info);
  if (!decodable.ok()) return Status::NotSupported(decodable.message());
  if (!info.has_eoi && !HasEoiBeforeTrailer(bytes)) {
    return Status::Corruption("truncated: the file ends without an EOI marker");
  }
  return info;
}

StoredImage PrepareStoredImage(std::string* bytes, bool keep_original) {
  StoredImage stored;
  stored.source_size = bytes->size();
  stored.source_xxh3 = format::Checksum(bytes->data(), bytes->size());
  if (keep_original) return stored;
  Result<image_internal::TranscodeResult> transcode = image_internal::TranscodeToFastLayout(*bytes);
  if (!transcode.ok()) {
    stored.kept_reason = transcode.status().message();  // not reached after CheckSourceImage
  } else if (transcode->layout == image_internal::JpegLayout::kFast) {
    bytes->swap(transcode->jpeg);
    stored.layout = image_internal::JpegLayout::kFast;
  } else {
    stored.kept_reason = transcode->reason;
  }
  return stored;
}

std::string RejectReason(const Status& status) {
  const std::string& m = status.message();
  switch (status.code()) {
    case StatusCode::kIOError: return "unreadable: " + m;
    case StatusCode::kNotSupported: return "unsupported: " + m;
    case StatusCode::kCorruption: return StartsWith(m, "truncated") ? m : "corrupt: " + m;
    default: return m;
  }
}

}  // namespace unirecord
