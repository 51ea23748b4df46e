// The cache directory's rules: pins keep shards from eviction (across
// processes too), the budget evicts least recently used shards first, dead
// temporaries go, and nothing outside the cache's own layout is touched.
#include "remote/shard_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "util/files_testing.h"

namespace unirecord::remote {
namespace {

using testing::ScratchDir;
constexpr char kUuid[] = "25661647-a09f-8738-832b-a9cd1a5612e2";
constexpr char kOtherUuid[] = "00000000-0000-8000-8000-000000000001";

// A cached shard of `bytes` bytes, named `name`, committed like a download.
std::string AddShard(const ShardCache& cache, const std::string& uuid, const std::string& name, size_t bytes) {
  const std::string dir = cache.DataDir(uuid).value();
  const std::string path = dir + "/" + name;
  Result<Temporary> t = cache.CreateTemporary(path);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  testing::WriteBytes(t->path, std::string(bytes, 'x'));
  Result<io::FlockedFile> pin = cache.Commit(std::move(t).value(), path);
  EXPECT_TRUE(pin.ok()) << pin.status().ToString();
  return path;  // the pin is dropped: unpinned
}

void Age(const std::string& path, int seconds_ago) {
  const auto when = std::filesystem::file_time_type::clock::now() - std::chrono::seconds(seconds_ago);
  std::filesystem::last_write_time(path, when);
}

TEST(ShardCacheTest, BudgetEvictsLeastRecentlyUsedFirst) {
  ScratchDir dir;
  auto cache = ShardCache::Open(dir.path(), 3000).value();
  const std::string a = AddShard(*cache, kUuid, "a.urec", 1000);
  const std::string b = AddShard(*cache, kUuid, "b.urec", 1000);
  const std::string c = AddShard(*cache, kOtherUuid, "c.urec", 1000);
  Age(a, 30);
  Age(b, 10);
  Age(c, 20);
  ASSERT_TRUE(cache->MakeRoom(1000).ok());  // 4000 > 3000: one goes, the oldest
  EXPECT_FALSE(io::PathExists(a));
  EXPECT_TRUE(io::PathExists(b));
  EXPECT_TRUE(io::PathExists(c));
  ASSERT_TRUE(cache->MakeRoom(2000).ok());  // then c (older than b)
  EXPECT_FALSE(io::PathExists(c));
  EXPECT_TRUE(io::PathExists(b));
  EXPECT_EQ(cache->Usage()->shard_bytes, 1000u);
}

TEST(ShardCacheTest, PinnedShardsAreNeverEvictedAndPinTouchesRecency) {
  ScratchDir dir;
  auto cache = ShardCache::Open(dir.path(), 1000).value();
  const std::string a = AddShard(*cache, kUuid, "a.urec", 1000);
  const std::string b = AddShard(*cache, kUuid, "b.urec", 1000);
  Age(a, 30);
  Age(b, 10);
  {
    Result<io::FlockedFile> pin = cache->Pin(a);  // a: now the most recent, and in use
    ASSERT_TRUE(pin.ok()) << pin.status().ToString();
    ASSERT_TRUE(cache->MakeRoom(1000).ok());
    EXPECT_TRUE(io::PathExists(a));   // pinned: kept even over budget
    EXPECT_FALSE(io::PathExists(b));  // unpinned: gone
  }
  ASSERT_TRUE(cache->MakeRoom(1000).ok());
  EXPECT_FALSE(io::PathExists(a));  // unpinned now
}

TEST(ShardCacheTest, PinOfAnotherProcessIsRespected) {
  ScratchDir dir;
  auto cache = ShardCache::Open(dir.path(), 1).value();
  const std::string a = AddShard(*cache, kUuid, "a.urec", 1000);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    Result<io::FlockedFile> pin = cache->Pin(a);
    char byte = pin.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &byte, 1);
    ::pause();  // killed by the parent, still pinning
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 'y');
  ASSERT_TRUE(cache->MakeRoom(0).ok());
  EXPECT_TRUE(io::PathExists(a));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(cache->MakeRoom(0).ok());  // its pin died with it
  EXPECT_FALSE(io::PathExists(a));
}

TEST(ShardCacheTest, EvictedWhileWaitingForThePinIsNotFound) {
  ScratchDir dir;
  auto cache = ShardCache::Open(dir.path(), 0).value();
  const std::string a = AddShard(*cache, kUuid, "a.urec", 10);
  Result<io::FlockedFile> evicting = io::FlockedFile::Lock(a, io::FlockedFile::Mode::kExclusive, false);
  ASSERT_TRUE(evicting.ok());
  io::RemoveFileIfExists(a);
  evicting->Release();
  Result<io::FlockedFile> pin = cache->Pin(a);
  EXPECT_EQ(pin.status().code(), StatusCode::kNotFound);
}

TEST(ShardCacheTest, TemporariesOfLiveWritersStayDeadOnesGo) {
  ScratchDir dir;
  auto cache = ShardCache::Open(dir.path(), 0).value();
  const std::string final_path = cache->DataDir(kUuid).value() + "/a.urec";
  Result<Temporary> live = cache->CreateTemporary(final_path);
  ASSERT_TRUE(live.ok());
  // A killed writer's temporary: the file without its lock.
  const std::string dead = cache->DataDir(kUuid).value() + "/.tmp-999999-0-b.urec";
  testing::WriteBytes(dead, "partial");
  EXPECT_EQ(cache->Usage()->temporaries, 2u);
  ASSERT_TRUE(cache->MakeRoom(0).ok());
  EXPECT_TRUE(io::PathExists(live->path));
  EXPECT_FALSE(io::PathExists(dead));
  EXPECT_EQ(cache->Usage()->shard_files, 0u);  // a temporary is never a cached shard
}

TEST(ShardCacheTest, NothingOutsideItsLayoutIsTouched) {
  ScratchDir dir;
  dir.Write("mine.urec", std::string(5000, 'm'));           // beside the layout
  dir.Write("v1/not-a-uuid/data/x.urec", std::string(5000, 'n'));  // not a dataset dir
  auto cache = ShardCache::Open(dir.path(), 1).value();
  const std::string meta = cache->MetaDir(kUuid).value() + "/a.uidx";
  testing::WriteBytes(meta, std::string(5000, 'i'));  // indexes are not evicted
  AddShard(*cache, kUuid, "a.urec", 1000);
  ASSERT_TRUE(cache->MakeRoom(1000).ok());
  EXPECT_TRUE(io::PathExists(dir / "mine.urec"));
  EXPECT_TRUE(io::PathExists(dir / "v1/not-a-uuid/data/x.urec"));
  EXPECT_TRUE(io::PathExists(meta));
  EXPECT_EQ(cache->Usage()->shard_files, 0u);
  EXPECT_EQ(cache->MetaDir("../../etc").status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace unirecord::remote
