using System.Buffers.Binary;
using System.Text;
using Jackdaw.Server.Hosting;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Documents;

/// <summary>
/// One database: its folder, its storage environment and its writer. All writes go through
/// <see cref="Merger"/>, which runs them on one thread in merged, durable transactions; reads
/// open their own read transactions and never wait for the writer.
/// </summary>
/// <remarks>
/// Trees of a database's storage:
/// <list type="bullet">
/// <item><c>Docs</c>: lowercased id (UTF-8) → <see cref="DocumentRecord"/>.</item>
/// <item><c>DocsByEtag</c>: etag (big endian) → lowercased id.</item>
/// <item><c>Collections</c>: [len][lowercased collection][etag] → lowercased id.</item>
/// <item><c>CollectionCounts</c>: lowercased collection → [count: 8][name as first written].</item>
/// <item><c>Tombstones</c>: etag → <see cref="Tombstones"/> record of a deleted document.</item>
/// <item><c>TombstonesById</c>: lowercased id → etag of its tombstone (a re-created document drops its tombstone).</item>
/// <item><c>Identities</c>: lowercased prefix → last value (int64).</item>
/// <item><c>Meta</c>: <c>database-id</c>, <c>last-etag</c>.</item>
/// </list>
/// </remarks>
public sealed class DocumentDatabase : IAsyncDisposable
{
    internal const string DocsTree = "Docs";
    internal const string DocsByEtagTree = "DocsByEtag";
    internal const string CollectionsTree = "Collections";
    internal const string CollectionCountsTree = "CollectionCounts";
    internal const string TombstonesTree = "Tombstones";
    internal const string TombstonesByIdTree = "TombstonesById";
    internal const string IdentitiesTree = "Identities";
    internal const string MetaTree = "Meta";

    private static readonly byte[] DatabaseIdKey = "database-id"u8.ToArray();
    internal static readonly byte[] LastEtagKey = "last-etag"u8.ToArray();

    private readonly StorageEnvironment _environment;
    private long _lastEtag;

    // Only the merger's thread reads or writes it.
    private Task _lastDurable = Task.CompletedTask;
    private int _disposed;

    private DocumentDatabase(string name, string folder, StorageEnvironment environment, ServerContext server)
    {
        Name = name;
        Folder = folder;
        _environment = environment;
        using (var tx = environment.BeginWrite())
        {
            foreach (var tree in new[] { DocsTree, DocsByEtagTree, CollectionsTree, CollectionCountsTree, TombstonesTree, TombstonesByIdTree, IdentitiesTree, MetaTree })
                tx.CreateTree(tree);
            var meta = tx.CreateTree(MetaTree);
            if (meta.TryGet(DatabaseIdKey, out var id))
            {
                DatabaseId = Encoding.UTF8.GetString(id);
            }
            else
            {
                DatabaseId = ChangeVectors.NewDatabaseId();
                meta.Put(DatabaseIdKey, Encoding.UTF8.GetBytes(DatabaseId));
            }
            _lastEtag = meta.TryGet(LastEtagKey, out var etag) ? BinaryPrimitives.ReadInt64LittleEndian(etag) : 0;
            tx.Commit();
        }

        var logger = server.LoggerFactory.CreateLogger($"Jackdaw.Database.{name}");
        Merger = new TransactionMerger<DocumentsTransaction>(BeginWriteTransaction, CommitWriteTransaction, logger);
    }

    public string Name { get; }

    public string Folder { get; }

    /// <summary>The database's id: the suffix of its change vectors.</summary>
    public string DatabaseId { get; }

    /// <summary>The etag of the last committed change.</summary>
    public long LastEtag => Volatile.Read(ref _lastEtag);

    /// <summary>Where write requests queue their commands.</summary>
    public TransactionMerger<DocumentsTransaction> Merger { get; }

    public static DocumentDatabase Open(string name, string folder, ServerContext server)
    {
        ArgumentNullException.ThrowIfNull(server);
        var environment = StorageEnvironment.Open(new StorageEnvironmentOptions { Path = Path.Combine(folder, "Storage") });
        try
        {
            return new DocumentDatabase(name, folder, environment, server);
        }
        catch
        {
            environment.Dispose();
            throw;
        }
    }

    /// <summary>A snapshot of the documents as of the last commit; dispose it when done.</summary>
    public DocumentsReader BeginRead()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        return new DocumentsReader(this, _environment.BeginRead());
    }

    public EnvironmentStats GetStorageStats() => _environment.GetStats();

    internal void WriteLastEtag(Tree meta, long etag)
    {
        Span<byte> value = stackalloc byte[sizeof(long)];
        BinaryPrimitives.WriteInt64LittleEndian(value, etag);
        meta.Put(LastEtagKey, value);
    }

    private DocumentsTransaction BeginWriteTransaction() => new(this, _environment.BeginWrite(), LastEtag);

    /// <summary>
    /// Hands the transaction to the journal; the next one may start at once (it sees this one's
    /// changes and etags), while readers and the waiting requests see it only once it is durable.
    /// </summary>
    /// <remarks>
    /// A transaction that changed nothing (a delete of an absent document, say) still read state
    /// that may not be durable yet: its requests wait for the last commit that was handed over.
    /// </remarks>
    private Task CommitWriteTransaction(DocumentsTransaction transaction)
    {
        var changed = transaction.Changes > 0;
        var durable = transaction.CommitPipelined();
        if (!changed)
            return _lastDurable;
        Volatile.Write(ref _lastEtag, transaction.LastEtag);
        _lastDurable = durable;
        return durable;
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
            return;
        // Finish the writes already queued (their requests are waiting), then close storage.
        await Merger.DisposeAsync().ConfigureAwait(false);
        _environment.Dispose();
    }
}
