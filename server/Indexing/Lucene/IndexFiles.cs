using System.Collections.Concurrent;
using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Indexing.Mapping;
using Jackdaw.Storage.Engine;
using Lucene.Net.Analysis;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;
using Microsoft.Extensions.Logging;
using LuceneDirectory = Lucene.Net.Store.Directory;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// The Lucene files of one index: its directory, its one writer, the near-real-time searchers over
/// what it wrote, and what each commit carries in its user data, so that files and positions
/// always agree:
/// <code>
/// position:{collection}   "{documents etag},{tombstones etag}" (CollectionPosition; "@references" too)
/// multivalued             JSON array of the fields some entry gave several values
/// add-horizon             the etag at or below which a document is added, not updated (when > 0)
/// </code>
/// <list type="bullet">
/// <item>The directory is a <see cref="PreadDirectory"/> unless the index says otherwise (tests
///   inject disk failures): positional reads without the locks of <c>NIOFSDirectory</c>
///   (memory-mapped searching was measured much slower for parallel searches in Lucene.Net 4.8,
///   lucenenet #1151). After each commit every new file and the folder are fsynced again
///   (Lucene.Net 4.8.0-beta00017 can mark a file for sync before its last buffer is written,
///   lucenenet #894), and files that cannot be opened are deleted: the index is rebuilt.</item>
/// <item>Only the index's loop writes, commits and rolls back (one writer thread per index: a
///   concurrent AddDocument race was fixed in Lucene.Net only after 4.8.0-beta00017, lucenenet
///   #935); queries acquire and release searchers from any thread.</item>
/// <item>A rollback (<see cref="RollBack"/>) replaces the writer and the searcher manager; a
///   searcher acquired from the old manager stays readable until it is released.</item>
/// </list>
/// </summary>
internal sealed class IndexFiles
{
    private const string PositionPrefix = "position:";
    private const string MultiValuedKey = "multivalued";
    private const string AddHorizonKey = "add-horizon";

    private readonly LuceneDirectory _directory;

    // Null for an index in memory (a test run): nothing is synced.
    private readonly string? _folder;
    private readonly Analyzer _analyzer;
    private readonly Action<Exception> _mergeFailed;
    private readonly HashSet<string> _syncedFiles = new(StringComparer.Ordinal);

    // Fields some entry gave several values (an array): ranges on them cannot be folded into one.
    private readonly ConcurrentDictionary<string, byte> _multiValued;

    // Replaced (by the loop) only when a failure rolls the index back to its last commit.
    private IndexWriter _writer;
    private SearcherManager _searchers;

    // Lucene's rollback closes the writer: set from then until a new writer is open.
    private bool _writerClosed;

    private IndexFiles(LuceneDirectory directory, string? folder, Analyzer analyzer, Action<Exception> mergeFailed, IndexWriter writer, SearcherManager searchers, long addHorizon, IEnumerable<string> multiValued)
    {
        _directory = directory;
        _folder = folder;
        _analyzer = analyzer;
        _mergeFailed = mergeFailed;
        _writer = writer;
        _searchers = searchers;
        AddHorizon = addHorizon;
        _multiValued = new ConcurrentDictionary<string, byte>(multiValued.Select(name => KeyValuePair.Create(name, (byte)0)), StringComparer.Ordinal);
    }

    /// <summary>
    /// Opens the files in <paramref name="folder"/> (made if missing) as a Lucene directory
    /// (<paramref name="openDirectory"/>, else a <see cref="PreadDirectory"/>), or in memory when it
    /// is null (a test run: nothing is written to disk or storage). Files a crash left unusable are
    /// deleted, and the index starts again from the first document. When it fails, nothing of it
    /// stays open (the write lock, the files).
    /// </summary>
    /// <param name="analyzer">The analyzer of the writer (per field: the index's analyzers).</param>
    /// <param name="mergeFailed">Called on Lucene's merge thread when a background merge fails.</param>
    /// <param name="positions">The positions of the commit the files were opened at (none when new).</param>
    public static IndexFiles Open(string? folder, Func<string, LuceneDirectory>? openDirectory, Analyzer analyzer, Action<Exception> mergeFailed, ILogger logger, string name, out Dictionary<string, CollectionPosition> positions)
    {
        LuceneDirectory directory;
        IndexWriter writer;
        if (folder is null)
        {
            directory = new RAMDirectory();
            (writer, positions) = (NewWriter(directory, analyzer, mergeFailed), new Dictionary<string, CollectionPosition>());
        }
        else
        {
            System.IO.Directory.CreateDirectory(folder);
            directory = openDirectory?.Invoke(folder) ?? new PreadDirectory(new DirectoryInfo(folder));
            try
            {
                (writer, positions) = OpenWriter(directory, analyzer, folder, logger, name, mergeFailed);
            }
            catch
            {
                directory.Dispose();
                throw;
            }
        }
        try
        {
            var addHorizon = -1L;
            var multiValued = Array.Empty<string>();
            if (folder is not null)
            {
                addHorizon = CommittedHorizon(writer, positions);
                if (writer.CommitData is { } data && data.TryGetValue(MultiValuedKey, out var multi))
                {
                    multiValued = JsonSerializer.Deserialize<string[]>(multi) ?? [];
                }
            }
            var searchers = new SearcherManager(writer, applyAllDeletes: true, searcherFactory: null);
            return new IndexFiles(directory, folder, analyzer, mergeFailed, writer, searchers, addHorizon, multiValued);
        }
        catch
        {
            try
            {
                writer.Rollback();
            }
            catch (Exception)
            {
                // The first failure is the one to report.
            }
            directory.Dispose();
            throw;
        }
    }

    /// <summary>Whether the files are in memory (a test run).</summary>
    public bool InMemory => _folder is null;

    /// <summary>
    /// Documents at or below this etag were first met by this index when it was empty (its first
    /// pass): no entry of theirs can exist yet, so they are added without a delete-by-id term, which
    /// Lucene otherwise resolves against every segment. -1 until the first batch sets it; 0 for an
    /// index that did not start empty. Kept in the commit data, so a restart mid-pass goes on adding.
    /// </summary>
    public long AddHorizon { get; set; }

    /// <summary>Whether some entry has several values in the field (then <c>F &gt;= a and F &lt; b</c> must stay two conditions).</summary>
    public bool IsMultiValued(string luceneName) => _multiValued.ContainsKey(luceneName);

    /// <summary>
    /// Writes the entries a map gave document <paramref name="id"/> in place of its earlier ones (by
    /// its <c>@id</c> term), or adds them for a document <paramref name="firstMet"/> below the add
    /// horizon; no entry deletes the earlier ones.
    /// </summary>
    public void WriteEntries(string id, string lowerId, List<IndexField[]> entries, Func<string, FieldPlan> planOf, List<string>? references, bool firstMet)
    {
        var idTerm = new Term(LuceneFields.Id, lowerId);
        foreach (var entry in entries)
        {
            foreach (var field in entry)
            {
                if (field.Value is IReadOnlyList<object?> { Count: > 1 } && !_multiValued.ContainsKey(field.Name))
                {
                    _multiValued[field.Name] = 0;
                }
            }
        }
        switch (entries.Count)
        {
            case 0 when firstMet:
                break;
            case 0:
                _writer.DeleteDocuments(idTerm);
                break;
            case 1 when firstMet:
                _writer.AddDocument(LuceneFields.Build(id, lowerId, entries[0], planOf, references));
                break;
            case 1:
                _writer.UpdateDocument(idTerm, LuceneFields.Build(id, lowerId, entries[0], planOf, references));
                break;
            default:
                var documents = new List<IEnumerable<IIndexableField>>(entries.Count);
                foreach (var entry in entries)
                {
                    documents.Add(LuceneFields.Build(id, lowerId, entry, planOf, references));
                }
                if (firstMet)
                {
                    _writer.AddDocuments(documents);
                }
                else
                {
                    _writer.UpdateDocuments(idTerm, documents);
                }
                break;
        }
    }

    /// <summary>
    /// Writes the result rows of a map-reduce key in place of its earlier ones (by its <c>@id</c>
    /// term, the key id's hex): each row's fields, and the row's JSON stored for queries to answer.
    /// <paramref name="firstMet"/>: the key has no rows in Lucene (added without a delete term).
    /// </summary>
    public void WriteResults(string keyId, List<(IndexField[] Fields, byte[] Json)> rows, Func<string, FieldPlan> planOf, bool firstMet = false)
    {
        var idTerm = new Term(LuceneFields.Id, keyId);
        var documents = new List<IEnumerable<IIndexableField>>(rows.Count);
        foreach (var (fields, json) in rows)
        {
            foreach (var field in fields)
            {
                if (field.Value is IReadOnlyList<object?> { Count: > 1 } && !_multiValued.ContainsKey(field.Name))
                {
                    _multiValued[field.Name] = 0;
                }
            }
            documents.Add(LuceneFields.BuildRow(keyId, fields, planOf, json));
        }
        // A key that has no rows yet needs no delete-by-id term (Lucene resolves each against every segment).
        if (firstMet)
        {
            _writer.AddDocuments(documents);
        }
        else
        {
            _writer.UpdateDocuments(idTerm, documents);
        }
    }

    /// <summary>Deletes every entry (a map-reduce index whose reduce store was lost starts over).</summary>
    public void DeleteAllEntries() => _writer.DeleteAll();

    /// <summary>Deletes the entries of the document whose lowercased id is <paramref name="lowerId"/>.</summary>
    public void DeleteEntries(string lowerId) => _writer.DeleteDocuments(new Term(LuceneFields.Id, lowerId));

    /// <summary>
    /// The ids (as stored) of the documents whose entries loaded one of <paramref name="ids"/>. The
    /// searcher is refreshed first, so entries written earlier in the batch are seen.
    /// </summary>
    public HashSet<string> FindReferrers(IEnumerable<string> ids)
    {
        _searchers.MaybeRefreshBlocking();
        var referrers = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var searcher = _searchers.Acquire();
        try
        {
            foreach (var id in ids)
            {
                var hits = searcher.Search(new TermQuery(new Term(LuceneFields.References, LuceneFields.Lower(id))), int.MaxValue);
                foreach (var hit in hits.ScoreDocs)
                {
                    referrers.Add(searcher.Doc(hit.Doc).Get(LuceneFields.DocumentId));
                }
            }
        }
        finally
        {
            _searchers.Release(searcher);
        }
        return referrers;
    }

    /// <summary>Makes everything written searchable (a near-real-time refresh: a flush, not a commit).</summary>
    public void Refresh() => _searchers.MaybeRefreshBlocking();

    /// <summary>Merges the segments down to at most <paramref name="segments"/>.</summary>
    public void ForceMerge(int segments) => _writer.ForceMerge(segments);

    /// <summary>A searcher over what was refreshed last; release it with <see cref="ReleaseSearcher"/>.</summary>
    public IndexSearcher AcquireSearcher()
    {
        // A rollback replaces the searcher manager and closes the old one: a caller that read the
        // old one just before takes the new one.
        while (true)
        {
            var searchers = Volatile.Read(ref _searchers);
            try
            {
                return searchers.Acquire();
            }
            catch (ObjectDisposedException) when (!ReferenceEquals(searchers, Volatile.Read(ref _searchers)))
            {
            }
        }
    }

    /// <summary>Releases a searcher, whichever manager it came from: a release only decrements the reader's count.</summary>
    public void ReleaseSearcher(IndexSearcher searcher) => Volatile.Read(ref _searchers).Release(searcher);

    /// <summary>Reads what is searchable now.</summary>
    public T ReadSearchable<T>(Func<IndexReader, T> read)
    {
        var searcher = AcquireSearcher();
        try
        {
            return read(searcher.IndexReader);
        }
        finally
        {
            ReleaseSearcher(searcher);
        }
    }

    /// <summary>
    /// A durable commit of everything written, carrying <paramref name="positions"/>, the
    /// multi-valued fields and the add horizon; then every new file is fsynced again.
    /// </summary>
    public void Commit(IReadOnlyDictionary<string, CollectionPosition> positions)
    {
        var data = new Dictionary<string, string>(StringComparer.Ordinal);
        if (!_multiValued.IsEmpty)
        {
            data[MultiValuedKey] = JsonSerializer.Serialize(_multiValued.Keys.Order(StringComparer.Ordinal).ToArray());
        }
        if (AddHorizon > 0)
        {
            data[AddHorizonKey] = AddHorizon.ToString(CultureInfo.InvariantCulture);
        }
        foreach (var (collection, position) in positions)
        {
            data[PositionPrefix + collection] = string.Create(CultureInfo.InvariantCulture, $"{position.Documents},{position.Tombstones}");
        }
        _writer.SetCommitData(data);
        _writer.Commit();
        SyncNewFiles();
    }

    /// <summary>
    /// Holds the last commit for a backup: its files stay on disk (the writer's later commits do
    /// not delete them) until the capture is disposed. Null for an index in memory. Safe from any
    /// thread: the deletion policy is synchronized. A rollback opens a new writer that keeps only
    /// the files of the commit it opens on: a capture older than that commit may then lose files,
    /// which the backup reports as the index having changed under it.
    /// </summary>
    public IndexCommitCapture? CaptureCommit()
    {
        if (InMemory)
        {
            return null;
        }
        var writer = _writer;
        var policy = (SnapshotDeletionPolicy)writer.Config.IndexDeletionPolicy;
        var commit = policy.Snapshot();
        return new IndexCommitCapture(_folder!, commit.FileNames.ToArray(), ReadPositions(commit.UserData), () => policy.Release(commit));
    }

    /// <summary>
    /// Discards everything written since the last commit (Lucene's rollback, which closes the
    /// writer), opens a new writer and searcher manager on the same files, and returns the commit's
    /// positions (its add horizon is taken too). <paramref name="beforeSwap"/> runs with them before
    /// queries get the new searchers. Throws while the disk still fails; the next call goes on from
    /// where this one stopped.
    /// </summary>
    public Dictionary<string, CollectionPosition> RollBack(Action<Dictionary<string, CollectionPosition>> beforeSwap)
    {
        if (!_writerClosed)
        {
            _writerClosed = true;
            _writer.Rollback();
        }
        // A rollback that failed may have kept the write lock (only this index writes this folder).
        if (IndexWriter.IsLocked(_directory))
        {
            IndexWriter.Unlock(_directory);
        }
        var writer = NewWriter(_directory, _analyzer, _mergeFailed);
        SearcherManager searchers;
        try
        {
            searchers = new SearcherManager(writer, applyAllDeletes: true, searcherFactory: null);
        }
        catch
        {
            writer.Rollback();
            throw;
        }
        var positions = ReadPositions(writer.CommitData);
        beforeSwap(positions);
        var old = _searchers;
        _writer = writer;
        _writerClosed = false;
        Volatile.Write(ref _searchers, searchers);
        old.Dispose();
        AddHorizon = CommittedHorizon(writer, positions);
        return positions;
    }

    /// <summary>
    /// After a rollback: segment names after the commit are used again by the new writer, so their
    /// files must be fsynced again at the next commit; and the commit may be one whose files our own
    /// fsync (after Lucene's) failed for: they are fsynced now.
    /// </summary>
    public void SyncAgain()
    {
        _syncedFiles.Clear();
        if (!InMemory)
        {
            SyncNewFiles();
        }
    }

    /// <summary>
    /// Closes the searchers, the writer and the directory. With <paramref name="keep"/> the writer
    /// closes as Lucene closes it (which commits); without, nothing since the last commit is kept.
    /// A writer whose close failed is rolled back (Lucene keeps its write lock otherwise) after
    /// <paramref name="closeFailed"/> is told.
    /// </summary>
    public void Close(bool keep, Action<Exception> closeFailed)
    {
        _searchers.Dispose();
        try
        {
            if (keep)
            {
                _writer.Dispose();
            }
            else if (!_writerClosed)
            {
                _writer.Rollback();
            }
        }
        catch (Exception e)
        {
            closeFailed(e);
            try
            {
                _writer.Rollback();
            }
            catch (Exception)
            {
                // The close's failure is the one logged.
            }
        }
        _directory.Dispose();
    }

    private static (IndexWriter, Dictionary<string, CollectionPosition>) OpenWriter(LuceneDirectory directory, Analyzer analyzer, string folder, ILogger logger, string name, Action<Exception> mergeFailed)
    {
        try
        {
            var writer = NewWriter(directory, analyzer, mergeFailed);
            return (writer, ReadPositions(writer.CommitData));
        }
        catch (Exception e) when (e is not LockObtainFailedException && e is IOException or CorruptIndexException or IndexFormatTooOldException or IndexFormatTooNewException or InvalidOperationException)
        {
            // Files a crash left unusable: the index starts again from the first document.
            logger.LogWarning(e, "Index {Index}: its files in {Folder} cannot be opened; it is rebuilt from the start", name, folder);
            foreach (var file in System.IO.Directory.GetFiles(folder))
            {
                File.Delete(file);
            }
            return (NewWriter(directory, analyzer, mergeFailed), new Dictionary<string, CollectionPosition>());
        }
    }

    // The add horizon a commit carries: -1 for an empty index (its first batch sets it), 0 when none.
    private static long CommittedHorizon(IndexWriter writer, Dictionary<string, CollectionPosition> positions) =>
        writer.NumDocs == 0 && positions.Count == 0 ? -1
        : writer.CommitData is { } committed && committed.TryGetValue(AddHorizonKey, out var horizon)
          && long.TryParse(horizon, NumberStyles.None, CultureInfo.InvariantCulture, out var parsed) ? parsed : 0;

    private static IndexWriter NewWriter(LuceneDirectory directory, Analyzer analyzer, Action<Exception> mergeFailed)
    {
        // A gap between the values of one field: a phrase never spans two of them.
        var config = new IndexWriterConfig(LuceneVersion.LUCENE_48, new ValueGapAnalyzer(analyzer))
        {
            OpenMode = OpenMode.CREATE_OR_APPEND,
            MergeScheduler = new ReportingMergeScheduler(mergeFailed),
            RAMBufferSizeMB = 64,
            // Lucene's default (only the last commit is kept), plus the commits a backup holds.
            IndexDeletionPolicy = new SnapshotDeletionPolicy(new KeepOnlyLastCommitDeletionPolicy()),
        };
        var writer = new IndexWriter(directory, config);
        try
        {
            if (!DirectoryReader.IndexExists(directory))
            {
                writer.Commit();
            }
            return writer;
        }
        catch
        {
            // Let go of the write lock: the next attempt (or the next open) takes it.
            try
            {
                writer.Rollback();
            }
            catch (Exception)
            {
                // The commit's failure is the one to report.
            }
            throw;
        }
    }

    private static Dictionary<string, CollectionPosition> ReadPositions(IDictionary<string, string>? data)
    {
        var positions = new Dictionary<string, CollectionPosition>(StringComparer.Ordinal);
        if (data is null)
        {
            return positions;
        }
        foreach (var (key, value) in data)
        {
            if (!key.StartsWith(PositionPrefix, StringComparison.Ordinal))
            {
                continue;
            }
            var parts = value.Split(',');
            if (parts.Length == 2 && long.TryParse(parts[0], CultureInfo.InvariantCulture, out var documents) && long.TryParse(parts[1], CultureInfo.InvariantCulture, out var tombstones))
            {
                positions[key[PositionPrefix.Length..]] = new CollectionPosition(documents, tombstones);
            }
        }
        return positions;
    }

    private void SyncNewFiles()
    {
        var folder = _folder!;
        var synced = false;
        foreach (var path in System.IO.Directory.GetFiles(folder))
        {
            var name = Path.GetFileName(path);
            if (name == "write.lock" || _syncedFiles.Contains(name))
            {
                continue;
            }
            try
            {
                FileDurability.SyncFile(path);
            }
            catch (FileNotFoundException)
            {
                continue; // merged away meanwhile
            }
            _syncedFiles.Add(name);
            synced = true;
        }
        if (synced)
        {
            FileDurability.SyncFolder(folder);
        }
        _syncedFiles.RemoveWhere(n => !File.Exists(Path.Combine(folder, n)));
    }
}
