using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>Server-level administration: <c>/admin/stats</c>.</summary>
public sealed class AdminHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/admin/stats", "GET")]
    [Access(RouteAccess.Operator)]
    public ValueTask GetStats(RequestContext context)
    {
        var stats = Server.Statistics;
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("Version", Server.Build.FullVersion);
        json.WriteString("StartedAt", stats.StartedAtUtc);
        json.WriteNumber("UptimeSeconds", Math.Round(stats.Uptime.TotalSeconds, 3));
        json.WriteNumber("RequestsServed", stats.RequestsServed);
        json.WriteNumber("ActiveRequests", stats.ActiveRequests);
        json.WriteNumber("FailedRequests", stats.Errors);
        json.WriteNumber("WorkingSetBytes", Environment.WorkingSet);
        json.WriteNumber("ManagedHeapBytes", GC.GetTotalMemory(forceFullCollection: false));
        json.WriteNumber("AllocatedBytes", GC.GetTotalAllocatedBytes(precise: false));
        json.WriteStartObject("GcCollections");
        json.WriteNumber("Gen0", GC.CollectionCount(0));
        json.WriteNumber("Gen1", GC.CollectionCount(1));
        json.WriteNumber("Gen2", GC.CollectionCount(2));
        json.WriteEndObject();
        json.WriteNumber("ProcessorCount", Environment.ProcessorCount);
        json.WriteNumber("ThreadCount", System.Diagnostics.Process.GetCurrentProcess().Threads.Count);
        json.WriteString("DataDir", Server.Options.DataDir);
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }
}
