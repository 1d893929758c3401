using System.Text;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Storage.Tests.Blittable;

public class CompressedStringCacheTests
{
    [Fact]
    public void DocumentsBuiltWithTheCacheMatchThoseBuiltWithout()
    {
        // One context remembers the strings of every order before; a fresh context per order
        // compresses each string anew. The bytes must not differ.
        var lines = Corpus.Load("orders").Take(3000).ToArray();
        using var warm = new JsonOperationContext();
        for (var i = 0; i < lines.Length; i++)
        {
            var cached = warm.Parse(lines[i], BlittableMode.Disk).Span.ToArray();
            using var cold = new JsonOperationContext();
            var fresh = cold.Parse(lines[i], BlittableMode.Disk).Span.ToArray();
            Assert.True(cached.AsSpan().SequenceEqual(fresh), $"order {i} differs when built with the cache");
            if ((i & 63) == 63)
            {
                warm.Reset();
            }
        }
    }

    [Fact]
    public void AStringInTheSameSlotReplacesTheOneBefore()
    {
        var first = "companies/1-A"u8.ToArray();
        var second = FindCollision(first);
        var cache = new CompressedStringCache();
        cache.Add(first, BlittableType.StringDictionary, [0x81, 0x41]);
        cache.Add(second, BlittableType.StringDictionary, [0x82, 0x42, 0x43]);

        Assert.False(cache.TryGet(first, out _, out _));
        Assert.True(cache.TryGet(second, out var type, out var payload));
        Assert.Equal(BlittableType.StringDictionary, type);
        Assert.Equal(new byte[] { 0x82, 0x42, 0x43 }, payload.ToArray());
    }

    [Fact]
    public void AStringNotWorthCompressingIsRememberedAsSuch()
    {
        var cache = new CompressedStringCache();
        cache.Add("+1 555 0100"u8, BlittableType.String, default);

        Assert.True(cache.TryGet("+1 555 0100"u8, out var type, out var payload));
        Assert.Equal(BlittableType.String, type);
        Assert.True(payload.IsEmpty);
        Assert.False(cache.TryGet("+1 555 0101"u8, out _, out _));
    }

    [Fact]
    public void StringsLongerThanTheLimitAreNotRemembered()
    {
        var cache = new CompressedStringCache();
        var longer = Encoding.UTF8.GetBytes(new string('a', CompressedStringCache.MaxLength + 1));
        cache.Add(longer, BlittableType.StringDictionary, [0x81]);

        Assert.False(cache.TryGet(longer, out _, out _));
    }

    private static byte[] FindCollision(byte[] value)
    {
        var slot = CompressedStringCache.SlotOf(value);
        for (var i = 0; ; i++)
        {
            var candidate = Encoding.UTF8.GetBytes($"companies/{i}-B");
            if (CompressedStringCache.SlotOf(candidate) == slot)
            {
                return candidate;
            }
        }
    }
}
