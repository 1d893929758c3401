using System.Diagnostics;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.MapReduce;
using Jackdaw.Server.Indexing.Mapping;
using Jackdaw.Server.Indexing.Workers;
using Microsoft.Extensions.Logging;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// One index: its definition, its Lucene files (<see cref="IndexFiles"/>) and one indexing loop
/// (Index.Loop.cs) that runs batches of work (<see cref="Batch"/>, Workers/); what queries use is in
/// Index.Queries.cs.
/// <list type="bullet">
/// <item>The loop waits for durable commits, reads each mapped collection's documents and
///   tombstones after its positions (in batches bounded by count, bytes and time), maps them and
///   updates the Lucene entries keyed by document id; then refreshes the near-real-time searcher
///   (queries see the batch at once).</item>
/// <item>A durable Lucene commit carries the positions in its user data, so files and positions
///   always agree: after a restart or kill -9 the index resumes from its last commit (entries are
///   replaced by id, or added only below the add horizon where none can exist yet, so nothing is
///   indexed twice and nothing is missed). Commits happen when the
///   loop has caught up, and at least every <see cref="CommitInterval"/> while it has not. A batch,
///   refresh or commit that fails (the disk) rolls the index back to its last commit
///   (<see cref="RollBackToLastCommit"/>).</item>
/// <item>The directory is a <see cref="PreadDirectory"/>: positional reads without the locks of
///   <c>NIOFSDirectory</c> (memory-mapped searching was measured much slower for parallel searches
///   in Lucene.Net 4.8, lucenenet #1151); after each
///   commit every new file and the folder are fsynced again by us (Lucene.Net 4.8.0-beta00017 can
///   mark a file for sync before its last buffer is written, lucenenet #894), and an index whose
///   files cannot be opened is rebuilt from the start.</item>
/// <item>Only the loop writes (one writer thread per index: a concurrent AddDocument race was
///   fixed in Lucene.Net only after 4.8.0-beta00017, lucenenet #935).</item>
/// </list>
/// </summary>
public sealed partial class Index : IAsyncDisposable, ITombstoneConsumer
{
    /// <summary>Errors kept per index (the oldest go first).</summary>
    public const int MaxErrors = 500;

    /// <summary>The folder of a map-reduce index's reduce store, inside the index's folder.</summary>
    public const string ReduceFolder = "reduce";

    // What the index is, and its parts.
    private readonly DocumentDatabase _database;
    private readonly ILogger _logger;
    private volatile IndexDefinition _definition;
    private readonly IIndexMapper _mapper;
    private readonly string[] _lowerCollections;
    private readonly Func<string, FieldPlan> _planOf;
    private readonly Dictionary<string, FieldPlan> _staticPlans = new(StringComparer.Ordinal);
    private readonly Dictionary<string, FieldPlan> _autoPlans = new(StringComparer.Ordinal);
    private readonly IndexFiles _files;
    private readonly DocumentWorker _map;

    // A map-reduce index's reduce state (null for a map), and the folder of a test run's store.
    private readonly ReduceStore? _reduceStore;
    private readonly ReduceDocuments? _reduce;
    private readonly string? _temporaryReduceFolder;
    private readonly CleanupDeletedDocuments _cleanup;

    // Null for a map that loads nothing.
    private readonly HandleReferences? _references;

    private readonly IDisposable _tombstoneRegistration;
    private readonly CancellationTokenSource _stop = new();
    private readonly Func<bool> _paused;

    // Its state, as operators, queries and the loop set it.
    private volatile bool _disabled;
    private volatile bool _pausedAlone;
    private volatile IndexState _state;
    private readonly Queue<IndexError> _errors = new();

    // What queries and stats read (Index.Queries.cs).
    private volatile IndexProgress _progress;

    // The progress the index was opened with: until a batch replaces it, no batch is visible yet.
    private readonly IndexProgress _openedProgress;

    private TaskCompletionSource _batchDone = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _generation;
    private long _lastQueryingTicks;
    private long _lastIndexingTicks;
    private int _activeSearchers;
    private Action? _deleteWhenUnused;

    // The positions of the last durable commit: tombstones at or below them may be removed.
    private volatile Dictionary<string, CollectionPosition> _committed = new();

    // The loop's (Index.Loop.cs), written by it only. The positions it reached are published to
    // queries and stats as one immutable snapshot (_progress) once a refresh makes them searchable.
    private Dictionary<string, CollectionPosition> _positions;
    private IndexProgress? _pendingProgress;
    private Task _loop = Task.CompletedTask;
    private TaskCompletionSource _wake = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long _batchIds;
    private long _lastCommitTimestamp;
    private bool _dirty;

    // Set by a rollback: the next batch commits.
    private bool _commitSoon;

    // Failures since the index last committed (or caught up with nothing to commit).
    private int _failuresInARow;

    // Set when a batch, a refresh or a commit failed (the disk, Lucene): what the writer holds
    // since the last commit cannot be trusted. Lucene drops the documents of a segment whose flush
    // failed while the positions already moved past them, and a retried batch meets documents it
    // may have added before (twice, below the add horizon). The loop rolls the writer back.
    private bool _rollbackNeeded;

    private volatile bool _lastBatchFailed;

    // Refreshes are spaced by the stream of writes: each refresh flushes a segment, and ten small
    // segments a second keep Lucene's merges busy (a PUT with an index cost 2.7x one without). The
    // interval starts at RefreshInterval; each refresh made because it was up while writes kept
    // coming doubles it, up to MaxRefreshInterval; a quiet spell (no batch for twice the interval)
    // brings it back. The writes that come while the loop waits for a refresh are indexed in one
    // batch after it (one batch a second costs far less than one per commit). Occasional writes are
    // searchable within 100 ms, a sustained stream within about 2 s (the interval, then the batch
    // that waited for it); a query that waits for non-stale results refreshes at once either way.
    private TimeSpan _refreshInterval = RefreshInterval;

    private long _lastWork;
    private bool _refreshPending;
    private long _lastRefresh;
    private volatile bool _refreshWanted;

    // Whether the next batch is a yielding one (short); a replacement starts yielding.
    private bool _yielding;

    private long _etagSeenWriting;
    private long _lastWriteSeen;
    private bool _mergedAfterBuild;

    /// <summary>When the last merge after going idle was made (<see cref="MergeWhenIdle"/>), 0 before the first.</summary>
    private long _lastIdleMerge;

    private Index(DocumentDatabase database, IndexRecord record, IIndexMapper mapper, Analysis.IndexAnalyzers analyzers, string? folder, ILogger logger, Func<bool> paused, Func<string, LuceneDirectory>? openDirectory = null)
    {
        var definition = record.Definition;
        _database = database;
        Analyzers = analyzers;
        _definition = definition;
        _paused = paused;
        ReplacementOf = record.ReplacementOf;
        _yielding = ReplacementOf is not null;
        _outputHeld = ReplacementOf is not null;
        _etagSeenWriting = database.LastEtag;
        LockMode = record.LockMode;
        Priority = record.Priority;
        _disabled = record.Disabled;
        _mapper = mapper;
        _logger = logger;
        Folder = folder ?? "";
        _lowerCollections = mapper.Collections.Select(c => c.ToLowerInvariant()).Distinct().ToArray();
        if (definition.IsAuto)
        {
            foreach (var field in definition.AutoFields)
            {
                _autoPlans[field.LuceneName] = new FieldPlan(field.LuceneName, field.Indexing, false);
            }
            _planOf = name => _autoPlans.TryGetValue(name, out var plan) ? plan : new FieldPlan(name, FieldIndexing.Default, false);
        }
        else
        {
            _planOf = name =>
            {
                if (_staticPlans.TryGetValue(name, out var plan))
                {
                    return plan;
                }
                var options = definition.OptionsOf(name);
                plan = new FieldPlan(name, options.Indexing, options.Stored, analyzers.For(name));
                _staticPlans[name] = plan;
                return plan;
            };
        }

        _tombstoneRegistration = new NoRegistration();
        // In memory for a test run (POST /indexes/test): nothing is written to disk or storage.
        _files = IndexFiles.Open(folder, openDirectory, analyzers.Writer, OnMergeFailed, logger, definition.Name, out _positions);
        if (definition.IsMapReduce)
        {
            var functions = mapper as IReduceFunctions ?? throw new InvalidOperationException($"Index '{definition.Name}' is a map-reduce index without a reduce.");
            // A test run's store goes in a temporary folder, deleted with the index.
            _temporaryReduceFolder = folder is null ? Path.Combine(Path.GetTempPath(), "jackdaw-reduce-" + Guid.NewGuid().ToString("N")) : null;
            try
            {
                _reduceStore = OpenReduceStore(_temporaryReduceFolder ?? Path.Combine(folder!, ReduceFolder), logger, definition.Name);
                _reduce = new ReduceDocuments(mapper, functions, _reduceStore, _files, _planOf, RecordError, definition.ReduceSpec?.OutputReduceToCollection is not null);
                _positions = RecoverReduce();
            }
            catch
            {
                _reduceStore?.Dispose();
                // Nothing the recovery wrote is kept (Lucene commits on close otherwise).
                _files.Close(keep: false, _ => { });
                if (_temporaryReduceFolder is not null && Directory.Exists(_temporaryReduceFolder))
                {
                    Directory.Delete(_temporaryReduceFolder, recursive: true);
                }
                throw;
            }
            _map = _reduce;
        }
        else
        {
            _map = new MapDocuments(mapper, _files, _planOf, RecordError);
        }
        _cleanup = new CleanupDeletedDocuments(_map, _lowerCollections);
        _references = mapper.UsesLoad ? new HandleReferences(_map, _lowerCollections) : null;
        _progress = _openedProgress = new IndexProgress(new Dictionary<string, CollectionPosition>(_positions), CaughtUpTo: 0);
        _lastCommitTimestamp = Stopwatch.GetTimestamp();
        _committed = new Dictionary<string, CollectionPosition>(_positions);
        // Registered last: an index that failed to open holds no tombstones back.
        if (folder is not null)
        {
            _tombstoneRegistration = database.Tombstones.Register(this);
        }
    }

    private sealed class NoRegistration : IDisposable
    {
        public void Dispose()
        {
        }
    }

    /// <summary>
    /// An index in memory for a test run (<see cref="IndexTestRun"/>): no loop, no files, no
    /// tombstone hold. <see cref="RunTest"/> maps the first documents once; queries then run on it
    /// as on any index. Dispose it after.
    /// </summary>
    internal static Index CreateInMemory(DocumentDatabase database, IndexDefinition definition, IIndexMapper mapper, Analysis.IndexAnalyzers analyzers, ILogger logger) =>
        new(database, new IndexRecord(definition, "", null, IndexLockMode.Unlock, IndexPriority.Normal, false), mapper, analyzers, null, logger, () => false);

    /// <summary>
    /// Maps at most <paramref name="maxDocuments"/> documents of the mapped collections (the first by
    /// etag), handing each map's output to <paramref name="observe"/>, then makes them searchable.
    /// </summary>
    /// <returns>How many documents were mapped.</returns>
    internal int RunTest(int maxDocuments, TimeSpan maxTime, Action<string, MapOutput>? observe)
    {
        var started = Stopwatch.GetTimestamp();
        if (!_files.InMemory)
        {
            throw new InvalidOperationException("Only an in-memory index runs a test.");
        }
        _map.Observer = observe;
        var count = 0;
        var output = new MapOutput();
        using (var reader = _database.BeginRead())
        {
            var loader = new SnapshotLoader(reader);
            foreach (var collection in _lowerCollections)
            {
                foreach (var record in reader.GetDocumentsFrom(collection, 0, maxDocuments - count))
                {
                    if (Stopwatch.GetElapsedTime(started) > maxTime)
                    {
                        break;
                    }
                    _map.Map(record, output, loader, timer: null);
                    count++;
                }
                if (count >= maxDocuments || Stopwatch.GetElapsedTime(started) > maxTime)
                {
                    break;
                }
            }
        }
        _map.EndBatch(new BatchTimer());
        _files.Refresh();
        _map.Observer = null;
        return count;
    }

    /// <summary>
    /// Opens (or creates) the index in <paramref name="folder"/> and starts its loop (unless
    /// <paramref name="start"/> is false: then <see cref="Start"/> does);
    /// <paramref name="openDirectory"/> opens the folder as a Lucene directory (a
    /// <see cref="PreadDirectory"/> unless given: tests wrap it to inject disk failures).
    /// </summary>
    public static Index Open(DocumentDatabase database, IndexRecord record, IIndexMapper mapper, Analysis.IndexAnalyzers analyzers, string folder, ILogger logger, Func<bool> paused, Action<Index, IndexingBatch>? onBatch = null, Action<Index>? onCaughtUp = null, Func<string, LuceneDirectory>? openDirectory = null, bool start = true)
    {
        var index = new Index(database, record, mapper, analyzers, folder, logger, paused, openDirectory);
        if (onBatch is not null)
        {
            index.BatchCompleted += onBatch;
        }
        if (onCaughtUp is not null)
        {
            index.CaughtUp += onCaughtUp;
        }
        if (start)
        {
            index.Start();
        }
        return index;
    }

    /// <summary>Starts the indexing loop of an index opened without it.</summary>
    public void Start()
    {
        if (_loop == Task.CompletedTask && !_stop.IsCancellationRequested)
        {
            _loop = Task.Run(RunAsync);
        }
    }

    /// <summary>The definition; its name changes once, when a replacement becomes the index it replaced.</summary>
    public IndexDefinition Definition => _definition;

    public string Name => Definition.Name;

    /// <summary>For a replacement being built side by side: the name of the index it replaces.</summary>
    public string? ReplacementOf { get; private set; }

    public IndexLockMode LockMode { get; set; }

    public IndexPriority Priority { get; set; }

    /// <summary>Disabled indexes do not index (persisted by the store).</summary>
    public bool Disabled
    {
        get => _disabled;
        set
        {
            _disabled = value;
            if (!value)
            {
                Wake();
            }
        }
    }

    /// <summary>This index alone paused for this run (<c>/admin/indexes/stop?name=</c>); not persisted.</summary>
    public bool Paused
    {
        get => _pausedAlone;
        set
        {
            _pausedAlone = value;
            if (!value)
            {
                Wake();
            }
        }
    }

    /// <summary>Raised on the loop when a batch finds nothing more to do (the index has caught up).</summary>
    public event Action<Index>? CaughtUp;

    /// <summary>The replacement becomes the index it replaced: same files, same loop, the new name.</summary>
    public void BecomeReplaced(IndexDefinition definition)
    {
        _definition = definition;
        ReplacementOf = null;
    }

    /// <summary>Wakes the loop (after indexing was started again, or a setting changed).</summary>
    public void Resume() => Wake();

    public string Folder { get; }

    /// <summary>The collections it maps, lowercased.</summary>
    public IReadOnlyList<string> Collections => _lowerCollections;

    /// <summary>Whether a change in one of <paramref name="lowerCollections"/> may change this index: it maps one of them, or it loads documents (of any collection).</summary>
    public bool IsAffectedBy(IReadOnlySet<string> lowerCollections) =>
        _mapper.UsesLoad || _lowerCollections.Any(lowerCollections.Contains);

    /// <summary>Why this index indexes nothing until someone acts (stopped, disabled, in error, closing); null while it indexes.</summary>
    public string? WhyNotIndexing =>
        _state == IndexState.Error ? "it is in error"
        : _disabled ? "it is disabled"
        : _pausedAlone || _paused() ? "its indexing is stopped"
        : _stop.IsCancellationRequested ? "it is closing"
        : null;

    public IndexState State => _disabled && _state != IndexState.Error ? IndexState.Disabled : _state;

    /// <summary>Whether the index was closed (deleted, reset, replaced, or its database closed).</summary>
    public bool IsDisposed => _stop.IsCancellationRequested;

    /// <summary>Makes an idle auto-index idle (it stops indexing until a query needs it).</summary>
    public void SetIdle()
    {
        if (_state == IndexState.Normal)
        {
            _state = IndexState.Idle;
        }
    }

    /// <summary>Positions and how far the loop has caught up, as of the last completed batch.</summary>
    public IndexProgress Progress => _progress;

    public long MapAttempts => _map.Attempts;

    public long MapErrors => _map.Errors;

    public DateTime? LastQueryingTime => Ticks(Interlocked.Read(ref _lastQueryingTicks));

    public DateTime? LastIndexingTime => Ticks(Interlocked.Read(ref _lastIndexingTicks));

    /// <summary>The last batches (at most <see cref="IndexingBatchRing.Capacity"/>), for the performance timeline.</summary>
    public IndexingBatchRing Performance { get; } = new();

    /// <summary>Called on the loop's thread after each batch (and each idle commit) with what it did.</summary>
    public event Action<Index, IndexingBatch>? BatchCompleted;

    /// <summary>Batches the loop has completed (tests use it to see that a restart re-indexed nothing).</summary>
    public long BatchesRun { get; private set; }

    /// <summary>Documents mapped since this index was opened.</summary>
    public long DocumentsMapped => _map.DocumentsMapped;

    /// <summary>Rollbacks to the last commit after a failure since the index was opened.</summary>
    public int RollbacksDone { get; private set; }

    private static DateTime? Ticks(long ticks) => ticks == 0 ? null : new DateTime(ticks, DateTimeKind.Utc);

    /// <summary>
    /// The analyzers its fields name, resolved when it opened: the index writes and queries with
    /// these until it is rebuilt. They are not disposed with the index (a query may still analyze its
    /// terms with them); they hold only per-thread token stream caches.
    /// </summary>
    public Analysis.IndexAnalyzers Analyzers { get; }

    /// <summary>
    /// For a replacement (<see cref="ReplacementOf"/>): whether the index it replaces answered a
    /// query lately. While it did, or while writes come in, the replacement builds in short batches
    /// with rests three times as long (25% of a core), so that the requests keep most of the
    /// machine: it takes longer to build, and the swap happens when it caught up as before.
    /// </summary>
    public Func<bool>? OriginalQueried { get; set; }

    /// <summary>The last errors (at most <see cref="MaxErrors"/>), oldest first.</summary>
    public IndexError[] GetErrors()
    {
        lock (_errors)
            return _errors.ToArray();
    }

    private void RecordError(string document, string action, string error)
    {
        lock (_errors)
        {
            _errors.Enqueue(new IndexError(document, action, error, DateTime.UtcNow));
            while (_errors.Count > MaxErrors)
            {
                _errors.Dequeue();
            }
        }
    }

    /// <summary>As RavenDB: an index whose map errors pass 15% of at least 100 attempts stops, in Error state, until reset.</summary>
    private void CheckErrorRate()
    {
        var attempts = MapAttempts;
        if (attempts >= 100 && MapErrors > attempts * 0.15 && _state != IndexState.Error)
        {
            _state = IndexState.Error;
            _logger.LogWarning("Index {Index} is in error state: {Errors} of {Attempts} documents failed to map; reset it after fixing the definition", Name, MapErrors, attempts);
            RecordError("", "Index", $"The index stopped: {MapErrors} of {attempts} documents failed to map (more than 15%).");
        }
    }

    // A background merge that failed (the disk): its segments stay as they were and Lucene merges
    // them at a later flush; nothing is lost, but it is said.
    private void OnMergeFailed(Exception e)
    {
        _logger.LogError(e, "Index {Index}: a background merge failed; its segments stay and are merged later", Name);
        RecordError("", "Merge", e.Message);
    }

    string ITombstoneConsumer.Name => $"Index '{Name}'";

    // A map that loads documents reads every collection's deletions (its references pass).
    bool ITombstoneConsumer.Consumes(string lowerCollection) => _mapper.UsesLoad || Array.IndexOf(_lowerCollections, lowerCollection) >= 0;

    long ITombstoneConsumer.GetLastProcessedTombstoneEtag(string lowerCollection)
    {
        var committed = _committed;
        var own = Array.IndexOf(_lowerCollections, lowerCollection) >= 0
            ? committed.TryGetValue(lowerCollection, out var position) ? position.Tombstones : 0
            : long.MaxValue;
        var references = _mapper.UsesLoad ? committed.GetValueOrDefault(HandleReferences.Position).Tombstones : long.MaxValue;
        return Math.Min(own, references);
    }

    string? ITombstoneConsumer.HoldReason => State switch
    {
        IndexState.Error => "the index is in error state",
        IndexState.Idle => "the auto-index is idle",
        IndexState.Disabled => "the index is disabled",
        _ => null,
    };

    /// <summary>Stops the loop, commits what it indexed and closes the files.</summary>
    public async ValueTask DisposeAsync()
    {
        if (_stop.IsCancellationRequested)
        {
            return;
        }
        _stop.Cancel();
        try
        {
            await _loop.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            // What it did since the last commit is not kept.
            _rollbackNeeded = true;
            _logger.LogError(e, "Index {Index}: its loop ended with an error", Name);
        }
        _tombstoneRegistration.Dispose();
        try
        {
            if (_dirty && !_files.InMemory && !_rollbackNeeded)
            {
                Commit();
            }
        }
        catch (Exception e)
        {
            _rollbackNeeded = true;
            _logger.LogWarning(e, "Index {Index}: the last commit failed; it re-indexes from its previous commit", Name);
        }
        // After a failure nothing since the last commit is kept (Lucene's commit on close would).
        // Lucene keeps the write lock of a writer whose close failed: it is rolled back, and a reset reopens the folder.
        _files.Close(keep: !_rollbackNeeded, e => _logger.LogWarning(e, "Index {Index}: closing its writer failed; it re-indexes from its last commit", Name));
        // Uncommitted reduce work is discarded with the store's open transaction.
        _reduceStore?.Dispose();
        if (_temporaryReduceFolder is not null)
        {
            try
            {
                Directory.Delete(_temporaryReduceFolder, recursive: true);
            }
            catch (IOException)
            {
            }
        }
        (_mapper as IDisposable)?.Dispose();
        Volatile.Read(ref _batchDone).TrySetResult();
    }
}
