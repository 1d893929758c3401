using System.Text;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing.MapReduce;

// The reduce at the end of a batch: each changed key reduced (a packed key whole, a tree from its
// dirty leaves up to its root), written back, and its results handed on when they changed.
internal sealed partial class ReduceTable
{
    /// <summary>
    /// Reduces every key the batch changed and writes the keys back; <paramref name="onResult"/>
    /// gets each key whose results changed, with its results before and after (null: none; the key
    /// is gone, or its reduce failed).
    /// <paramref name="onError"/> gets a key whose reduce failed and the message.
    /// </summary>
    public void ReduceChanged(Action<ReduceKey, byte[]?, byte[]?> onResult, Action<ReduceKey, string> onError)
    {
        var keys = Transaction.CreateTree(ReduceStore.KeysTree);
        foreach (var key in _touched.Values)
        {
            if (!key.Changed)
            {
                continue;
            }
            var before = key.Result;
            if (key.Count == 0)
            {
                DeleteKey(key);
                key.Result = null;
            }
            else
            {
                key.Result = key.IsTree ? ReduceTree(key, onError) : ReducePacked(key, onError);
                keys.Put(key.Id, key.Write());
            }
            if (!(before is null && key.Result is null) && !(before is not null && key.Result is not null && before.AsSpan().SequenceEqual(key.Result)))
            {
                onResult(key, before, key.Result);
            }
        }
        _touched.Clear();
    }

    /// <summary>Forgets the keys touched since the last <see cref="ReduceChanged"/> (the store's transaction was aborted).</summary>
    public void Forget() => _touched.Clear();

    private void DeleteKey(ReduceKey key)
    {
        Transaction.CreateTree(ReduceStore.KeysTree).Delete(key.Id);
        if (!key.IsTree)
        {
            return;
        }
        // Its entries are gone already; its nodes go too.
        var nodes = Transaction.CreateTree(ReduceStore.NodesTree);
        var gone = new List<byte[]>();
        using (var iterator = nodes.Iterate())
        {
            if (iterator.SeekPrefix(key.Id))
            {
                do
                    gone.Add(iterator.Key.ToArray());
                while (iterator.MoveNext() && iterator.KeyStartsWith(key.Id));
            }
        }
        foreach (var nodeKey in gone)
        {
            nodes.Delete(nodeKey);
        }
        key.DirtyNodes.Clear();
    }

    private byte[]? ReducePacked(ReduceKey key, Action<ReduceKey, string> onError)
    {
        PackedReduced++;
        _values.Clear();
        foreach (var (_, entry) in key.Packed!)
        {
            _values.Add(entry);
        }
        return Reduce(key, onError, out var result) ? result : null;
    }

    private byte[]? ReduceTree(ReduceKey key, Action<ReduceKey, string> onError)
    {
        var nodes = Transaction.CreateTree(ReduceStore.NodesTree);
        while (key.DirtyNodes.Count > 0)
        {
            var (level, start) = key.DirtyNodes.Min;
            key.DirtyNodes.Remove((level, start));
            var nodeKey = ReduceEncoding.NodeKey(key.Id, level, start);
            if (!nodes.TryGet(nodeKey, out var value))
            {
                continue;
            }
            var count = ReduceEncoding.NodeCount(value);
            var failed = !CollectValues(key, level, start);
            byte[] aggregate = [];
            if (!failed && _values.Count > 0)
            {
                if (level == 0)
                {
                    LeavesReduced++;
                }
                else
                {
                    BranchesReduced++;
                }
                failed = !Reduce(key, onError, out aggregate);
            }
            nodes.Put(nodeKey, ReduceEncoding.EncodeNode(count, failed, aggregate));
            if (level + 1 < key.Height)
            {
                key.DirtyNodes.Add((level + 1, Floor(key, level + 1, start)));
            }
        }
        nodes.TryGet(ReduceEncoding.NodeKey(key.Id, key.Height - 1, 0), out var root);
        return ReduceEncoding.NodeFailed(root) ? null : ReduceEncoding.NodeAggregate(root).ToArray();
    }

    // The values under a node (its entries, or its children's aggregates); false when a child failed.
    private bool CollectValues(ReduceKey key, int level, long start)
    {
        _values.Clear();
        var end = NextStart(key, level, start);
        if (level == 0)
        {
            using var iterator = Transaction.CreateTree(ReduceStore.EntriesTree).Iterate();
            if (iterator.Seek(ReduceEncoding.EntryKey(key.Id, start)))
            {
                do
                {
                    if (!iterator.KeyStartsWith(key.Id) || ReduceEncoding.EntryIdOf(iterator.Key) >= end)
                    {
                        break;
                    }
                    _values.Add(iterator.Value.ToArray());
                }
                while (iterator.MoveNext());
            }
            return true;
        }
        var prefix = ReduceEncoding.NodeKey(key.Id, level - 1, 0).AsSpan(0, ReduceEncoding.KeyIdLength + 1).ToArray();
        using (var iterator = Transaction.CreateTree(ReduceStore.NodesTree).Iterate())
        {
            if (iterator.Seek(ReduceEncoding.NodeKey(key.Id, level - 1, start)))
            {
                do
                {
                    if (!iterator.KeyStartsWith(prefix) || ReduceEncoding.NodeStartOf(iterator.Key) >= end)
                    {
                        break;
                    }
                    if (ReduceEncoding.NodeFailed(iterator.Value))
                    {
                        return false;
                    }
                    _items.Clear();
                    ReduceEncoding.DecodeList(ReduceEncoding.NodeAggregate(iterator.Value), _items);
                    foreach (var item in _items)
                    {
                        _values.Add(item);
                    }
                }
                while (iterator.MoveNext());
            }
        }
        return true;
    }

    // Reduces _values; the results as an encoded list, or false (reported) when the reduce failed.
    private bool Reduce(ReduceKey key, Action<ReduceKey, string> onError, out byte[] result)
    {
        _output.Clear();
        if (_values.Count == 0)
        {
            result = ReduceEncoding.EncodeList(_output);
            return true;
        }
        try
        {
            functions.Reduce(key.Key, _values, _output);
        }
        catch (IndexMapException e)
        {
            onError(key, e.Message);
            result = [];
            return false;
        }
        result = ReduceEncoding.EncodeList(_output);
        if (_reducibilityChecks < ReducibilityChecks && _values.Count > 1 && _output.Count == 1)
        {
            CheckReducible(key, onError);
        }
        return true;
    }

    /// <summary>How many reduces of an index are checked for being re-reducible (<see cref="CheckReducible"/>).</summary>
    public const int ReducibilityChecks = 16;

    private int _reducibilityChecks;

    // The tree reduces a reduce's results again (a leaf's partial with its siblings'): a reduce
    // that changes its own result when given it back (count with `c + 2 * r.Count`, an average of
    // averages) gives wrong totals for big keys. The first reduces of an index are given their
    // result back; one that changes is reported (the results are kept: the key is not failed).
    private void CheckReducible(ReduceKey key, Action<ReduceKey, string> onError)
    {
        _reducibilityChecks++;
        var once = _output[0];
        var again = new List<byte[]>(1);
        try
        {
            functions.Reduce(key.Key, [once], again);
        }
        catch (IndexMapException)
        {
            return;
        }
        if (again.Count != 1 || !again[0].AsSpan().SequenceEqual(once))
        {
            _reducibilityChecks = ReducibilityChecks;
            onError(key, $"the reduce is not re-reducible: given its own result {Encoding.UTF8.GetString(once)} it gives {(again.Count == 1 ? Encoding.UTF8.GetString(again[0]) : again.Count + " results")}. The index reduces results again (big keys are reduced in parts), so its totals will be wrong: a reduce must give the same result for map entries and for its own results (count with c + r.Count, not c + 1).");
        }
    }
}
