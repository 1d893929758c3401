using System.Buffers.Binary;
using System.Text.Json;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Indexing.MapReduce;

/// <summary>
/// The reduce state of one map-reduce index: an environment of our storage engine in the index's
/// <c>reduce/</c> folder, beside its Lucene files. It holds each document's map entries, each
/// reduce key's entries and partial aggregates (<see cref="ReduceTable"/>), the positions, and the
/// keys whose results Lucene has not committed yet.
/// <list type="bullet">
/// <item><b>One write transaction per Lucene commit.</b> Batches write into one open transaction
///   (<see cref="Write"/>); the index's commit commits it first (<see cref="Commit"/>, durable, with
///   the positions) and Lucene after; a rollback disposes it with Lucene's (<see cref="Abort"/>). So
///   the two agree after every commit and every rollback.</item>
/// <item><b>The store leads.</b> A crash between the two commits leaves the store ahead of Lucene:
///   the keys whose results changed since the last Lucene commit are kept in <c>Pending</c>, and
///   written into Lucene again at open and after a rollback (<see cref="PendingKeys"/>), before the
///   index goes on from the store's positions. Results are written by key, so twice is the same as
///   once.</item>
/// <item>One thread at a time (the index's loop); the write lock has no thread affinity, so the
///   loop's awaits may move it between threads.</item>
/// </list>
/// </summary>
internal sealed class ReduceStore : IDisposable
{
    public const string DocumentsTree = "MapEntries";
    public const string KeysTree = "ReduceKeys";
    public const string EntriesTree = "ReduceEntries";
    public const string NodesTree = "ReduceNodes";
    public const string ReferencesTree = "References";
    public const string PendingTree = "Pending";
    public const string OutputPendingTree = "OutputPending";
    public const string OutputReferencesTree = "OutputReferences";
    private const string MetaTree = "Meta";

    private static readonly byte[] PositionsKey = "positions"u8.ToArray();
    private static readonly byte[] NextEntryKey = "next-entry-id"u8.ToArray();

    private readonly string _folder;
    private readonly StorageIo _io;
    private StorageEnvironment _environment;
    private WriteTransaction? _transaction;
    private bool _clearPending;

    private ReduceStore(string folder, StorageIo io, StorageEnvironment environment)
    {
        _folder = folder;
        _io = io;
        _environment = environment;
        NextEntryId = ReadNextEntryId();
    }

    /// <summary>Opens (or creates) the store in <paramref name="folder"/>; <paramref name="io"/> is where its file I/O goes (tests inject failures).</summary>
    public static ReduceStore Open(string folder, StorageIo? io = null)
    {
        io ??= StorageIo.Default;
        var environment = OpenEnvironment(folder, io);
        try
        {
            return new ReduceStore(folder, io, environment);
        }
        catch
        {
            environment.Dispose();
            throw;
        }
    }

    private static StorageEnvironment OpenEnvironment(string folder, StorageIo io) => StorageEnvironment.Open(new StorageEnvironmentOptions
    {
        Path = folder,
        Io = io,
        InitialDataFileSize = 256 * 1024,
        MaxJournalFileSize = 16 * 1024 * 1024,
    });

    /// <summary>
    /// Why the store takes no writes (a journal write failed, or recovery found the disk full),
    /// null while it does. The engine then refuses every write until it is reopened (<see cref="Reopen"/>).
    /// </summary>
    public Exception? Failure => _reopenFailure ?? _environment.Failure;

    // Set while a reopen failed (the environment is closed): the next rollback tries again.
    private Exception? _reopenFailure;

    /// <summary>
    /// Closes and opens the environment again (after a <see cref="Failure"/>): it recovers from its
    /// journal to its last commit. Throws while the disk still fails (the caller tries again later).
    /// </summary>
    public void Reopen()
    {
        _transaction?.Dispose();
        _transaction = null;
        _clearPending = false;
        try
        {
            _environment.Dispose();
        }
        catch (Exception)
        {
            // A failed environment may fail to flush as it closes; its journal still holds every commit.
        }
        try
        {
            _environment = OpenEnvironment(_folder, _io);
            _reopenFailure = null;
        }
        catch (Exception e)
        {
            _reopenFailure = e;
            throw;
        }
        NextEntryId = ReadNextEntryId();
    }

    /// <summary>The id the next map entry gets: entry ids only grow, so a key's new entries sort after its old ones.</summary>
    public long NextEntryId { get; set; }

    /// <summary>Whether a write transaction is open (something was written since the last commit or abort).</summary>
    public bool Writing => _transaction is not null;

    /// <summary>The open write transaction, begun on first use after a commit or an abort.</summary>
    public WriteTransaction Write
    {
        get
        {
            if (_transaction is not null)
            {
                return _transaction;
            }
            var transaction = _environment.BeginWrite();
            if (_clearPending)
            {
                // Lucene committed every pending key's result after the store's last commit.
                transaction.DeleteTree(PendingTree);
                _clearPending = false;
            }
            return _transaction = transaction;
        }
    }

    /// <summary>The positions of the last commit; null for a new store.</summary>
    public Dictionary<string, CollectionPosition>? ReadPositions()
    {
        using var read = _environment.BeginRead();
        var meta = read.OpenTree(MetaTree);
        if (meta is null || !meta.TryGet(PositionsKey, out var value))
        {
            return null;
        }
        var stored = JsonSerializer.Deserialize<Dictionary<string, long[]>>(value) ?? new();
        return stored.ToDictionary(p => p.Key, p => new CollectionPosition(p.Value[0], p.Value[1]), StringComparer.Ordinal);
    }

    private long ReadNextEntryId()
    {
        using var read = _environment.BeginRead();
        var meta = read.OpenTree(MetaTree);
        return meta is not null && meta.TryGet(NextEntryKey, out var value) ? BinaryPrimitives.ReadInt64BigEndian(value) : 1;
    }

    /// <summary>Commits what the batches wrote, with <paramref name="positions"/>, durably (before Lucene commits).</summary>
    public void Commit(IReadOnlyDictionary<string, CollectionPosition> positions)
    {
        var transaction = Write;
        var meta = transaction.CreateTree(MetaTree);
        var stored = positions.ToDictionary(p => p.Key, p => new[] { p.Value.Documents, p.Value.Tombstones }, StringComparer.Ordinal);
        meta.Put(PositionsKey, JsonSerializer.SerializeToUtf8Bytes(stored));
        Span<byte> next = stackalloc byte[8];
        BinaryPrimitives.WriteInt64BigEndian(next, NextEntryId);
        meta.Put(NextEntryKey, next);
        _transaction = null;
        try
        {
            transaction.Commit();
        }
        catch
        {
            // A commit that failed before it ended the transaction would keep the write lock.
            transaction.Dispose();
            throw;
        }
    }

    /// <summary>Lucene committed the results of every pending key: the next transaction forgets them.</summary>
    public void LuceneCommitted() => _clearPending = true;

    /// <summary>Discards what was written since the last commit.</summary>
    public void Abort()
    {
        _transaction?.Dispose();
        _transaction = null;
        _clearPending = false;
        NextEntryId = ReadNextEntryId();
    }

    /// <summary>The keys (ids) whose results Lucene may not have, as of the last commit.</summary>
    public List<byte[]> PendingKeys() => KeysOf(PendingTree);

    private List<byte[]> KeysOf(string treeName)
    {
        var keys = new List<byte[]>();
        using var read = _environment.BeginRead();
        var tree = read.OpenTree(treeName);
        if (tree is null)
        {
            return keys;
        }
        using var iterator = tree.Iterate();
        if (iterator.SeekFirst())
        {
            do
                keys.Add(iterator.Key.ToArray());
            while (iterator.MoveNext());
        }
        return keys;
    }

    /// <summary>A read transaction on the last commit (recovery reads the pending keys' results there).</summary>
    public ReadTransaction BeginRead() => _environment.BeginRead();

    public void Dispose()
    {
        _transaction?.Dispose();
        _transaction = null;
        if (_reopenFailure is null)
        {
            _environment.Dispose();
        }
    }
}
