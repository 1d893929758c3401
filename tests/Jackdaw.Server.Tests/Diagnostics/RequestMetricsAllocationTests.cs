using Jackdaw.Server.Diagnostics;
using Jackdaw.Server.Routing;

namespace Jackdaw.Server.Tests.Diagnostics;

/// <summary>Recording a request, with the exporter listening, allocates nothing once its route's tags exist.</summary>
public sealed class RequestMetricsAllocationTests
{
    [Fact]
    public void RecordingARequestAllocatesNothing()
    {
        using var metrics = new ServerMetrics(new MetricsOptions(), Path.GetTempPath(), null, "test");
        metrics.UseRoutes(["/databases/*/docs", "/build/version"]);
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        // First use builds each route's tags and the exporter's series.
        metrics.RequestCompleted(0, HttpMethodKind.Get, 200, started, 0, 1200);
        metrics.RequestCompleted(0, HttpMethodKind.Put, 201, started, 900, 80);
        metrics.RequestCompleted(-1, HttpMethodKind.Get, 404, started, 0, 100);
        Record(metrics, started, 1_000);

        var before = GC.GetAllocatedBytesForCurrentThread();
        Record(metrics, started, 10_000);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(0, allocated);
        var families = PrometheusTextParser.Parse(metrics.Exporter!.Scrape());
        Assert.Equal(11_001, families["jackdaw_http_requests_total"].Samples.Single(s => s.Labels["method"] == "GET" && s.Labels["route"] == "/databases/*/docs").Value);
        Assert.Equal(11_001 * 900, families["jackdaw_http_request_bytes_total"].Samples.Single().Value);
    }

    private static void Record(ServerMetrics metrics, long started, int times)
    {
        for (var i = 0; i < times; i++)
        {
            metrics.RequestCompleted(0, HttpMethodKind.Get, 200, started, 0, 1200);
            metrics.RequestCompleted(0, HttpMethodKind.Put, 201, started, 900, 80);
            metrics.RequestCompleted(-1, HttpMethodKind.Get, 404, started, 0, 100);
        }
    }
}
