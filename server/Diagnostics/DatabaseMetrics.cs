using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing;

namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// The metrics of one open database: a component every database opens with (after its indexes),
/// which records its merged transactions and index batches with tags built once, and gives the
/// scrape its index and subscription labels (capped: past <see cref="MetricsOptions.MaxIndexSeries"/>
/// names, "_other").
/// </summary>
internal sealed class DatabaseMetrics : IAsyncDisposable, ITransactionMergerObserver
{
    private readonly ServerMetrics _metrics;
    private readonly KeyValuePair<string, object?>[] _tags;
    private readonly Dictionary<string, KeyValuePair<string, object?>[]> _indexTags = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, string> _subscriptionLabels = new(StringComparer.OrdinalIgnoreCase);
    private readonly IDisposable? _batches;

    public DatabaseMetrics(ServerMetrics metrics, DocumentDatabase database)
    {
        _metrics = metrics;
        Database = database;
        Label = metrics.DatabaseLabel(database.Name);
        _tags = [new("database", Label)];
        database.Merger.Observer = this;
        _batches = database.GetComponent<IndexStore>()?.SubscribeBatches(OnBatch);
        metrics.Opened(this);
    }

    public DocumentDatabase Database { get; }

    /// <summary>The <c>database</c> label: the name, or "_other" past the cap.</summary>
    public string Label { get; }

    public KeyValuePair<string, object?>[] Tags => _tags;

    /// <summary>Whether this database is past the database cap: its indexes and subscriptions are all "_other" then.</summary>
    private bool IsOther => ReferenceEquals(Label, ServerMetrics.Other);

    public void Committed(int commands, TimeSpan commit)
    {
        _metrics.MergerBatchSize.Record(commands, _tags);
        _metrics.MergerCommitDuration.Record(commit.TotalSeconds, _tags);
    }

    private void OnBatch(Indexing.Index index, IndexingBatch batch) =>
        _metrics.IndexBatchDuration.Record(batch.DurationInMs / 1000, IndexTags(index.Name));

    /// <summary>
    /// The tags of an index's series: database and index (the name while fewer than
    /// <see cref="MetricsOptions.MaxIndexSeries"/> indexes of the database have one, else "_other";
    /// always "_other" in a database past the database cap, so that the label sets of the
    /// "_other" database stay one per family).
    /// </summary>
    public KeyValuePair<string, object?>[] IndexTags(string index)
    {
        lock (_indexTags)
        {
            if (_indexTags.TryGetValue(index, out var tags))
            {
                return tags;
            }
            if (!IsOther && _indexTags.Count - (_indexTags.ContainsKey(ServerMetrics.Other) ? 1 : 0) < _metrics.Options.MaxIndexSeries)
            {
                tags = [new("database", Label), new("index", index)];
                _indexTags[index] = tags;
                return tags;
            }
            if (!_indexTags.TryGetValue(ServerMetrics.Other, out var other))
            {
                other = [new("database", Label), new("index", ServerMetrics.Other)];
                _indexTags[ServerMetrics.Other] = other;
            }
            return other;
        }
    }

    /// <summary>The <c>subscription</c> label of a subscription: its name, or "_other" past the cap (or in a database past its own).</summary>
    public string SubscriptionLabel(string name)
    {
        lock (_subscriptionLabels)
        {
            if (_subscriptionLabels.TryGetValue(name, out var label))
            {
                return label;
            }
            if (IsOther || _subscriptionLabels.Count >= _metrics.Options.MaxIndexSeries)
            {
                return ServerMetrics.Other;
            }
            _subscriptionLabels[name] = name;
            return name;
        }
    }

    /// <summary>
    /// Gives back the labels of indexes that are gone (deleted, or a replacement swapped in under
    /// its original's name): read at each reading of the gauges from the indexes that exist, so a
    /// database that deletes and creates indexes never runs out of places. Their series are forgotten.
    /// </summary>
    public void RetainIndexes(IReadOnlySet<string> existing)
    {
        List<string>? gone = null;
        lock (_indexTags)
        {
            foreach (var name in _indexTags.Keys)
            {
                if (name != ServerMetrics.Other && !existing.Contains(name))
                {
                    (gone ??= []).Add(name);
                }
            }
            if (gone is null)
            {
                return;
            }
            foreach (var name in gone)
            {
                _indexTags.Remove(name);
            }
        }
        foreach (var name in gone)
        {
            _metrics.Forget(Label, "index", name);
        }
    }

    /// <summary>The same for subscriptions: the labels of deleted subscriptions go back.</summary>
    public void RetainSubscriptions(IReadOnlySet<string> existing)
    {
        List<string>? gone = null;
        lock (_subscriptionLabels)
        {
            foreach (var name in _subscriptionLabels.Keys)
            {
                if (!existing.Contains(name))
                {
                    (gone ??= []).Add(name);
                }
            }
            if (gone is null)
            {
                return;
            }
            foreach (var name in gone)
            {
                _subscriptionLabels.Remove(name);
            }
        }
        foreach (var name in gone)
        {
            _metrics.Forget(Label, "subscription", name);
        }
    }

    public ValueTask DisposeAsync()
    {
        _metrics.Closed(this);
        if (ReferenceEquals(Database.Merger.Observer, this))
        {
            Database.Merger.Observer = null;
        }
        _batches?.Dispose();
        return ValueTask.CompletedTask;
    }
}
