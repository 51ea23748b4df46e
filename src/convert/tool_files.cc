#include "convert/tool_files.h"

#include "convert/source_image.h"
#include "io/file.h"

namespace unirecord {

Status ReadImageFile(const std::string& path, std::string* bytes) {
  return io::ReadFile(path, kMaxSourceFileBytes, bytes);
}

Status WriteWholeFile(const std::string& path, std::initializer_list<std::string_view> pieces) {
  UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::Create(path));
  for (std::string_view piece : pieces) UREC_RETURN_IF_ERROR(file.Append(piece));
  return file.Close();
}

}  // namespace unirecord
