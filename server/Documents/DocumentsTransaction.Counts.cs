using System.Buffers.Binary;
using System.Text;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Blittable;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

// Collections: the collection-etag index and the per-collection document counts.
public partial class DocumentsTransaction
{
    private void AddToCollection(ReadOnlySpan<byte> key, long etag, string collection, ReadOnlySpan<byte> collectionBytes)
    {
        var change = CountChangeOf(collection);
        Span<byte> collectionKey = stackalloc byte[1 + StorageKeys.MaxCollectionBytes + StorageKeys.EtagSize];
        var length = StorageKeys.WriteCollectionEtag(collectionKey, change.Lower, etag);
        _collections.Put(collectionKey[..length], key);
        change.Delta++;
        change.Name ??= collectionBytes.ToArray();
    }

    /// <summary>
    /// The pending change to a collection's count: counts are summed over the transaction and
    /// written once at commit instead of once per document. Looked up by the name as written
    /// (no lowercasing per document); names differing only in case share one change.
    /// </summary>
    private CountChange CountChangeOf(string collection)
    {
        if (_countChanges.TryGetValue(collection, out var change))
        {
            return change;
        }

        var lower = collection.ToLowerInvariant();
        if (!_countChangesByLower.TryGetValue(lower, out change))
        {
            change = new CountChange(StorageKeys.LowerCollection(collection));
            _countChangesByLower.Add(lower, change);
        }
        _countChanges.Add(collection, change);
        return change;
    }

    private void WriteCountChanges()
    {
        foreach (var change in _countChangesByLower.Values)
        {
            if (change.Delta != 0)
            {
                AdjustCount(change.Lower, change.Name, change.Delta);
            }
        }
        _countChanges.Clear();
        _countChangesByLower.Clear();
    }

    private sealed class CountChange(byte[] lower)
    {
        public byte[] Lower { get; } = lower;

        public long Delta { get; set; }

        /// <summary>The name as first written in this transaction, stored if the collection is new.</summary>
        public byte[]? Name { get; set; }
    }

    private void AdjustCount(ReadOnlySpan<byte> lowerCollection, ReadOnlySpan<byte> nameIfNew, long delta)
    {
        long count = 0;
        byte[] value;
        if (_collectionCounts.TryGet(lowerCollection, out var current))
        {
            count = BinaryPrimitives.ReadInt64LittleEndian(current);
            value = current.ToArray();
        }
        else
        {
            value = new byte[sizeof(long) + nameIfNew.Length];
            nameIfNew.CopyTo(value.AsSpan(sizeof(long)));
        }

        count += delta;
        if (count <= 0)
        {
            _collectionCounts.Delete(lowerCollection);
            return;
        }
        BinaryPrimitives.WriteInt64LittleEndian(value, count);
        _collectionCounts.Put(lowerCollection, value);
    }
}
