using Jackdaw.Storage.Engine;

namespace Jackdaw.Storage.Tests.Engine;

/// <summary>The folder stays locked while a reader of a disposed environment still reads it.</summary>
public sealed class LockTests : EngineTestBase
{
    [Fact]
    public void AReaderOpenAcrossDisposeKeepsTheFolderLockedUntilItEnds()
    {
        var env = StorageEnvironment.Open(Options());
        using (var tx = env.BeginWrite())
        {
            tx.CreateTree("t").Put(Bytes("k"), Bytes("old"));
            tx.Commit();
        }

        var reader = env.BeginRead();
        env.Dispose();

        // Another environment must not rewrite the pages this snapshot still reads.
        Assert.Throws<EnvironmentLockedException>(() => StorageEnvironment.Open(Options()));
        Assert.True(reader.OpenTree("t")!.TryGet(Bytes("k"), out var value));
        Assert.Equal("old", Text(value));

        reader.Dispose();
        using var reopened = StorageEnvironment.Open(Options());
        using var check = reopened.BeginRead();
        Assert.True(check.OpenTree("t")!.TryGet(Bytes("k"), out var again));
        Assert.Equal("old", Text(again));
    }
}
