namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// The <c>Metrics</c> and <c>OpenTelemetry</c> sections of the configuration
/// (<c>--Metrics:Enabled=false</c>, <c>JACKDAW_OPENTELEMETRY__ENDPOINT=http://collector:4318</c>),
/// read by <c>ServerOptions.FromConfiguration</c>.
/// </summary>
public sealed class MetricsOptions
{
    public const string Section = "Metrics";
    public const string OpenTelemetrySection = "OpenTelemetry";
    public const int DefaultMaxDatabaseSeries = 64;
    /// <summary>
    /// 64 databases of 30 indexes with their own series, plus each database's <c>"_other"</c> and
    /// the <c>"_other"</c> database: 64 × 31 + 1 = 1,985 label sets, under an instrument's
    /// 2,000 (<see cref="MetricFamily.DefaultMaxSeries"/>).
    /// </summary>
    public const int DefaultMaxIndexSeries = 30;

    /// <summary>Whether anything is measured: false starts no listener (nothing records) and <c>/metrics</c> shows no series of Jackdaw's.</summary>
    public bool Enabled { get; init; } = true;

    /// <summary>Databases with series of their own; the others' are summed under <c>database="_other"</c>.</summary>
    public int MaxDatabaseSeries { get; init; } = DefaultMaxDatabaseSeries;

    /// <summary>Indexes, and subscriptions, of one database with series of their own; the others' are summed under <c>"_other"</c>.</summary>
    public int MaxIndexSeries { get; init; } = DefaultMaxIndexSeries;

    /// <summary>
    /// The most label sets one instrument of Jackdaw's keeps: 2,000, or, when the caps configured
    /// allow more per-index series, <c>MaxDatabaseSeries × (MaxIndexSeries + 1) + 1</c>, so the
    /// documented caps always hold before this guard drops anything.
    /// </summary>
    public int MaxSeriesPerInstrument =>
        (int)Math.Min(int.MaxValue, Math.Max(MetricFamily.DefaultMaxSeries, (long)MaxDatabaseSeries * (MaxIndexSeries + 1L) + 1));

    /// <summary>Where OTLP exports go (<c>OpenTelemetry:Endpoint</c>); null: OpenTelemetry is off.</summary>
    public Uri? OpenTelemetryEndpoint { get; init; }

    /// <summary><c>OpenTelemetry:Protocol</c>: <c>http/protobuf</c> (the default) or <c>grpc</c>.</summary>
    public string OpenTelemetryProtocol { get; init; } = "http/protobuf";

    /// <summary><c>OpenTelemetry:ExportInterval</c>: how often metrics are pushed (OpenTelemetry's default, 60 s).</summary>
    public TimeSpan OpenTelemetryExportInterval { get; init; } = TimeSpan.FromSeconds(60);
}
