using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.MapReduce;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Tests.Indexing.MapReduce;

/// <summary>The reduce store on its own: commits, aborts, and a full disk it recovers from once reopened.</summary>
public sealed class ReduceStoreTests : IDisposable
{
    private readonly string _folder = Path.Combine(Path.GetTempPath(), "jackdaw-reduce-store-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_folder))
        {
            Directory.Delete(_folder, recursive: true);
        }
    }

    private static readonly Dictionary<string, CollectionPosition> Positions = new() { ["orders"] = new CollectionPosition(7, 3) };

    [Fact]
    public void AnAbortKeepsTheLastCommitAndItsPositions()
    {
        using (var store = ReduceStore.Open(_folder))
        {
            Assert.Null(store.ReadPositions());
            store.Write.CreateTree(ReduceStore.PendingTree).Put([1], []);
            store.NextEntryId = 42;
            store.Commit(Positions);
            store.Write.CreateTree(ReduceStore.PendingTree).Put([2], []);
            store.NextEntryId = 99;
            store.Abort();
            Assert.Equal(42, store.NextEntryId);
            Assert.Equal([[1]], store.PendingKeys());
        }
        using var reopened = ReduceStore.Open(_folder);
        Assert.Equal(Positions, reopened.ReadPositions());
        Assert.Equal(42, reopened.NextEntryId);
        // Lucene committed: the next transaction forgets the pending keys.
        reopened.LuceneCommitted();
        reopened.Commit(Positions);
        Assert.Empty(reopened.PendingKeys());
    }

    [Fact]
    public void AFullDiskStopsWritesUntilTheStoreIsReopenedWithRoom()
    {
        var io = new FaultInjectingStorageIo();
        using var store = ReduceStore.Open(_folder, io);
        store.Write.CreateTree(ReduceStore.PendingTree).Put([1], []);
        store.Commit(Positions);

        io.DiskFull = true;
        Exception? failure = null;
        var big = new byte[3000];
        for (var round = 0; round < 200 && failure is null; round++)
        {
            try
            {
                var tree = store.Write.CreateTree(ReduceStore.KeysTree);
                for (var i = 0; i < 200; i++)
                {
                    tree.Put(BitConverter.GetBytes(round * 1000 + i), big);
                }
                store.Commit(Positions);
            }
            catch (Exception e)
            {
                failure = e;
            }
        }
        Assert.NotNull(failure);
        Assert.NotNull(store.Failure);

        // The index's rollback reopens a failed store; with the disk still full it keeps failing.
        try
        {
            store.Reopen();
        }
        catch (Exception)
        {
            // Tried again at the next rollback.
        }
        io.DiskFull = false;
        store.Reopen();
        Assert.Null(store.Failure);
        store.Write.CreateTree(ReduceStore.PendingTree).Put([2], []);
        store.Commit(Positions);
        Assert.Contains([2], store.PendingKeys(), ByteArrays.Instance);
    }

    private sealed class ByteArrays : IEqualityComparer<byte[]>
    {
        public static readonly ByteArrays Instance = new();

        public bool Equals(byte[]? x, byte[]? y) => x.AsSpan().SequenceEqual(y);

        public int GetHashCode(byte[] obj) => obj.Length;
    }
}
