using System.Diagnostics;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Mapping;
using Jackdaw.Server.Indexing.Workers;
using Lucene.Net.Search;
using Microsoft.Extensions.Logging;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// One index: its definition, its Lucene directory and one indexing loop.
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
public sealed class Index : IAsyncDisposable, ITombstoneConsumer
{
    public static readonly TimeSpan CommitInterval = TimeSpan.FromSeconds(2);

    /// <summary>How long a caught-up index waits for more work before it commits what it indexed.</summary>
    public static readonly TimeSpan IdleCommitDelay = TimeSpan.FromMilliseconds(250);

    /// <summary>The time a batch may take: the priority's share of the indexing time.</summary>
    public static TimeSpan BatchTimeFor(IndexPriority priority) => priority switch
    {
        IndexPriority.Low => Batch.MaxTime / 4,
        IndexPriority.High => Batch.MaxTime * 2,
        _ => Batch.MaxTime,
    };

    /// <summary>Errors kept per index (the oldest go first).</summary>
    public const int MaxErrors = 500;

    /// <summary>Whether some entry of this index has several values in the field (then <c>F &gt;= a and F &lt; b</c> must stay two conditions).</summary>
    public bool IsMultiValued(string luceneName) => _files.IsMultiValued(luceneName);

    private readonly DocumentDatabase _database;
    private readonly ILogger _logger;
    private readonly IIndexMapper _mapper;
    private readonly string[] _lowerCollections;
    private readonly IndexFiles _files;
    private readonly MapDocuments _map;
    private readonly CleanupDeletedDocuments _cleanup;

    // Null for a map that loads nothing.
    private readonly HandleReferences? _references;
    private readonly CancellationTokenSource _stop = new();
    private readonly Func<string, FieldPlan> _planOf;
    private readonly Queue<IndexError> _errors = new();
    private readonly IDisposable _tombstoneRegistration;
    private readonly Dictionary<string, FieldPlan> _staticPlans = new(StringComparer.Ordinal);
    private readonly Dictionary<string, FieldPlan> _autoPlans = new(StringComparer.Ordinal);

    // Written by the loop only; published as one immutable snapshot for queries and stats.
    private Dictionary<string, CollectionPosition> _positions;
    private volatile IndexProgress _progress;
    private TaskCompletionSource _batchDone = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private TaskCompletionSource _wake = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private Task _loop = Task.CompletedTask;
    private long _lastCommitTimestamp;
    private bool _dirty;
    private volatile IndexState _state;
    private long _lastQueryingTicks;
    private long _lastIndexingTicks;
    private long _batchIds;

    private Index(DocumentDatabase database, IndexRecord record, IIndexMapper mapper, Analysis.IndexAnalyzers analyzers, string? folder, ILogger logger, Func<bool> paused, Func<string, LuceneDirectory>? openDirectory = null)
    {
        var definition = record.Definition;
        _database = database;
        Analyzers = analyzers;
        _definition = definition;
        _paused = paused;
        ReplacementOf = record.ReplacementOf;
        _yielding = ReplacementOf is not null;
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
                _autoPlans[field.LuceneName] = new FieldPlan(field.LuceneName, field.Indexing, false);
            _planOf = name => _autoPlans.TryGetValue(name, out var plan) ? plan : new FieldPlan(name, FieldIndexing.Default, false);
        }
        else
        {
            _planOf = name =>
            {
                if (_staticPlans.TryGetValue(name, out var plan))
                    return plan;
                var options = definition.OptionsOf(name);
                plan = new FieldPlan(name, options.Indexing, options.Stored, analyzers.For(name));
                _staticPlans[name] = plan;
                return plan;
            };
        }

        _tombstoneRegistration = new NoRegistration();
        // In memory for a test run (POST /indexes/test): nothing is written to disk or storage.
        _files = IndexFiles.Open(folder, openDirectory, analyzers.Writer, OnMergeFailed, logger, definition.Name, out _positions);
        _map = new MapDocuments(mapper, _files, _planOf, RecordError);
        _cleanup = new CleanupDeletedDocuments(_files, _lowerCollections);
        _references = mapper.UsesLoad ? new HandleReferences(_files, _map, _lowerCollections) : null;
        _progress = _openedProgress = new IndexProgress(new Dictionary<string, CollectionPosition>(_positions), CaughtUpTo: 0);
        _lastCommitTimestamp = Stopwatch.GetTimestamp();
        _committed = new Dictionary<string, CollectionPosition>(_positions);
        // Registered last: an index that failed to open holds no tombstones back.
        if (folder is not null)
            _tombstoneRegistration = database.Tombstones.Register(this);
    }

    private sealed class NoRegistration : IDisposable
    {
        public void Dispose()
        {
        }
    }

    /// <summary>
    /// An index in memory for a test run: no loop, no files, no tombstone hold. <see cref="RunTest"/>
    /// maps the first documents once; queries then run on it as on any index. Dispose it after.
    /// </summary>
    public static Index CreateInMemory(DocumentDatabase database, IndexDefinition definition, IIndexMapper mapper, Analysis.IndexAnalyzers analyzers, ILogger logger) =>
        new(database, new IndexRecord(definition, "", null, IndexLockMode.Unlock, IndexPriority.Normal, false), mapper, analyzers, null, logger, () => false);

    /// <summary>
    /// Maps at most <paramref name="maxDocuments"/> documents of the mapped collections (the first by
    /// etag), handing each map's output to <paramref name="observe"/>, then makes them searchable.
    /// </summary>
    /// <returns>How many documents were mapped.</returns>
    public int RunTest(int maxDocuments, TimeSpan maxTime, Action<string, MapOutput>? observe)
    {
        var started = Stopwatch.GetTimestamp();
        if (!_files.InMemory)
            throw new InvalidOperationException("Only an in-memory index runs a test.");
        _map.Observer = observe;
        var count = 0;
        var output = new MapOutput();
        using (var reader = _database.BeginRead())
        {
            var loader = _mapper.UsesLoad ? new SnapshotLoader(reader) : null;
            foreach (var collection in _lowerCollections)
            {
                foreach (var record in reader.GetDocumentsFrom(collection, 0, maxDocuments - count))
                {
                    if (Stopwatch.GetElapsedTime(started) > maxTime)
                        break;
                    _map.Map(record, output, loader, timer: null);
                    count++;
                }
                if (count >= maxDocuments || Stopwatch.GetElapsedTime(started) > maxTime)
                    break;
            }
        }
        _files.Refresh();
        _map.Observer = null;
        return count;
    }

    private volatile IndexDefinition _definition;
    private readonly Func<bool> _paused;

    // The progress the index was opened with: until a batch replaces it, no batch is visible yet.
    private readonly IndexProgress _openedProgress;
    private volatile bool _disabled;
    private int _activeSearchers;
    private Action? _deleteWhenUnused;

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
                Wake();
        }
    }

    private volatile bool _pausedAlone;

    /// <summary>This index alone paused for this run (<c>/admin/indexes/stop?name=</c>); not persisted.</summary>
    public bool Paused
    {
        get => _pausedAlone;
        set
        {
            _pausedAlone = value;
            if (!value)
                Wake();
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

    private static DateTime? Ticks(long ticks) => ticks == 0 ? null : new DateTime(ticks, DateTimeKind.Utc);

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
            index.BatchCompleted += onBatch;
        if (onCaughtUp is not null)
            index.CaughtUp += onCaughtUp;
        if (start)
            index.Start();
        return index;
    }

    /// <summary>Starts the indexing loop of an index opened without it.</summary>
    public void Start()
    {
        if (_loop == Task.CompletedTask && !_stop.IsCancellationRequested)
            _loop = Task.Run(RunAsync);
    }

    /// <summary>
    /// The analyzers its fields name, resolved when it opened: the index writes and queries with
    /// these until it is rebuilt. They are not disposed with the index (a query may still analyze its
    /// terms with them); they hold only per-thread token stream caches.
    /// </summary>
    public Analysis.IndexAnalyzers Analyzers { get; }

    /// <summary>The plan of a field this index writes (for queries).</summary>
    public FieldPlan PlanOf(string luceneName)
    {
        if (Definition.IsAuto)
            return _autoPlans.TryGetValue(luceneName, out var plan) ? plan : new FieldPlan(luceneName, FieldIndexing.Default, false);
        var options = Definition.OptionsOf(luceneName);
        return new FieldPlan(luceneName, options.Indexing, options.Stored, Analyzers.For(luceneName));
    }

    /// <summary>A searcher over everything indexed so far; release it with <see cref="Release"/>.</summary>
    /// <exception cref="ObjectDisposedException">The index was deleted, reset or replaced meanwhile (look it up again).</exception>
    public IndexSearcher Acquire()
    {
        MarkQueried();
        ObjectDisposedException.ThrowIf(_stop.IsCancellationRequested, this);
        Interlocked.Increment(ref _activeSearchers);
        try
        {
            return _files.AcquireSearcher();
        }
        catch
        {
            ReleaseSearcherCount();
            throw;
        }
    }

    public void Release(IndexSearcher searcher)
    {
        try
        {
            _files.ReleaseSearcher(searcher);
        }
        finally
        {
            ReleaseSearcherCount();
        }
    }

    private void ReleaseSearcherCount()
    {
        if (Interlocked.Decrement(ref _activeSearchers) == 0 && _stop.IsCancellationRequested)
            Interlocked.Exchange(ref _deleteWhenUnused, null)?.Invoke();
    }

    /// <summary>
    /// For a closed index that was replaced or deleted: runs <paramref name="delete"/> (removing its
    /// files) once no query still reads it, at once if none does.
    /// </summary>
    public void DeleteFilesWhenUnused(Action delete)
    {
        Volatile.Write(ref _deleteWhenUnused, delete);
        if (Volatile.Read(ref _activeSearchers) == 0)
            Interlocked.Exchange(ref _deleteWhenUnused, null)?.Invoke();
    }

    /// <summary>Marks the index queried now (an auto-index chosen by the planner).</summary>
    /// <remarks>An idle auto-index wakes up and catches up.</remarks>
    public void MarkQueried()
    {
        Interlocked.Exchange(ref _lastQueryingTicks, DateTime.UtcNow.Ticks);
        if (_state == IndexState.Idle)
        {
            _state = IndexState.Normal;
            Wake();
        }
    }

    /// <summary>Whether the index has not yet indexed everything in <paramref name="reader"/>'s snapshot for its collections.</summary>
    public bool IsStale(DocumentsReader reader)
    {
        var progress = _progress;
        if (progress.CaughtUpTo >= reader.LastEtag)
            return false;
        foreach (var collection in _lowerCollections)
        {
            var position = progress.Positions.GetValueOrDefault(collection);
            foreach (var _ in reader.GetDocumentsFrom(collection, position.Documents, 1))
                return true;
            foreach (var _ in reader.GetTombstonesFrom(collection, position.Tombstones, 1))
                return true;
        }
        if (_mapper.UsesLoad)
        {
            // A change of any document may change what the map loaded.
            var references = progress.Positions.GetValueOrDefault(HandleReferences.Position);
            foreach (var _ in reader.GetDocumentsFrom(null, references.Documents, 1))
                return true;
            foreach (var _ in reader.GetTombstonesFrom(null, references.Tombstones, 1))
                return true;
        }
        return false;
    }

    /// <summary>
    /// A query of an index that has not yet made a batch visible since it was opened (just created,
    /// or reset) waits for that first batch, at most <paramref name="timeout"/>, as RavenDB's do: the
    /// first query of a new auto-index over a small collection answers with its documents rather
    /// than nothing. An index that is up to date, stopped, disabled or in error is not waited for.
    /// </summary>
    public async Task WaitForFirstBatchAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        var deadline = Stopwatch.GetTimestamp() + (long)(timeout.TotalSeconds * Stopwatch.Frequency);
        var woken = false;
        while (ReferenceEquals(_progress, _openedProgress))
        {
            var done = Volatile.Read(ref _batchDone).Task;
            if (_state != IndexState.Normal || _disabled || _pausedAlone || _paused() || _stop.IsCancellationRequested || _lastBatchFailed)
                return;
            using (var reader = _database.BeginRead())
            {
                if (!IsStale(reader))
                    return;
            }
            if (!woken)
            {
                _refreshWanted = true;
                Wake();
                woken = true;
            }
            if (!await WaitForBatchAsync(done, deadline, cancellationToken).ConfigureAwait(false))
                return;
        }
    }

    /// <summary>
    /// Completes when the index has indexed every change up to <paramref name="etag"/> (false after
    /// <paramref name="timeout"/>, or when the index is in error).
    /// </summary>
    public async Task<bool> WaitForEtagAsync(long etag, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var deadline = Stopwatch.GetTimestamp() + (long)(timeout.TotalSeconds * Stopwatch.Frequency);
        while (true)
        {
            var done = Volatile.Read(ref _batchDone).Task;
            if (_progress.CaughtUpTo >= etag)
                return true;
            // Asked on every pass: a refresh that published an earlier batch cleared the wish,
            // and the batch that reaches the etag must not wait for the refresh interval.
            _refreshWanted = true;
            Wake();
            using (var reader = _database.BeginRead())
            {
                if (!IsStale(reader) && reader.LastEtag >= etag)
                    return true;
            }
            if (_state == IndexState.Error)
                return false;
            ObjectDisposedException.ThrowIf(_stop.IsCancellationRequested, this);
            if (!await WaitForBatchAsync(done, deadline, cancellationToken).ConfigureAwait(false))
                return false;
        }
    }

    /// <summary>Waits for the batch signal <paramref name="done"/> until <paramref name="deadline"/> (a timestamp); false when it passed first.</summary>
    private static async Task<bool> WaitForBatchAsync(Task done, long deadline, CancellationToken cancellationToken)
    {
        var left = deadline - Stopwatch.GetTimestamp();
        if (left <= 0)
            return false;
        try
        {
            await done.WaitAsync(TimeSpan.FromSeconds((double)left / Stopwatch.Frequency), cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
    }

    /// <summary>The last errors (at most <see cref="MaxErrors"/>), oldest first.</summary>
    public IndexError[] GetErrors()
    {
        lock (_errors)
            return _errors.ToArray();
    }

    /// <summary>The Lucene segments of what is searchable now (a query reads each).</summary>
    public int SegmentsCount => _files.ReadSearchable(static reader => reader.Leaves.Count);

    /// <summary>The number of entries (Lucene documents) searchable now.</summary>
    public int EntriesCount => _files.ReadSearchable(static reader => reader.NumDocs);

    /// <summary>Makes an idle auto-index idle (it stops indexing until a query needs it).</summary>
    public void SetIdle()
    {
        if (_state == IndexState.Normal)
            _state = IndexState.Idle;
    }

    private void Wake() => Volatile.Read(ref _wake).TrySetResult();

    private void ResetWake() => Interlocked.Exchange(ref _wake, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));

    // Wakes whoever waits for the loop's next batch (queries waiting for progress).
    private void SignalBatchDone() => Interlocked.Exchange(ref _batchDone, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();

    /// <summary>
    /// A batch, refresh or commit failed (the disk, Lucene): the index goes back to its last commit
    /// before it goes on, the error is recorded, and the loop waits (<see cref="BackOffAsync"/>).
    /// </summary>
    private Task<bool> FailedAsync(Exception e, string action, string what, CancellationToken token)
    {
        _rollbackNeeded = true;
        _logger.LogError(e, "Index {Index}: {What} failed; it goes back to its last commit and indexes again from there", Name, what);
        RecordError("", action, e.Message);
        return BackOffAsync(token);
    }

    private async Task RunAsync()
    {
        var token = _stop.Token;
        while (!token.IsCancellationRequested)
        {
            var wake = Volatile.Read(ref _wake).Task;
            var seenEtag = _database.LastEtag;
            var batchStarted = Stopwatch.GetTimestamp();
            bool more;
            try
            {
                if (_rollbackNeeded)
                    RollBackToLastCommit();
                var running = _state is IndexState.Normal && !_disabled && !_pausedAlone && !_paused();
                more = running && RunBatch();
                _lastBatchFailed = false;
                if (!more && running)
                {
                    if (ReplacementOf is not null)
                        MergeAfterBuild();
                    CaughtUp?.Invoke(this);
                }
            }
            catch (Exception) when (token.IsCancellationRequested || _database.IsClosing)
            {
                // Closing: no commit keeps what this batch did (DisposeAsync rolls back).
                _rollbackNeeded = true;
                break;
            }
            catch (Exception e)
            {
                // Not a document's fault (those are index errors): the disk, Lucene. Try again later.
                _lastBatchFailed = true;
                // Queries waiting for a batch look again (they see the failure).
                SignalBatchDone();
                if (!await FailedAsync(e, "Indexing", "a batch", token).ConfigureAwait(false))
                    break;
                // Straight to the rollback: a refresh now would publish the failed batch's
                // positions as searchable.
                continue;
            }
            if (!more && _refreshPending)
            {
                // Caught up with a batch not yet searchable: refresh when its interval is up (or a
                // query asks), then look for work again.
                try
                {
                    // A replacement that caught up refreshes at once: its swap waits for it.
                    var left = ReplacementOf is not null ? TimeSpan.Zero : _refreshInterval - Stopwatch.GetElapsedTime(_lastRefresh);
                    if (left > TimeSpan.Zero && !_refreshWanted)
                        await Task.WhenAny(Task.Delay(left, token), wake).ConfigureAwait(false);
                    if (token.IsCancellationRequested)
                        break;
                    var timer = new BatchTimer();
                    if (_refreshWanted || wake.IsCompleted)
                        Refresh(timer);
                    else
                        RefreshOnInterval(timer, streaming: _database.LastEtag != seenEtag);
                    timer.EndLoop();
                    Publish(timer);
                }
                catch (Exception) when (token.IsCancellationRequested || _database.IsClosing)
                {
                    _rollbackNeeded = true;
                    break;
                }
                catch (Exception e)
                {
                    if (!await FailedAsync(e, "Refresh", "a refresh", token).ConfigureAwait(false))
                        break;
                }
                SignalBatchDone();
                if (wake.IsCompleted)
                    ResetWake();
                continue;
            }
            SignalBatchDone();
            var lastEtag = _database.LastEtag;
            if (lastEtag != _etagSeenWriting)
            {
                _etagSeenWriting = lastEtag;
                _lastWriteSeen = Stopwatch.GetTimestamp();
            }
            if (more && ReplacementOf is not null && (Stopwatch.GetElapsedTime(_lastWriteSeen) < YieldWindow || OriginalQueried?.Invoke() == true))
            {
                // A replacement building while the database serves writes or its original answers
                // queries yields: short batches, each followed by a rest three times as long.
                _yielding = true;
                var rest = Stopwatch.GetElapsedTime(batchStarted) * YieldingRestFactor;
                try
                {
                    await Task.WhenAny(Task.Delay(rest < MaxYieldingRest ? rest : MaxYieldingRest, token), wake).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    break;
                }
                if (wake.IsCompleted)
                    ResetWake();
                continue;
            }
            _yielding = false;
            if (more)
            {
                // A low-priority index leaves the cores to the others between its batches.
                if (Priority == IndexPriority.Low)
                {
                    try
                    {
                        await Task.Delay(50, token).ConfigureAwait(false);
                    }
                    catch (OperationCanceledException)
                    {
                        break;
                    }
                }
                continue;
            }
            try
            {
                var commit = _database.Notifications.WaitForEtagAsync(seenEtag + 1, token);
                if (_dirty)
                {
                    // Caught up with uncommitted work: commit unless more comes soon (a steady
                    // stream of writes then commits every CommitInterval from the batches).
                    var idle = Task.Delay(IdleCommitDelay, token);
                    await Task.WhenAny(commit, wake, _database.Notifications.Closed, idle).ConfigureAwait(false);
                    if (idle.IsCompletedSuccessfully && !commit.IsCompleted && !wake.IsCompleted)
                        CommitIdle();
                    if (!commit.IsCompleted && !wake.IsCompleted && !_database.Notifications.Closed.IsCompleted)
                        await Task.WhenAny(commit, wake, _database.Notifications.Closed).WaitAsync(token).ConfigureAwait(false);
                }
                else
                {
                    // Caught up with nothing to commit: whatever failed before is behind it.
                    _failuresInARow = 0;
                    await Task.WhenAny(commit, wake, _database.Notifications.Closed).WaitAsync(token).ConfigureAwait(false);
                }
                if (wake.IsCompleted)
                    ResetWake();
                if (_database.Notifications.Closed.IsCompleted)
                    break;
            }
            catch (OperationCanceledException)
            {
                break;
            }
            catch (Exception e)
            {
                if (token.IsCancellationRequested || _database.IsClosing)
                {
                    _rollbackNeeded = true;
                    break;
                }
                if (!await FailedAsync(e, "Commit", "the commit after catching up", token).ConfigureAwait(false))
                    break;
            }
        }
    }

    /// <summary>A commit on its own, after the loop caught up: recorded as a batch of one operation.</summary>
    private void CommitIdle()
    {
        if (!_dirty)
            return;
        var timer = new BatchTimer();
        var started = Stopwatch.GetTimestamp();
        Commit();
        timer.EndLoop();
        timer.AddCommit(Stopwatch.GetTimestamp() - started);
        Publish(timer);
    }

    private void Publish(BatchTimer timer)
    {
        var batch = IndexingBatch.Of(timer, Interlocked.Increment(ref _batchIds));
        Performance.Add(batch);
        try
        {
            BatchCompleted?.Invoke(this, batch);
        }
        catch (Exception e)
        {
            _logger.LogWarning(e, "Index {Index}: a batch listener failed", Name);
        }
    }

    /// <summary>One batch: returns whether there is more to do at once.</summary>
    private bool RunBatch()
    {
        var timer = new BatchTimer();
        var batchTime = _yielding ? YieldingBatchTime : BatchTimeFor(Priority);
        var batch = new Batch(new Dictionary<string, CollectionPosition>(_positions), batchTime, timer);
        using (var reader = _database.BeginRead())
            batch.Run(reader, _lowerCollections, _files, _map, _cleanup, _references);
        timer.EndLoop();

        if (batch.Count > 0)
        {
            var now = Stopwatch.GetTimestamp();
            if (Stopwatch.GetElapsedTime(_lastWork, now) > _refreshInterval * 2)
                _refreshInterval = RefreshInterval;
            _lastWork = now;
            _dirty = true;
            _refreshPending = true;
            BatchesRun++;
            Interlocked.Exchange(ref _lastIndexingTicks, DateTime.UtcNow.Ticks);
        }
        _positions = batch.Positions;
        _pendingProgress = new IndexProgress(batch.Positions, batch.Full ? (_pendingProgress ?? _progress).CaughtUpTo : batch.SnapshotEtag);
        // Queries see a batch once the searcher is refreshed, and only then does the index count as
        // having indexed it. A refresh flushes a segment (and resolves the delete-by-id terms): after
        // a big batch, or when a query waits, at once; after the small batches a stream of writes
        // makes, at most every RefreshInterval (one tiny segment per durable commit cost 4-5× the
        // CPU of a PUT).
        if (!_refreshPending)
            _progress = _pendingProgress;
        else if (_yielding && !_refreshWanted)
        {
            // A replacement that yields is not queried before its swap: it refreshes (for its
            // progress) at most every MaxRefreshInterval, not after each short batch.
            if (Stopwatch.GetElapsedTime(_lastRefresh) >= MaxRefreshInterval)
                Refresh(timer);
        }
        else if (batch.Full || _refreshWanted)
            Refresh(timer);
        else if (Stopwatch.GetElapsedTime(_lastRefresh) >= _refreshInterval)
            RefreshOnInterval(timer, streaming: false);
        if (_dirty && (_commitSoon || Stopwatch.GetElapsedTime(_lastCommitTimestamp) > CommitInterval))
        {
            var commitStarted = Stopwatch.GetTimestamp();
            Commit();
            timer.AddCommit(Stopwatch.GetTimestamp() - commitStarted);
        }
        CheckErrorRate();
        if (batch.Count > 0 || timer.Committed)
            Publish(timer);
        return batch.Full;
    }

    /// <summary>The longest batch of a replacement that yields to requests (<see cref="OriginalQueried"/>).</summary>
    public static readonly TimeSpan YieldingBatchTime = TimeSpan.FromMilliseconds(250);

    /// <summary>A yielding replacement rests this many times as long as its batch took: a quarter of a core at most.</summary>
    public const int YieldingRestFactor = 3;

    private static readonly TimeSpan MaxYieldingRest = YieldingBatchTime * YieldingRestFactor;

    // Whether the next batch is a yielding one (short); a replacement starts yielding.
    private bool _yielding;

    /// <summary>A replacement yields while the database had a write, or its original a query, this recently.</summary>
    public static readonly TimeSpan YieldWindow = TimeSpan.FromSeconds(1);

    private long _etagSeenWriting;
    private long _lastWriteSeen;

    /// <summary>
    /// For a replacement (<see cref="ReplacementOf"/>): whether the index it replaces answered a
    /// query lately. While it did, or while writes come in, the replacement builds in short batches
    /// with rests three times as long (25% of a core), so that the requests keep most of the
    /// machine: it takes longer to build, and the swap happens when it caught up as before.
    /// </summary>
    public Func<bool>? OriginalQueried { get; set; }

    /// <summary>Whether a query used the index within <paramref name="window"/>.</summary>
    public bool QueriedWithin(TimeSpan window) => DateTime.UtcNow.Ticks - Interlocked.Read(ref _lastQueryingTicks) < window.Ticks;

    /// <summary>The shortest time between two refreshes while writes stream in (a query that waits refreshes at once).</summary>
    public static readonly TimeSpan RefreshInterval = TimeSpan.FromMilliseconds(100);

    /// <summary>The longest a small batch waits to become searchable while more writes stream in.</summary>
    public static readonly TimeSpan MaxRefreshInterval = TimeSpan.FromSeconds(1);

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
    private volatile bool _lastBatchFailed;

    private bool _refreshPending;
    private IndexProgress? _pendingProgress;
    private long _lastRefresh;
    private volatile bool _refreshWanted;

    /// <summary>The most segments a replacement keeps when it caught up, before its swap.</summary>
    public const int SegmentsAfterBuild = 4;

    private bool _mergedAfterBuild;

    /// <summary>
    /// A replacement built in short batches (yielding to requests) is made of many small segments,
    /// fewer than Lucene's merge policy merges on its own; a query reads each one (the swapped-in
    /// index answered at 60% of the old one's rate). Once, when it first caught up, it is merged
    /// down to <see cref="SegmentsAfterBuild"/> segments and refreshed, before the swap.
    /// </summary>
    private void MergeAfterBuild()
    {
        if (_mergedAfterBuild)
            return;
        if (SegmentsCount > SegmentsAfterBuild || _refreshPending)
        {
            var timer = new BatchTimer();
            var started = Stopwatch.GetTimestamp();
            _files.ForceMerge(SegmentsAfterBuild);
            Commit();
            timer.AddCommit(Stopwatch.GetTimestamp() - started);
            Refresh(timer);
            timer.EndLoop();
            Publish(timer);
        }
        // Only once it worked: a failure rolls back and the replacement merges when it caught up again.
        _mergedAfterBuild = true;
    }

    /// <summary>
    /// A refresh because the interval was up: when writes kept coming while it waited
    /// (<paramref name="streaming"/>), the next one comes twice as late.
    /// </summary>
    private void RefreshOnInterval(BatchTimer timer, bool streaming)
    {
        Refresh(timer);
        if (streaming)
            _refreshInterval = TimeSpan.FromTicks(Math.Min(_refreshInterval.Ticks * 2, MaxRefreshInterval.Ticks));
    }

    /// <summary>Makes everything written searchable and publishes the progress that goes with it.</summary>
    private void Refresh(BatchTimer? timer)
    {
        var started = Stopwatch.GetTimestamp();
        _refreshWanted = false;
        _files.Refresh();
        _progress = _pendingProgress ?? _progress;
        _refreshPending = false;
        _lastRefresh = Stopwatch.GetTimestamp();
        timer?.AddRefresh(_lastRefresh - started);
    }

    // A background merge that failed (the disk): its segments stay as they were and Lucene merges
    // them at a later flush; nothing is lost, but it is said.
    private void OnMergeFailed(Exception e)
    {
        _logger.LogError(e, "Index {Index}: a background merge failed; its segments stay and are merged later", Name);
        RecordError("", "Merge", e.Message);
    }

    private void RecordError(string document, string action, string error)
    {
        lock (_errors)
        {
            _errors.Enqueue(new IndexError(document, action, error, DateTime.UtcNow));
            while (_errors.Count > MaxErrors)
                _errors.Dequeue();
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

    private void Commit()
    {
        _files.Commit(_positions);
        _dirty = false;
        _commitSoon = false;
        _failuresInARow = 0;
        _lastCommitTimestamp = Stopwatch.GetTimestamp();
        _committed = new Dictionary<string, CollectionPosition>(_positions);
    }

    // The positions of the last durable commit: tombstones at or below them may be removed.
    private volatile Dictionary<string, CollectionPosition> _committed = new();

    // Failures since the index last committed (or caught up with nothing to commit).
    private int _failuresInARow;

    // Set by a rollback: the next batch commits.
    private bool _commitSoon;

    /// <summary>Waits <see cref="RetryDelay"/> after one more failure; false when the index stops meanwhile.</summary>
    private async Task<bool> BackOffAsync(CancellationToken token)
    {
        try
        {
            // A second at least; the rest of a longer wait ends early for a query that waits.
            var wake = Volatile.Read(ref _wake).Task;
            var delay = RetryDelay(++_failuresInARow);
            await Task.Delay(TimeSpan.FromSeconds(1), token).ConfigureAwait(false);
            if (delay > TimeSpan.FromSeconds(1))
                await Task.WhenAny(Task.Delay(delay - TimeSpan.FromSeconds(1), token), wake).ConfigureAwait(false);
            token.ThrowIfCancellationRequested();
            if (wake.IsCompleted)
                ResetWake();
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>The wait before trying again after failures in a row: 1 s, doubled per failure up to 30 s (a full disk is not hammered).</summary>
    public static TimeSpan RetryDelay(int failuresInARow) =>
        TimeSpan.FromSeconds(Math.Min(30, 1 << Math.Clamp(failuresInARow - 1, 0, 5)));

    // Set when a batch, a refresh or a commit failed (the disk, Lucene): what the writer holds
    // since the last commit cannot be trusted. Lucene drops the documents of a segment whose flush
    // failed while the positions already moved past them, and a retried batch meets documents it
    // may have added before (twice, below the add horizon). The loop rolls the writer back.
    private bool _rollbackNeeded;

    /// <summary>
    /// Discards everything since the last durable commit (Lucene's rollback, which closes the
    /// writer), opens a new writer and searcher manager on the same files and takes the positions
    /// and add horizon of that commit: the loop indexes again from there, so nothing is missed or
    /// added twice. Throws while the disk still fails; the loop tries again a second later.
    /// Queries keep the searchers they hold; the next ones see the committed state.
    /// </summary>
    private void RollBackToLastCommit()
    {
        var positions = _files.RollBack(commit =>
        {
            // Queries see a progress no searcher they can get is behind: before the swap, the
            // lesser of the published and the committed positions (true of both searchers: a
            // commit may be ahead of the last refresh); after it, the commit's. A query that read
            // the progress before the swap acquires again (Generation).
            _pendingProgress = null;
            var published = _progress.Positions;
            var lesser = new Dictionary<string, CollectionPosition>(StringComparer.Ordinal);
            foreach (var (collection, committed) in commit)
            {
                if (published.TryGetValue(collection, out var shown))
                    lesser[collection] = new CollectionPosition(Math.Min(shown.Documents, committed.Documents), Math.Min(shown.Tombstones, committed.Tombstones));
            }
            _progress = new IndexProgress(lesser, CaughtUpTo: 0);
            Interlocked.Increment(ref _generation);
        });
        _progress = new IndexProgress(new Dictionary<string, CollectionPosition>(positions), CaughtUpTo: 0);
        // What it indexes again is committed at the first chance: a disk that fails again makes
        // it start over from there, not from further back each time.
        _commitSoon = true;
        _positions = positions;
        _refreshPending = false;
        _dirty = false;
        _files.SyncAgain();
        _rollbackNeeded = false;
        RollbacksDone++;
        _logger.LogWarning("Index {Index}: rolled back to its last commit; indexing again from there", Name);
    }

    /// <summary>Rollbacks to the last commit after a failure since the index was opened.</summary>
    public int RollbacksDone { get; private set; }

    private long _generation;

    /// <summary>
    /// Changes when the index rolls back (<see cref="RollBackToLastCommit"/>): the progress read
    /// before it may be ahead of the searchers after it. A query reads it before
    /// <see cref="Progress"/> and again after <see cref="Acquire"/>, and starts again when it changed.
    /// </summary>
    public long Generation => Interlocked.Read(ref _generation);

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
            return;
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
                Commit();
        }
        catch (Exception e)
        {
            _rollbackNeeded = true;
            _logger.LogWarning(e, "Index {Index}: the last commit failed; it re-indexes from its previous commit", Name);
        }
        // After a failure nothing since the last commit is kept (Lucene's commit on close would).
        // Lucene keeps the write lock of a writer whose close failed: it is rolled back, and a reset reopens the folder.
        _files.Close(keep: !_rollbackNeeded, e => _logger.LogWarning(e, "Index {Index}: closing its writer failed; it re-indexes from its last commit", Name));
        (_mapper as IDisposable)?.Dispose();
        Volatile.Read(ref _batchDone).TrySetResult();
    }
}
