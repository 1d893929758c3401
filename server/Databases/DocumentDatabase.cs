using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Databases;

/// <summary>
/// The root of one database: its folder, its storage environment, its writer (the transaction
/// merger), its documents (<see cref="DocumentsStorage"/>), the durable-commit signal and the
/// tombstone clean-up. Indexes, subscriptions and the changes feed hang off it as they are built.
/// All writes go through <see cref="Merger"/>, which runs them on one thread in merged, durable
/// transactions; reads open their own snapshots, see only what is durable and never wait.
/// </summary>
public sealed class DocumentDatabase : IAsyncDisposable
{
    private readonly StorageEnvironment _environment;
    private readonly TreeRegistry _trees = new();
    private readonly ILogger _logger;
    private readonly List<IAsyncDisposable> _components = new();

    // The etag of the last change handed to the journal; only the merger's thread uses it.
    private long _lastAssignedEtag;

    // Only the merger's thread reads or writes it.
    private Task _lastHandedOver = Task.CompletedTask;

    // Replaced by the merger's thread when a transaction that set it commits; read by any thread.
    private volatile RevisionsConfiguration _revisionsConfiguration = RevisionsConfiguration.None;
    private readonly TimeProvider _clock;
    private int _disposed;

    // Whether kept conflicts may exist (bit 0) and a generation (the rest), moved by each commit
    // that adds or removes kept versions: readers test it before opening any tree (see
    // DocumentsReader.MayHaveConflicts). Set before a commit that leaves some is published;
    // cleared once a commit that leaves none is durable, unless another changed them since.
    private long _conflictState;

    private DocumentDatabase(string name, string folder, StorageEnvironment environment, ILoggerFactory loggerFactory, DocumentDatabaseOptions options)
    {
        Name = name;
        Folder = folder;
        _environment = environment;
        DocumentsStorage.OpenState state;
        if (environment.ReadOnlyReason is null)
        {
            using var tx = environment.BeginWrite();
            state = DocumentsStorage.Open(tx, ChangeVectors.NewDatabaseId);
            tx.Commit();
        }
        else
        {
            using var tx = environment.BeginRead();
            try
            {
                state = DocumentsStorage.ReadOnly(tx);
            }
            catch (InvalidDataException e)
            {
                throw new DatabaseUnavailableException(name, $"it could only open read-only ({environment.ReadOnlyReason.Message}) and {e.Message}");
            }
        }
        DatabaseId = state.DatabaseId;
        _lastAssignedEtag = state.LastEtag;
        _clock = options.Clock;
        NodeTag = options.NodeTag;
        using (var reader = new DatabaseReader(state.DatabaseId, environment.BeginRead(), _trees))
        {
            _revisionsConfiguration = reader.GetRevisionsConfiguration();
            _conflictState = reader.ConflictCount > 0 ? 1 : 0;
        }

        var logger = loggerFactory.CreateLogger($"Jackdaw.Database.{name}");
        _logger = logger;
        if (environment.ReadOnlyReason is { } readOnly)
        {
            logger.LogWarning("Database {Database} opened read-only: recovery could not write ({Reason}); every acknowledged write is readable, writes fail until it is reopened", name, readOnly.Message);
        }
        if (state.Migrated)
        {
            logger.LogInformation("Database {Database}: documents schema migrated to version {Version}", name, DocumentsStorage.SchemaVersion);
        }
        Notifications = new DurableNotifications(state.LastEtag, logger);
        Merger = new TransactionMerger<DatabaseTransaction>(BeginWriteTransaction, CommitWriteTransaction, logger) { Name = name };
        Tombstones = new TombstoneCleaner(this, options, logger);
        Operations = new DatabaseOperations(logger);
        Attachments = new AttachmentCleaner(this, logger);
        RegisterTrees("HiLo ranges", HiLoRanges.TreeName);
        if (state.OrphanAttachmentStreams > 0 && environment.ReadOnlyReason is null)
        {
            Attachments.Schedule();
        }
    }

    public string Name { get; }

    public string Folder { get; }

    /// <summary>The database's id: the suffix of its change vectors.</summary>
    public string DatabaseId { get; }

    /// <summary>This node's tag: the tag of the change-vector entries this copy of the database writes.</summary>
    public string NodeTag { get; }

    /// <summary>The etag of the last durable change (what readers see and what has been acknowledged).</summary>
    public long LastEtag => Notifications.DurableEtag;

    /// <summary>Where write requests queue their commands.</summary>
    public TransactionMerger<DatabaseTransaction> Merger { get; }

    /// <summary>The signal that changes are durable: await an etag, or subscribe to every commit.</summary>
    public DurableNotifications Notifications { get; }

    /// <summary>
    /// Why this database cannot write until it is reopened (a journal write failed, e.g. on a full
    /// disk; or it opened read-only), or null while it is healthy. The landlord reopens such a
    /// database by itself, with back-off.
    /// </summary>
    public Exception? StorageFailure => _environment.Failure;

    /// <summary>Whether the storage opened read-only (recovery could not write).</summary>
    public bool IsReadOnly => _environment.ReadOnlyReason is not null;

    /// <summary>
    /// The database's storage environment, for its backups (server/Backup): copies of its pages and
    /// journals, and the journals kept for them. Everything else reads and writes through
    /// <see cref="BeginRead"/> and <see cref="Merger"/>.
    /// </summary>
    public StorageEnvironment Storage => _environment;

    /// <summary>Long-running operations (bulk inserts) by id, as RavenDB's clients follow them.</summary>
    public DatabaseOperations Operations { get; }

    /// <summary>The revisions configuration every write transaction begins with (cached; a configuration command replaces it).</summary>
    public RevisionsConfiguration RevisionsConfiguration => _revisionsConfiguration;

    /// <summary>Removes tombstones once their consumers have passed them.</summary>
    public TombstoneCleaner Tombstones { get; }

    /// <summary>Deletes the chunks of attachment contents nothing references any more.</summary>
    public AttachmentCleaner Attachments { get; }

    /// <summary>
    /// Opens (or creates) the database stored in <paramref name="folder"/> (its engine files are in
    /// <c>{folder}/Storage</c>), migrating an older documents schema.
    /// </summary>
    public static DocumentDatabase Open(string name, string folder, ILoggerFactory loggerFactory, DocumentDatabaseOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(loggerFactory);
        options ??= new DocumentDatabaseOptions();
        var environment = StorageEnvironment.Open(new StorageEnvironmentOptions { Path = Path.Combine(folder, "Storage"), Io = options.StorageIo });
        DocumentDatabase database;
        try
        {
            database = new DocumentDatabase(name, folder, environment, loggerFactory, options);
        }
        catch
        {
            environment.Dispose();
            throw;
        }
        try
        {
            foreach (var factory in options.Components)
            {
                database._components.Add(factory(database));
            }
        }
        catch
        {
            database.DisposeAsync().AsTask().GetAwaiter().GetResult();
            throw;
        }
        return database;
    }

    /// <summary>The part of type <typeparamref name="T"/> built on this database (see <see cref="DocumentDatabaseOptions.Components"/>), or null.</summary>
    public T? GetComponent<T>() where T : class
    {
        foreach (var component in _components)
        {
            if (component is T found)
            {
                return found;
            }
        }
        return null;
    }

    /// <summary>Whether the database has started closing (its parts stop their work when it has).</summary>
    public bool IsClosing => Volatile.Read(ref _disposed) != 0;

    /// <summary>
    /// Registers the trees a feature keeps in this database (e.g. "Subscriptions"), so its commands
    /// can open them through <see cref="DatabaseTransaction.GetTree"/> and its reads through
    /// <see cref="DatabaseReader.GetTree"/>. Names are the feature's for good; the documents'
    /// trees cannot be registered.
    /// </summary>
    public void RegisterTrees(string owner, params string[] names) => _trees.Register(owner, names);

    /// <summary>A snapshot as of the last durable commit; dispose it when done.</summary>
    public DatabaseReader BeginRead()
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            ThrowUnloaded();
        }
        try
        {
            var transaction = _environment.BeginRead();
            // Read after the snapshot opened: a commit that added conflicts set the flag before it
            // was published. (A reader whose snapshot predates a commit that removed the last
            // conflicts may read the flag already cleared: it answers as after that commit.)
            return new DatabaseReader(DatabaseId, transaction, _trees, (Volatile.Read(ref _conflictState) & 1) != 0);
        }
        catch (ObjectDisposedException e) when (Volatile.Read(ref _disposed) != 0)
        {
            throw new DatabaseUnavailableException(Name, "it was closed while the request ran (" + e.Message + ").");
        }
    }

    public EnvironmentStats GetStorageStats()
    {
        try
        {
            return _environment.GetStats();
        }
        catch (ObjectDisposedException) when (Volatile.Read(ref _disposed) != 0)
        {
            ThrowUnloaded();
            return null!;
        }
    }

    /// <summary>Queues a write (see <see cref="Merger"/>); a closed database answers with <see cref="DatabaseUnavailableException"/>.</summary>
    public Task EnqueueAsync(IMergedCommand<DatabaseTransaction> command)
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            ThrowUnloaded();
        }
        return Merger.EnqueueAsync(command);
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private void ThrowUnloaded() =>
        throw new DatabaseUnavailableException(Name, "it is closed (unloaded, or being reopened after a storage failure).");

    private DatabaseTransaction BeginWriteTransaction() =>
        new(DatabaseId, _environment.BeginWrite(), _lastAssignedEtag, _trees, NodeTag) { RevisionsConfiguration = _revisionsConfiguration, Clock = _clock };

    /// <summary>
    /// Hands the transaction to the journal; the next one may start at once (it sees this one's
    /// changes and etags), while readers, <see cref="LastEtag"/> and the waiting requests see it
    /// only once it is durable and published.
    /// </summary>
    /// <remarks>
    /// A transaction that changed nothing (a delete of an absent document, say) still read state
    /// that may not be durable yet: its requests wait for the last commit that was handed over.
    /// </remarks>
    private Task CommitWriteTransaction(DatabaseTransaction transaction)
    {
        if (!transaction.HasWrites)
        {
            _ = transaction.CommitPipelined();
            return _lastHandedOver;
        }
        var conflictsLeft = transaction.ConflictsChanged ? transaction.ConflictCount : -1;
        if (conflictsLeft > 0)
        {
            Interlocked.Exchange(ref _conflictState, ((Interlocked.Read(ref _conflictState) >> 1) + 1) << 1 | 1);
        }
        var durable = transaction.CommitPipelined();
        if (conflictsLeft == 0)
        {
            var generation = (Interlocked.Read(ref _conflictState) >> 1) + 1;
            Interlocked.Exchange(ref _conflictState, generation << 1 | 1);
            durable.ContinueWith(static (task, state) =>
            {
                if (task.IsCompletedSuccessfully)
                {
                    var (database, generation) = ((DocumentDatabase, long))state!;
                    Interlocked.CompareExchange(ref database._conflictState, generation << 1, generation << 1 | 1);
                }
            }, (this, generation), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
        // The next transaction starts before this one is durable and must apply its configuration.
        if (transaction.RevisionsConfigurationChanged)
        {
            _revisionsConfiguration = transaction.RevisionsConfiguration;
        }
        if (transaction.Changes > 0)
        {
            _lastAssignedEtag = transaction.LastEtag;
            durable = Notifications.Track(durable, new DurableCommit(transaction.LastEtag, transaction.DocumentChanges));
        }
        _lastHandedOver = durable;
        if (transaction.OrphanedAttachmentStreams)
        {
            // Their chunks go once the commit that orphaned them is durable.
            durable.ContinueWith(static (task, state) =>
            {
                if (task.IsCompletedSuccessfully)
                {
                    ((AttachmentCleaner)state!).Schedule();
                }
            }, Attachments, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }
        return durable;
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        // The parts built on top (index loops) stop first: they read and write through this database.
        for (var i = _components.Count - 1; i >= 0; i--)
        {
            try
            {
                await _components[i].DisposeAsync().ConfigureAwait(false);
            }
            catch (Exception e)
            {
                _logger.LogError(e, "Database {Database}: a part failed to close", Name);
            }
        }
        await Tombstones.DisposeAsync().ConfigureAwait(false);
        await Attachments.DisposeAsync().ConfigureAwait(false);
        Operations.Dispose();
        // Finish the writes already queued (their requests are waiting), then close storage.
        await Merger.DisposeAsync().ConfigureAwait(false);
        Notifications.Close(Name);
        try
        {
            _environment.Dispose();
        }
        catch (Exception e) when (e is StorageException or IOException)
        {
            // The final flush could not write (a full disk): the journal still holds every
            // acknowledged transaction and the next open replays it.
            _logger.LogWarning(e, "Database {Database} closed without its final flush; the journal keeps its transactions", Name);
        }
    }
}
