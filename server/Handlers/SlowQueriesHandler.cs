using Jackdaw.Server.Hosting;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// <c>/databases/*/queries/slow</c>: the database's slow-query log (<see cref="SlowQueryLog"/>),
/// read and cleared. Database admin clearance: it shows every caller's queries.
/// </summary>
public sealed class SlowQueriesHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>GET</c>: <c>{"ThresholdMs","Results":[{"At","DurationInMs","Query","QueryParameters":{"name":"&lt;redacted&gt;"},
    /// "IndexName","IsStale","TotalResults","Timings"}]}</c>, newest first.
    /// </summary>
    [Route("/databases/*/queries/slow", "GET")]
    [Access(RouteAccess.DatabaseAdmin)]
    public ValueTask Get(RequestContext context)
    {
        var log = LogOf(context);
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("ThresholdMs", log.ThresholdMs);
        writer.WriteStartArray("Results");
        foreach (var entry in log.Snapshot())
        {
            writer.WriteStartObject();
            writer.WriteString("At", entry.At);
            writer.WriteNumber("DurationInMs", entry.DurationInMs);
            writer.WriteString("Query", entry.Query);
            writer.WriteStartObject("QueryParameters");
            foreach (var name in entry.ParameterNames)
            {
                writer.WriteString(name, "<redacted>");
            }
            writer.WriteEndObject();
            writer.WriteString("IndexName", entry.IndexName);
            if (entry.IsStale is { } stale)
            {
                writer.WriteBoolean("IsStale", stale);
            }
            else
            {
                writer.WriteNull("IsStale");
            }
            if (entry.TotalResults is { } total)
            {
                writer.WriteNumber("TotalResults", total);
            }
            else
            {
                writer.WriteNull("TotalResults");
            }
            writer.WritePropertyName("Timings");
            if (entry.Timings is { } timings)
            {
                writer.WriteRawValue(timings, skipInputValidation: true);
            }
            else
            {
                writer.WriteNullValue();
            }
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
        writer.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary><c>DELETE</c>: forgets the log's entries; 204.</summary>
    [Route("/databases/*/queries/slow", "DELETE")]
    [Access(RouteAccess.DatabaseAdmin)]
    public ValueTask Clear(RequestContext context)
    {
        LogOf(context).Clear();
        context.Response.StatusCode = StatusCodes.Status204NoContent;
        return ValueTask.CompletedTask;
    }

    private SlowQueryLog LogOf(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        return SlowQueryLog.Of(database) ?? throw new InvalidOperationException($"Database '{database.Name}' was opened without its slow-query log.");
    }
}
