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

    public void Committed(int commands, TimeSpan commit)
    {
        _metrics.MergerBatchSize.Record(commands, _tags);
        _metrics.MergerCommitDuration.Record(commit.TotalSeconds, _tags);
    }

    private void OnBatch(Indexing.Index index, IndexingBatch batch) =>
        _metrics.IndexBatchDuration.Record(batch.DurationInMs / 1000, IndexTags(index.Name));

    /// <summary>The tags of an index's series: database and index (the name, or "_other" past the cap).</summary>
    public KeyValuePair<string, object?>[] IndexTags(string index)
    {
        lock (_indexTags)
        {
            if (_indexTags.TryGetValue(index, out var tags))
                return tags;
            var label = _indexTags.Count < _metrics.Options.MaxIndexSeries ? index : ServerMetrics.Other;
            if (label == ServerMetrics.Other && _indexTags.TryGetValue(ServerMetrics.Other, out var other))
                return other;
            tags = [new("database", Label), new("index", label)];
            _indexTags[label] = tags;
            return tags;
        }
    }

    /// <summary>The <c>subscription</c> label of a subscription: its name, or "_other" past the cap.</summary>
    public string SubscriptionLabel(string name)
    {
        lock (_subscriptionLabels)
        {
            if (_subscriptionLabels.TryGetValue(name, out var label))
                return label;
            label = _subscriptionLabels.Count < _metrics.Options.MaxIndexSeries ? name : ServerMetrics.Other;
            _subscriptionLabels[name] = label;
            return label;
        }
    }

    public ValueTask DisposeAsync()
    {
        _metrics.Closed(this);
        if (ReferenceEquals(Database.Merger.Observer, this))
            Database.Merger.Observer = null;
        _batches?.Dispose();
        return ValueTask.CompletedTask;
    }
}
