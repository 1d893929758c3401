using OpenTelemetry;
using OpenTelemetry.Exporter;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;

namespace Jackdaw.Server.Diagnostics;

/// <summary>
/// The OTLP export, when <c>OpenTelemetry:Endpoint</c> is set: the OpenTelemetry SDK's meter provider
/// over the meters <see cref="PrometheusExporter"/> shows ("Jackdaw" and "System.Runtime"; unless
/// <c>Metrics:Enabled</c> is false) and its tracer provider over the request spans
/// (<see cref="ServerMetrics.ActivitySourceName"/>). Nothing of it exists when the endpoint is not set,
/// so the request spans have no listener and are never started. The SDK subscribes by meter name:
/// several servers in one process (tests) each export every "Jackdaw" meter of the process.
/// </summary>
internal sealed class OpenTelemetryExport : IDisposable
{
    private readonly MeterProvider? _meters;
    private readonly TracerProvider _traces;

    private OpenTelemetryExport(MeterProvider? meters, TracerProvider traces)
    {
        _meters = meters;
        _traces = traces;
    }

    public static OpenTelemetryExport? Start(MetricsOptions options, string version)
    {
        if (options.OpenTelemetryEndpoint is not { } endpoint)
        {
            return null;
        }
        var protocol = options.OpenTelemetryProtocol == "grpc" ? OtlpExportProtocol.Grpc : OtlpExportProtocol.HttpProtobuf;
        // Given in code, the endpoint is used as it is: over HTTP each signal has its own path, which
        // the SDK adds only to an endpoint taken from its environment variables.
        Uri For(string signal) => protocol == OtlpExportProtocol.Grpc ? endpoint : new Uri(endpoint.AbsoluteUri.TrimEnd('/') + "/v1/" + signal);
        var resource = ResourceBuilder.CreateDefault().AddService("jackdaw", serviceVersion: version);
        MeterProvider? meters = null;
        if (options.Enabled)
        {
            meters = Sdk.CreateMeterProviderBuilder()
                .SetResourceBuilder(resource)
                .AddMeter(ServerMetrics.MeterName, PrometheusExporter.RuntimeMeterName)
                .AddOtlpExporter((exporter, reader) =>
                {
                    exporter.Endpoint = For("metrics");
                    exporter.Protocol = protocol;
                    reader.PeriodicExportingMetricReaderOptions.ExportIntervalMilliseconds = (int)options.OpenTelemetryExportInterval.TotalMilliseconds;
                })
                .Build();
        }
        var traces = Sdk.CreateTracerProviderBuilder()
            .SetResourceBuilder(resource)
            .AddSource(ServerMetrics.ActivitySourceName)
            .AddOtlpExporter(exporter =>
            {
                exporter.Endpoint = For("traces");
                exporter.Protocol = protocol;
            })
            .Build();
        return new OpenTelemetryExport(meters, traces);
    }

    /// <summary>Exports what is left (a last metrics collection, the spans not yet sent), then stops.</summary>
    public void Dispose()
    {
        _meters?.Dispose();
        _traces.Dispose();
    }
}
