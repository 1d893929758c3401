using System.Text;
using Jackdaw.Server.Diagnostics;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>GET /metrics</c>: every series of this server in Prometheus text format 0.0.4 (docs/architecture.md,
/// "Metrics and tracing"). With <c>Metrics:Enabled=false</c>, an empty exposition that says so.
/// </summary>
public sealed class MetricsHandler(ServerContext server) : HandlerBase(server)
{
    private static readonly byte[] Disabled = Encoding.UTF8.GetBytes("# Metrics are off on this server (Metrics:Enabled=false).\n");

    [Route("/metrics", "GET")]
    [Access(RouteAccess.Operator)]
    public ValueTask Get(RequestContext context)
    {
        context.Response.Headers.CacheControl = "no-store";
        if (Server.Metrics.Exporter is not { } exporter)
        {
            return context.WriteBytesAsync(Disabled, PrometheusText.ContentType);
        }
        return context.WriteBytesAsync(Encoding.UTF8.GetBytes(exporter.Scrape()), PrometheusText.ContentType);
    }
}
