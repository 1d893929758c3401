using System.Diagnostics;
using System.Diagnostics.Metrics;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Subscriptions;

namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// The gauges of a server, read when a collection asks (a scrape of <c>/metrics</c>, an OTLP export)
/// from the numbers the stats routes show: sizes and document counts (<c>/databases/*/stats</c>),
/// index entries, lag and errors (<c>/indexes/stats</c>), subscription lag and workers
/// (<c>/subscriptions</c>), changes connections (<c>/changes/debug</c>), certificate expiry
/// (<c>/admin/certificates</c>). Only open databases are read: a scrape never opens one. The index
/// and subscription readings, which walk their backlogs (each reading at most
/// <see cref="MaxLagCounted"/> documents: a subscription whose query matches few of a large
/// collection stops there too, not at its collection's end, and all of them together at most
/// <see cref="MaxLagReadPerScrape"/>), are taken once per second at most and shared by their gauges.
/// </summary>
internal sealed class ObservedGauges
{
    /// <summary>Items an index's or subscription's lag is counted up to: past it the gauge reads this.</summary>
    public const long MaxLagCounted = 100_000;

    /// <summary>
    /// Documents one reading of every index's lag may read in all, and as many for every
    /// subscription's (a scrape's work is bounded whatever the number of databases and indexes).
    /// Once it is spent, each further index or subscription reads one document, so a lagging one
    /// never shows 0: its lag reads as what was counted.
    /// </summary>
    public const long MaxLagReadPerScrape = 200_000;

    private static readonly long ReadingLifetime = Stopwatch.Frequency;

    private readonly ServerMetrics _metrics;
    private readonly string _dataDir;
    private readonly Security.ServerSecurity? _security;
    private readonly Lock _lock = new();
    private (long At, List<IndexReading> Indexes)? _indexes;
    private (long At, List<SubscriptionReading> Subscriptions)? _subscriptions;

    public ObservedGauges(ServerMetrics metrics, string dataDir, Security.ServerSecurity? security)
    {
        _metrics = metrics;
        _dataDir = dataDir;
        _security = security;
        var meter = metrics.Meter;
        meter.CreateObservableGauge("jackdaw.storage.journal.bytes", () => PerDatabase(d => d.Database.GetStorageStats().JournalSize), "By", "Bytes of the journal files, by database.");
        meter.CreateObservableGauge("jackdaw.storage.data.bytes", () => PerDatabase(d => d.Database.GetStorageStats().DataFileSize), "By", "Bytes of the data file, by database.");
        meter.CreateObservableGauge("jackdaw.documents", () => PerDatabase(DocumentCount), "{document}", "Documents, by database.");
        meter.CreateObservableGauge("jackdaw.changes.connections", () => PerDatabase(d => Changes.ChangesFeed.ConnectionCount(d.Database)), "{connection}", "Open changes-feed connections (WebSocket and event stream), by database.");
        meter.CreateObservableGauge("jackdaw.disk.free.bytes", DiskFree, "By", "Bytes free to this user on the data folder's file system.");
        meter.CreateObservableGauge("jackdaw.index.entries", () => Indexes(r => r.Entries), "{entry}", "Entries of an index, by database and index.");
        meter.CreateObservableGauge("jackdaw.index.lag.documents", () => Indexes(r => r.LagItems), "{document}", $"Documents and deletions an index has still to process (counted up to {MaxLagCounted}), by database and index.");
        meter.CreateObservableGauge("jackdaw.index.lag", () => IndexesSeconds(), "s", "Age of the oldest change an index has still to process (0 when up to date), by database and index.");
        meter.CreateObservableGauge("jackdaw.index.errors", () => Indexes(r => r.Errors), "{error}", $"Indexing errors an index keeps (at most {Indexing.Index.MaxErrors}), by database and index.");
        meter.CreateObservableGauge("jackdaw.subscription.lag.documents", () => Subscriptions(r => r.Pending), "{document}", $"Documents a subscription has still to deliver (counted up to {MaxLagCounted}), by database and subscription.");
        meter.CreateObservableGauge("jackdaw.subscription.workers", () => Subscriptions(r => r.Workers), "{worker}", "Workers connected to a subscription, by database and subscription.");
        meter.CreateObservableGauge("jackdaw.certificate.expiry", CertificateExpiry, "s", "Seconds until a certificate expires (negative once expired): the server's, and the registered ones soonest first (past the database cap, the soonest of the rest as \"_other\").");
    }

    private IEnumerable<Measurement<long>> PerDatabase(Func<DatabaseMetrics, long> read)
    {
        var measurements = new List<Measurement<long>>();
        foreach (var database in _metrics.OpenDatabases)
        {
            try
            {
                measurements.Add(new Measurement<long>(read(database), database.Tags));
            }
            catch (Exception e) when (e is ObjectDisposedException or InvalidOperationException or Errors.DatabaseUnavailableException)
            {
                // Closing meanwhile: it is gone from the next reading.
            }
        }
        return measurements;
    }

    private static long DocumentCount(DatabaseMetrics database)
    {
        using var reader = database.Database.BeginRead();
        return reader.DocumentCount;
    }

    private IEnumerable<Measurement<long>> DiskFree()
    {
        long free;
        try
        {
            free = new DriveInfo(_dataDir).AvailableFreeSpace;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return [];
        }
        return [new Measurement<long>(free)];
    }

    private IEnumerable<Measurement<long>> Indexes(Func<IndexReading, long> read) =>
        ReadIndexes().Select(r => new Measurement<long>(read(r), r.Tags)).ToList();

    private IEnumerable<Measurement<double>> IndexesSeconds() =>
        ReadIndexes().Select(r => new Measurement<double>(r.LagSeconds, r.Tags)).ToList();

    private List<IndexReading> ReadIndexes()
    {
        lock (_lock)
        {
            if (_indexes is { } cached && Stopwatch.GetTimestamp() - cached.At < ReadingLifetime)
            {
                return cached.Indexes;
            }
            var readings = new List<IndexReading>();
            var now = DateTime.UtcNow.Ticks;
            var budget = MaxLagReadPerScrape;
            foreach (var database in _metrics.OpenDatabases)
            {
                if (database.Database.GetComponent<IndexStore>() is not { } store)
                {
                    continue;
                }
                try
                {
                    using var reader = database.Database.BeginRead();
                    var indexes = store.Indexes;
                    var names = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
                    foreach (var index in indexes)
                    {
                        names.Add(index.Name);
                    }
                    database.RetainIndexes(names);
                    foreach (var index in indexes)
                    {
                        var (items, oldest) = index.Lag(reader, Math.Clamp(budget, 1, MaxLagCounted));
                        budget -= items;
                        readings.Add(new IndexReading(
                            database.IndexTags(index.Name),
                            index.EntriesCount,
                            items,
                            items == 0 ? 0 : Math.Max(0, TimeSpan.FromTicks(now - oldest).TotalSeconds),
                            index.GetErrors().Length));
                    }
                }
                catch (Exception e) when (e is ObjectDisposedException or InvalidOperationException or Errors.DatabaseUnavailableException)
                {
                    // A database or index closing meanwhile: read again at the next collection.
                }
            }
            _indexes = (Stopwatch.GetTimestamp(), readings);
            return readings;
        }
    }

    private IEnumerable<Measurement<long>> Subscriptions(Func<SubscriptionReading, long> read)
    {
        List<SubscriptionReading> readings;
        lock (_lock)
        {
            if (_subscriptions is { } cached && Stopwatch.GetTimestamp() - cached.At < ReadingLifetime)
            {
                readings = cached.Subscriptions;
            }
            else
            {
                readings = [];
                var budget = MaxLagReadPerScrape;
                foreach (var database in _metrics.OpenDatabases)
                {
                    if (database.Database.GetComponent<SubscriptionStore>() is not { } store)
                    {
                        continue;
                    }
                    try
                    {
                        var subscriptions = store.Subscriptions;
                        var names = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
                        foreach (var subscription in subscriptions)
                        {
                            names.Add(subscription.Record.Name);
                        }
                        database.RetainSubscriptions(names);
                        foreach (var subscription in subscriptions)
                        {
                            var name = subscription.Record.Name;
                            KeyValuePair<string, object?>[] tags = [new("database", database.Label), new("subscription", database.SubscriptionLabel(name))];
                            var max = Math.Clamp(budget, 1, MaxLagCounted);
                            var pending = subscription.CountPending(max, max, out _, out var scanned);
                            budget -= scanned;
                            readings.Add(new SubscriptionReading(tags, pending, subscription.Sessions.Count));
                        }
                    }
                    catch (Exception e) when (e is ObjectDisposedException or InvalidOperationException or Errors.DatabaseUnavailableException)
                    {
                        // Closing meanwhile.
                    }
                }
                _subscriptions = (Stopwatch.GetTimestamp(), readings);
            }
        }
        return readings.Select(r => new Measurement<long>(read(r), r.Tags)).ToList();
    }

    private IEnumerable<Measurement<double>> CertificateExpiry()
    {
        if (_security is null)
        {
            return [];
        }
        var now = DateTime.UtcNow;
        var measurements = new List<Measurement<double>>
        {
            new((_security.Certificate.NotAfter.ToUniversalTime() - now).TotalSeconds, new KeyValuePair<string, object?>("certificate", "server")),
        };
        var registered = _security.Store.All.OrderBy(d => d.NotAfter).ToList();
        var cap = _metrics.Options.MaxDatabaseSeries;
        foreach (var definition in registered.Take(cap))
        {
            measurements.Add(new((definition.NotAfter - now).TotalSeconds, new KeyValuePair<string, object?>("certificate", definition.Thumbprint)));
        }
        if (registered.Count > cap)
        {
            measurements.Add(new((registered[cap].NotAfter - now).TotalSeconds, new KeyValuePair<string, object?>("certificate", ServerMetrics.Other)));
        }
        return measurements;
    }

    private sealed record IndexReading(KeyValuePair<string, object?>[] Tags, long Entries, long LagItems, double LagSeconds, long Errors);

    private sealed record SubscriptionReading(KeyValuePair<string, object?>[] Tags, long Pending, long Workers);
}
