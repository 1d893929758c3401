namespace Jackdaw.Server.Indexing;

/// <summary>The last batches of an index, oldest first (a bounded ring).</summary>
public sealed class IndexingBatchRing
{
    /// <summary>Batches kept per index.</summary>
    public const int Capacity = 1000;

    private readonly IndexingBatch[] _items = new IndexingBatch[Capacity];
    private long _count;

    public void Add(IndexingBatch batch)
    {
        lock (_items)
        {
            _items[_count % Capacity] = batch;
            _count++;
        }
    }

    public IndexingBatch[] ToArray()
    {
        lock (_items)
        {
            var length = (int)Math.Min(_count, Capacity);
            var result = new IndexingBatch[length];
            var first = _count - length;
            for (var i = 0; i < length; i++)
            {
                result[i] = _items[(first + i) % Capacity];
            }
            return result;
        }
    }
}
