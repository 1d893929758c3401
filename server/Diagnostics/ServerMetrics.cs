using System.Diagnostics;
using System.Diagnostics.Metrics;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Routing;

namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// One server's instruments: a <see cref="Meter"/> named "Jackdaw" owned by this instance (never a
/// static one: each server in a process shows only its own series), the request counters recorded
/// by the request pipeline, the merger and index histograms recorded by each open database's
/// <see cref="DatabaseMetrics"/>, and the gauges read at collection time from the numbers the stats
/// routes already show (<see cref="ObservedGauges"/>). With <see cref="MetricsOptions.Enabled"/>
/// false no listener is started, so every instrument stays disabled and records nothing.
/// Traces: the <see cref="Requests"/> activity source, started per request only when listened to.
/// </summary>
public sealed class ServerMetrics : IDisposable
{
    public const string MeterName = "Jackdaw";
    public const string ActivitySourceName = "Jackdaw.Requests";

    /// <summary>The label of every database, index or subscription past its cap: their values are summed under it.</summary>
    public const string Other = "_other";

    private static readonly double[] SecondsBounds = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
    private static readonly long[] BatchBounds = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

    private readonly Counter<long> _requests;
    private readonly Histogram<double> _requestDuration;
    private readonly Counter<long> _requestBytes;
    private readonly Counter<long> _responseBytes;
    private readonly Dictionary<string, string> _databaseLabels = new(StringComparer.OrdinalIgnoreCase);
    private readonly System.Collections.Concurrent.ConcurrentDictionary<DatabaseMetrics, bool> _open = new();
    private readonly RouteSeries _unmatched = new("unmatched");
    private RouteSeries[] _routes = [];
    private OpenTelemetryExport? _openTelemetry;

    public ServerMetrics(MetricsOptions options, string dataDir, Security.ServerSecurity? security, string version)
    {
        Options = options;
        Meter = new Meter(MeterName, version);
        Requests = new ActivitySource(ActivitySourceName, version);
        _requests = Meter.CreateCounter<long>("jackdaw.http.requests", "{request}", "Requests answered, by route template, method and status class.");
        _requestDuration = Meter.CreateHistogram("jackdaw.http.request.duration", "s", "Time from routing a request to its answer's end, by route template and method.", advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = SecondsBounds });
        _requestBytes = Meter.CreateCounter<long>("jackdaw.http.request.bytes", "By", "Request body bytes (of bodies with a Content-Length), by route template and method.");
        _responseBytes = Meter.CreateCounter<long>("jackdaw.http.response.bytes", "By", "Response body bytes (with a Content-Length, or written as one JSON body), by route template and method.");
        MergerBatchSize = Meter.CreateHistogram("jackdaw.merger.batch.size", "{command}", "Write commands merged into one durable transaction, by database.", advice: new InstrumentAdvice<long> { HistogramBucketBoundaries = BatchBounds });
        MergerCommitDuration = Meter.CreateHistogram("jackdaw.merger.commit.duration", "s", "Time from handing a merged transaction to the journal to its being durable (write and fsync), by database.", advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = SecondsBounds });
        IndexBatchDuration = Meter.CreateHistogram("jackdaw.index.batch.duration", "s", "Duration of an indexing batch, by database and index.", advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = SecondsBounds });
        Gauges = new ObservedGauges(this, dataDir, security);
        if (options.Enabled)
        {
            Exporter = new PrometheusExporter(Meter, options.MaxSeriesPerInstrument);
        }
        _openTelemetry = OpenTelemetryExport.Start(options, version);
    }

    public MetricsOptions Options { get; }

    /// <summary>This server's meter: "Jackdaw", version the server's.</summary>
    public Meter Meter { get; }

    /// <summary>The requests' trace spans: "{method} {route}", with the database and (for a query) the index.</summary>
    public ActivitySource Requests { get; }

    /// <summary>What <c>GET /metrics</c> writes; null when <see cref="MetricsOptions.Enabled"/> is false.</summary>
    public PrometheusExporter? Exporter { get; }

    internal Histogram<long> MergerBatchSize { get; }

    internal Histogram<double> MergerCommitDuration { get; }

    internal Histogram<double> IndexBatchDuration { get; }

    internal ObservedGauges Gauges { get; }

    /// <summary>The databases open now, each with its metrics.</summary>
    internal ICollection<DatabaseMetrics> OpenDatabases => _open.Keys;

    /// <summary>
    /// The component every database opens with (after its indexes): its <see cref="DatabaseMetrics"/>;
    /// none when <see cref="MetricsOptions.Enabled"/> is false (nothing would record: neither
    /// <c>/metrics</c> nor OpenTelemetry listens to the meter then), so a database then has no
    /// merger observer and no index-batch subscription, and pays nothing for them.
    /// </summary>
    public Func<DocumentDatabase, IAsyncDisposable>[] Components =>
        Options.Enabled ? [database => new DatabaseMetrics(this, database)] : [];

    /// <summary>Tells the route templates, in <see cref="RouteEndpoint{THandler}.Id"/> order, before the first request.</summary>
    public void UseRoutes(IEnumerable<string> templates) => _routes = templates.Select(t => new RouteSeries(t)).ToArray();

    /// <summary>
    /// Records a request answered: its route (<see cref="RouteEndpoint{THandler}.Id"/>, -1 when none
    /// matched), method, status, the <see cref="Stopwatch"/> timestamp it started at, and its body
    /// sizes (0: not known). Allocates nothing: the tags are the route's, built on first use.
    /// </summary>
    public void RequestCompleted(int route, HttpMethodKind method, int status, long started, long requestBytes, long responseBytes)
    {
        if (!_requests.Enabled)
        {
            return;
        }
        var routes = _routes;
        var series = (uint)route < (uint)routes.Length ? routes[route] : _unmatched;
        _requests.Add(1, series.RequestTags(method, RouteSeries.StatusClass(status)));
        var tags = series.MethodTags(method);
        _requestDuration.Record(Stopwatch.GetElapsedTime(started).TotalSeconds, tags);
        if (requestBytes > 0)
        {
            _requestBytes.Add(requestBytes, tags);
        }
        if (responseBytes > 0)
        {
            _responseBytes.Add(responseBytes, tags);
        }
    }

    /// <summary>The span of a request's route: named, with its route, method and status; the database when the route is under one.</summary>
    public void CompleteActivity(Activity activity, int route, HttpMethodKind method, int status, string path)
    {
        var routes = _routes;
        var series = (uint)route < (uint)routes.Length ? routes[route] : _unmatched;
        activity.DisplayName = series.ActivityName(method);
        activity.SetTag("http.request.method", RouteSeries.MethodName(method));
        activity.SetTag("http.route", series.Route);
        activity.SetTag("http.response.status_code", status);
        if (status >= 500)
        {
            activity.SetStatus(ActivityStatusCode.Error);
        }
        if (series.Route.StartsWith("/databases/*", StringComparison.Ordinal) && DatabaseOf(path) is { } database)
        {
            activity.SetTag("db.namespace", database);
        }
        activity.Stop();
    }

    private static string? DatabaseOf(string path)
    {
        const string prefix = "/databases/";
        if (!path.StartsWith(prefix, StringComparison.Ordinal))
        {
            return null;
        }
        var end = path.IndexOf('/', prefix.Length);
        return Uri.UnescapeDataString(end < 0 ? path[prefix.Length..] : path[prefix.Length..end]);
    }

    /// <summary>
    /// The <c>database</c> label of <paramref name="name"/>: its name while fewer than
    /// <see cref="MetricsOptions.MaxDatabaseSeries"/> databases have one (a deleted database gives
    /// its place back, <see cref="DatabaseDeleted"/>), "_other" otherwise.
    /// </summary>
    internal string DatabaseLabel(string name)
    {
        lock (_databaseLabels)
        {
            if (_databaseLabels.TryGetValue(name, out var label))
            {
                return label;
            }
            if (_databaseLabels.Count >= Options.MaxDatabaseSeries)
            {
                return Other;
            }
            _databaseLabels[name] = name;
            return name;
        }
    }

    /// <summary>A database was deleted: its label's place is free for the next database, and its series are forgotten.</summary>
    public void DatabaseDeleted(string name)
    {
        string? label;
        lock (_databaseLabels)
        {
            if (!_databaseLabels.Remove(name, out label))
            {
                return;
            }
        }
        Exporter?.Forget(MetricFamily.Label("database", label));
    }

    /// <summary>Forgets the series of one index or subscription of a database (its place was given back).</summary>
    internal void Forget(string database, string key, string value) =>
        Exporter?.Forget(MetricFamily.Label("database", database) + "," + MetricFamily.Label(key, value));

    internal void Opened(DatabaseMetrics database) => _open[database] = true;

    internal void Closed(DatabaseMetrics database) => _open.TryRemove(database, out _);

    /// <summary>The bucket boundaries an instrument advises (ours do), for the exporter.</summary>
    internal static double[]? BoundsOf(Instrument instrument) => instrument switch
    {
        Histogram<double> { Advice.HistogramBucketBoundaries: { } bounds } => [.. bounds],
        Histogram<long> { Advice.HistogramBucketBoundaries: { } bounds } => [.. bounds.Select(b => (double)b)],
        Histogram<int> { Advice.HistogramBucketBoundaries: { } bounds } => [.. bounds.Select(b => (double)b)],
        _ => null,
    };

    public void Dispose()
    {
        // OpenTelemetry first: its shutdown exports what is left while the meter still answers.
        _openTelemetry?.Dispose();
        _openTelemetry = null;
        Exporter?.Dispose();
        Requests.Dispose();
        Meter.Dispose();
    }
}
