using Jackdaw.Storage.Engine;

namespace Jackdaw.Storage.Tests.Engine;

public sealed class IteratorTests : EngineTestBase
{
    private StorageEnvironment Fill(int count)
    {
        var env = Open();
        using var tx = env.BeginWrite();
        var t = tx.CreateTree("t");
        for (var i = 0; i < count; i++)
        {
            t.Put(Bytes($"key/{i * 2:D6}"), Bytes($"value {i * 2}"));
        }

        t.Put(Bytes("other/1"), Bytes("x"));
        tx.Commit();
        return env;
    }

    [Fact]
    public void ScansForwardAndBackwardAcrossPages()
    {
        var env = Fill(5000);
        using var r = env.BeginRead();
        var t = r.OpenTree("t")!;
        using var it = t.Iterate();
        Assert.True(it.SeekPrefix(Bytes("key/")));
        var n = 0;
        do
        {
            Assert.Equal($"key/{n * 2:D6}", Text(it.Key));
            Assert.Equal($"value {n * 2}", Text(it.Value));
            n++;
        }
        while (it.MoveNext() && it.KeyStartsWith(Bytes("key/")));
        Assert.Equal(5000, n);

        Assert.True(it.SeekLast());
        Assert.Equal("other/1", Text(it.Key));
        Assert.True(it.MovePrev());
        n = 4999;
        do
        {
            Assert.Equal($"key/{n * 2:D6}", Text(it.Key));
            n--;
        }
        while (it.MovePrev());
        Assert.Equal(-1, n);
    }

    [Fact]
    public void SeekFindsNextGreaterAndLastLessOrEqual()
    {
        var env = Fill(1000);
        using var r = env.BeginRead();
        using var it = r.OpenTree("t")!.Iterate();
        Assert.True(it.Seek(Bytes("key/000101")));
        Assert.Equal("key/000102", Text(it.Key));
        Assert.True(it.Seek(Bytes("key/000102")));
        Assert.Equal("key/000102", Text(it.Key));
        Assert.True(it.SeekLastLessOrEqual(Bytes("key/000101")));
        Assert.Equal("key/000100", Text(it.Key));
        Assert.True(it.SeekLastLessOrEqual(Bytes("key/000100")));
        Assert.Equal("key/000100", Text(it.Key));
        Assert.False(it.SeekLastLessOrEqual(Bytes("a")));
        Assert.False(it.Seek(Bytes("zzz")));
        Assert.False(it.SeekPrefix(Bytes("nope")));
        Assert.True(it.SeekFirst());
        Assert.Equal("key/000000", Text(it.Key));
    }

    [Fact]
    public void EmptyTreeHasNoEntries()
    {
        var env = Open();
        using var tx = env.BeginWrite();
        using var it = tx.CreateTree("e").Iterate();
        Assert.False(it.SeekFirst());
        Assert.False(it.SeekLast());
        Assert.False(it.Seek(Bytes("a")));
        Assert.False(it.MoveNext());
    }

    [Fact]
    public void IteratorIsReusedAfterDispose()
    {
        var env = Fill(10);
        using var r = env.BeginRead();
        var t = r.OpenTree("t")!;
        var first = t.Iterate();
        first.Dispose();
        using var second = t.Iterate();
        Assert.Same(first, second);
        using var third = t.Iterate();
        Assert.NotSame(second, third);
    }

    [Fact]
    public void ModificationInvalidatesIterator()
    {
        var env = Open();
        using var tx = env.BeginWrite();
        var t = tx.CreateTree("t");
        t.Put(Bytes("a"), Bytes("1"));
        using var it = t.Iterate();
        Assert.True(it.SeekFirst());
        t.Put(Bytes("b"), Bytes("2"));
        Assert.Throws<InvalidOperationException>(() => it.MoveNext());
    }
}
