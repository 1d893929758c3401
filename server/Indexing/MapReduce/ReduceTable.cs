using System.Buffers;
using System.Text;
using Jackdaw.Server.Indexing.Mapping;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Indexing.MapReduce;

/// <summary>
/// The incremental reduce of a map-reduce index (RavenDB's design), on the trees of its
/// <see cref="ReduceStore"/>:
/// <list type="bullet">
/// <item><b>Per document</b> (<c>MapEntries</c>): the key id, entry id and hash of each of its map
///   entries. A document mapped again to the same keys and bytes changes nothing; its new entries
///   take its old entries' ids key by key, so an update of one document touches the leaf its entry
///   was in, and nothing else of a big key.</item>
/// <item><b>Per key</b> (<c>ReduceKeys</c>, <see cref="ReduceKey"/>): up to <see cref="MaxPacked"/>
///   entries packed in the key's record and reduced whole; past that, in the entries tree under a
///   tree of <b>leaves</b> (ranges of entry ids, at most <see cref="MaxLeaf"/> entries) and
///   <b>branches</b> (ranges of children, at most <see cref="MaxBranch"/>), each node with its partial
///   aggregate. A node's range starts at a fixed entry id and ends where its next sibling's starts,
///   so a split (at the middle id) changes no other node's range and no partial can cover entries it
///   was not reduced from (RavenDB-5363 grouped by physical page and left stale partials after a
///   split). An update reduces its leaf and each branch above it: a key of 100,000 entries costs
///   one leaf of at most 256 entries and three short branches.</item>
/// <item><b>A failed reduce</b> (an exception of the reduce function) marks its node failed and so
///   every node above it: the key has no result until a change lets it reduce again; the failure
///   is reported, and the other keys go on.</item>
/// </list>
/// One thread at a time (the index's loop), inside the store's open write transaction.
/// </summary>
internal sealed partial class ReduceTable(ReduceStore store, IReduceFunctions functions)
{
    /// <summary>A key's entries stay packed in its record up to this many.</summary>
    public const int MaxPacked = 64;

    /// <summary>A leaf splits past this many entries.</summary>
    public const int MaxLeaf = 256;

    /// <summary>A branch splits past this many children.</summary>
    public const int MaxBranch = 64;

    private readonly Dictionary<UInt128, ReduceKey> _touched = new();
    private static readonly List<string> NoIds = new();
    private readonly List<ReadOnlyMemory<byte>> _values = new();
    private readonly List<byte[]> _output = new();
    private readonly List<byte[]> _items = new();

    /// <summary>Leaves reduced since the index opened (tests count them).</summary>
    public long LeavesReduced { get; private set; }

    /// <summary>Branches reduced since the index opened.</summary>
    public long BranchesReduced { get; private set; }

    /// <summary>Packed keys reduced since the index opened.</summary>
    public long PackedReduced { get; private set; }

    private WriteTransaction Transaction => store.Write;

    /// <summary>
    /// Puts <paramref name="output"/> as the entries of document <paramref name="lowerId"/> in place
    /// of its earlier ones; false when they are the same (nothing changed).
    /// </summary>
    public bool UpdateDocument(string lowerId, ReduceMapOutput output)
    {
        var documents = Transaction.CreateTree(ReduceStore.DocumentsTree);
        var documentKey = Encoding.UTF8.GetBytes(lowerId);
        var old = ReadDocument(documents, documentKey);
        var fresh = new List<(byte[] KeyId, ulong Hash, int Index)>(output.Entries.Count);
        for (var i = 0; i < output.Entries.Count; i++)
        {
            fresh.Add((ReduceEncoding.KeyId(output.Entries[i].Key), ReduceEncoding.EntryHash(output.Entries[i].Entry), i));
        }
        // Most maps load nothing: no list built per document for them.
        var loaded = output.LoadedIds.Count == 0 ? NoIds : output.LoadedIds.Select(id => id.ToLowerInvariant()).Distinct(StringComparer.Ordinal).Order(StringComparer.Ordinal).ToList();
        if (old.Entries.Count == fresh.Count && old.Loaded.SequenceEqual(loaded, StringComparer.Ordinal)
            && old.Entries.Zip(fresh).All(p => p.First.KeyId.AsSpan().SequenceEqual(p.Second.KeyId) && p.First.Hash == p.Second.Hash))
        {
            return false;
        }

        var used = new bool[old.Entries.Count];
        var kept = new List<(byte[] KeyId, long EntryId, ulong Hash)>(fresh.Count);
        foreach (var (keyId, hash, index) in fresh)
        {
            // The document's earlier entry of the same key, the same bytes first: its id is reused.
            var match = -1;
            for (var j = 0; j < old.Entries.Count; j++)
            {
                if (used[j] || !old.Entries[j].KeyId.AsSpan().SequenceEqual(keyId))
                {
                    continue;
                }
                if (match < 0 || old.Entries[j].Hash == hash)
                {
                    match = j;
                }
                if (old.Entries[j].Hash == hash)
                {
                    break;
                }
            }
            var (keyBytes, entry) = output.Entries[index];
            if (match >= 0)
            {
                used[match] = true;
                var entryId = old.Entries[match].EntryId;
                if (old.Entries[match].Hash != hash)
                {
                    ReplaceEntry(Touch(keyId, keyBytes), entryId, entry);
                }
                kept.Add((keyId, entryId, hash));
            }
            else
            {
                var entryId = store.NextEntryId++;
                AddEntry(Touch(keyId, keyBytes), entryId, entry);
                kept.Add((keyId, entryId, hash));
            }
        }
        for (var j = 0; j < old.Entries.Count; j++)
        {
            if (!used[j])
            {
                RemoveEntry(Touch(old.Entries[j].KeyId, null), old.Entries[j].EntryId);
            }
        }
        UpdateReferences(lowerId, old.Loaded, loaded);
        if (kept.Count == 0 && loaded.Count == 0)
        {
            documents.Delete(documentKey);
        }
        else
        {
            documents.Put(documentKey, WriteDocument(kept, loaded));
        }
        return true;
    }

    /// <summary>Removes every entry of document <paramref name="lowerId"/> (deleted, or it failed to map).</summary>
    public void DeleteDocument(string lowerId)
    {
        var documents = Transaction.CreateTree(ReduceStore.DocumentsTree);
        var documentKey = Encoding.UTF8.GetBytes(lowerId);
        var old = ReadDocument(documents, documentKey);
        if (old.Entries.Count == 0 && old.Loaded.Count == 0)
        {
            return;
        }
        foreach (var (keyId, entryId, _) in old.Entries)
        {
            RemoveEntry(Touch(keyId, null), entryId);
        }
        UpdateReferences(lowerId, old.Loaded, []);
        documents.Delete(documentKey);
    }

    /// <summary>The lowercased ids of the documents whose map loaded one of <paramref name="lowerIds"/>.</summary>
    public HashSet<string> FindReferrers(IEnumerable<string> lowerIds)
    {
        var referrers = new HashSet<string>(StringComparer.Ordinal);
        var references = Transaction.OpenTree(ReduceStore.ReferencesTree);
        if (references is null)
        {
            return referrers;
        }
        using var iterator = references.Iterate();
        foreach (var id in lowerIds)
        {
            var prefix = ReferencePrefix(id);
            if (!iterator.SeekPrefix(prefix))
            {
                continue;
            }
            do
                referrers.Add(Encoding.UTF8.GetString(iterator.Key[prefix.Length..]));
            while (iterator.MoveNext() && iterator.KeyStartsWith(prefix));
        }
        return referrers;
    }

    private static byte[] ReferencePrefix(string lowerId)
    {
        var bytes = new byte[Encoding.UTF8.GetByteCount(lowerId) + 1];
        Encoding.UTF8.GetBytes(lowerId, bytes);
        return bytes;
    }

    private void UpdateReferences(string lowerId, List<string> old, List<string> fresh)
    {
        if (old.Count == 0 && fresh.Count == 0)
        {
            return;
        }
        var references = Transaction.CreateTree(ReduceStore.ReferencesTree);
        var referrer = Encoding.UTF8.GetBytes(lowerId);
        foreach (var gone in old.Except(fresh, StringComparer.Ordinal))
        {
            references.Delete([.. ReferencePrefix(gone), .. referrer]);
        }
        foreach (var added in fresh.Except(old, StringComparer.Ordinal))
        {
            references.Put([.. ReferencePrefix(added), .. referrer], []);
        }
    }

    private static (List<(byte[] KeyId, long EntryId, ulong Hash)> Entries, List<string> Loaded) ReadDocument(Tree documents, byte[] documentKey)
    {
        var entries = new List<(byte[], long, ulong)>();
        var loaded = new List<string>();
        if (!documents.TryGet(documentKey, out var record))
        {
            return (entries, loaded);
        }
        var at = 0;
        var loadedCount = ReduceEncoding.ReadInt32(record, ref at);
        for (var i = 0; i < loadedCount; i++)
        {
            loaded.Add(Encoding.UTF8.GetString(ReduceEncoding.ReadBlock(record, ref at)));
        }
        var count = ReduceEncoding.ReadInt32(record, ref at);
        for (var i = 0; i < count; i++)
        {
            var keyId = record.Slice(at, ReduceEncoding.KeyIdLength).ToArray();
            at += ReduceEncoding.KeyIdLength;
            var entryId = ReduceEncoding.ReadInt64(record, ref at);
            var hash = (ulong)ReduceEncoding.ReadInt64(record, ref at);
            entries.Add((keyId, entryId, hash));
        }
        return (entries, loaded);
    }

    private static byte[] WriteDocument(List<(byte[] KeyId, long EntryId, ulong Hash)> entries, List<string> loaded)
    {
        var writer = new ArrayBufferWriter<byte>(8 + entries.Count * 32);
        ReduceEncoding.WriteInt32(writer, loaded.Count);
        foreach (var id in loaded)
        {
            ReduceEncoding.WriteBlock(writer, Encoding.UTF8.GetBytes(id));
        }
        ReduceEncoding.WriteInt32(writer, entries.Count);
        foreach (var (keyId, entryId, hash) in entries)
        {
            writer.Write(keyId);
            ReduceEncoding.WriteInt64(writer, entryId);
            ReduceEncoding.WriteInt64(writer, (long)hash);
        }
        return writer.WrittenSpan.ToArray();
    }

    private ReduceKey Touch(byte[] keyId, byte[]? keyBytes)
    {
        var id = System.Buffers.Binary.BinaryPrimitives.ReadUInt128BigEndian(keyId);
        if (_touched.TryGetValue(id, out var key))
        {
            return key;
        }
        var keys = Transaction.CreateTree(ReduceStore.KeysTree);
        if (keys.TryGet(keyId, out var record))
        {
            key = ReduceKey.Read(keyId, record);
        }
        else
        {
            key = new ReduceKey(keyId, keyBytes ?? throw new InvalidOperationException("An entry of a reduce key that is not stored."));
        }
        _touched[id] = key;
        return key;
    }

    private void AddEntry(ReduceKey key, long entryId, byte[] entry)
    {
        key.Changed = true;
        key.Count++;
        if (!key.IsTree)
        {
            var at = key.FindPacked(entryId);
            key.Packed!.Insert(at < 0 ? ~at : at, (entryId, entry));
            if (key.Count > MaxPacked)
            {
                ConvertToTree(key);
            }
            return;
        }
        Transaction.CreateTree(ReduceStore.EntriesTree).Put(ReduceEncoding.EntryKey(key.Id, entryId), entry);
        var leaf = Floor(key, 0, entryId);
        var count = AdjustCount(key, 0, leaf, +1);
        if (count > MaxLeaf)
        {
            Split(key, 0, leaf);
        }
    }

    private void ReplaceEntry(ReduceKey key, long entryId, byte[] entry)
    {
        key.Changed = true;
        if (!key.IsTree)
        {
            var at = key.FindPacked(entryId);
            if (at >= 0)
            {
                key.Packed![at] = (entryId, entry);
            }
            return;
        }
        Transaction.CreateTree(ReduceStore.EntriesTree).Put(ReduceEncoding.EntryKey(key.Id, entryId), entry);
        key.DirtyNodes.Add((0, Floor(key, 0, entryId)));
    }

    private void RemoveEntry(ReduceKey key, long entryId)
    {
        key.Changed = true;
        if (!key.IsTree)
        {
            var at = key.FindPacked(entryId);
            if (at >= 0)
            {
                key.Packed!.RemoveAt(at);
                key.Count--;
            }
            return;
        }
        if (!Transaction.CreateTree(ReduceStore.EntriesTree).Delete(ReduceEncoding.EntryKey(key.Id, entryId)))
        {
            return;
        }
        key.Count--;
        RemoveChild(key, 0, entryId);
    }

    // A child (an entry at level 0, a node below) left the node of `level` that covers `child`.
    private void RemoveChild(ReduceKey key, int level, long child)
    {
        var node = Floor(key, level, child);
        var count = AdjustCount(key, level, node, -1);
        if (count > 0 || node == 0)
        {
            return;
        }
        // An empty node other than the first of its level goes; its parent loses a child.
        Transaction.CreateTree(ReduceStore.NodesTree).Delete(ReduceEncoding.NodeKey(key.Id, level, node));
        key.DirtyNodes.Remove((level, node));
        if (level + 1 < key.Height)
        {
            RemoveChild(key, level + 1, node);
        }
    }

    // Moves a packed key's entries to the entries tree, under leaves half full and branches above.
    private void ConvertToTree(ReduceKey key)
    {
        var entries = Transaction.CreateTree(ReduceStore.EntriesTree);
        foreach (var (entryId, entry) in key.Packed!)
        {
            entries.Put(ReduceEncoding.EntryKey(key.Id, entryId), entry);
        }
        var starts = new List<long>();
        var counts = new List<int>();
        for (var i = 0; i < key.Packed.Count; i += MaxLeaf / 2)
        {
            starts.Add(i == 0 ? 0 : key.Packed[i].Id);
            counts.Add(Math.Min(MaxLeaf / 2, key.Packed.Count - i));
        }
        key.Packed = null;
        key.IsTree = true;
        var level = 0;
        while (true)
        {
            for (var i = 0; i < starts.Count; i++)
            {
                PutNode(key, level, starts[i], counts[i], failed: false, []);
            }
            if (starts.Count == 1)
            {
                break;
            }
            var parentStarts = new List<long>();
            var parentCounts = new List<int>();
            for (var i = 0; i < starts.Count; i += MaxBranch / 2)
            {
                parentStarts.Add(starts[i]);
                parentCounts.Add(Math.Min(MaxBranch / 2, starts.Count - i));
            }
            (starts, counts) = (parentStarts, parentCounts);
            level++;
        }
        key.Height = level + 1;
    }

    // Splits the node of `level` at `start` at its middle child; the new node's parent gains it.
    private void Split(ReduceKey key, int level, long start)
    {
        var children = ChildStarts(key, level, start);
        var half = children.Count / 2;
        var middle = children[half];
        var nodes = Transaction.CreateTree(ReduceStore.NodesTree);
        nodes.TryGet(ReduceEncoding.NodeKey(key.Id, level, start), out var value);
        var aggregate = ReduceEncoding.NodeAggregate(value).ToArray();
        PutNode(key, level, start, half, failed: false, aggregate);
        PutNode(key, level, middle, children.Count - half, failed: false, []);
        if (level + 1 == key.Height)
        {
            // The root split: a new root above it.
            PutNode(key, level + 1, 0, 2, failed: false, []);
            key.Height++;
            return;
        }
        var parent = Floor(key, level + 1, middle);
        if (AdjustCount(key, level + 1, parent, +1) > MaxBranch)
        {
            Split(key, level + 1, parent);
        }
    }

    // The ids of the children of a node: its entries' ids for a leaf, its children's starts above.
    private List<long> ChildStarts(ReduceKey key, int level, long start)
    {
        var end = NextStart(key, level, start);
        var starts = new List<long>();
        if (level == 0)
        {
            using var iterator = Transaction.CreateTree(ReduceStore.EntriesTree).Iterate();
            if (iterator.Seek(ReduceEncoding.EntryKey(key.Id, start)))
            {
                do
                {
                    if (!iterator.KeyStartsWith(key.Id))
                    {
                        break;
                    }
                    var id = ReduceEncoding.EntryIdOf(iterator.Key);
                    if (id >= end)
                    {
                        break;
                    }
                    starts.Add(id);
                }
                while (iterator.MoveNext());
            }
            return starts;
        }
        var prefix = ReduceEncoding.NodeKey(key.Id, level - 1, 0).AsSpan(0, ReduceEncoding.KeyIdLength + 1).ToArray();
        using (var iterator = Transaction.CreateTree(ReduceStore.NodesTree).Iterate())
        {
            if (iterator.Seek(ReduceEncoding.NodeKey(key.Id, level - 1, start)))
            {
                do
                {
                    if (!iterator.KeyStartsWith(prefix))
                    {
                        break;
                    }
                    var child = ReduceEncoding.NodeStartOf(iterator.Key);
                    if (child >= end)
                    {
                        break;
                    }
                    starts.Add(child);
                }
                while (iterator.MoveNext());
            }
        }
        return starts;
    }

    // Where the node after the one of `level` at `start` begins (long.MaxValue for the last).
    private long NextStart(ReduceKey key, int level, long start)
    {
        if (start == long.MaxValue)
        {
            return long.MaxValue;
        }
        using var iterator = Transaction.CreateTree(ReduceStore.NodesTree).Iterate();
        var prefix = ReduceEncoding.NodeKey(key.Id, level, 0).AsSpan(0, ReduceEncoding.KeyIdLength + 1).ToArray();
        return iterator.Seek(ReduceEncoding.NodeKey(key.Id, level, start + 1)) && iterator.KeyStartsWith(prefix)
            ? ReduceEncoding.NodeStartOf(iterator.Key)
            : long.MaxValue;
    }

    // The start of the node of `level` whose range holds `id` (the first node of a level starts at 0).
    private long Floor(ReduceKey key, int level, long id)
    {
        using var iterator = Transaction.CreateTree(ReduceStore.NodesTree).Iterate();
        if (!iterator.SeekLastLessOrEqual(ReduceEncoding.NodeKey(key.Id, level, id)))
        {
            throw new InvalidOperationException($"The reduce tree of a key has no node at level {level}.");
        }
        return ReduceEncoding.NodeStartOf(iterator.Key);
    }

    private int AdjustCount(ReduceKey key, int level, long start, int delta)
    {
        var nodes = Transaction.CreateTree(ReduceStore.NodesTree);
        var nodeKey = ReduceEncoding.NodeKey(key.Id, level, start);
        nodes.TryGet(nodeKey, out var value);
        var updated = value.ToArray();
        var count = ReduceEncoding.NodeCount(updated) + delta;
        System.Buffers.Binary.BinaryPrimitives.WriteInt32BigEndian(updated, count);
        nodes.Put(nodeKey, updated);
        key.DirtyNodes.Add((level, start));
        return count;
    }

    private void PutNode(ReduceKey key, int level, long start, int count, bool failed, ReadOnlySpan<byte> aggregate)
    {
        Transaction.CreateTree(ReduceStore.NodesTree).Put(ReduceEncoding.NodeKey(key.Id, level, start), ReduceEncoding.EncodeNode(count, failed, aggregate));
        key.DirtyNodes.Add((level, start));
    }
}
