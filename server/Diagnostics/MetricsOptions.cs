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
    public const int DefaultMaxIndexSeries = 256;

    /// <summary>Whether anything is measured: false starts no listener (nothing records) and <c>/metrics</c> shows no series of Jackdaw's.</summary>
    public bool Enabled { get; init; } = true;

    /// <summary>Databases with series of their own; the others' are summed under <c>database="_other"</c>.</summary>
    public int MaxDatabaseSeries { get; init; } = DefaultMaxDatabaseSeries;

    /// <summary>Indexes, and subscriptions, of one database with series of their own; the others' are summed under <c>"_other"</c>.</summary>
    public int MaxIndexSeries { get; init; } = DefaultMaxIndexSeries;

    /// <summary>Where OTLP exports go (<c>OpenTelemetry:Endpoint</c>); null: OpenTelemetry is off.</summary>
    public Uri? OpenTelemetryEndpoint { get; init; }

    /// <summary><c>OpenTelemetry:Protocol</c>: <c>http/protobuf</c> (the default) or <c>grpc</c>.</summary>
    public string OpenTelemetryProtocol { get; init; } = "http/protobuf";

    /// <summary><c>OpenTelemetry:ExportInterval</c>: how often metrics are pushed (OpenTelemetry's default, 60 s).</summary>
    public TimeSpan OpenTelemetryExportInterval { get; init; } = TimeSpan.FromSeconds(60);
}
