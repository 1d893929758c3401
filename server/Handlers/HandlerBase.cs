using Jackdaw.Server.Documents;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// Base of the handler classes: one per resource, created once at startup with the server
/// context; their <c>[Route]</c> methods are bound to <see cref="RequestHandler"/> delegates.
/// Handler methods must be thread-safe: one instance serves all requests.
/// </summary>
public abstract class HandlerBase(ServerContext server)
{
    protected ServerContext Server { get; } = server;

    /// <summary>
    /// The <c>pageSize</c> of a page of documents (<paramref name="defaultValue"/> when not given): at
    /// most the server's <c>Limits:MaxQueryLimit</c>, the most results a query answers. A larger one
    /// is a 400 that names the setting and points to <c>/streams/docs</c>, which reads any number:
    /// unlike a query's <c>limit</c>, no client sends a page size to mean "no limit", so asking more
    /// than a page may hold is a mistake worth saying.
    /// </summary>
    /// <exception cref="BadRequestException">pageSize is not a whole number, or is over the limit.</exception>
    protected int PageSize(UrlQuery query, int defaultValue)
    {
        var max = Server.Options.Limits.MaxQueryLimit;
        var pageSize = query.GetInt64("pageSize", defaultValue);
        if (pageSize > max)
        {
            throw new BadRequestException($"pageSize {pageSize} is over {max.ToString("N0", System.Globalization.CultureInfo.InvariantCulture)}, the most documents one page holds (Limits:MaxQueryLimit). Page on with start, or read them all with /streams/docs, which has no such limit.");
        }
        return (int)pageSize;
    }

    /// <summary>The request's <c>If-Match</c> (a change vector, a list, <c>*</c> or <c>""</c>); null when absent.</summary>
    protected static string? IfMatch(RequestContext context)
    {
        var value = context.Request.Headers.IfMatch;
        return value.Count == 0 ? null : value.ToString();
    }

    /// <summary>Whether the request's <c>If-None-Match</c> names <paramref name="quotedChangeVector"/> (an ETag: the change vector in double quotes).</summary>
    protected static bool NotModified(RequestContext context, string quotedChangeVector)
    {
        var value = context.Request.Headers.IfNoneMatch;
        return value.Count > 0 && ChangeVectors.Matches(value.ToString(), quotedChangeVector.AsSpan(1, quotedChangeVector.Length - 2));
    }

    /// <summary>Answers a started operation as RavenDB does: <c>{"OperationId","OperationNodeTag"}</c>.</summary>
    protected static ValueTask WriteOperationIdAsync(RequestContext context, long id)
    {
        var writer = context.StartJson();
        writer.WriteStartObject();
        writer.WriteNumber("OperationId", id);
        writer.WriteString("OperationNodeTag", context.Server.Cluster.NodeTag);
        writer.WriteEndObject();
        return context.CompleteJsonAsync();
    }
}
